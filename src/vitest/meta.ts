import type { SkipResult, StepResult } from '../engine/records.js';

export interface StoryboardInfo {
  id: string;
  title: string;
  version?: string;
  track?: string;
  file: string;
}

/** A storyboard skipped as a whole (e.g. `no_phases`): carried by its single placeholder test. */
export interface AdcpStoryboardMeta {
  storyboard: StoryboardInfo;
  skip: SkipResult;
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
  interface TaskMeta {
    adcp?: AdcpStepMeta;
    adcpStoryboard?: AdcpStoryboardMeta;
  }
}

declare module '@vitest/runner' {
  interface TaskMeta {
    adcp?: AdcpStepMeta;
    adcpStoryboard?: AdcpStoryboardMeta;
  }
}
