import type { NotSelectedRecord, SkipResult, StepResult } from './records.js';

export interface StoryboardInfo {
  id: string;
  title: string;
  version?: string;
  track?: string;
  file: string;
  /**
   * The agent this run of the storyboard tested (credentials in the URL removed) and how it was reached: two Vitest
   * projects testing two agents stay two entries of the contract report.
   */
  agent_url?: string | null;
  protocol?: 'mcp' | 'a2a';
  /** The AdCP compliance corpus version the run's schemas and test kits came from. */
  corpus_version?: string | null;
}

/**
 * A storyboard graded not applicable before the run (plugin/up-front.ts): it is no test file of the run, and its report
 * entry is made of this and the run's target (the agent, protocol and corpus version its project was given).
 */
export interface NotApplicableStoryboard {
  storyboard: Pick<StoryboardInfo, 'id' | 'title' | 'version' | 'track' | 'file'>;
  skip: SkipResult;
}

/** A storyboard skipped as a whole (e.g. `no_phases`): carried by its single placeholder test. */
export interface AdcpStoryboardMeta {
  storyboard: StoryboardInfo;
  skip: SkipResult;
}

/**
 * Set when a step test starts, before the engine answers: if Vitest ends the
 * test first (its own timeout, a crash), the reporter still knows which step
 * it was and records it as failed instead of dropping it.
 */
export interface AdcpPlannedStep {
  storyboard: StoryboardInfo;
  phase_id: string;
  step_id: string;
  /** The step's task as written (a runner-injected step may not have one here). */
  task?: string;
}

/** What each storyboard step test carries in `task.meta.adcp`, for reporters in the main process. */
export interface AdcpStepMeta {
  /** `storyboard_id/phase_id/step_id` */
  id: string;
  status: 'passed' | 'failed' | 'skipped';
  /** The runner-output-contract step result (redacted). */
  result: StepResult;
  storyboard: StoryboardInfo;
}

declare module 'vitest' {
  interface ProvidedContext {
    /**
     * What the run's storyboard selection left out of a project (the runner-output contract's `not_selected`), for the
     * contract reporter, which reads it from each project at the run's end (vitest/reporter.ts).
     */
    vitestAdcpNotSelected?: NotSelectedRecord[];
    /**
     * The storyboards the agent's capabilities answer graded not applicable before the run (plugin/up-front.ts): not
     * test files of the run; the contract reporter reports each skipped as a whole (vitest/reporter.ts).
     */
    vitestAdcpNotApplicable?: NotApplicableStoryboard[];
  }
  interface TaskMeta {
    adcpPlanned?: AdcpPlannedStep;
    adcp?: AdcpStepMeta;
    /** Steps before this one that its settle ran while their own tests were filtered out (`-t`): their records. */
    adcpReplayed?: AdcpStepMeta[];
    adcpStoryboard?: AdcpStoryboardMeta;
  }
}

declare module '@vitest/runner' {
  interface TaskMeta {
    adcpPlanned?: AdcpPlannedStep;
    adcp?: AdcpStepMeta;
    adcpReplayed?: AdcpStepMeta[];
    adcpStoryboard?: AdcpStoryboardMeta;
  }
}
