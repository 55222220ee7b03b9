/**
 * The scheduler (src/engine/run.ts) seen from its callers: what `ranBefore` hands an adapter after a `-t` replay,
 * what the run's options change (one transport, secrets, polling pace, the enrichment clock, requests as written),
 * how roles take part (a halt and the phases that still run, a preparation problem), `context_inputs`, and the pure
 * pieces a step's record is finished with (StepEnd, contributions).
 *
 * Every run talks to the real fixture agent on 127.0.0.1, each test on its own `session_<key>`.
 */
import { sessionEndpoints } from '../helpers/session-endpoint.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent, type FixtureCall } from '../../fixtures/agent/server.mjs';
import { defaultSchemasDir } from '../../src/corpus.js';
import { assertContribution, contributionAllowed } from '../../src/engine/contributions.js';
import { CredentialResolver } from '../../src/engine/credentials.js';
import type { RoleSession, RunnerRole } from '../../src/engine/role.js';
import { StoryboardRun, type StoryboardRunOptions } from '../../src/engine/run.js';
import { StepEnd } from '../../src/engine/step-end.js';
import type { StepOutcome, StepResult } from '../../src/model/records.js';
import type { Step, Storyboard } from '../../src/model/storyboard.js';
import { BUILTIN_ROLES } from '../../src/roles/index.js';
import { schemaRegistryFor } from '../../src/schemas/registry.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { McpTransport } from '../../src/transport/mcp.js';
import type { AgentTransport } from '../../src/transport/types.js';
import { phasedStoryboard, TOKEN, type InlinePhase } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

const endpoint = sessionEndpoints(() => agent, 'scheduler');

function load(phases: InlinePhase[], root: Record<string, unknown> = {}, strictKeys = true): Storyboard {
  const loaded = loadStoryboard(phasedStoryboard(phases, root), '/virtual/inline.storyboard.yaml', { strictKeys });
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join('\n'));
  return loaded.storyboard;
}

type Options = Partial<StoryboardRunOptions>;

function open(storyboard: Storyboard, url: string, options: Options = {}): StoryboardRun {
  return new StoryboardRun(storyboard, {
    roles: BUILTIN_ROLES,
    transport: () => new McpTransport({ url, maxResponseBytes: 10 * 1024 * 1024 }),
    schemas: schemaRegistryFor(defaultSchemasDir()!),
    authToken: TOKEN,
    timeoutMs: 10_000,
    ...options,
  });
}

async function runAll(storyboard: Storyboard, url: string, options: Options = {}) {
  const run = open(storyboard, url, options);
  try {
    const outcomes = await run.runAll();
    return { run, steps: Object.fromEntries(outcomes.map((o) => [o.result.step_id, o])) };
  } finally {
    await run.close();
  }
}

const verdict = (o: StepOutcome) => (o.status === 'skipped' ? `skipped:${o.result.skip!.reason}` : o.status);
const brief = (o: StepOutcome) => [o.result.phase_id, o.result.step_id, verdict(o)];
const caps = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  task: 'get_adcp_capabilities',
  validations: [{ check: 'field_present', path: 'adcp' }],
  ...extra,
});
const failingCaps = (id: string, extra: Record<string, unknown> = {}) =>
  caps(id, {
    sample_request: { context: { correlation_id: 'x' } },
    validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'y' }],
    ...extra,
  });

/** A role of this test's own, beside the built-in ones: only the hooks given. */
function role(name: string, session: RoleSession, tasks: string[] = []): RunnerRole {
  return { name, tasks: new Set(tasks), open: () => session };
}

