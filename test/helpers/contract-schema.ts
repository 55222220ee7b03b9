/**
 * Validates a contract report (what `vitest-adcp/reporter` writes) against
 * schema/runner-output.schema.json — the JSON Schema of the AdCP runner output
 * contract v1.1.0 as we emit it — and, when the shape is right, against the
 * rules a schema cannot express (counts, statuses; see consistencyErrors).
 * For tests: every report a real run writes should pass through
 * `assertValidContractReport`.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

export const CONTRACT_SCHEMA_FILE = new URL('../../schema/runner-output.schema.json', import.meta.url);

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (!compiled) {
    // strict: a mistake in the schema itself (an unknown keyword, a misplaced `required`) is an error, not a silent pass.
    const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
    compiled = ajv.compile(JSON.parse(readFileSync(CONTRACT_SCHEMA_FILE, 'utf8')) as object);
  }
  return compiled;
}

function describeError(e: ErrorObject): string {
  const params =
    e.keyword === 'const' || e.keyword === 'enum' || e.keyword === 'propertyNames'
      ? ` ${JSON.stringify(e.params)}`
      : '';
  return `${e.instancePath || '/'} ${e.message ?? e.keyword}${params}`;
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
  storyboards.forEach((sb, i) => {
    sb.steps.forEach((step: any, j: number) => {
      if (step.storyboard_id !== sb.storyboard_id)
        errors.push(
          `/storyboards/${i}/steps/${j}/storyboard_id is "${step.storyboard_id}" in the entry of "${sb.storyboard_id}"`,
        );
    });
    const own = sb.steps.filter((s: any) => !s.not_run);
    const expected = sb.skip
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
    if (sb.status !== expected)
      errors.push(`/storyboards/${i}/status is "${sb.status}", but its steps make it "${expected}"`);
  });
  if (report.run.complete !== (counts.steps_not_run === 0))
    errors.push(`/run/complete is ${report.run.complete} with ${counts.steps_not_run} steps not run`);
  return errors;
}

export function validateContractReport(report: unknown): { valid: boolean; errors: string[] } {
  const validate = validator();
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
  if (!valid)
    throw new Error(
      `the contract report is not valid (schema/runner-output.schema.json, then counts and statuses) — ${errors.length} error${errors.length === 1 ? '' : 's'}:\n  ${errors.join('\n  ')}`,
    );
}
