/**
 * The scheduler's own rules (src/engine/run.ts), each on the real fixture agent:
 * run-level warnings land once, on the first step; `settle` waits for exactly
 * the steps that can still change a verdict; a gate skip of an ordinary step
 * does not halt the storyboard; test-kit task names, credentials and
 * configuration errors fail only their step, with a message that says what to
 * fix; `assert_contribution` grades every validation.
 *
 * Each test runs on its own `session_<key>` of the agent, and "sent" or "not
 * yet sent" is read from the agent's call log.
 */
import { sessionEndpoints } from '../helpers/session-endpoint.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { defaultSchemasDir } from '../../src/corpus.js';
import type { StepOutcome } from '../../src/model/records.js';
import { StoryboardRun } from '../../src/engine/run.js';
import { BUILTIN_ROLES } from '../../src/roles/index.js';
import { schemaRegistryFor } from '../../src/schemas/registry.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { McpTransport } from '../../src/transport/mcp.js';
import { closedPort } from '../helpers/ports.js';
import { openStoryboardRun } from '../../src/open-run.js';
import { redactStepResult } from '../../src/report/record.js';
import { formatStepFailure } from '../../src/report/format.js';
import { secretsInUrl } from '../../src/model/redact.js';
import {
  openInline,
  phasedStoryboard,
  runInline,
  TOKEN,
  type InlinePhase,
  type InlineRunOptions,
} from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

const endpoint = sessionEndpoints(() => agent, 'edges');

async function run(
  phases: InlinePhase[],
  options: InlineRunOptions & { behaviours?: string[]; root?: Record<string, unknown> } = {},
) {
  const { url, calls } = endpoint(options.behaviours);
  const steps = await runInline(phasedStoryboard(phases, options.root), url, options);
  return { steps, calls };
}

const verdict = (o: StepOutcome) => (o.status === 'skipped' ? `skipped:${o.result.skip!.reason}` : o.status);
const caps = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  task: 'get_adcp_capabilities',
  validations: [{ check: 'field_present', path: 'adcp' }],
  ...extra,
});
const failingCaps = (id: string) =>
  caps(id, {
    sample_request: { context: { correlation_id: 'x' } },
    validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'y' }],
  });

describe('run-level warnings', () => {
  it("name the loader's warnings, unknown fixtures and unchecked invariants once, on the first step only", async () => {
    // `widgets` is not a key of fixtures: a load error by default, so this storyboard is of a "newer format version".
    const loadWarning =
      'x.storyboard.yaml:3:1: warning: [unknown_key] unknown key "fixture" in storyboard "inline" (did you mean "fixtures"?)';
    const r = await run([{ id: 'main', steps: [caps('first'), caps('second')] }], {
      strictKeys: false,
      loadWarnings: [loadWarning],
      root: {
        prerequisites: { controller_seeding: true },
        fixtures: { widgets: [{ widget_id: 'w1' }] },
        invariants: ['context.echo', 'made.up'],
      },
    });
    expect(r.steps.first!.result.warnings).toEqual([
      loadWarning,
      'fixtures "widgets" map to no seed scenario of storyboard-schema.yaml (products, pricing_options, creatives, plans, media_buys) and were not seeded',
      'invariants made.up are not checked by this version of vitest-adcp',
    ]);
    expect(r.steps.second!.result).not.toHaveProperty('warnings');
  });

  it('leave a clean storyboard without a warnings field', async () => {
    const r = await run([{ id: 'main', steps: [caps('only')] }]);
    expect(r.steps.only!.result).not.toHaveProperty('warnings');
    expect(r.steps.only!.result.duration_ms).toBeLessThan(performance.now());
  });

  it('say on the first step when the tool list could not be read', async () => {
    const port = await closedPort();
    const steps = await runInline(
      phasedStoryboard([{ id: 'main', steps: [caps('a'), caps('b')] }]),
      `http://127.0.0.1:${port}/mcp`,
      { timeoutMs: 2_000 },
    );
    expect(steps.a!.status).toBe('failed');
    expect(steps.a!.result.warnings).toEqual([
      expect.stringMatching(
        /^the agent's tool list could not be read \(.+\), so missing tools are not told apart from failures$/,
      ),
    ]);
    expect(steps.b!.result).not.toHaveProperty('warnings');
  });
});

