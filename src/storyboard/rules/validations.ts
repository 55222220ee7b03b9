/**
 * Validation entries (storyboard-schema.yaml, "Validation"), checked against the check kinds of
 * src/checks/kinds.ts — the one table of names, versions and arguments.
 *
 * - `check` names: a near miss of a known name is an error (`misspelled_check`, with the name meant): graded
 *   not_applicable by a forward-compatible runner it would pass silently. Any other name this format does not define
 *   is an error too (`unknown_check`) for an author (strict keys); a warning with `strictKeys: false` or in a
 *   storyboard of a newer format version (format.ts), and then graded as the runner-output contract says for a kind
 *   the runner does not implement (passed, with a note: engine/grade.ts).
 * - Arguments a kind cannot work without (its descriptor's `needs`): `check_missing_argument` — the author learns at
 *   load time, not from a validation that can only ever fail. `field_value_or_absent` without `value` or
 *   `allowed_values` is named apart: "runners MUST reject the storyboard before execution begins".
 * - upstream_traffic `identifier_paths` outside the portable grammar ("MUST be rejected at storyboard load/lint
 *   time rather than treated as paths that resolve to zero values"): `invalid_identifier_path`.
 * - `field_pattern` / `envelope_field_pattern` with a pattern that is not a JavaScript regular expression, and an
 *   `expires_after_version` that is not semver (storyboard-schema.yaml > expires_after_version: "runners MUST use
 *   semver.gte semantics"; the lint rejects malformed values): errors.
 * - `severity: advisory` with neither `expires_after_version` nor `permanent_advisory` (or both): a warning — the
 *   schema requires exactly one, and "the build-time lint surfaces violations (warning, not error)".
 */
import { CHECK_KIND, NEWER_CHECK_KINDS } from '../../checks/kinds.js';
import { compilePattern } from '../../checks/field-pattern.js';
import { identifierPathProblem } from '../../checks/upstream-traffic.js';
import { closestMatch } from '../did-you-mean.js';
import { forwardNote } from '../format.js';
import { LENIENT_KEYS_ESCAPE } from '../unknown-keys.js';
import type { RawStep, RawValidation, RuleContext } from './model.js';

/** Kinds some runners (@adcp/sdk) grade that no AdCP version defines. */
const RUNNER_EXTENSION_CHECKS = ['envelope_field_value', 'envelope_field_value_or_absent'];

/** semver 2.0.0 (the pattern of semver.org, without build metadata being required). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export function checkValidations(ctx: RuleContext): void {
  for (const step of ctx.steps) {
    for (const validation of step.validations) {
      const check = validation.raw.check;
      if (typeof check !== 'string') continue; // the schema reports it
      if (checkName(ctx, step, validation, check)) checkArguments(ctx, step, validation, check);
      checkSeverity(ctx, step, validation);
    }
  }
}

const where = (step: RawStep, validation: RawValidation) =>
  `validations[${validation.index}] of step "${step.id ?? '?'}"`;

/** False when the name is not a kind of this format (its arguments are then not worth checking). */
function checkName(ctx: RuleContext, step: RawStep, validation: RawValidation, check: string): boolean {
  if (CHECK_KIND.has(check)) return true;
  const at = ctx.at([...validation.path, 'check']);
  const known = [...CHECK_KIND.keys()];
  // A kind of a newer AdCP minor, or a runner's own, is not a typo of one of ours.
  const named = [...NEWER_CHECK_KINDS, ...RUNNER_EXTENSION_CHECKS].includes(check);
  // Short names tolerate one edit only: `all_of` is not a typo of `any_of`.
  const suggestion = named ? undefined : closestMatch(check, known, check.length <= 6 ? 1 : 2);
  if (ctx.keys === 'forward') {
    ctx.sink.warning(
      'unknown_check',
      at,
      `check "${check}" in ${where(step, validation)} is not a kind vitest-adcp implements`,
      `${forwardNote(ctx.formatVersion)}: it is graded as the runner-output contract says — passed, with a note on the coverage gap${suggestion ? `; or did you mean "${suggestion}"?` : ''}`,
    );
    return false;
  }
  if (suggestion) {
    ctx.sink.error(
      'misspelled_check',
      at,
      `unknown check "${check}" in ${where(step, validation)}`,
      `did you mean "${suggestion}"?`,
    );
    return false;
  }
  const origin = RUNNER_EXTENSION_CHECKS.includes(check)
    ? 'a runner extension, not defined by AdCP'
    : NEWER_CHECK_KINDS.includes(check)
      ? 'defined by a newer AdCP version (3.2), not by the 3.1 format vitest-adcp implements'
      : 'not defined by AdCP 3.1';
  const list = `known checks: ${known.join(', ')}`;
  if (ctx.strictKeys) {
    ctx.sink.error(
      'unknown_check',
      at,
      `check "${check}" in ${where(step, validation)} is ${origin}, so vitest-adcp cannot grade it`,
      `${list}; ${LENIENT_KEYS_ESCAPE}: it then loads, and this validation passes with a note that it was not graded`,
    );
    return false;
  }
  ctx.sink.warning(
    'unknown_check',
    at,
    `check "${check}" in ${where(step, validation)} is ${origin}`,
    `vitest-adcp does not grade it: it passes with a note on the coverage gap (runner-output contract, forward compatibility); ${list}`,
  );
  return false;
}

