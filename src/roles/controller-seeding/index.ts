/**
 * The controller-seeding role (storyboard-schema.yaml > prerequisites.controller_seeding, `fixtures:`): the injected
 * `__controller_seeding__` phase (plan/seeding.ts, shared with the compiler), and the controller answers that decide
 * the rest of a storyboard (controller.ts): a seed the controller cannot make, an UNKNOWN_SCENARIO. Its seeds are all
 * attempted, whatever halted the storyboard.
 */
import { CONTROLLER_TASK } from '../../model/answer-error.js';
import type { Phase } from '../../model/storyboard.js';
import type { RoleSession, RunnerRole } from '../../engine/role.js';
import { isSeedStep, planSeeding, SEEDING_PHASE_ID } from '../../plan/seeding.js';
import { scenarioVerdict, seedVerdict } from './controller.js';

export const controllerSeedingRole: RunnerRole = {
  name: 'controller-seeding',
  tasks: new Set(),
  plan: (phases, storyboard) => {
    const seeding = planSeeding(storyboard).phase;
    return seeding ? [seeding, ...phases] : phases;
  },
  open: ({ storyboard }): RoleSession => ({
    storyboardWarnings: () => unknownFixturesWarning(planSeeding(storyboard).unknownKeys),
    runsAfterHalt: (phase: Phase) => phase.id === SEEDING_PHASE_ID,
    // A seed the cascade skipped (no controller) leaves the storyboard's fixtures unmade.
    gateSkipped: ({ step }, skip) => (isSeedStep(step) ? skip : undefined),
    verdict: ({ step, task }, exchange, graded) => {
      if (isSeedStep(step)) return seedVerdict(step, exchange, graded, storyboard.file);
      if (task === CONTROLLER_TASK && !step.expect_error) return scenarioVerdict(exchange, graded);
      return undefined;
    },
  }),
};

function unknownFixturesWarning(unknownKeys: string[]): string[] {
  if (unknownKeys.length === 0) return [];
  return [
    `fixtures ${unknownKeys.map((k) => `"${k}"`).join(', ')} map to no seed scenario of storyboard-schema.yaml (products, pricing_options, creatives, plans, media_buys) and were not seeded`,
  ];
}