describe('settle', () => {
  it('names the step it cannot find, matching phase and step together', async () => {
    const { url } = endpoint();
    const run = openInline(
      phasedStoryboard([
        { id: 'p1', steps: [caps('a')] },
        { id: 'p2', steps: [caps('b')] },
      ]),
      url,
    );
    try {
      await expect(run.settle('p1', 'b')).rejects.toThrow('storyboard "inline" has no step "p1/b"');
      await expect(run.settle('p2', 'a')).rejects.toThrow('storyboard "inline" has no step "p2/a"');
    } finally {
      await run.close();
    }
  });

  it('waits for a later peer branch, and no further', async () => {
    const { url, calls } = endpoint();
    const yaml = phasedStoryboard([
      { id: 'b1', optional: true, branch_set: { id: 'handled', semantics: 'any_of' }, steps: [failingCaps('try_one')] },
      {
        id: 'b2',
        optional: true,
        branch_set: { id: 'handled', semantics: 'any_of' },
        steps: [caps('try_two', { contributes: true })],
      },
      {
        id: 'enforce',
        steps: [
          {
            id: 'assert',
            task: 'assert_contribution',
            validations: [{ check: 'any_of', allowed_values: ['handled'] }],
          },
        ],
      },
      {
        id: 'after',
        steps: [
          {
            id: 'later',
            task: 'list_creatives',
            sample_request: {},
            validations: [{ check: 'field_present', path: 'creatives' }],
          },
        ],
      },
    ]);
    const run = openInline(yaml, url);
    try {
      const first = await run.settle('b1', 'try_one');
      expect(first.result.skip).toEqual({
        reason: 'peer_branch_taken',
        detail: 'handled contributed by b2.try_two — b1 is moot',
      });
      expect(calls('get_adcp_capabilities')).toHaveLength(2);
      expect(calls('list_creatives')).toHaveLength(0);
    } finally {
      await run.close();
    }
  });

  it('a failure in the contributing branch itself stays a failure', async () => {
    const r = await run([
      {
        id: 'b1',
        optional: true,
        branch_set: { id: 'handled', semantics: 'any_of' },
        steps: [caps('contributes', { contributes: true }), failingCaps('then_fails')],
      },
      { id: 'b2', optional: true, branch_set: { id: 'handled', semantics: 'any_of' }, steps: [failingCaps('other')] },
      {
        id: 'enforce',
        steps: [
          {
            id: 'assert',
            task: 'assert_contribution',
            validations: [{ check: 'any_of', allowed_values: ['handled'] }],
          },
        ],
      },
    ]);
    expect(Object.fromEntries(Object.entries(r.steps).map(([id, o]) => [id, verdict(o)]))).toEqual({
      contributes: 'passed',
      then_fails: 'failed',
      other: 'skipped:peer_branch_taken',
      assert: 'passed',
    });
  });
});

describe('skips', () => {
  it('record a skipped step with no validations and nothing extracted; only prerequisite_failed loses the pass', async () => {
    const r = await run(
      [
        { id: 'setup', steps: [failingCaps('fails'), caps('stateful', { stateful: true })] },
        { id: 'main', steps: [{ id: 'absent', task: 'list_creatives' }] },
      ],
      { behaviours: ['without@list_creatives'] },
    );
    // `fails` is stateless, so `stateful` runs; `absent` has no tool.
    expect(r.steps.absent!.result).toMatchObject({
      passed: true,
      validations: [],
      extraction: { path: 'none' },
      skip: { reason: 'missing_tool' },
    });
    const cascade = await run([
      { id: 'setup', steps: [{ ...failingCaps('fails'), stateful: true }] },
      { id: 'use', steps: [caps('later', { stateful: true })] },
    ]);
    expect(cascade.steps.later!.result).toMatchObject({
      passed: false,
      validations: [],
      extraction: { path: 'none' },
      skip: { reason: 'prerequisite_failed' },
    });
  });

  it('a missing tool skips its own step and lets the rest of the storyboard run', async () => {
    const r = await run([{ id: 'main', steps: [{ id: 'absent', task: 'list_creatives' }, caps('present')] }], {
      behaviours: ['without@list_creatives'],
    });
    expect(verdict(r.steps.absent!)).toBe('skipped:missing_tool');
    expect(verdict(r.steps.present!)).toBe('passed');
  });

  it('a storyboard whose required tools the agent has none of skips its runner-only steps with the same reason', async () => {
    const r = await run(
      [
        {
          id: 'main',
          steps: [
            { id: 'hook', task: 'expect_webhook' },
            { id: 'assert', task: 'assert_contribution', validations: [{ check: 'any_of', allowed_values: ['x'] }] },
          ],
        },
      ],
      {
        root: { required_tools: ['list_creatives'] },
        behaviours: ['without@list_creatives'],
      },
    );
    expect(verdict(r.steps.hook!)).toBe('skipped:missing_tool');
    expect(verdict(r.steps.assert!)).toBe('skipped:missing_tool');
  });
});