describe('ranBefore: the earlier steps a settle ran silently (a `-t` replay)', () => {
  const phases: InlinePhase[] = [
    { id: 'p1', steps: [caps('a'), failingCaps('b'), caps('c')] },
    { id: 'p2', steps: [caps('d')] },
  ];

  it('lists only the steps before the asked one that have run, with the verdict each had', async () => {
    const { url } = endpoint();
    const run = open(load(phases), url);
    try {
      await run.settle('p1', 'a');
      // b and c have not run yet: only a is reported.
      expect(run.ranBefore('p1', 'c').map(brief)).toEqual([['p1', 'a', 'passed']]);
      await run.settle('p2', 'd');
      expect(run.ranBefore('p2', 'd').map(brief)).toEqual([
        ['p1', 'a', 'passed'],
        ['p1', 'b', 'failed'],
        ['p1', 'c', 'passed'],
      ]);
      // The asked step itself is its own test's to report, never a replayed one.
      expect(run.ranBefore('p1', 'b').map(brief)).toEqual([['p1', 'a', 'passed']]);
      expect(run.ranBefore('p1', 'a')).toEqual([]);
    } finally {
      await run.close();
    }
  });

  it('asks `wanted` (phase id, step id) which steps to report', async () => {
    const { url } = endpoint();
    const run = open(load(phases), url);
    try {
      await run.settle('p2', 'd');
      const asked: string[][] = [];
      const picked = run.ranBefore('p2', 'd', (phase, step) => {
        asked.push([phase, step]);
        return step !== 'b';
      });
      expect(picked.map(brief)).toEqual([
        ['p1', 'a', 'passed'],
        ['p1', 'c', 'passed'],
      ]);
      expect(asked).toEqual([
        ['p1', 'a'],
        ['p1', 'b'],
        ['p1', 'c'],
      ]);
    } finally {
      await run.close();
    }
  });

  it('has nothing for a step the storyboard does not have', async () => {
    const { url } = endpoint();
    const run = open(load(phases), url);
    try {
      await run.runAll();
      expect(run.ranBefore('p1', 'd')).toEqual([]);
      expect(run.ranBefore('nowhere', 'a')).toEqual([]);
    } finally {
      await run.close();
    }
  });
});

describe('runAll and settle', () => {
  it('runAll runs every step once and returns them in storyboard order', async () => {
    const { url, calls } = endpoint();
    const run = open(load([{ id: 'p1', steps: [caps('a'), caps('b')] }]), url);
    try {
      expect((await run.runAll()).map(brief)).toEqual([
        ['p1', 'a', 'passed'],
        ['p1', 'b', 'passed'],
      ]);
      // A second runAll, or a settle after it, runs nothing again.
      expect((await run.runAll()).map(brief)).toHaveLength(2);
      expect(verdict(await run.settle('p1', 'a'))).toBe('passed');
      expect(calls('get_adcp_capabilities')).toHaveLength(2);
    } finally {
      await run.close();
    }
  });
});

describe('the transport', () => {
  it('is opened once per run, and a role asking for it gets the one the steps use', async () => {
    const { url } = endpoint();
    const created: AgentTransport[] = [];
    const seen: AgentTransport[] = [];
    let opened: { transport(): AgentTransport } | undefined;
    const watcher: RunnerRole = {
      name: 'transport-watcher',
      tasks: new Set(),
      open: (run) => {
        opened = run;
        return {
          gate: () => {
            seen.push(run.transport());
            return undefined;
          },
        };
      },
    };
    const run = open(load([{ id: 'p1', steps: [caps('a'), caps('b')] }]), url, {
      roles: [...BUILTIN_ROLES, watcher],
      transport: () => {
        const transport = new McpTransport({ url, maxResponseBytes: 1_000_000 });
        created.push(transport);
        return transport;
      },
    });
    try {
      expect((await run.runAll()).map(verdict)).toEqual(['passed', 'passed']);
      expect(created).toHaveLength(1);
      expect(seen).toEqual([created[0], created[0]]);
      expect(opened!.transport()).toBe(created[0]);
    } finally {
      await run.close();
    }
  });

  it('is opened on demand by a role that asks before any step reached the agent', async () => {
    const { url } = endpoint();
    let transport: AgentTransport | undefined;
    const early: RunnerRole = {
      name: 'early',
      tasks: new Set(),
      open: (run) => ({
        storyboardSkip: () => {
          transport ??= run.transport();
          return undefined;
        },
      }),
    };
    const { steps } = await runAll(load([{ id: 'p1', steps: [caps('a')] }]), url, { roles: [early] });
    expect(transport).toBeInstanceOf(McpTransport);
    expect(transport!.url).toBe(url);
    expect(verdict(steps.a!)).toBe('passed');
  });
});

