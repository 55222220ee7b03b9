/**
 * Validates a contract report (what `vitest-adcp/reporter` writes) against the JSON Schema of the contract version it
 * names — schema/runner-output.schema.json for the AdCP runner output contract v1.1.0 (the 3.0 corpus's),
 * schema/runner-output-2.6.schema.json for v2.6.0 (the 3.1 corpus's), as we emit them — and, when the shape is right,
 * against the rules a schema cannot express (counts, statuses; see consistencyErrors). For tests: every report a real
 * run writes should pass through `assertValidContractReport`.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

export const CONTRACT_SCHEMA_FILE = new URL('../../schema/runner-output.schema.json', import.meta.url);
export const CONTRACT_SCHEMA_FILES: Readonly<Record<string, URL>> = {
  '1.1.0': CONTRACT_SCHEMA_FILE,
  '2.6.0': new URL('../../schema/runner-output-2.6.schema.json', import.meta.url),
};

const compiled = new Map<string, ValidateFunction>();

/** The validator of the report's contract version; a version we do not write is checked against 1.1.0's (and fails). */
function validator(report: unknown): ValidateFunction {
  const named = (report as { contract?: { version?: unknown } } | null)?.contract?.version;
  const version = typeof named === 'string' && named in CONTRACT_SCHEMA_FILES ? named : '1.1.0';
  let validate = compiled.get(version);
  if (!validate) {
    // strict: a mistake in the schema itself (an unknown keyword, a misplaced `required`) is an error, not a silent pass.
    const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
    validate = ajv.compile(JSON.parse(readFileSync(CONTRACT_SCHEMA_FILES[version]!, 'utf8')) as object);
    compiled.set(version, validate);
  }
  return validate;
}

function describeError(e: ErrorObject): string {
  const params =
    e.keyword === 'const' || e.keyword === 'enum' || e.keyword === 'propertyNames'
      ? ` ${JSON.stringify(e.params)}`
      : '';
  return `${e.instancePath || '/'} ${e.message ?? e.keyword}${params}`;
}

/** Counts by key, keys sorted (so two tallies compare as JSON). */
function tally(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of [...keys].sort()) out[key] = (out[key] ?? 0) + 1;
  return out;
}

const sortedJson = (o: Record<string, number>) =>
  JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))));

/**
 * 2.6.0's counters against the steps and the selection: validations_advisory_failed (failed and advisory),
 * validations_not_applicable (passed with a note), skipped_by_reason (the skipped steps by reason), steps_not_selected
 * and not_selected_by_reason (the not_selected entries).
 */
function countersErrors(report: any, ran: any[]): string[] {
  const errors: string[] = [];
  const summary = report.summary;
  const validations = ran.flatMap((s) => s.validations as any[]);
  const counts = {
    validations_advisory_failed: validations.filter((v) => v.passed === false && v.severity === 'advisory').length,
    validations_not_applicable: validations.filter((v) => typeof v.note === 'string').length,
  };
  for (const [key, count] of Object.entries(counts))
    if (summary[key] !== count) errors.push(`/summary/${key} is ${summary[key]}, but the validations count ${count}`);
  const skipped = tally(ran.filter((s) => s.skip).map((s) => s.skip.reason));
  if (sortedJson(summary.skipped_by_reason) !== sortedJson(skipped))
    errors.push(
      `/summary/skipped_by_reason is ${sortedJson(summary.skipped_by_reason)}, but the steps count ${sortedJson(skipped)}`,
    );
  const notSelected: any[] = summary.not_selected ?? [];
  const steps = notSelected.reduce((n, item) => n + item.step_count, 0);
  if (summary.steps_not_selected !== steps)
    errors.push(`/summary/steps_not_selected is ${summary.steps_not_selected}, but not_selected counts ${steps}`);
  const byReason = tally(notSelected.map((item) => item.reason));
  if (sortedJson(summary.not_selected_by_reason ?? {}) !== sortedJson(byReason))
    errors.push(
      `/summary/not_selected_by_reason is ${sortedJson(summary.not_selected_by_reason ?? {})}, but not_selected counts ${sortedJson(byReason)}`,
    );
  return errors;
}

/**
 * What a JSON Schema cannot say: the counts agree with the steps, a step sits in its own storyboard's entry, and a
 * storyboard's status follows from its steps (written here independently of src/report/build.ts, on purpose).
 */
