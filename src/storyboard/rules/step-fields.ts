/**
 * Step fields the format retired or forbids.
 *
 * - `shared_receiver: true` — out of scope in v1, authors MUST NOT set it
 *   (storyboard-schema.yaml, "shared_receiver"): error.
 * - Deprecated spellings that still work: warning, with the new name.
 * - `negative_path`: the format names `schema_invalid` and `payload_well_formed`; the 3.1 corpus also names the
 *   runtime rejection itself (`mode_mismatch`, `wrong_status`, `unsupported_action`), which is a well-formed payload
 *   rejected at run time and is graded as `payload_well_formed`. A near miss of a named value is an error
 *   (`negative_path_value`): `payload_wellformed` would otherwise silently stand for a rejection reason.
 */
import { parsePath, PathSyntaxError, PROTOTYPE_SEGMENTS } from '../../model/path.js';
import { closestMatch } from '../did-you-mean.js';
import { type RuleContext, stepLabel } from './model.js';

const DEPRECATED_STEP_KEYS: Record<string, string> = {
  // storyboard-schema.yaml, expect_substitution_safe: "The old field name … is deprecated."
  require_all_bindings_observed: 'require_every_binding_observed',
  // @adcp/client's synonym of the spec field.
  peer_substitutes_for: 'provides_state_for',
};

const NEGATIVE_PATHS = ['schema_invalid', 'payload_well_formed'];

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
    checkContextInputPaths(ctx, step);
    const negative = step.raw.negative_path;
    const meant = typeof negative === 'string' ? closestMatch(negative, NEGATIVE_PATHS) : undefined;
    if (meant)
      ctx.sink.error(
        'negative_path_value',
        ctx.at([...step.path, 'negative_path']),
        `negative_path "${negative}" in ${stepLabel(step)} is not a value the format defines`,
        `did you mean "${meant}"? (schema_invalid: the payload is malformed on purpose; payload_well_formed: it is valid and rejected at run time)`,
      );
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

/** `context_inputs[].inject_at` is written into the request: it must parse, and never reach a prototype. */
function checkContextInputPaths(ctx: RuleContext, step: RuleContext['steps'][number]): void {
  const inputs = step.raw.context_inputs;
  if (!Array.isArray(inputs)) return;
  inputs.forEach((input, i) => {
    const at = (input as { inject_at?: unknown } | null)?.inject_at;
    if (typeof at !== 'string') return;
    let problem: string | undefined;
    try {
      const unsafe = parsePath(at).find((s) => typeof s === 'string' && PROTOTYPE_SEGMENTS.has(s));
      if (unsafe !== undefined)
        problem = `reaches "${String(unsafe)}", which would change every object of the test worker`;
      else if (at.includes('*')) problem = 'has a wildcard, which cannot be written to';
    } catch (error) {
      if (!(error instanceof PathSyntaxError)) throw error;
      problem = error.message;
    }
    if (problem) {
      ctx.sink.error(
        'context_input_path',
        ctx.at([...step.path, 'context_inputs', i, 'inject_at']),
        `context_inputs[${i}].inject_at "${at}" in ${stepLabel(step)} ${problem}`,
        'write to a field of the request, e.g. "filters.product_ids[0]"',
      );
    }
  });
}
