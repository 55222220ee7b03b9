/** Planned steps for the plan's tests (test/plan/): `[phase id, step]` pairs, with the fields the plan reads. */
import type { Phase, Step } from '../../src/model/storyboard.js';

export const planned = (...steps: [string, Partial<Step>][]) =>
  steps.map(([phase, step]) => ({ phase: { id: phase } as Phase, step: step as Step }));

/** A comply_test_controller step asking for `scenario` (any value: the plan reads only a string). */
export const controller = (id: string, scenario: unknown): Partial<Step> => ({
  id,
  task: 'comply_test_controller',
  sample_request: { scenario } as never,
});
