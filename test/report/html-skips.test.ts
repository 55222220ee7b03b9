/**
 * The HTML report (src/report/html.ts) never calls a storyboard, phase, track or run with skipped steps a plain
 * "passed": its badge says how many steps ran, as statusWithSkips (src/report/summary.ts) words it for the markdown
 * view and the terminal summary.
 */
import { describe, expect, it } from 'vitest';
import type { StepResult } from '../../src/model/records.js';
import type { ContractReport } from '../../src/report/build.js';
import { buildEnvelope } from '../../src/report/envelope.js';
import { renderHtmlReport } from '../../src/report/html.js';

const target = { project: '', agent_url: 'http://127.0.0.1:1/mcp', protocol: 'mcp' as const };

function step(id: string, phase: string, skipped: boolean): StepResult {
  return {
    storyboard_id: 'idempotency',
    phase_id: phase,
    step_id: id,
    task: 'create_media_buy',
    passed: true,
    duration_ms: 1,
    validations: [],
    extraction: { path: 'none' },
    ...(skipped
      ? { skip: { reason: 'not_applicable', detail: 'unresolved_substitution: needs the webhook receiver' } }
      : {}),
  } as StepResult;
}

/** Idempotency: 2 steps passed in phase `replay`, 6 skipped in phase `webhooks`; and a track `signals` that skipped nothing. */
function report(): ContractReport {
  const steps = [
    step('a', 'replay', false),
    step('b', 'replay', false),
    ...['c', 'd', 'e', 'f', 'g', 'h'].map((id) => step(id, 'webhooks', true)),
  ];
  const clean = [{ ...step('only', 'p', false), storyboard_id: 'clean' }];
  return {
    contract: { id: 'runner_output_contract', version: '1.1.0' },
    runner: { name: 'vitest-adcp', version: '0.1.0' },
    generated_at: '2026-01-01T00:00:00.000Z',
    run: buildEnvelope(
      [{ ...target, corpus_version: null }],
      { started_at: '2026-01-01T00:00:00.000Z', finished_at: '2026-01-01T00:00:01.000Z' },
      true,
    ),
    summary: {
      total_steps: 9,
      steps_passed: 3,
      steps_failed: 0,
      steps_skipped: 6,
      steps_not_run: 0,
      tracks: [
        {
          track: 'core',
          ...target,
          status: 'passed',
          storyboards: [{ storyboard_id: 'idempotency', status: 'passed' }],
        },
        { track: 'signals', ...target, status: 'passed', storyboards: [{ storyboard_id: 'clean', status: 'passed' }] },
      ],
      schemas_used: [],
    },
    storyboards: [
      {
        storyboard_id: 'idempotency',
        title: 'Idempotency',
        track: 'core',
        file: 'idempotency.storyboard.yaml',
        ...target,
        status: 'passed',
        steps,
      },
      {
        storyboard_id: 'clean',
        title: 'Clean',
        track: 'signals',
        file: 'clean.storyboard.yaml',
        ...target,
        status: 'passed',
        steps: clean,
      },
    ],
    load_errors: [],
  } as ContractReport;
}

const badges = (page: string) =>
  [...page.matchAll(/<span class="badge (\w+)">([^<]*)<\/span>/g)].map((m) => [m[1], m[2]]);

describe('HTML report: a pass with skipped steps', () => {
  const page = renderHtmlReport(report(), { root: '/r' });

  it("says how many steps ran on the storyboard's badge, not a plain passed", () => {
    const summary =
      /<details class="sb" data-status="passed" data-track="core">\n<summary>(.*?)<b>Idempotency<\/b>/.exec(page)?.[1];
    expect(summary).toBe('<span class="badge passed">✓ passed (2 run, 6 skipped)</span> ');
  });

  it("says it on the phase's and the track's badges too, and on the run's; a pass that skipped nothing stays passed", () => {
    expect(page).toMatch(/<summary><span class="badge passed">✓ passed<\/span> phase <b>replay<\/b>/);
    // A phase whose every step skipped is `skipped`, not a pass.
    expect(page).toMatch(/<summary><span class="badge skipped">⤼ skipped<\/span> phase <b>webhooks<\/b>/);
    expect(page).toContain('<span>core <span class="badge passed">✓ passed (2 run, 6 skipped)</span>');
    expect(page).toContain('<span>signals <span class="badge passed">✓ passed</span>');
    expect(page).toContain('<h1><span class="badge passed">✓ passed (3 run, 6 skipped)</span>');
    expect(badges(page)).toContainEqual(['passed', '✓ passed']);
    expect(page).toMatch(/<span class="badge passed">✓ passed<\/span> <b>Clean<\/b>/);
  });
});
