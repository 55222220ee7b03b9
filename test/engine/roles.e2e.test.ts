/**
 * Runner roles as plug-ins (src/engine/role.ts): a role the engine has never heard of — declared here, in the test —
 * plans a step into the storyboard, claims its task, gates and runs it, and decides a verdict on an agent's answer,
 * with nothing in src/engine/ or src/roles/ knowing it. The engine dispatches only through the roles its run is given,
 * and the compiler plans through the same roles: the step the role plans in gets its test, src/compile/ untouched.
 */
import { rateLimitBoundMs } from '../../src/transport/rate-limit.js';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileStoryboard } from '../../src/compile/compile.js';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import type { RunnerRole } from '../../src/engine/role.js';
import { StoryboardRun } from '../../src/engine/run.js';
import type { Step } from '../../src/model/storyboard.js';
import { BUILTIN_ROLES } from '../../src/roles/index.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { McpTransport } from '../../src/transport/mcp.js';
import { TOKEN } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

const YAML = [
  'id: roles_demo',
  'title: Roles demo',
  'phases:',
  '  - id: main',
  '    title: Main',
  '    steps:',
  '      - id: capabilities',
  '        title: Capabilities',
  '        task: get_adcp_capabilities',
  '',
].join('\n');

/** What the tiny role saw, for the assertions. */
interface Seen {
  ran: string[];
  verdicts: string[];
  closed: boolean;
}

/** A role that counts the agent's protocols itself: one planned step of its own task, and a verdict on the agent's answer. */
function countingRole(seen: Seen): RunnerRole {
  const counted: Step = {
    id: 'count_protocols',
    title: 'The runner counts the protocols the agent declared',
    task: 'runner_count_protocols',
    stateful: false,
    validations: [],
    loc: { line: 1, column: 1 },
  };
  const skipped: Step = { ...counted, id: 'gated', title: 'A step the role gates' };
  return {
    name: 'protocol-counter',
    tasks: new Set(['runner_count_protocols']),
    plan: (phases, storyboard) => [
      ...phases,
      { id: 'counting', title: 'Counting', steps: [counted, skipped], loc: storyboard.loc },
    ],
    open: (run) => {
      let protocols: unknown;
      return {
        gate: ({ step }) =>
          step.id === 'gated' ? { reason: 'not_applicable', detail: 'protocol-counter: gated by the role' } : undefined,
        run: async ({ step }, result) => {
          seen.ran.push(step.id);
          const count = Array.isArray(protocols) ? protocols.length : 0;
          return { result: { ...result, passed: count > 0, extraction: { path: 'none', note: `${count} protocols` } } };
        },
        verdict: ({ step, task }, exchange, graded) => {
          if (task !== 'get_adcp_capabilities') return undefined;
          seen.verdicts.push(step.id);
          protocols = (exchange.data as { supported_protocols?: unknown } | undefined)?.supported_protocols;
          return { result: { ...graded, warnings: [`protocol-counter read ${run.storyboard.id}`] } };
        },
        close: async () => {
          seen.closed = true;
        },
      };
    },
  };
}

function open(roles: readonly RunnerRole[]): StoryboardRun {
  const loaded = loadStoryboard(YAML, '/virtual/roles.storyboard.yaml');
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
  return new StoryboardRun(loaded.storyboard, {
    roles,
    transport: () => new McpTransport({ url: agent.url, maxResponseBytes: 1e6 }),
    authToken: TOKEN,
    timeoutMs: 10_000,
  });
}

describe('a role registered from outside src/', () => {
  it('is planned, gated, run and asked for verdicts by the engine, beside the built-in roles', async () => {
    const seen: Seen = { ran: [], verdicts: [], closed: false };
    const run = open([...BUILTIN_ROLES, countingRole(seen)]);
    try {
      const outcomes = await run.runAll();
      expect(outcomes.map((o) => [o.result.phase_id, o.result.step_id, o.status])).toEqual([
        ['main', 'capabilities', 'passed'],
        ['counting', 'count_protocols', 'passed'],
        ['counting', 'gated', 'skipped'],
      ]);
      const [capabilities, counted, gated] = outcomes.map((o) => o.result);
      expect(capabilities!.warnings).toEqual(['protocol-counter read roles_demo']);
      // Its own task never reached the agent: the role's record, timed by the engine.
      expect(counted!.extraction).toEqual({ path: 'none', note: expect.stringMatching(/^[1-9]\d* protocols$/) });
      expect(counted!.duration_ms).toBeGreaterThanOrEqual(0);
      expect(gated!.skip).toEqual({ reason: 'not_applicable', detail: 'protocol-counter: gated by the role' });
      expect(seen).toMatchObject({ ran: ['count_protocols'], verdicts: ['capabilities'] });
    } finally {
      await run.close();
    }
    expect(seen.closed).toBe(true);
  });

  it('is not there when the run is not given it: the engine knows only the roles it is handed', async () => {
    const run = open(BUILTIN_ROLES);
    // One step planned (the bound counts it, with its rate-limit resends, beside the tool list and the OAuth probes),
    // none of the role's.
    expect(run.worstCaseMs()).toBe(10_000 + rateLimitBoundMs(10_000) + 3 * 10_000);
    await expect(run.settle('counting', 'count_protocols')).rejects.toThrow(
      'storyboard "roles_demo" has no step "counting/count_protocols"',
    );
    await run.close();
  });

  it('refuses two roles that claim one task', () => {
    const seen: Seen = { ran: [], verdicts: [], closed: false };
    expect(() => open([countingRole(seen), { ...countingRole(seen), name: 'copycat' }])).toThrow(
      'runner task "runner_count_protocols" is claimed by the roles protocol-counter and copycat',
    );
  });
});

describe("a role's planned steps in the compiled module", () => {
  const FILE = '/virtual/roles.storyboard.yaml';
  const compile = (roles?: readonly RunnerRole[]) =>
    compileStoryboard(YAML, FILE, { runtime: 'vitest-adcp/runtime', ...(roles ? { roles } : {}) });
  const seen = (): Seen => ({ ran: [], verdicts: [], closed: false });

  it("gets a test per planned step, in the role's own describe, when compile is given the role", () => {
    const { code, map } = compile([...BUILTIN_ROLES, countingRole(seen())]);
    const counting = code.indexOf('describe("Counting (counting)", () => {');
    const counted = code.indexOf(
      'it("The runner counts the protocols the agent declared (count_protocols)", { meta: suite.planned("counting", "count_protocols"), timeout: suite.timeout() }, (ctx) => suite.step(ctx, "counting", "count_protocols"));',
    );
    const gated = code.indexOf('suite.step(ctx, "counting", "gated")');
    const main = code.indexOf('describe("Main (main)"');
    expect(
      [counting, counted, gated, main].every((i) => i >= 0),
      code,
    ).toBe(true);
    // An injected phase has no YAML node: it sits at the storyboard's line, before the YAML's phases.
    expect(counting).toBeLessThan(counted);
    expect(counted).toBeLessThan(gated);
    expect(gated).toBeLessThan(main);
    const before = code.slice(0, counting).split('\n');
    expect(
      originalPositionFor(new TraceMap(map as never), { line: before.length, column: before.at(-1)!.length }),
    ).toMatchObject({ source: 'roles.storyboard.yaml', line: 1 });
  });

  it('is not there without the role: compile plans with the built-in roles by default', () => {
    expect(compile().code).not.toContain('"counting"');
    expect(compile().code).toBe(compile(BUILTIN_ROLES).code);
  });
});