function checkArguments(ctx: RuleContext, step: RawStep, validation: RawValidation, check: string): void {
  const raw = validation.raw;
  const at = ctx.at(validation.path);
  const kind = CHECK_KIND.get(check)!;
  const has = (key: string) => Object.hasOwn(raw, key);
  if (check === 'field_value_or_absent' && !has('value') && !has('allowed_values')) {
    ctx.sink.error(
      'field_value_or_absent_without_value',
      at,
      `field_value_or_absent check in ${where(step, validation)} declares neither value nor allowed_values`,
      'add `value: <expected>` or `allowed_values: [...]` — without one the check cannot tell a wrong value from a right one',
    );
    return;
  }
  if (check === 'field_value' && !has('value') && !has('allowed_values')) {
    ctx.sink.error(
      'field_value_without_value',
      at,
      `field_value check in ${where(step, validation)} declares neither value nor allowed_values`,
      'add `value: <expected>` (or `allowed_values: [...]`), or use `check: field_present` to only require the field',
    );
    return;
  }
  const missing = kind.needs.filter((group) => !group.some(has));
  if (missing.length > 0) {
    const names = missing.map((group) => group.join(' / '));
    ctx.sink.error(
      'check_missing_argument',
      at,
      `${check} check in ${where(step, validation)} has no ${names.join(', ')}`,
      `add ${missing.map((group) => `\`${group[0]}:\``).join(', ')} — ${check} cannot run without ${missing.length === 1 ? 'it' : 'them'}`,
    );
    return;
  }
  if (check === 'upstream_traffic' && Array.isArray(raw.identifier_paths)) {
    raw.identifier_paths.forEach((path, i) => {
      const problem = typeof path === 'string' ? identifierPathProblem(path) : undefined;
      if (problem)
        ctx.sink.error(
          'invalid_identifier_path',
          ctx.at([...validation.path, 'identifier_paths', i]),
          `${problem}, in ${where(step, validation)}`,
          'storyboard-schema.yaml > identifier_paths: dotted keys of the step\'s request, each optionally `[*]` (e.g. "audiences[*].add[*].hashed_email"); no indexes, quoting, `$` or request/response/context roots',
        );
    });
  }
  if (has('pattern') && (check === 'field_pattern' || check === 'envelope_field_pattern')) {
    const compiled = compilePattern(raw.pattern);
    if (typeof compiled === 'string')
      ctx.sink.error(
        'invalid_pattern',
        ctx.at([...validation.path, 'pattern']),
        `${check} check in ${where(step, validation)} ${compiled}`,
        'write a JavaScript regular expression source, e.g. `^[0-9]+\\.[0-9]+$` (YAML: quote it)',
      );
  }
}

function checkSeverity(ctx: RuleContext, step: RawStep, validation: RawValidation): void {
  const raw = validation.raw;
  const expiry = raw.expires_after_version;
  if (expiry !== undefined && (typeof expiry !== 'string' || !SEMVER.test(expiry))) {
    ctx.sink.error(
      'invalid_expires_after_version',
      ctx.at([...validation.path, 'expires_after_version']),
      `expires_after_version ${JSON.stringify(expiry)} in ${where(step, validation)} is not a semver version`,
      'write a version like "3.2.0" (or "3.2.0-0" to include its pre-releases); the runner compares it with semver',
    );
  }
  if (raw.severity !== 'advisory') return;
  const gates = [expiry !== undefined, raw.permanent_advisory !== undefined].filter(Boolean).length;
  if (gates !== 1)
    ctx.sink.warning(
      'advisory_without_expiry',
      ctx.at([...validation.path, 'severity']),
      `advisory validation in ${where(step, validation)} declares ${gates === 0 ? 'neither' : 'both'} expires_after_version ${gates === 0 ? 'nor' : 'and'} permanent_advisory`,
      'storyboard-schema.yaml: an advisory declares exactly one — `expires_after_version: "<semver>"` (promoted to required from that runner version) or `permanent_advisory: { reason: … }`',
    );
}
