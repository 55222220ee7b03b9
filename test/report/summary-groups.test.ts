/**
 * The terminal summary (src/report/summary.ts) on contract reports built directly (not through the reporter's
 * builder), so each case can be set up exactly: every skip group and the hint it brings, under both runners; the
 * auth-refusal count; steps that did not run and storyboards skipped as a whole; multi-agent labels and tool lists;
 * truncation of the groups; the one-cause-before-the-agent line; load errors.
 */
import { describe, expect, it } from 'vitest';
import type { SkipResult, StepResult } from '../../src/model/records.js';
import type { ContractReport, StoryboardReport, StoryboardStatus } from '../../src/report/build.js';
import { claimSummary, renderTerminalSummary, statusWithSkips, toolListOf } from '../../src/report/summary.js';

const AGENT = 'http://127.0.0.1:1/mcp';

function step(id: string, over: Partial<StepResult> = {}): StepResult {
  return {
    storyboard_id: 'sb',
    phase_id: 'p',
    step_id: id,
    task: 'get_products',
    passed: true,
    duration_ms: 1,
    validations: [],
    extraction: { path: 'structured_content' },
    ...over,
  };
}
const skip = (id: string, reason: SkipResult['reason'], detail: string, passed = true) =>
  step(id, { passed, skip: { reason, detail } });
const failed = (id: string, over: Partial<StepResult> = {}) => step(id, { passed: false, ...over });
const notRun = (id: string) =>
  ({
    ...step(id, { passed: false, duration_ms: 0 }),
    not_run: { reason: 'not_reached', detail: 'its test did not run' },
  }) as StepResult;

interface Sb {
  id?: string;
  track?: string;
  project?: string;
  agent_url?: string | null;
  skip?: SkipResult;
  steps?: StepResult[];
}

/** A contract report with what the summary reads: storyboards, tracks (one per track × project × agent, in order), totals, targets, load errors. */
function contract(
  sbs: Sb[],
  options: { status?: Record<string, string>; targets?: number; load_errors?: string[] } = {},
): ContractReport {
  const storyboards: StoryboardReport[] = sbs.map((s, i) => ({
    storyboard_id: s.id ?? `sb${i}`,
    title: s.id ?? `sb${i}`,
    file: `${s.id ?? `sb${i}`}.yaml`,
    ...(s.track ? { track: s.track } : {}),
    project: s.project ?? '',
    agent_url: s.agent_url === undefined ? AGENT : s.agent_url,
    protocol: 'mcp',
    status: 'passed',
    ...(s.skip ? { skip: s.skip } : {}),
    steps: s.steps ?? [],
  }));
  const tracks = new Map<
    string,
    { track: string; project: string; agent_url: string | null; status: StoryboardStatus }
  >();
  for (const sb of storyboards) {
    const track = sb.track ?? 'untracked';
    const key = JSON.stringify([track, sb.project, sb.agent_url]);
    if (!tracks.has(key))
      tracks.set(key, {
        track,
        project: sb.project,
        agent_url: sb.agent_url,
        status: (options.status?.[track] ?? 'passed') as StoryboardStatus,
      });
  }
  const all = storyboards.flatMap((s) => s.steps);
  const ran = all.filter((s) => !('not_run' in s));
  return {
    run: {
      targets: Array.from({ length: options.targets ?? 1 }, (_, i) => ({
        project: '',
        agent_url: `http://agent${i}.test/mcp`,
        protocol: 'mcp',
        corpus_version: null,
      })),
    },
    summary: {
      total_steps: ran.length,
      steps_passed: ran.filter((s) => s.passed && !s.skip).length,
      steps_failed: ran.filter((s) => !s.passed && !s.skip).length,
      steps_skipped: ran.filter((s) => s.skip).length,
      steps_not_run: all.length - ran.length,
      tracks: [...tracks.values()],
      schemas_used: [],
    },
    storyboards,
    load_errors: (options.load_errors ?? []).map((file) => ({ file, message: 'm', project: '' })),
  } as unknown as ContractReport;
}

