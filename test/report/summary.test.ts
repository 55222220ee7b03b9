/**
 * The terminal summary at the end of a storyboard run (src/report/summary.ts), from contract reports built by the
 * reporter's own builder: per track, counts, skip reasons grouped and counted, the agent's tool list once, the hints
 * that enable skipped work; and the skip line a step prints without that list.
 */
import { describe, expect, it } from 'vitest';
import { skipText } from '../../src/adapter/step-failure.js';
import type { StepResult } from '../../src/model/records.js';
import { buildReport, type ReportTest } from '../../src/report/build.js';
import { renderMarkdownSummary } from '../../src/report/markdown.js';
import {
  claimSummary,
  renderTerminalSummary,
  statusWithSkips,
  toolListOf,
  withoutToolList,
} from '../../src/report/summary.js';

const TOOLS = '; agent tools: [create_media_buy, get_adcp_capabilities, get_products]';

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
const skip = (
  id: string,
  reason: StepResult['skip'] extends infer S ? (S extends { reason: infer R } ? R : never) : never,
  detail: string,
) => step(id, { skip: { reason, detail } });

function test(storyboard: { id: string; track?: string; agent_url?: string }, result: StepResult): ReportTest {
  const info = {
    id: storyboard.id,
    title: storyboard.id,
    file: `/repo/${storyboard.id}.yaml`,
    ...(storyboard.track ? { track: storyboard.track } : {}),
    agent_url: storyboard.agent_url ?? 'http://127.0.0.1:1/mcp',
    protocol: 'mcp' as const,
  };
  const status = result.skip ? 'skipped' : result.passed ? 'passed' : 'failed';
  return {
    project: '',
    file: info.file,
    name: result.step_id,
    state: status,
    errors: [],
    meta: {
      adcp: {
        id: `${storyboard.id}/${result.phase_id}/${result.step_id}`,
        status,
        result: { ...result, storyboard_id: storyboard.id },
        storyboard: info,
      },
    },
  };
}

function report(tests: ReportTest[]) {
  return buildReport(tests, {
    root: '/repo',
    started_at: '2026-01-01T00:00:00.000Z',
    finished_at: '2026-01-01T00:00:01.000Z',
  });
}

const webhook =
  "expect_webhook needs the runner's webhook receiver (contract \"webhook_receiver_runner\"), and this run hosts none (plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver)";

