/**
 * Step fields the format retired or forbids.
 *
 * - `shared_receiver: true` — out of scope in v1, authors MUST NOT set it
 *   (storyboard-schema.yaml, "shared_receiver"): error.
 * - Deprecated spellings that still work: warning, with the new name.
 */
import { type RuleContext, stepLabel } from './model.js';

const DEPRECATED_STEP_KEYS: Record<string, string> = {
  // storyboard-schema.yaml, expect_substitution_safe: "The old field name … is deprecated."
  require_all_bindings_observed: 'require_every_binding_observed',
  // @adcp/client's synonym of the spec field.
  peer_substitutes_for: 'provides_state_for',
};

export function checkStepFields(ctx: RuleContext): void {
  for (const step of ctx.steps) {
    if (step.raw.shared_receiver === true) {
      ctx.sink.error(
        'shared_receiver_unsupported',
        ctx.keyAt([...step.path, 'shared_receiver']),
        `${stepLabel(step)} sets shared_receiver: true, which the storyboard format does not support (fan-in receivers are out of scope)`,
        'remove it: every webhook-triggering step gets its own receiver via {{runner.webhook_url:<step_id>}}',
      );
    }
    for (const [old, replacement] of Object.entries(DEPRECATED_STEP_KEYS)) {
      if (!Object.hasOwn(step.raw, old)) continue;
      ctx.sink.warning(
        'deprecated_key',
        ctx.keyAt([...step.path, old]),
        `"${old}" in ${stepLabel(step)} is deprecated`,
        `rename it to "${replacement}"`,
      );
    }
  }
}