const WEBHOOK_UNSATISFIED =
  "expect_webhook needs the runner's webhook receiver (contract \"webhook_receiver_runner\"), and this run hosts none (plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver)";
const WEBHOOK_UNRESOLVED =
  "unresolved_substitution: {{runner.webhook_url:op}} needs the runner's webhook receiver, and this run hosts none (plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver)";
const RATE_ABUSE =
  'rate_abuse_opt_out: the operator opted out of vector 020 (contract "rate_abuse" of signed_requests_runner: N+1 signed requests to fill the per-keyid replay cache)';
const CONTROLLER =
  'this step needs comply_test_controller (deterministic testing), which the agent does not advertise; agent tools: [get_products, sync_creatives]';
const REQUIRED_TOOLS =
  "the storyboard's required_tools [sync_audiences]: the agent advertises none of them; agent tools: [get_products, sync_creatives]";
const VECTOR_TOOLS =
  'vector 001 is sent as one of [create_media_buy], none of which the agent advertises (signed-requests.yaml: operations the agent does not implement are skipped, not failed); agent tools: [get_products, sync_creatives]';
const OAUTH =
  'oauth_not_advertised: the agent serves no protected-resource metadata (HTTP 404 at http://127.0.0.1:1/.well-known/oauth-protected-resource), so it does not offer OAuth';
const SKIP_IF = 'phase "api_key" skipped: skip_if "!test_kit.auth.api_key" is true for this test kit';
const SIGNING = "request_signing_not_advertised: the agent's get_adcp_capabilities declares no request_signing block";
const SEED = 'fixture_seed_unsupported: the agent does not seed fixtures';

const HINT = {
  vitest: {
    webhook:
      "the runner's webhook receiver would run them: npx vitest-adcp … --webhook-receiver, or the plugin option webhooks: { receiver: 'loopback' }",
    auth: 'the agent refused the credentials (HTTP 401/403): pass --auth-file <path> or set ADCP_AUTH_TOKEN (plugin option agent.auth.token)',
    rate: 'opted out of the rate_abuse vectors: run without --skip-rate-abuse (plugin option signedRequests.skipRateAbuse)',
    controller:
      'they need comply_test_controller (deterministic testing), which the agent does not advertise: run them against a build of the agent that serves it',
  },
  jest: {
    webhook:
      "they need the runner's webhook receiver, which vitest-adcp hosts under Vitest only: npx vitest-adcp <agent-url> --webhook-receiver",
    auth: "the agent refused the credentials (HTTP 401/403): set ADCP_AUTH_TOKEN, or the preset's option adcp: { authToken }",
    rate: "opted out of the rate_abuse vectors: unset ADCP_SKIP_RATE_ABUSE (or the preset's adcp: { skipRateAbuse })",
    controller:
      'they need comply_test_controller (deterministic testing), which the agent does not advertise: run them against a build of the agent that serves it',
  },
};
const TOOLS_LINE = '  agent tools: get_products, sync_creatives — missing_tool skips are tasks it does not advertise';

