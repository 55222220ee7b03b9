/**
 * The steps a storyboard's tests stand for, as the engine will run them: the YAML's own, the injected controller
 * seeding phase (`__controller_seeding__`) and the synthesized signed_requests vector steps. Both adapters plan from
 * here, so a step whose test a filter (`-t`) leaves out reads `not_run` under either framework, injected or not.
 */
import type { AdcpPlannedStep, StoryboardInfo } from '../model/step-meta.js';
import type { Storyboard } from '../model/storyboard.js';
import { executionPhases } from '../plan/execution-phases.js';
import { synthesizesVectorSteps } from '../plan/signing-vectors.js';
import { signingVectorsFor } from '../roles/request-signing/vectors.js';

export function plannedSteps(
  storyboard: Storyboard,
  info: StoryboardInfo,
  options: { corpusRoot?: string } = {},
): AdcpPlannedStep[] {
  // The vectors are read only for the storyboard that has vector phases (once per process: vectors.ts).
  const vectors = synthesizesVectorSteps(storyboard) ? signingVectorsFor(storyboard, options) : undefined;
  return executionPhases(storyboard, vectors).flatMap((phase) =>
    phase.steps.map((step) => ({
      storyboard: info,
      phase_id: phase.id,
      step_id: step.id,
      ...(step.task ? { task: step.task } : {}),
    })),
  );
}
