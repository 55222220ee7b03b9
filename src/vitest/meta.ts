import type { StepResult } from '../engine/records.js';

/** What each storyboard step test carries in `task.meta.adcp`, for reporters in the main process. */
export interface AdcpStepMeta {
  /** `storyboard_id/phase_id/step_id` */
  id: string;
  status: 'passed' | 'failed' | 'skipped';
  /** The runner-output-contract step result (redacted). */
  result: StepResult;
  storyboard: { id: string; title: string; version?: string; track?: string; file: string };
}

declare module 'vitest' {
  interface TaskMeta {
    adcp?: AdcpStepMeta;
  }
}

declare module '@vitest/runner' {
  interface TaskMeta {
    adcp?: AdcpStepMeta;
  }
}
