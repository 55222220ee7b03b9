/**
 * Ids must identify one thing.
 *
 * - Phase ids: unique within the storyboard (storyboard-schema.yaml, "Phase").
 * - Step ids: the format says "unique within phase", but steps are named
 *   storyboard-wide by `prior_step.<id>` (contributes_if, substitutions),
 *   `triggered_by:` and `{{runner.webhook_url:<id>}}`, and by Vitest test
 *   filters. Every storyboard of the AdCP 3.0.6 corpus (and 3.1.0-rc.2's
 *   security_baseline) already has storyboard-wide unique step ids, so a
 *   cross-phase duplicate is an error too, under its own rule id.
 */
import { type RuleContext, formatLocation, phaseLabel } from './model.js';

export function checkUniqueIds(ctx: RuleContext): void {
  const phaseIds = new Map<string, string>();
  for (const phase of ctx.phases) {
    if (!phase.id) continue;
    const earlier = phaseIds.get(phase.id);
    const here = ctx.keyAt([...phase.path, 'id']);
    if (earlier) {
      ctx.sink.error(
        'duplicate_phase_id',
        here,
        `phase id "${phase.id}" is already used by the phase at ${earlier}`,
        'phase ids must be unique within a storyboard; rename one of the phases',
      );
    } else phaseIds.set(phase.id, formatLocation(here));
  }

  const stepIds = new Map<string, { phaseId: string | undefined; phaseIndex: number; at: string }>();
  for (const step of ctx.steps) {
    if (!step.id) continue;
    const here = ctx.keyAt([...step.path, 'id']);
    const earlier = stepIds.get(step.id);
    if (!earlier) {
      stepIds.set(step.id, { phaseId: step.phase.id, phaseIndex: step.phase.index, at: formatLocation(here) });
    } else if (earlier.phaseIndex === step.phase.index) {
      ctx.sink.error(
        'duplicate_step_id',
        here,
        `step id "${step.id}" is already used in ${phaseLabel(step.phase)} at ${earlier.at}`,
        'step ids must be unique within a phase; rename one of the steps',
      );
    } else {
      ctx.sink.error(
        'duplicate_step_id_across_phases',
        here,
        `step id "${step.id}" is already used in phase "${earlier.phaseId ?? '?'}" at ${earlier.at}`,
        'rename one of the steps: step ids must be unique in the whole storyboard because prior_step.<id>, triggered_by and webhook_url:<id> name steps storyboard-wide',
      );
    }
  }
}