describe("the agent's tool list", () => {
  it('read through a transport of the caller that throws instead of answering an error: said on the first step, the steps still run', async () => {
    const { url, calls } = endpoint();
    class ListingBreaks extends McpTransport {
      override async listTools(): Promise<{ tools: string[] }> {
        throw new Error('the listing broke');
      }
    }
    const { steps } = await runAll(load([{ id: 'p1', steps: [caps('a'), caps('b')] }]), url, {
      transport: () => new ListingBreaks({ url, maxResponseBytes: 1_000_000 }),
    });
    expect(steps.a!.result.warnings).toEqual([
      "the agent's tool list could not be read (the listing broke), so missing tools are not told apart from failures",
    ]);
    expect([verdict(steps.a!), verdict(steps.b!)]).toEqual(['passed', 'passed']);
    expect(steps.b!.result).not.toHaveProperty('warnings');
    expect(calls('get_adcp_capabilities')).toHaveLength(2);
  });
});

describe('secrets', () => {
  const roleWithSecret = role('minting', { secrets: () => ['minted-operation-id-7'] });

  it("are the credentials, the caller's known secrets and what the roles put on the wire", () => {
    const { url } = endpoint();
    const storyboard = load([{ id: 'p1', steps: [caps('a')] }]);
    const run = open(storyboard, url, {
      roles: [roleWithSecret],
      authToken: 'operator-token-1',
      knownSecrets: ['url-secret-2'],
    });
    const secrets = run.secrets();
    expect(secrets).toEqual(expect.arrayContaining(['operator-token-1', 'url-secret-2', 'minted-operation-id-7']));
    // Nothing else than the credentials (with the run's random probe values), the known secrets and the role's.
    const credentials = new CredentialResolver({ defaultToken: 'operator-token-1' }).secrets();
    expect(secrets).toHaveLength(credentials.length + 2);
  });

  it('are the credentials alone when the caller knows none and no role minted any', () => {
    const { url } = endpoint();
    const run = open(load([{ id: 'p1', steps: [caps('a')] }]), url, { roles: [], authToken: 'operator-token-1' });
    const credentials = new CredentialResolver({ defaultToken: 'operator-token-1' }).secrets();
    expect(run.secrets()).toContain('operator-token-1');
    expect(run.secrets()).toHaveLength(credentials.length);
  });

  it('include the invalid-JWT probe, addressed to the agent the run talks to (its aud)', async () => {
    const { url } = endpoint();
    const { run } = await runAll(
      load([
        {
          id: 'p1',
          steps: [
            caps('probe', {
              auth: { type: 'oauth_bearer', value_strategy: 'random_invalid_jwt' },
              validations: [],
            }),
          ],
        },
      ]),
      url,
    );
    const jwt = run.secrets().find((s) => /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/.test(s));
    expect(jwt).toBeDefined();
    const claims = JSON.parse(Buffer.from(jwt!.split('.')[1]!, 'base64url').toString('utf8'));
    expect(claims).toEqual({ sub: 'invalid', aud: url });
  });
});

