/**
 * The verdict-settling mechanism (docs/architecture.md): a failing step in an
 * any_of branch set is reported only once every peer branch has run, and is
 * graded peer_branch_taken when a peer — even a later one — contributed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { defaultSchemasDir } from '../../src/corpus.js';
import { StoryboardRun } from '../../src/engine/run.js';
import { BUILTIN_ROLES } from '../../src/roles/index.js';
import { schemaRegistryFor } from '../../src/schemas/registry.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { McpTransport } from '../../src/transport/mcp.js';
import { TOKEN } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

/** Branch "reject" expects an error; branch "accept" expects success. A conformant agent takes "accept". */
const branches = (rejectFirst: boolean) => {
  const reject = `  - id: reject_path
    title: Agent rejects
    optional: true
    branch_set: { id: handled, semantics: any_of }
    steps:
      - id: try_reject
        task: get_adcp_capabilities
        expect_error: true
        contributes: true
        validations:
          - check: error_code
            value: INVALID_REQUEST`;
  const accept = `  - id: accept_path
    title: Agent accepts
    optional: true
    branch_set: { id: handled, semantics: any_of }
    steps:
      - id: try_accept
        task: get_adcp_capabilities
        contributes: true
        validations:
          - check: field_present
            path: adcp`;
  return [
    'id: branchy',
    'title: Branchy',
    'phases:',
    ...(rejectFirst ? [reject, accept] : [accept, reject]),
    `  - id: enforcement
    title: Enforcement
    steps:
      - id: assert_handled
        task: assert_contribution
        validations:
          - check: any_of
            allowed_values: [handled]
            description: one branch handled it`,
    '',
  ].join('\n');
};

function runFor(yaml: string, url: string) {
  const loaded = loadStoryboard(yaml, '/virtual/branchy.storyboard.yaml');
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
  return new StoryboardRun(loaded.storyboard, {
    roles: BUILTIN_ROLES,
    transport: () => new McpTransport({ url, maxResponseBytes: 1 << 20 }),
    schemas: schemaRegistryFor(defaultSchemasDir()!),
    authToken: TOKEN,
    timeoutMs: 5_000,
  });
}

describe('branch sets settle before they are reported', () => {
  it('a failing branch that runs first becomes peer_branch_taken once a later peer contributes', async () => {
    const run = runFor(branches(true), agent.url);
    // Asked first, before the peer has run: the answer must already account for it.
    const first = await run.settle('reject_path', 'try_reject');
    expect(first.status).toBe('skipped');
    expect(first.result.skip).toEqual({
      reason: 'peer_branch_taken',
      detail: 'handled contributed by accept_path.try_accept — reject_path is moot',
    });
    expect(first.result.passed).toBe(false);
    expect((await run.settle('accept_path', 'try_accept')).status).toBe('passed');
    expect((await run.settle('enforcement', 'assert_handled')).status).toBe('passed');
    await run.close();
  });

  it('the same when the failing branch runs second', async () => {
    const run = runFor(branches(false), agent.url);
    const outcomes = await run.runAll();
    expect(outcomes.map((o) => [o.result.step_id, o.status])).toEqual([
      ['try_accept', 'passed'],
      ['try_reject', 'skipped'],
      ['assert_handled', 'passed'],
    ]);
    await run.close();
  });

  it('when no branch contributes, branch failures stay failed and the assertion fails', async () => {
    const run = runFor(branches(true), agent.urlFor(['garbage']));
    const outcomes = await run.runAll();
    expect(outcomes.map((o) => [o.result.step_id, o.status])).toEqual([
      ['try_reject', 'failed'],
      ['try_accept', 'failed'],
      ['assert_handled', 'failed'],
    ]);
    expect(outcomes[2]!.result.validations[0]).toMatchObject({
      check: 'any_of',
      passed: false,
      expected: ['handled'],
      actual: [],
    });
    await run.close();
  });

  it('each step runs once, whatever order the verdicts are asked in', async () => {
    const own = await startFixtureAgent();
    const run = runFor(branches(true), own.url);
    const [late, early] = await Promise.all([
      run.settle('enforcement', 'assert_handled'),
      run.settle('reject_path', 'try_reject'),
    ]);
    expect(late.status).toBe('passed');
    expect(early.status).toBe('skipped');
    const again = await run.settle('reject_path', 'try_reject');
    expect(again).toEqual(early);
    await run.settle('accept_path', 'try_accept');
    // Counted at the agent: two steps call get_adcp_capabilities, once each, however often their verdicts are asked.
    expect(own.callsFor('get_adcp_capabilities')).toHaveLength(2);
    await run.close();
    await own.close();
  });
});

describe('isolation', () => {
  it('an internal error fails its own step and the run still completes', async () => {
    const loaded = loadStoryboard(branches(true), '/virtual/branchy.storyboard.yaml');
    if (!loaded.ok) throw new Error('fixture');
    const run = new StoryboardRun(loaded.storyboard, {
      roles: BUILTIN_ROLES,
      transport: () => {
        throw new Error('transport factory exploded');
      },
      timeoutMs: 1_000,
    });
    const outcomes = await run.runAll();
    expect(outcomes.map((o) => o.status)).toEqual(['failed', 'failed', 'failed']);
    expect(outcomes[0]!.result.error).toMatch(
      /^vitest-adcp internal error \(please report it\): Error: transport factory exploded/,
    );
    await run.close();
  });
});