function consistencyErrors(report: any): string[] {
  const errors: string[] = [];
  const storyboards: any[] = report.storyboards;
  const steps = storyboards.flatMap((s) => s.steps as any[]);
  const ran = steps.filter((s) => !s.not_run);
  const counts = {
    total_steps: ran.length,
    steps_passed: ran.filter((s) => s.passed && !s.skip).length,
    steps_failed: ran.filter((s) => !s.passed && !s.skip).length,
    steps_skipped: ran.filter((s) => s.skip).length,
    steps_not_run: steps.length - ran.length,
  };
  for (const [key, count] of Object.entries(counts))
    if (report.summary[key] !== count)
      errors.push(`/summary/${key} is ${report.summary[key]}, but the steps count ${count}`);
  if (report.contract.version === '2.6.0') errors.push(...countersErrors(report, ran));
  storyboards.forEach((sb, i) => {
    sb.steps.forEach((step: any, j: number) => {
      if (step.storyboard_id !== sb.storyboard_id)
        errors.push(
          `/storyboards/${i}/steps/${j}/storyboard_id is "${step.storyboard_id}" in the entry of "${sb.storyboard_id}"`,
        );
    });
    const own = sb.steps.filter((s: any) => !s.not_run);
    // Steps a -t filter left out are not step results (2.6.0: not_selected); a storyboard missing some is incomplete.
    // A 1.1.0 report cannot say which, only that the run was filtered.
    const leftOut =
      report.contract.version === '2.6.0'
        ? Boolean(report.run.test_name_pattern) &&
          (report.summary.not_selected ?? []).some(
            (n: any) =>
              n.reason === 'explicit_scope_excluded' &&
              n.storyboard_id === sb.storyboard_id &&
              n.file === sb.file &&
              n.project === sb.project,
          )
        : Boolean(report.run.test_name_pattern);
    const fromSteps = sb.skip
      ? 'skipped'
      : own.some((s: any) => !s.passed && !s.skip && !s.optional)
        ? 'failed'
        : sb.steps.length > 0 && own.length === 0
          ? 'not_run'
          : own.length < sb.steps.length
            ? 'incomplete'
            : sb.steps.length > 0 && sb.steps.every((s: any) => s.skip)
              ? 'skipped'
              : 'passed';
    const expected =
      leftOut && (fromSteps === 'passed' || fromSteps === 'skipped') && sb.status === 'incomplete'
        ? 'incomplete'
        : fromSteps;
    if (sb.status !== expected)
      errors.push(`/storyboards/${i}/status is "${sb.status}", but its steps make it "${expected}"`);
  });
  const filtered =
    report.contract.version === '2.6.0'
      ? Boolean(report.run.test_name_pattern) &&
        (report.summary.not_selected ?? []).some((n: any) => n.reason === 'explicit_scope_excluded')
      : Boolean(report.run.test_name_pattern) && !report.run.complete;
  if (report.run.complete !== (counts.steps_not_run === 0 && !filtered))
    errors.push(
      `/run/complete is ${report.run.complete} with ${counts.steps_not_run} steps not run${filtered ? ' and steps a filter left out' : ''}`,
    );
  return errors;
}

export function validateContractReport(report: unknown): { valid: boolean; errors: string[] } {
  const validate = validator(report);
  const valid = validate(report) as boolean;
  // `if`/`then` failures repeat as "must match "then" schema" after the error that says why: keep the why.
  if (!valid)
    return {
      valid,
      errors: [...new Set((validate.errors ?? []).filter((e) => e.keyword !== 'if').map(describeError))],
    };
  const errors = consistencyErrors(report);
  return { valid: errors.length === 0, errors };
}

export function assertValidContractReport(report: unknown): void {
  const { valid, errors } = validateContractReport(report);
  if (!valid) {
    const version = (report as { contract?: { version?: string } } | null)?.contract?.version;
    const file = version === '2.6.0' ? 'runner-output-2.6.schema.json' : 'runner-output.schema.json';
    throw new Error(
      `the contract report is not valid (schema/${file}, then counts and statuses) — ${errors.length} error${errors.length === 1 ? '' : 's'}:\n  ${errors.join('\n  ')}`,
    );
  }
}
