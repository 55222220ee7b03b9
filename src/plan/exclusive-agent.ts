/**
 * Which storyboards must have the agent to themselves while they run: those whose steps leave or read state the agent
 * keeps per caller, not per storyboard. Every storyboard of a run calls as the same caller (one account, one
 * credential), so two of them in flight at once would see each other's state. The comply_test_controller request
 * schema (3.0 and 3.1) says what is per caller:
 *   - `force_create_media_buy_arm`, `force_get_products_arm`, `force_get_signals_arm` "register one-shot response-arm
 *     directives for the next matching operation from the caller's authenticated sandbox account + principal pair":
 *     another storyboard's create_media_buy between the directive and its own call takes the arm (a 'submitted' answer
 *     it then polls until its step timeout), and the storyboard that set it gets the normal arm;
 *   - `force_upstream_unavailable` marks an upstream unreachable "for the duration of the compliance session";
 *   - `query_upstream_traffic` (the `upstream_traffic` check) returns the traffic "caused by the requesting principal's
 *     session/auth context" in a time window: another storyboard's calls in that window are counted as this one's;
 *   - `seed_*` "pre-populate fixtures" in the caller's sandbox, one call each: between a product's seed and its pricing
 *     option's, another storyboard's get_products lists a product the schema refuses (no pricing option). The seeding
 *     phase the runner injects (plan/seeding.ts) is handled by the run host apart: alone while it seeds, then shared.
 * The reference runner runs storyboards one after another, so none of this shows there; the run host (plugin/run-host.ts)
 * runs such a storyboard only when no other is in flight, and none starts while it runs.
 */
import type { Storyboard } from '../model/storyboard.js';

const PER_CALLER_SCENARIOS = /^(force_[a-z_]+_arm|force_upstream_unavailable|query_upstream_traffic|seed_[a-z_]+)$/;

/** Why `storyboard` needs the agent to itself (the first step that does), or undefined when it can share it. */
export function exclusiveAgentReason(storyboard: Storyboard): string | undefined {
  for (const phase of storyboard.phases) {
    for (const step of phase.steps) {
      const scenario = (step.sample_request as { scenario?: unknown } | undefined)?.scenario;
      if (step.task === 'comply_test_controller' && PER_CALLER_SCENARIOS.test(String(scenario)))
        return `step ${step.id} asks the controller for ${scenario}, which is per caller`;
      if (step.validations?.some((v) => v.check === 'upstream_traffic'))
        return `step ${step.id} checks upstream_traffic, the caller's traffic in a time window`;
    }
  }
  return undefined;
}