describe('renderTerminalSummary: skip groups and hints', () => {
  const kinds = contract([
    {
      id: 'kinds',
      track: 'core',
      steps: [
        step('ok'),
        skip('w1', 'unsatisfied_contract', WEBHOOK_UNSATISFIED),
        skip('w2', 'not_applicable', WEBHOOK_UNRESOLVED),
        skip('r1', 'unsatisfied_contract', RATE_ABUSE),
        skip('r2', 'unsatisfied_contract', RATE_ABUSE),
        skip('c1', 'missing_test_controller', CONTROLLER),
        skip('t1', 'missing_tool', REQUIRED_TOOLS),
        skip('v1', 'missing_tool', VECTOR_TOOLS),
        skip('o1', 'not_applicable', OAUTH),
        skip('k1', 'not_applicable', SKIP_IF),
        skip('s1', 'not_applicable', SIGNING),
        skip('s2', 'not_applicable', SIGNING),
        skip('f1', 'not_applicable', SEED),
        // A code counts only where the detail starts with it.
        skip('n1', 'not_applicable', 'vector negative_003: the agent implements none of its operations'),
        skip('b1', 'peer_branch_taken', 'branch b was taken'),
      ],
    },
  ]);

  it('one group per reason and kind, counted; the hints of the groups that have one, in the order first met', () => {
    const lines = renderTerminalSummary(kinds, { maxGroups: 20 }).split('\n');
    expect(lines[0]).toBe('vitest-adcp: 1 storyboard, 15 steps: 1 passed, 0 failed, 14 skipped');
    expect(lines[1]).toBe('  ✓ core  passed (1 run, 14 skipped) — 1 storyboard, 1 passed, 0 failed, 14 skipped');
    expect(lines[2]!.startsWith('      skipped: ')).toBe(true);
    expect(lines[2]!.slice('      skipped: '.length).split(', ').sort()).toEqual(
      [
        'unsatisfied_contract (rate_abuse vectors opted out) ×2',
        'not_applicable (request_signing_not_advertised) ×2',
        'unsatisfied_contract (no webhook receiver in this run) ×1',
        'not_applicable (no webhook receiver in this run) ×1',
        'missing_test_controller ×1',
        "missing_tool (none of the storyboard's required_tools) ×1",
        'missing_tool ×1',
        'not_applicable (the agent offers no OAuth) ×1',
        'not_applicable (skip_if of the test kit) ×1',
        'not_applicable (fixture_seed_unsupported) ×1',
        'not_applicable ×1',
        'peer_branch_taken ×1',
      ].sort(),
    );
    // The two ×2 groups first.
    expect(lines[2]).toMatch(
      /^ {6}skipped: not_applicable \(request_signing_not_advertised\) ×2, unsatisfied_contract \(rate_abuse vectors opted out\) ×2, /,
    );
    expect(lines.slice(3)).toEqual([
      TOOLS_LINE,
      `  hint (2 skipped steps): ${HINT.vitest.webhook}`,
      `  hint (2 skipped steps): ${HINT.vitest.rate}`,
      `  hint (1 skipped step): ${HINT.vitest.controller}`,
    ]);
  });

  it('under Jest, each hint names what Jest users change', () => {
    const lines = renderTerminalSummary(kinds, { maxGroups: 20, runner: 'jest' }).split('\n');
    expect(lines.slice(3)).toEqual([
      TOOLS_LINE,
      `  hint (2 skipped steps): ${HINT.jest.webhook}`,
      `  hint (2 skipped steps): ${HINT.jest.rate}`,
      `  hint (1 skipped step): ${HINT.jest.controller}`,
    ]);
  });

  it('keeps a kind apart per reason (the label names the reason)', () => {
    const text = renderTerminalSummary(
      contract([
        {
          track: 'core',
          steps: [
            skip('r1', 'unsatisfied_contract', RATE_ABUSE),
            skip('r2', 'not_applicable', RATE_ABUSE),
            skip('o1', 'not_applicable', OAUTH),
            skip('o2', 'prerequisite_failed', OAUTH, false),
            skip('k1', 'not_applicable', SKIP_IF),
            skip('k2', 'peer_branch_taken', SKIP_IF),
          ],
        },
      ]),
      { maxGroups: 20 },
    );
    expect(text.split('\n')[2]!.slice('      skipped: '.length).split(', ').sort()).toEqual(
      [
        'not_applicable (rate_abuse vectors opted out) ×1',
        'unsatisfied_contract (rate_abuse vectors opted out) ×1',
        'not_applicable (the agent offers no OAuth) ×1',
        'prerequisite_failed (the agent offers no OAuth) ×1',
        'not_applicable (skip_if of the test kit) ×1',
        'peer_branch_taken (skip_if of the test kit) ×1',
      ].sort(),
    );
  });

  it('shows maxGroups groups, largest first, and counts the rest', () => {
    const sbs = [
      {
        track: 'core',
        steps: [
          ...[1, 2, 3].map((i) => skip(`a${i}`, 'missing_tool', `the agent does not advertise the tool "a"`)),
          skip('b1', 'missing_tool', 'the agent does not advertise the tool "b"'),
          skip('b2', 'missing_tool', 'the agent does not advertise the tool "b"'),
          skip('c', 'peer_branch_taken', 'c'),
          skip('d', 'peer_substituted', 'd'),
        ],
      },
    ];
    expect(renderTerminalSummary(contract(sbs), { maxGroups: 2 }).split('\n')[2]).toBe(
      '      skipped: missing_tool a ×3, missing_tool b ×2, 2 more',
    );
    expect(renderTerminalSummary(contract(sbs), { maxGroups: 3 }).split('\n')[2]).toBe(
      '      skipped: missing_tool a ×3, missing_tool b ×2, peer_branch_taken ×1, 1 more',
    );
    expect(renderTerminalSummary(contract(sbs)).split('\n')[2]).toBe(
      '      skipped: missing_tool a ×3, missing_tool b ×2, peer_branch_taken ×1, peer_substituted ×1',
    );
  });
});

