/**
 * When a storyboard's steps may share the agent with other storyboards' steps, step by step. Every storyboard of a run
 * calls as the same caller (one account, one credential), and some agent state is per caller, not per storyboard. The
 * comply_test_controller request schema (3.0 and 3.1) says which, and so how long a window must have the agent alone:
 *   - `force_create_media_buy_arm`, `force_get_products_arm`, `force_get_signals_arm` "register one-shot response-arm
 *     directives for the next matching operation from the caller's authenticated sandbox account + principal pair":
 *     alone from the directive to that operation (another storyboard's create_media_buy in between would take the
 *     `submitted` arm, and poll it until its step timeout);
 *   - `query_upstream_traffic` (an `upstream_traffic` check) returns the traffic "caused by the requesting principal's
 *     session/auth context" since a time: alone from the step the window starts at (`since:`, else the checking step)
 *     through the check, so no other storyboard's call is counted as this one's;
 *   - `seed_*` "pre-populate fixtures" in the caller's sandbox, one call each: the seeding phase the runner injects
 *     (plan/seeding.ts) runs beside other seeding phases only — between a product's seed and its pricing option's,
 *     another storyboard's get_products would list a product the schema refuses (no pricing option);
 *   - for the whole run: `force_upstream_unavailable` ("for the duration of the compliance session"), a storyboard's
 *     own `seed_*` steps (pagination_integrity_*: it counts what it seeded) and a `query_upstream_traffic` step of its
 *     own, whose window this plan cannot see.
 * The reference runner runs storyboards one after another, so none of this shows there; the run host
 * (plugin/run-host.ts) admits each step through plugin/agent-gate.ts in the mode planned here.
 */
import { controllerScenario } from '../model/answer-error.js';
import type { Phase, Step } from '../model/storyboard.js';
import { SEEDING_PHASE_ID } from './seeding.js';

/** Who may call the agent beside a step: any ordinary step, seeding windows only, or nobody. */
export type AgentMode = 'shared' | 'seed' | 'alone';

/** A step's turn: its mode, held through the step at index `until` (a window's last step; its own for a single step). */
export interface StepTurn {
  mode: AgentMode;
  until: number;
}

/** The operation each one-shot response-arm directive is for. */
const ARM_OPERATIONS: ReadonlyMap<string, string> = new Map([
  ['force_create_media_buy_arm', 'create_media_buy'],
  ['force_get_products_arm', 'get_products'],
  ['force_get_signals_arm', 'get_signals'],
]);

/** Scenarios whose state lasts past any window this plan can see. */
const WHOLE_RUN_SCENARIOS = /^(force_upstream_unavailable|query_upstream_traffic|seed_[a-z_]+)$/;

/** Each planned step's turn, in run order (the run's plan: injected phases included). */
export function agentTurns(steps: readonly { phase: Phase; step: Step }[]): StepTurn[] {
  const last = steps.length - 1;
  const turns: StepTurn[] = steps.map((_, index) => ({ mode: 'shared', until: index }));
  const windows: [number, number][] = [];
  let seeding: number | undefined;
  for (const [index, { phase, step }] of steps.entries()) {
    if (phase.id === SEEDING_PHASE_ID) {
      seeding = index;
      continue;
    }
    const scenario = controllerScenario(step) ?? '';
    if (WHOLE_RUN_SCENARIOS.test(scenario)) return turns.map(() => ({ mode: 'alone', until: last }));
    const operation = ARM_OPERATIONS.get(scenario);
    if (operation !== undefined) {
      const consumer = steps.findIndex((s, k) => k > index && s.step.task === operation);
      windows.push([index, consumer === -1 ? last : consumer]);
    }
    for (const validation of step.validations ?? []) {
      if (validation.check !== 'upstream_traffic') continue;
      // `since:` names an earlier step (no step has no id: without it, none is found).
      const from = steps.findLastIndex((s, k) => k < index && s.step.id === validation.since);
      windows.push([from === -1 ? index : from, index]);
    }
  }
  if (seeding !== undefined) for (let k = 0; k <= seeding; k++) turns[k] = { mode: 'seed', until: seeding };
  // Overlapping windows are one: a turn is held to the end of the last window it reaches.
  windows.sort((a, b) => a[0] - b[0]);
  for (let i = 0; i < windows.length;) {
    const [from] = windows[i]!;
    let until = windows[i]![1];
    for (i++; i < windows.length && windows[i]![0] <= until; i++) until = Math.max(until, windows[i]![1]);
    for (let k = from; k <= until; k++) turns[k] = { mode: 'alone', until };
  }
  return turns;
}