describe('renderTerminalSummary', () => {
  it('per track: status, counts, skip reasons grouped and counted; the tool list once; the hints', () => {
    const text = renderTerminalSummary(
      report([
        test({ id: 'idempotency', track: 'core' }, step('a')),
        test({ id: 'idempotency', track: 'core' }, step('b')),
        ...[1, 2, 3].map((i) =>
          test(
            { id: 'idempotency', track: 'core' },
            skip(`m${i}`, 'missing_tool', `the agent does not advertise the tool "sync_creatives"${TOOLS}`),
          ),
        ),
        test(
          { id: 'idempotency', track: 'core' },
          skip(
            'm4',
            'missing_tool',
            `the agent does not advertise the tool "get_media_buys"${TOOLS} (the only stateful step of phase p: nothing downstream is cascaded)`,
          ),
        ),
        ...[1, 2].map((i) =>
          test(
            { id: 'idempotency', track: 'core' },
            skip(`c${i}`, 'prerequisite_failed', 'prerequisite step "m1" (phase p) was skipped (missing_tool), so …'),
          ),
        ),
        ...[1, 2, 3].map((i) =>
          test({ id: 'webhook_emission', track: 'webhooks' }, skip(`w${i}`, 'unsatisfied_contract', webhook)),
        ),
        test(
          { id: 'signals', track: 'signals' },
          step('s', { passed: false, response: { transport: 'mcp', payload: {}, status: 401 } }),
        ),
      ]),
    );
    expect(text.split('\n')).toEqual([
      'vitest-adcp: 3 storyboards, 12 steps: 2 passed, 1 failed, 9 skipped',
      '  ✓ core      passed (2 run, 6 skipped) — 1 storyboard, 2 passed, 0 failed, 6 skipped',
      '      skipped: missing_tool sync_creatives ×3, prerequisite_failed ×2, missing_tool get_media_buys ×1',
      '  ↓ webhooks  skipped — 1 storyboard, 0 passed, 0 failed, 3 skipped',
      '      skipped: unsatisfied_contract (no webhook receiver in this run) ×3',
      '  ✗ signals   failed — 1 storyboard, 0 passed, 1 failed, 0 skipped',
      '  agent tools: create_media_buy, get_adcp_capabilities, get_products — missing_tool skips are tasks it does not advertise',
      "  hint (3 skipped steps): the runner's webhook receiver would run them: npx vitest-adcp … --webhook-receiver, or the plugin option webhooks: { receiver: 'loopback' }",
      '  hint (1 failed step): the agent refused the credentials (HTTP 401/403): pass --auth-file <path> or set ADCP_AUTH_TOKEN (plugin option agent.auth.token)',
    ]);
    // Under Jest, the hints name what Jest users can change.
    const jest = renderTerminalSummary(
      report([test({ id: 'w', track: 'webhooks' }, skip('w', 'unsatisfied_contract', webhook))]),
      { runner: 'jest' },
    );
    expect(jest).toContain(
      "  hint (1 skipped step): they need the runner's webhook receiver, which vitest-adcp hosts under Vitest only: npx vitest-adcp <agent-url> --webhook-receiver",
    );
  });

  it('groups other skips by the code their detail starts with, else by reason', () => {
    const text = renderTerminalSummary(
      report([
        test(
          { id: 'signed', track: 'security' },
          skip(
            'v1',
            'not_applicable',
            "request_signing_not_advertised: the agent's get_adcp_capabilities declares no request_signing block …",
          ),
        ),
        test(
          { id: 'signed', track: 'security' },
          skip(
            'v2',
            'not_applicable',
            "request_signing_not_advertised: the agent's get_adcp_capabilities declares no request_signing block …",
          ),
        ),
        test({ id: 'signed', track: 'security' }, skip('v3', 'not_applicable', 'vector 001: not reproducible here')),
      ]),
    );
    expect(text.split('\n')[2]).toBe(
      '      skipped: not_applicable (request_signing_not_advertised) ×2, not_applicable ×1',
    );
  });

  it('says once what failed many steps before any reached the agent, and names files that did not load', () => {
    const config = 'vitest-adcp cannot run the storyboards under Jest: no agent to test. Set ADCP_AGENT_URL';
    const built = report(
      [1, 2, 3].map((i) => test({ id: 'x', track: 'core' }, step(`s${i}`, { passed: false, error: config }))),
    );
    built.load_errors.push({ file: 'broken.storyboard.yaml', message: 'm', project: '' });
    const lines = renderTerminalSummary(built).split('\n');
    expect(lines).toContain(`  ✗ 3 steps failed before reaching the agent: ${config}`);
    expect(lines).toContain('  ✗ 1 storyboard file did not load: broken.storyboard.yaml (the errors are above)');
  });

  it('prints nothing for a run without storyboards, and escapes agent-supplied names', () => {
    expect(renderTerminalSummary(report([]))).toBe('');
    const text = renderTerminalSummary(
      report([
        test(
          { id: 'x' },
          skip('m', 'missing_tool', 'the agent does not advertise the tool "a"; agent tools: [a\u001b[2J, b]'),
        ),
      ]),
    );
    expect(text).not.toContain('\u001b');
    expect(text).toContain('\\u{1b}[2J');
  });
});

describe('a pass with skipped steps', () => {
  it('never reads as a plain pass, in the terminal or the markdown', () => {
    expect(statusWithSkips('passed', { passed: 2, failed: 0, skipped: 6 })).toBe('passed (2 run, 6 skipped)');
    expect(statusWithSkips('passed', { passed: 2, failed: 0, skipped: 0 })).toBe('passed');
    expect(statusWithSkips('failed', { passed: 2, failed: 1, skipped: 6 })).toBe('failed');
    const md = renderMarkdownSummary(
      report([
        test({ id: 'idempotency', track: 'core' }, step('a')),
        test({ id: 'idempotency', track: 'core' }, skip('b', 'missing_tool', 'x')),
      ]),
    );
    expect(md).toContain('| core | ✅ passed \\(1 run, 1 skipped\\) | 1 passed |');
    expect(md).toMatch(/\| idempotency `idempotency` \| core \| ✅ passed \\\(1 run, 1 skipped\\\) \| 1 \/ 0 \/ 1 \|/);
  });
});

describe('the skip line of a step', () => {
  it("names the missing tool, not the agent's whole list (the record keeps it)", () => {
    const detail = `the agent does not advertise the tool "sync_creatives"${TOOLS} (the only stateful step of phase p: nothing downstream is cascaded)`;
    expect(skipText(step('m', { skip: { reason: 'missing_tool', detail } }))).toBe(
      'missing_tool: the agent does not advertise the tool "sync_creatives" (the only stateful step of phase p: nothing downstream is cascaded)',
    );
    expect(withoutToolList('no list here')).toBe('no list here');
    expect(toolListOf(detail)).toEqual(['create_media_buy', 'get_adcp_capabilities', 'get_products']);
    expect(toolListOf('; agent tools: []')).toEqual([]);
  });
});

describe('claimSummary', () => {
  it('lets one reporter per run end print the summary', () => {
    const end = [] as object;
    expect(claimSummary(end)).toBe(true);
    expect(claimSummary(end)).toBe(false);
    expect(claimSummary([])).toBe(true);
  });
});