describe('a storyboard built in code, not loaded', () => {
  it('ignores required_tools entries that are not tool names', async () => {
    const { url } = endpoint();
    const storyboard = load([{ id: 'p1', steps: [caps('a')] }]);
    (storyboard as { required_tools?: unknown[] }).required_tools = [42, { name: 'get_products' }];
    const { steps } = await runAll(storyboard, url);
    expect(verdict(steps.a!)).toBe('passed');
  });

  it('names its unknown invariants on the first step, ignoring entries that are not ids', async () => {
    const { url } = endpoint();
    const storyboard = load([{ id: 'p1', steps: [caps('a')] }]);
    (storyboard as { invariants?: unknown[] }).invariants = ['made.up', 7, null];
    const { steps } = await runAll(storyboard, url);
    expect(steps.a!.result.warnings).toEqual(['invariants made.up are not checked by this version of vitest-adcp']);
  });

  it('fails the step whose context_inputs path cannot be written, saying why, and sends nothing', async () => {
    const { url, calls } = endpoint();
    const storyboard = load([{ id: 'p1', steps: [caps('inject'), caps('after')] }], { context: { who: 'me' } });
    const step = storyboard.phases[0]!.steps[0]! as Step;
    (step as { context_inputs?: unknown }).context_inputs = [
      { key: 'who', inject_at: 'context..who', loc: { line: 1, column: 1 } },
    ];
    const { steps } = await runAll(storyboard, url);
    expect(steps.inject!.result).toMatchObject({
      passed: false,
      error: expect.stringMatching(/^context_inputs: .*context\.\.who.*empty segment/),
      request: { transport: 'mcp', operation: 'get_adcp_capabilities' },
    });
    expect(verdict(steps.after!)).toBe('passed');
    expect(calls('get_adcp_capabilities')).toHaveLength(1);
  });
  it('sends a request that is not an object as written: neither enriched nor injected into', async () => {
    const { url, calls } = endpoint();
    const storyboard = load(
      [
        {
          id: 'p1',
          steps: [{ id: 'buy', task: 'create_media_buy', validations: [] }, caps('after')],
        },
      ],
      { context: { who: 'me' } },
    );
    const step = storyboard.phases[0]!.steps[0]! as Step;
    Object.assign(step, {
      sample_request: 'book me a campaign',
      context_inputs: [{ key: 'who', inject_at: 'context.who', loc: { line: 1, column: 1 } }],
    });
    const { steps } = await runAll(storyboard, url);
    expect(steps.buy!.result.request).toMatchObject({ operation: 'create_media_buy', payload: 'book me a campaign' });
    expect(steps.buy!.result.error ?? '').not.toContain('internal error');
    expect(verdict(steps.after!)).toBe('passed');
    expect(calls('get_adcp_capabilities')).toHaveLength(1);
  });
});

describe('context_inputs', () => {
  it('inject a captured value where the step says, and leave the request alone when nothing was captured', async () => {
    const { url, calls } = endpoint();
    const capture = (id: string, fail: boolean) =>
      (fail ? failingCaps : caps)(id, {
        ...(fail ? {} : { sample_request: { context: { correlation_id: `from-${id}` } } }),
        context_outputs: [{ name: fail ? 'lost' : 'kept', path: 'context.correlation_id' }],
      });
    const storyboard = load([
      {
        id: 'p1',
        steps: [
          capture('keeps', false),
          capture('loses', true),
          caps('uses', {
            sample_request: { context: {} },
            context_inputs: [
              { key: 'kept', inject_at: 'context.kept_id' },
              { key: 'lost', inject_at: 'context.lost_id' },
            ],
          }),
        ],
      },
    ]);
    const { steps } = await runAll(storyboard, url);
    expect(verdict(steps.keeps!)).toBe('passed');
    expect(verdict(steps.loses!)).toBe('failed');
    const sent = steps.uses!.result.request!.payload as { context: Record<string, unknown> };
    expect(sent.context).toEqual({ kept_id: 'from-keeps' });
    expect(sent.context).not.toHaveProperty('lost_id');
    expect(calls('get_adcp_capabilities').at(-1)!.arguments.context).toEqual({ kept_id: 'from-keeps' });
  });
});

describe('an unresolved placeholder', () => {
  it('names no earlier step when only a later step captures the value', async () => {
    const { url } = endpoint();
    const storyboard = load(
      [
        {
          id: 'p1',
          steps: [
            caps('needs', { sample_request: { context: { id: '$context.later_id' } } }),
            caps('provides', { context_outputs: [{ name: 'later_id', path: 'adcp' }] }),
          ],
        },
      ],
      {},
      false,
    );
    const { steps } = await runAll(storyboard, url);
    expect(steps.needs!.result.validations[0]!.error).toBe(
      '$context.later_id did not resolve: no earlier step captures "later_id" (context_outputs), and the storyboard\'s context does not set it',
    );
  });
});

