/**
 * Validation entries (storyboard-schema.yaml, "Validation").
 *
 * - `field_value_or_absent` with neither `value` nor `allowed_values` is a
 *   storyboard-load error ("runners MUST reject the storyboard"); likewise
 *   `field_value`, whose `value` is "required" (or `allowed_values`).
 * - Other checks missing the argument they cannot work without: error
 *   (`check_missing_argument`), so the author learns at load time, not from
 *   a validation that can only ever fail.
 * - `check` names: a near miss of a known name is always an error
 *   (`misspelled_check`, with the name meant): graded not_applicable by other
 *   runners it would pass silently. Any other name this format version does
 *   not define is an error too (`unknown_check`) — vitest-adcp cannot grade
 *   it — unless `strictKeys: false`, for storyboards of a newer format
 *   version: then a warning, and the validation fails at run time.
 */
import { closestMatch } from '../did-you-mean.js';
import { storyboardSchema } from '../schema.js';
import { LENIENT_KEYS_ESCAPE } from '../unknown-keys.js';
import type { RawStep, RawValidation, RuleContext } from './model.js';

/** Check kinds some runners (e.g. @adcp/client 6.x) implement beyond AdCP 3.0.6. */
const RUNNER_EXTENSION_CHECKS = [
  'field_absent',
  'field_contains',
  'field_less_than',
  'field_equals_context',
  'envelope_field_absent',
  'envelope_field_value',
  'envelope_field_value_or_absent',
  'a2a_context_continuity',
  'upstream_traffic',
];

/** Arguments each check needs; every listed alternative group needs one member. */
const REQUIRED_ARGUMENTS: Record<string, string[][]> = {
  field_present: [['path']],
  envelope_field_present: [['path']],
  field_value: [['path']],
  field_value_or_absent: [['path']],
  http_status: [['value']],
  http_status_in: [['allowed_values']],
  any_of: [['allowed_values']],
  on_401_require_header: [['value']],
  refs_resolve: [['source'], ['target'], ['match_keys']],
};

let specChecks: string[] | undefined;

/** The checks AdCP 3.0.6 defines, as listed in the schema's `check` enum. */
function specifiedChecks(): string[] {
  if (!specChecks) {
    const check = storyboardSchema().definitions?.validation?.properties?.check;
    specChecks = Array.isArray(check?.enum) ? (check.enum as string[]) : [];
  }
  return specChecks;
}

export function checkValidations(ctx: RuleContext): void {
  for (const step of ctx.steps) {
    for (const validation of step.validations) {
      const check = validation.raw.check;
      if (typeof check !== 'string') continue; // the schema reports it
      if (checkName(ctx, step, validation, check)) checkArguments(ctx, step, validation, check);
    }
  }
}

/** False when the name is a misspelling (its arguments are then not worth checking). */
function checkName(ctx: RuleContext, step: RawStep, validation: RawValidation, check: string): boolean {
  if (specifiedChecks().includes(check)) return true;
  const known = [...specifiedChecks(), ...RUNNER_EXTENSION_CHECKS];
  const at = ctx.at([...validation.path, 'check']);
  const where = `validations[${validation.index}] of step "${step.id ?? '?'}"`;
  // Short names tolerate one edit only: `all_of` is not a typo of `any_of`.
  const suggestion = closestMatch(check, known, check.length <= 6 ? 1 : 2);
  if (suggestion) {
    ctx.sink.error('misspelled_check', at, `unknown check "${check}" in ${where}`, `did you mean "${suggestion}"?`);
    return false;
  }
  const origin = RUNNER_EXTENSION_CHECKS.includes(check)
    ? 'a runner extension, not defined by AdCP 3.0.6'
    : 'not defined by AdCP 3.0.6';
  const list = `known checks: ${specifiedChecks().join(', ')}`;
  if (ctx.strictKeys) {
    ctx.sink.error(
      'unknown_check',
      at,
      `check "${check}" in ${where} is ${origin}, so vitest-adcp cannot grade it`,
      `${list}; ${LENIENT_KEYS_ESCAPE}: it then loads, and this validation fails at run time`,
    );
    return true;
  }
  ctx.sink.warning(
    'unknown_check',
    at,
    `check "${check}" in ${where} is ${origin}`,
    `it fails at run time: vitest-adcp does not grade it; ${list}`,
  );
  return true;
}

function checkArguments(ctx: RuleContext, step: RawStep, validation: RawValidation, check: string): void {
  const raw = validation.raw;
  const where = `validations[${validation.index}] of step "${step.id ?? '?'}"`;
  const at = ctx.at(validation.path);
  if (check === 'field_value_or_absent' && !Object.hasOwn(raw, 'value') && !Object.hasOwn(raw, 'allowed_values')) {
    ctx.sink.error(
      'field_value_or_absent_without_value',
      at,
      `field_value_or_absent check in ${where} declares neither value nor allowed_values`,
      'add `value: <expected>` or `allowed_values: [...]` — without one the check cannot tell a wrong value from a right one',
    );
    return;
  }
  if (check === 'field_value' && !Object.hasOwn(raw, 'value') && !Object.hasOwn(raw, 'allowed_values')) {
    ctx.sink.error(
      'field_value_without_value',
      at,
      `field_value check in ${where} declares neither value nor allowed_values`,
      'add `value: <expected>` (or `allowed_values: [...]`), or use `check: field_present` to only require the field',
    );
    return;
  }
  const needed = Object.hasOwn(REQUIRED_ARGUMENTS, check) ? REQUIRED_ARGUMENTS[check]! : [];
  const missing = needed.filter((group) => !group.some((key) => Object.hasOwn(raw, key)));
  if (missing.length === 0) return;
  const names = missing.map((group) => group.join(' / '));
  ctx.sink.error(
    'check_missing_argument',
    at,
    `${check} check in ${where} has no ${names.join(', ')}`,
    `add ${missing.map((group) => `\`${group[0]}:\``).join(', ')} — ${check} cannot run without ${missing.length === 1 ? 'it' : 'them'}`,
  );
}