describe('a step that cannot be sent fails alone, saying what to fix', () => {
  it('a $test_kit task with no value and no task_default', async () => {
    const r = await run([{ id: 'main', steps: [{ id: 'kit', task: '$test_kit.tools.search' }, caps('after')] }], {
      testKit: { tools: {} } as never,
    });
    expect(r.steps.kit!.result).toMatchObject({
      passed: false,
      task: '$test_kit.tools.search',
      error:
        'task "$test_kit.tools.search" did not resolve: the test kit has no such value and the step has no task_default',
    });
    expect(verdict(r.steps.after!)).toBe('passed');
  });

  it('a $test_kit task resolves to the kit value, or to task_default', async () => {
    const r = await run(
      [
        {
          id: 'main',
          steps: [
            { id: 'kit', task: '$test_kit.tools.caps', validations: [{ check: 'field_present', path: 'adcp' }] },
            {
              id: 'fallback',
              task: '$test_kit.tools.none',
              task_default: 'get_adcp_capabilities',
              validations: [{ check: 'field_present', path: 'adcp' }],
            },
          ],
        },
      ],
      { testKit: { tools: { caps: 'get_adcp_capabilities' } } as never },
    );
    expect(r.steps.kit!.result).toMatchObject({ passed: true, task: 'get_adcp_capabilities' });
    expect(r.steps.fallback!.result).toMatchObject({ passed: true, task: 'get_adcp_capabilities' });
    expect(r.calls('get_adcp_capabilities')).toHaveLength(2);
  });

  it('credentials the test kit does not have', async () => {
    const r = await run(
      [
        {
          id: 'main',
          steps: [
            caps('kit_auth', { auth: { type: 'api_key', from_test_kit: 'auth.principals.nobody' } }),
            caps('after'),
          ],
        },
      ],
      { testKit: { auth: { api_key: 'k' } } as never },
    );
    expect(r.steps.kit_auth!.result).toMatchObject({
      passed: false,
      error:
        'the step asks for credentials at "auth.principals.nobody" in the test kit, but the test kit has none there',
      request: { transport: 'mcp', operation: 'get_adcp_capabilities' },
    });
    expect(verdict(r.steps.after!)).toBe('passed');
    expect(r.calls('get_adcp_capabilities')).toHaveLength(1);
  });

  it('a configuration error fails every step with its message, before anything is sent', async () => {
    const { url, calls } = endpoint();
    const loaded = loadStoryboard(
      phasedStoryboard([{ id: 'main', steps: [caps('a'), caps('b')] }]),
      '/virtual/inline.storyboard.yaml',
    );
    if (!loaded.ok) throw new Error('inline storyboard did not load');
    const run = new StoryboardRun(loaded.storyboard, {
      roles: BUILTIN_ROLES,
      transport: () => new McpTransport({ url, maxResponseBytes: 1_000_000 }),
      schemas: schemaRegistryFor(defaultSchemasDir()!),
      timeoutMs: 5_000,
      configurationError: 'ADCP_AGENT_URL is not set: set it to your agent URL',
    });
    try {
      const outcomes = await run.runAll();
      expect(outcomes.map((o) => [o.status, o.result.error])).toEqual([
        ['failed', 'ADCP_AGENT_URL is not set: set it to your agent URL'],
        ['failed', 'ADCP_AGENT_URL is not set: set it to your agent URL'],
      ]);
      expect(calls()).toEqual([]);
    } finally {
      await run.close();
    }
  });

  it('an unresolved $context token: the request as it would have gone, and a validation located at the step', async () => {
    // strictKeys: false — a reference nothing captures is a load error otherwise (unknown_context_reference); the run-time path is tested.
    const r = await run(
      [
        {
          id: 'main',
          steps: [{ id: 'needs', task: 'get_products', sample_request: { product_id: '$context.never' } }],
        },
      ],
      { strictKeys: false },
    );
    const result = r.steps.needs!.result;
    expect(result.request).toMatchObject({
      transport: 'mcp',
      operation: 'get_products',
      payload: { product_id: '$context.never' },
    });
    expect(result.request!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(result.validations).toEqual([
      expect.objectContaining({
        check: 'unresolved_substitution',
        passed: false,
        description: 'unresolved substitution',
        expected: ['$context.never'],
        actual: null,
        error:
          '$context.never did not resolve: no earlier step captures "never" (context_outputs), and the storyboard\'s context does not set it',
        source: { file: '/virtual/inline.storyboard.yaml', line: 7, column: 9 },
      }),
    ]);
    expect(r.calls('get_products')).toHaveLength(0);
  });
});

describe('contributions', () => {
  const assertion = (validations: unknown[]) => ({
    id: 'enforce',
    steps: [{ id: 'assert', task: 'assert_contribution', validations }],
  });
  const branch = (contributes_if?: string) => ({
    id: 'branch',
    optional: true,
    branch_set: { id: 'handled', semantics: 'any_of' },
    steps: [caps('gate'), caps('contribute', { contributes: true, ...(contributes_if ? { contributes_if } : {}) })],
  });

  // Other expressions are load errors (contributes_if_invalid): test/storyboard covers them.
  it('contributes_if "prior_step.<id>.passed" counts the contribution, whitespace aside', async () => {
    for (const [condition, expected] of [
      ['prior_step.gate.passed', 'passed'],
      [' prior_step.gate.passed ', 'passed'],
    ] as const) {
      const r = await run([branch(condition), assertion([{ check: 'any_of', allowed_values: ['handled'] }])]);
      expect([condition, r.steps.assert!.status]).toEqual([condition, expected]);
    }
  });

  it('every validation of an assert_contribution step must pass; only any_of can', async () => {
    const r = await run([
      branch(),
      assertion([
        { check: 'any_of', allowed_values: ['handled'] },
        {
          check: 'field_present',
          path: 'x',
          description: 'a check that cannot grade here',
          allowed_values: ['handled'],
        },
      ]),
    ]);
    const result = r.steps.assert!.result;
    expect(result.passed).toBe(false);
    expect(result.validations).toEqual([
      {
        check: 'any_of',
        passed: true,
        description: 'any_of',
        source: { file: '/virtual/inline.storyboard.yaml', line: expect.any(Number), column: expect.any(Number) },
        schema_id: null,
        schema_url: null,
      },
      expect.objectContaining({
        check: 'field_present',
        passed: false,
        description: 'a check that cannot grade here',
        expected: ['handled'],
        actual: ['handled'],
        error: 'check "field_present" cannot grade an assert_contribution step (only any_of does)',
        json_pointer: null,
      }),
    ]);
  });
});

describe('secrets', () => {
  it("a principal's key the agent echoes appears in no message or record, nor does a credential in the agent URL", async () => {
    const { url } = endpoint();
    const kit = { auth: { api_key: TOKEN, principals: { alice: { api_key: 'alice-secret-key-42' } } } };
    const yaml = phasedStoryboard([
      {
        id: 'main',
        steps: [
          {
            id: 'echo',
            task: 'get_adcp_capabilities',
            sample_request: { context: { who: '$test_kit.auth.principals.alice.api_key' } },
            validations: [{ check: 'field_value', path: 'context.who', value: 'someone else' }],
          },
        ],
      },
    ]);
    const withUrlSecret = `${url}?api_key=url-secret-9`;
    const loaded = loadStoryboard(yaml, '/virtual/inline.storyboard.yaml');
    if (!loaded.ok) throw new Error('inline storyboard did not load');
    // open-run.ts hands the URL's credentials to the run.
    expect(openStoryboardRun(loaded.storyboard, { agentUrl: withUrlSecret }).secrets()).toContain('url-secret-9');
    const run = new StoryboardRun(loaded.storyboard, {
      roles: BUILTIN_ROLES,
      transport: () => new McpTransport({ url: withUrlSecret, maxResponseBytes: 1_000_000 }),
      schemas: schemaRegistryFor(defaultSchemasDir()!),
      testKit: kit as never,
      timeoutMs: 5_000,
      knownSecrets: secretsInUrl(withUrlSecret),
    });
    try {
      const [outcome] = await run.runAll();
      expect(outcome!.status).toBe('failed');
      const record = redactStepResult(outcome!.result, run.secrets());
      const message = formatStepFailure(record, { secrets: run.secrets() });
      const everything = JSON.stringify(record) + message.message + JSON.stringify(message.actual);
      expect(JSON.stringify(outcome!.result)).toContain('alice-secret-key-42');
      expect(everything).not.toContain('alice-secret-key-42');
      expect(everything).not.toContain('url-secret-9');
      expect(everything).toContain('[redacted]');
    } finally {
      await run.close();
    }
  });
});