describe('polling an async task', () => {
  const mediaBuy = (id: string) => ({
    id,
    task: 'create_media_buy',
    sample_request: {
      account: { brand: { domain: 'fixture-brand.example' }, operator: 'pinnacle-agency.example' },
      brand: { domain: 'fixture-brand.example' },
      start_time: 'asap',
      end_time: '2099-06-30T23:59:59Z',
      packages: [{ product_id: 'prod_video_preroll', pricing_option_id: 'po_video_preroll_cpm', budget: 5000 }],
    },
    validations: [{ check: 'field_present', path: 'media_buy_id' }],
  });
  const polls = (calls: (tool?: string) => FixtureCall[]) => calls('tasks/get').length + calls('tasks_get').length;

  it('is paced by pollIntervalMs: a short interval follows a long task to its end within the step bound', async () => {
    const { url, calls } = endpoint(['async_submitted@create_media_buy', 'async_polls_8']);
    const { steps } = await runAll(load([{ id: 'p1', steps: [mediaBuy('buy')] }]), url, {
      pollIntervalMs: 20,
      timeoutMs: 2_500,
    });
    expect(verdict(steps.buy!)).toBe('passed');
    expect(polls(calls)).toBe(8);
  });

  it('backs off to one poll a second by default, not hammering the agent', async () => {
    const { url, calls } = endpoint(['async_submitted@create_media_buy', 'async_polls_20']);
    const { steps } = await runAll(load([{ id: 'p1', steps: [mediaBuy('buy')] }]), url, { timeoutMs: 2_500 });
    // 50, 100, 200, 400, 800, then 1000 ms apart: five or six polls fit in 2.5 s, not the twenty the task needs.
    expect(polls(calls)).toBeGreaterThanOrEqual(3);
    expect(polls(calls)).toBeLessThanOrEqual(7);
    expect(verdict(steps.buy!)).toBe('failed');
  });
});

describe('request enrichment', () => {
  const buy = {
    id: 'buy',
    task: 'create_media_buy',
    sample_request: { brand: { domain: 'acme.example' }, packages: [] },
    validations: [],
  };

  it("dates a made-up flight from the run's clock (`now`)", async () => {
    const { url } = endpoint();
    const now = Date.UTC(2031, 4, 10, 15, 30);
    const { steps } = await runAll(load([{ id: 'p1', steps: [buy] }]), url, { now: () => now });
    expect(steps.buy!.result.request!.payload).toMatchObject({ start_time: '2031-05-11T00:00:00Z' });
  });

  it("sends the storyboard's request untouched with requests: 'as-written'", async () => {
    const { url, calls } = endpoint();
    const { steps } = await runAll(load([{ id: 'p1', steps: [buy] }]), url, { requests: 'as-written' });
    const sent = steps.buy!.result.request!.payload as Record<string, unknown>;
    expect(sent).not.toHaveProperty('start_time');
    expect(sent).not.toHaveProperty('end_time');
    expect(calls('create_media_buy')[0]!.arguments).not.toHaveProperty('start_time');
  });
});

describe('roles in the schedule', () => {
  it("a role's halt skips every later step but the phases the role still runs", async () => {
    const { url, calls } = endpoint();
    const halt = { reason: 'not_applicable' as const, detail: 'halter: the agent answered what ends this storyboard' };
    const halter = role('halter', {
      verdict: ({ step }, _exchange, graded) => (step.id === 'trigger' ? { result: graded, halt } : undefined),
      runsAfterHalt: (phase) => phase.id === 'cleanup',
    });
    const { steps } = await runAll(
      load([
        { id: 'main', steps: [caps('before'), caps('trigger'), caps('after')] },
        { id: 'cleanup', steps: [caps('tidy')] },
        { id: 'later', steps: [caps('gone')] },
      ]),
      url,
      { roles: [...BUILTIN_ROLES, halter] },
    );
    expect(Object.values(steps).map(brief)).toEqual([
      ['main', 'before', 'passed'],
      ['main', 'trigger', 'passed'],
      ['main', 'after', 'skipped:not_applicable'],
      ['cleanup', 'tidy', 'passed'],
      ['later', 'gone', 'skipped:not_applicable'],
    ]);
    expect(steps.gone!.result.skip).toEqual(halt);
    expect(calls('get_adcp_capabilities')).toHaveLength(3);
  });

  it('the first problem a role reports while preparing a step fails that step, before anything is sent', async () => {
    const { url, calls } = endpoint();
    const prepared: string[] = [];
    const quiet = role('quiet', {
      prepare: async ({ step }) => {
        prepared.push(`quiet:${step.id}`);
        return undefined;
      },
    });
    const picky = role('picky', {
      prepare: async ({ step }) => {
        prepared.push(`picky:${step.id}`);
        return step.id === 'refused' ? 'picky: no webhook URL could be minted for this step' : undefined;
      },
    });
    const last = role('last', {
      prepare: async ({ step }) => {
        prepared.push(`last:${step.id}`);
        return step.id === 'refused' ? 'last: never asked' : undefined;
      },
    });
    const { steps } = await runAll(load([{ id: 'p1', steps: [caps('refused'), caps('fine')] }]), url, {
      roles: [...BUILTIN_ROLES, quiet, picky, last],
    });
    expect(steps.refused!.result).toMatchObject({
      passed: false,
      error: 'picky: no webhook URL could be minted for this step',
    });
    expect(steps.refused!.result).not.toHaveProperty('request');
    expect(verdict(steps.fine!)).toBe('passed');
    expect(prepared).toEqual(['quiet:refused', 'picky:refused', 'quiet:fine', 'picky:fine', 'last:fine']);
    expect(calls('get_adcp_capabilities')).toHaveLength(1);
  });
});

