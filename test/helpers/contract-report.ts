/**
 * The contract report of engine runs, built by the reporter's own
 * `buildContractReport` from step records shaped the way the Vitest adapter
 * leaves them in `task.meta.adcp` (redacted) — without a child `vitest run`.
 * Only the parts of Vitest's `TestModule` the reporter reads are provided.
 */
import { afterAll, beforeAll } from 'vitest';
import type { TestModule } from 'vitest/node';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import type { StepOutcome } from '../../src/model/records.js';
import { redactStepResult } from '../../src/report/record.js';
import { buildContractReport, type ContractReport } from '../../src/vitest/reporter.js';
import type { AdcpStepMeta, StoryboardInfo } from '../../src/model/step-meta.js';
import { phasedStoryboard, runInline, type InlinePhase, type InlineStep } from './inline-run.js';

export const REPORT_ROOT = '/virtual';

/** One storyboard's test module: a test per step outcome, carrying the adapter's meta. */
export function storyboardModule(
  storyboard: Omit<StoryboardInfo, 'file'>,
  outcomes: readonly StepOutcome[],
  secrets: readonly string[] = [],
): TestModule {
  const info: StoryboardInfo = { ...storyboard, file: `${REPORT_ROOT}/${storyboard.id}.storyboard.yaml` };
  const tests = outcomes.map((o) => {
    const result = redactStepResult(o.result, secrets);
    const meta: AdcpStepMeta = {
      id: `${info.id}/${result.phase_id}/${result.step_id}`,
      status: o.status,
      result,
      storyboard: info,
    };
    return { name: result.step_id, meta: () => ({ adcp: meta }), result: () => ({ state: o.status, errors: [] }) };
  });
  return { moduleId: info.file, children: { allTests: () => tests } } as unknown as TestModule;
}

/** A storyboard file that did not load: one failing test named after the rule, no meta. */
export function loadFailureModule(file: string, rule: string, message: string): TestModule {
  const test = {
    name: `loads without errors (${rule})`,
    meta: () => ({}),
    result: () => ({ state: 'failed', errors: [{ message }] }),
  };
  return { moduleId: `${REPORT_ROOT}/${file}`, children: { allTests: () => [test] } } as unknown as TestModule;
}

export function contractReport(modules: TestModule[]): ContractReport {
  return buildContractReport(modules, REPORT_ROOT);
}

/** A get_adcp_capabilities step that passes on the fixture agent. */
export const capsStep = (id: string, extra: Partial<InlineStep> = {}): InlineStep => ({
  id,
  task: 'get_adcp_capabilities',
  validations: [{ check: 'field_present', path: 'adcp' }],
  ...extra,
});
/** A phase skipped not_applicable: the test kit of `outcomesOf` runs has no api_key. */
export const gatedPhase = (...steps: InlineStep[]): InlinePhase => ({
  id: 'gated',
  skip_if: '!test_kit.auth.api_key',
  steps,
});

/** The step outcomes of an inline storyboard run against `agentUrl`, with a test kit that has no api_key. */
export async function outcomesOf(agentUrl: string, phases: InlinePhase[]): Promise<StepOutcome[]> {
  return Object.values(await runInline(phasedStoryboard(phases), agentUrl, { testKit: { auth: {} } }));
}

/** The fixture agent around this test file (started before its tests, closed after): its URL, and outcomesOf against it. */
export function useFixtureAgent(): { url(): string; outcomes(phases: InlinePhase[]): Promise<StepOutcome[]> } {
  let agent: FixtureAgent | undefined;
  beforeAll(async () => {
    agent = await startFixtureAgent();
  });
  afterAll(() => agent?.close());
  return { url: () => agent!.url, outcomes: (phases) => outcomesOf(agent!.url, phases) };
}
