/**
 * The contract report (src/vitest/reporter.ts) of real engine runs against the
 * fixture agent: skipped steps stay in it with their reason, count as skipped
 * (cascade skips too, though they did not pass), and decide storyboard and
 * track status; files that did not load are listed.
 */
import { describe, expect, it } from 'vitest';
import type { TestModule } from 'vitest/node';
import type { ContractReport } from '../../src/vitest/reporter.js';
import {
  capsStep as caps,
  contractReport,
  gatedPhase as gated,
  loadFailureModule,
  storyboardModule,
  useFixtureAgent,
} from '../helpers/contract-report.js';

const agent = useFixtureAgent();

const outcomes = agent.outcomes;

let ran: Promise<TestModule[]> | undefined;
/**
 * The three storyboard runs, made once, by the first test that asks — inside a
 * test rather than a hook, so that mutation testing credits a test with them.
 * Each test builds its own report from them.
 */
async function report(): Promise<ContractReport> {
  ran ??= (async () => {
    const mixed = await outcomes([
      { id: 'always', steps: [caps('caps')] },
      gated(caps('gated_a'), caps('gated_b')),
      { id: 'runner', steps: [{ id: 'webhook', task: 'expect_webhook' }] },
    ]);
    const cascade = await outcomes([
      {
        id: 'buy',
        steps: [
          caps('first', {
            stateful: true,
            sample_request: { context: { correlation_id: 'sent' } },
            validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'not-sent' }],
          }),
          caps('second', { stateful: true }),
        ],
      },
    ]);
    const allSkipped = await outcomes([gated(caps('only'))]);
    return [
      storyboardModule({ id: 'mixed', title: 'Mixed', track: 'core' }, mixed),
      storyboardModule({ id: 'cascade', title: 'Cascade', track: 'media_buy' }, cascade),
      storyboardModule({ id: 'all_skipped', title: 'All skipped', track: 'signals' }, allSkipped),
      loadFailureModule('broken.storyboard.yaml', 'schema', 'storyboard does not load: broken'),
    ];
  })();
  return contractReport(await ran);
}

const stepsOf = (r: ContractReport, id: string) => r.storyboards.find((s) => s.storyboard_id === id)!.steps;
const verdict = (s: { passed: boolean; skip?: { reason: string } }) =>
  s.skip ? `skipped:${s.skip.reason}` : s.passed ? 'passed' : 'failed';

describe('skipped steps in the contract report', () => {
  it('keeps every skipped step, in order, with its reason and detail', async () => {
    const r = await report();
    expect(stepsOf(r, 'mixed').map((s) => [s.step_id, verdict(s)])).toEqual([
      ['caps', 'passed'],
      ['gated_a', 'skipped:not_applicable'],
      ['gated_b', 'skipped:not_applicable'],
      ['webhook', 'skipped:unsatisfied_contract'],
    ]);
    expect(stepsOf(r, 'mixed')[1]).toMatchObject({
      phase_id: 'gated',
      passed: true,
      skip: {
        reason: 'not_applicable',
        detail: 'phase "gated" skipped: skip_if "!test_kit.auth.api_key" is true for this test kit',
      },
    });
    expect(stepsOf(r, 'cascade').map((s) => [s.step_id, verdict(s), s.passed])).toEqual([
      ['first', 'failed', false],
      ['second', 'skipped:prerequisite_failed', false],
    ]);
  });

  it('counts skips as skipped — a cascade skip too, though it did not pass — never as passed or failed', async () => {
    expect((await report()).summary).toMatchObject({
      total_steps: 7,
      steps_passed: 1,
      steps_failed: 1,
      steps_skipped: 5,
    });
  });

  it('a storyboard whose steps all skipped is skipped; skips beside a pass leave it passed', async () => {
    const r = await report();
    expect(r.storyboards.map((s) => [s.storyboard_id, s.status])).toEqual([
      ['mixed', 'passed'],
      ['cascade', 'failed'],
      ['all_skipped', 'skipped'],
    ]);
    expect(r.storyboards.find((s) => s.storyboard_id === 'all_skipped')).toMatchObject({
      file: 'all_skipped.storyboard.yaml',
      title: 'All skipped',
      track: 'signals',
    });
  });

  it('a track whose storyboards all skipped is skipped, with the step skip reasons', async () => {
    expect((await report()).summary.tracks).toEqual([
      {
        track: 'core',
        project: '',
        agent_url: null,
        status: 'passed',
        storyboards: [{ storyboard_id: 'mixed', status: 'passed' }],
      },
      {
        track: 'media_buy',
        project: '',
        agent_url: null,
        status: 'failed',
        storyboards: [{ storyboard_id: 'cascade', status: 'failed' }],
      },
      {
        track: 'signals',
        project: '',
        agent_url: null,
        status: 'skipped',
        storyboards: [{ storyboard_id: 'all_skipped', status: 'skipped' }],
        skip_reasons: ['not_applicable'],
      },
    ]);
  });

  it('lists a storyboard file that did not load, with its message, apart from the storyboards', async () => {
    const r = await report();
    expect(r.load_errors).toEqual([
      { file: 'broken.storyboard.yaml', message: 'storyboard does not load: broken', project: '' },
    ]);
    expect(r.storyboards).toHaveLength(3);
  });
});