describe("a step's record when it is skipped (StepEnd)", () => {
  const base: StepResult = {
    storyboard_id: 'sb',
    phase_id: 'p',
    step_id: 's',
    task: 't',
    passed: false,
    duration_ms: 0,
    validations: [],
    extraction: { path: 'none' },
  };

  it('keeps the pass for every skip reason but prerequisite_failed, whatever skipped it', () => {
    const end = new StepEnd(base);
    expect(end.skipped({ reason: 'prerequisite_failed', detail: 'd' }).passed).toBe(false);
    for (const reason of ['not_applicable', 'missing_tool', 'peer_branch_taken'] as const)
      expect([reason, end.skipped({ reason, detail: 'd' }).passed]).toEqual([reason, true]);
  });

  it('carries what the skipper adds, and the warnings gathered on the way', () => {
    const end = new StepEnd(base);
    end.warnings.push('a warning');
    expect(end.skipped({ reason: 'not_applicable', detail: 'd' }, { request: { operation: 'x' } as never })).toEqual({
      ...base,
      passed: true,
      skip: { reason: 'not_applicable', detail: 'd' },
      request: { operation: 'x' },
      duration_ms: expect.any(Number),
      warnings: ['a warning'],
    });
  });
});

describe('contributions (pure)', () => {
  const step = (contributes_if?: string): Step =>
    ({
      id: 'contribute',
      title: 'contribute',
      task: 'x',
      validations: [],
      loc: { line: 1, column: 1 },
      ...(contributes_if !== undefined ? { contributes_if } : {}),
    }) as Step;
  const prior = new Map<string, unknown>([['gate', {}]]);

  it('contributes_if reads exactly "prior_step.<id>.passed", whitespace aside', () => {
    expect(contributionAllowed(step(), prior)).toBe(true);
    expect(contributionAllowed(step('prior_step.gate.passed'), prior)).toBe(true);
    expect(contributionAllowed(step('  prior_step.gate.passed\n'), prior)).toBe(true);
    expect(contributionAllowed(step('prior_step.other.passed'), prior)).toBe(false);
  });

  it('contributes_if anything else never counts (no prefix, no suffix, no other grammar)', () => {
    expect(contributionAllowed(step('!prior_step.gate.passed'), prior)).toBe(false);
    expect(contributionAllowed(step('not prior_step.gate.passed'), prior)).toBe(false);
    expect(contributionAllowed(step('prior_step.gate.passed_with_errors'), prior)).toBe(false);
    expect(contributionAllowed(step('prior_step.gate.passed == false'), prior)).toBe(false);
    expect(contributionAllowed(step('gate passed'), prior)).toBe(false);
  });

  it('an any_of validation without allowed values fails, expecting none and showing what was contributed', () => {
    const assertStep = {
      ...step(),
      validations: [{ check: 'any_of', loc: { line: 3, column: 5 } }],
    } as unknown as Step;
    const base = { passed: false, validations: [] } as unknown as StepResult;
    const record = assertContribution(assertStep, base, new Map([['handled', {}]]), '/x.yaml');
    expect(record.passed).toBe(false);
    expect(record.validations).toEqual([
      expect.objectContaining({
        check: 'any_of',
        passed: false,
        expected: [],
        actual: ['handled'],
        error: 'no branch contributed any of the allowed flags',
        source: { file: '/x.yaml', line: 3, column: 5 },
      }),
    ]);
  });
});
