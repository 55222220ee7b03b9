/**
 * The steps a storyboard's tests stand for, as the engine will run them: the YAML's own and every step the roles plan
 * in (engine/role.ts `planPhases` — the injected controller seeding phase `__controller_seeding__`, the synthesized
 * signed_requests vector steps). Both adapters plan from here, so a step whose test a filter (`-t`) leaves out reads
 * `not_run` under either framework, injected or not; the run host orders its runs from the same plan.
 */
import { planPhases } from '../engine/role.js';
import type { AdcpPlannedStep, StoryboardInfo } from '../model/step-meta.js';
import type { Phase, Step, Storyboard } from '../model/storyboard.js';
import { BUILTIN_ROLES } from '../roles/index.js';

/** Each planned step with its phase, in run order: `planned()` (engine/run.ts) of a run with the built-in roles. */
export function planOf(storyboard: Storyboard, options: { corpusRoot?: string } = {}): { phase: Phase; step: Step }[] {
  // The built-in roles, as open-run.ts opens every run with; the request-signing role reads the vectors only for the
  // storyboard that has vector phases (once per process: roles/request-signing/vectors.ts).
  return planPhases(BUILTIN_ROLES, storyboard, { corpusRoot: options.corpusRoot }).flatMap((phase) =>
    phase.steps.map((step) => ({ phase, step })),
  );
}

/** Each step of a plan (planOf) as its test's collection-time meta. */
export function plannedSteps(plan: readonly { phase: Phase; step: Step }[], info: StoryboardInfo): AdcpPlannedStep[] {
  return plan.map(({ phase, step }) => ({
    storyboard: info,
    phase_id: phase.id,
    step_id: step.id,
    ...(step.task ? { task: step.task } : {}),
  }));
}