describe('renderTerminalSummary: steps the agent refused for want of credentials', () => {
  const response = (status: number, payload: unknown = {}) => ({ transport: 'mcp' as const, payload, status });
  const report = contract(
    [
      {
        track: 'security',
        steps: [
          failed('401', { response: response(401) }),
          failed('403', { response: response(403) }),
          failed('auth_required', {
            response: response(200, {
              structuredContent: { adcp_error: { code: 'AUTH_REQUIRED', message: 'sign in' } },
            }),
          }),
          // Not a refusal: another error, no answer at all, a step that expected the 401, and a code beyond the 20 000 characters read.
          failed('500', { response: response(500, { adcp_error: { code: 'SERVICE_UNAVAILABLE' } }) }),
          failed('unreachable', {
            error: 'connect ECONNREFUSED',
            request: { transport: 'mcp', operation: 'get_products', payload: {} },
          }),
          step('expected_401', { response: response(401) }),
          failed('long', {
            response: response(200, { filler: 'x'.repeat(20_000), adcp_error: { code: 'AUTH_REQUIRED' } }),
          }),
        ],
      },
    ],
    { status: { security: 'failed' } },
  );

  it('counts failed steps answered 401, 403 or AUTH_REQUIRED, and gives the hint for the runner', () => {
    expect(renderTerminalSummary(report).split('\n')).toEqual([
      'vitest-adcp: 1 storyboard, 7 steps: 1 passed, 6 failed, 0 skipped',
      '  ✗ security  failed — 1 storyboard, 1 passed, 6 failed, 0 skipped',
      `  hint (3 failed steps): ${HINT.vitest.auth}`,
    ]);
    expect(renderTerminalSummary(report, { runner: 'jest' }).split('\n')[2]).toBe(
      `  hint (3 failed steps): ${HINT.jest.auth}`,
    );
  });

  it('gives no auth hint when no step was refused', () => {
    const text = renderTerminalSummary(
      contract([{ track: 'core', steps: [failed('f', { response: response(422) }), failed('g', { error: 'boom' })] }], {
        status: { core: 'failed' },
      }),
    );
    expect(text.split('\n')).toEqual([
      'vitest-adcp: 1 storyboard, 2 steps: 0 passed, 2 failed, 0 skipped',
      '  ✗ core  failed — 1 storyboard, 0 passed, 2 failed, 0 skipped',
    ]);
  });
});

describe('renderTerminalSummary: steps that did not run, storyboards skipped as a whole', () => {
  it('counts them per track, with the status marks', () => {
    const text = renderTerminalSummary(
      contract(
        [
          { id: 'partial', track: 'media_buy', steps: [step('a'), notRun('b')] },
          { id: 'unreached', track: 'creative', steps: [notRun('c'), notRun('d')] },
          { id: 'empty', track: 'governance', skip: { reason: 'no_phases', detail: 'the storyboard has no phases' } },
        ],
        { status: { media_buy: 'incomplete', creative: 'not_run', governance: 'skipped' } },
      ),
    );
    expect(text.split('\n')).toEqual([
      'vitest-adcp: 3 storyboards (1 skipped as a whole: no_phases ×1), 1 step: 1 passed, 0 failed, 0 skipped, 3 not run',
      '  ◐ media_buy   incomplete — 1 storyboard, 1 passed, 0 failed, 0 skipped, 1 not run',
      '  ○ creative    not run — 1 storyboard, 0 passed, 0 failed, 0 skipped, 2 not run',
      '  ↓ governance  skipped — 1 storyboard, 0 passed, 0 failed, 1 skipped',
      '      skipped: no_phases ×1',
    ]);
  });

  it('counts the storyboards skipped as a whole by reason in the first line', () => {
    const gate = {
      reason: 'not_applicable' as const,
      detail: 'requires_capability: a.b must equal true; the agent declares false',
    };
    const text = renderTerminalSummary(
      contract(
        [
          { id: 'ran', track: 'core', steps: [step('a')] },
          { id: 'gated', track: 'media_buy', skip: gate },
          { id: 'gated_too', track: 'media_buy', skip: gate },
          {
            id: 'empty',
            track: 'governance',
            skip: { reason: 'no_phases' as const, detail: 'the storyboard has no phases' },
          },
        ],
        { status: { core: 'passed', media_buy: 'skipped', governance: 'skipped' } },
      ),
    );
    expect(text.split('\n')[0]).toBe(
      'vitest-adcp: 4 storyboards (3 skipped as a whole: not_applicable ×2, no_phases ×1), 1 step: 1 passed, 0 failed, 0 skipped',
    );
  });

  it('marks a status it does not know (a report of another version) with a dash', () => {
    const text = renderTerminalSummary(
      contract([{ track: 'core', steps: [step('a')] }], { status: { core: 'deferred' } }),
    );
    expect(text.split('\n')[1]).toBe('  - core  deferred — 1 storyboard, 1 passed, 0 failed, 0 skipped');
  });
});

describe('renderTerminalSummary: several agents or projects', () => {
  const tool = (id: string, list: string) =>
    skip(id, 'missing_tool', `the agent does not advertise the tool "sync_creatives"; agent tools: [${list}]`);

  it("labels each track with its project and agent, and lists each agent's tools", () => {
    const text = renderTerminalSummary(
      contract(
        [
          {
            track: 'core',
            project: 'alpha',
            agent_url: 'http://a.test/mcp',
            steps: [step('a'), tool('m', 'get_products')],
          },
          { track: 'core', project: 'beta', agent_url: 'http://a.test/mcp', steps: [failed('f', { error: 'x' })] },
          { track: 'core', project: 'alpha', agent_url: 'http://b.test/mcp', steps: [tool('m', '')] },
          { track: 'core', project: '', agent_url: null, steps: [tool('m', 'list_creatives')] },
        ],
        { targets: 4, status: { core: 'passed' } },
      ),
    );
    expect(text.split('\n')).toEqual([
      'vitest-adcp: 4 storyboards, 5 steps: 1 passed, 1 failed, 3 skipped',
      '  ✓ core [alpha http://a.test/mcp]  passed (1 run, 1 skipped) — 1 storyboard, 1 passed, 0 failed, 1 skipped',
      '      skipped: missing_tool sync_creatives ×1',
      '  ✓ core [beta http://a.test/mcp]   passed — 1 storyboard, 0 passed, 1 failed, 0 skipped',
      '  ✓ core [alpha http://b.test/mcp]  passed (0 run, 1 skipped) — 1 storyboard, 0 passed, 0 failed, 1 skipped',
      '      skipped: missing_tool sync_creatives ×1',
      '  ✓ core [no agent]                 passed (0 run, 1 skipped) — 1 storyboard, 0 passed, 0 failed, 1 skipped',
      '      skipped: missing_tool sync_creatives ×1',
      '  agent tools (http://a.test/mcp): get_products — missing_tool skips are tasks it does not advertise',
      '  agent tools (http://b.test/mcp): none — missing_tool skips are tasks it does not advertise',
      '  agent tools (no agent): list_creatives — missing_tool skips are tasks it does not advertise',
    ]);
  });

  it('names the agent of the one tool list of a run with several targets', () => {
    const text = renderTerminalSummary(
      contract(
        [
          { track: 'core', agent_url: 'http://a.test/mcp', steps: [tool('m', 'get_products')] },
          { track: 'core', agent_url: 'http://b.test/mcp', steps: [step('a')] },
        ],
        { targets: 2 },
      ),
    );
    expect(text.split('\n').at(-1)).toBe(
      '  agent tools (http://a.test/mcp): get_products — missing_tool skips are tasks it does not advertise',
    );
  });
});

describe('renderTerminalSummary: one cause before the agent, files that did not load', () => {
  const request = { transport: 'mcp' as const, operation: 'get_products', payload: {} };

  it('says a cause once when it failed two steps or more before any reached the agent, its first line, at most 400 characters', () => {
    const exactly400 = 'e'.repeat(400);
    const over400 = `${'o'.repeat(401)}`;
    const text = renderTerminalSummary(
      contract(
        [
          {
            track: 'core',
            steps: [
              ...[1, 2].map((i) =>
                failed(`cfg${i}`, { error: 'no agent to test: set ADCP_AGENT_URL\n(see the docs)' }),
              ),
              failed('once', { error: 'a cause of one step' }),
              ...[1, 2].map((i) => failed(`sent${i}`, { error: 'connect ECONNREFUSED', request })),
              ...[1, 2].map((i) =>
                failed(`graded${i}`, {
                  error: 'assertion failed',
                  validations: [{ check: 'field_present', passed: false, description: 'd', json_pointer: '/x' }],
                }),
              ),
              ...[1, 2].map((i) => failed(`e${i}`, { error: exactly400 })),
              ...[1, 2].map((i) => failed(`o${i}`, { error: over400 })),
            ],
          },
        ],
        { status: { core: 'failed' } },
      ),
    );
    expect(text.split('\n')).toEqual([
      'vitest-adcp: 1 storyboard, 11 steps: 0 passed, 11 failed, 0 skipped',
      '  ✗ core  failed — 1 storyboard, 0 passed, 11 failed, 0 skipped',
      '  ✗ 2 steps failed before reaching the agent: no agent to test: set ADCP_AGENT_URL',
      `  ✗ 2 steps failed before reaching the agent: ${exactly400}`,
      `  ✗ 2 steps failed before reaching the agent: ${'o'.repeat(399)}…`,
    ]);
  });

  it('names at most three files that did not load, even in a run without storyboards', () => {
    expect(
      renderTerminalSummary(contract([], { load_errors: ['a.yaml', 'b.yaml', 'c.yaml', 'd.yaml'] })).split('\n'),
    ).toEqual([
      'vitest-adcp: 0 storyboards, 0 steps: 0 passed, 0 failed, 0 skipped',
      '  ✗ 4 storyboard files did not load: a.yaml, b.yaml, c.yaml, … (the errors are above)',
    ]);
    expect(renderTerminalSummary(contract([], { load_errors: ['a.yaml', 'b.yaml', 'c.yaml'] })).split('\n')[1]).toBe(
      '  ✗ 3 storyboard files did not load: a.yaml, b.yaml, c.yaml (the errors are above)',
    );
  });
});

describe('the helpers', () => {
  it('statusWithSkips counts failed steps as run (an optional phase may fail in a passed track)', () => {
    expect(statusWithSkips('passed', { passed: 2, failed: 1, skipped: 3 })).toBe('passed (3 run, 3 skipped)');
  });

  it('toolListOf reads the list with or without a space after the semicolon, and an empty one as no tools', () => {
    expect(toolListOf('the agent does not advertise the tool "x";agent tools: [a, b]')).toEqual(['a', 'b']);
    expect(toolListOf('x; agent tools: [ ]')).toEqual([]);
    expect(toolListOf('x; agent tools: ')).toBeUndefined();
  });

  it('claimSummary keeps its mark under a global symbol, which every copy of the module finds', () => {
    const end = [] as object;
    expect(claimSummary(end)).toBe(true);
    const printed = (globalThis as Record<symbol, unknown>)[
      Symbol.for('vitest-adcp.summary-printed')
    ] as WeakSet<object>;
    expect(printed.has(end)).toBe(true);
  });
});
