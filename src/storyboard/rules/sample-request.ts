/**
 * A step's `sample_request` against its task's AdCP request schema (storyboard-schema.yaml, `expect_error`,
 * `negative_path`, `sample_request_skip_schema`: request-schema validation is the runner's job, and "shape drift on
 * these steps is caught statically"). Rule `sample_request_schema`, located at the offending field.
 *
 * Which steps: an AdCP task whose request schema the installed manifest names, with a `sample_request` mapping, and
 * none of the opt-outs —
 *   `sample_request_skip_schema: true`;
 *   `expect_error: true` with `negative_path` absent or `schema_invalid` (the payload is malformed on purpose);
 *   a step with neither that grades an `error_code` (a rejection test that does not say `expect_error`).
 * `expect_error: true` with `negative_path: payload_well_formed` IS validated.
 *
 * What is not known at load time is not judged:
 * - a value holding a placeholder (`$context.x`, `{{…}}`, `$test_kit.x`, `$generate:…`) takes any value: errors at or
 *   below it are dropped, and so is a failed `anyOf` / `oneOf` / `if` above it (the branch it would match is unknown);
 * - what the runner adds to a request that leaves it out (RUNNER_ADDED: `idempotency_key`; create_media_buy's account,
 *   brand, flight and packages; comply_test_controller's account) — its absence is not reported.
 * A failed `anyOf` / `oneOf` is reported once, at its field, without the errors of each branch it tried.
 *
 * Severity (rules/index.ts): an error — the format calls such a payload malformed unless it opts out, and the agent
 * would be graded on a request AdCP does not define —; with `strictKeys: false` (storyboards of another format
 * version, whose schemas may not be the installed ones) a warning; so too in a storyboard of the compliance corpus,
 * which its own build linted (3.1.x's si_send_message_with_mismatched_receipt says payload_well_formed of a payload
 * its schema refuses: the step still runs, and the warning says why it may grade oddly).
 *
 * Not checked at all: a storyboard of the compliance corpus against the schemas of the corpus's own release (their
 * manifest's `adcp_version` is the corpus's `index.json` one). The corpus's build checks that ("shape drift on these
 * steps is caught statically", storyboard-schema.yaml > negative_path), and checking it again cost a first run its
 * largest compile — the request schemas of every task the run's storyboards call: 0.6 s of the 1.45 s that compiling
 * 3.1.15's 90 storyboards of a seller takes — to find, over every published corpus (3.0.6, 3.0.12, 3.1.15, 3.2.0), one
 * step: the si_send_message_with_mismatched_receipt above, whose grading accepts the schema's own rejection
 * (VALIDATION_ERROR) anyway. Against other schemas (a `schemasDir` of another release, an SDK whose schemas are another
 * patch) it is checked, as a warning.
 */
import { isPlainObject, parsePointer } from '../paths.js';
import type { DataPath } from '../source-map.js';
import { inComplianceTree, type RawStep, type RuleContext, stepLabel } from './model.js';

const PLACEHOLDER = /\$context\.|\$test_kit\.|\$generate:|\{\{/;
/** Keywords whose failure at a field depends on every value below it. */
const COMPOSITE = new Set(['anyOf', 'oneOf', 'if', 'not']);
/** Composites whose failure comes with the errors of each branch tried. */
const BRANCHING = new Set(['anyOf', 'oneOf']);
/**
 * Top-level fields the runner adds to a request that leaves them out: `idempotency_key` on every task whose schema
 * requires it (engine/idempotency.ts), and what the request builder completes a create_media_buy with
 * (engine/enrich/create-media-buy.ts: "the request schema's required account, brand, start_time, end_time and a
 * package come from the runner"). Not imported: the enrichers are not exported as data.
 */
const RUNNER_ADDED: Readonly<Record<string, ReadonlySet<string>>> = {
  '*': new Set(['idempotency_key']),
  create_media_buy: new Set(['account', 'brand', 'start_time', 'end_time', 'packages']),
  // 3.1: the caller's sandbox account (engine/enrich/index.ts controllerAccount).
  comply_test_controller: new Set(['account']),
};
/** Diagnostics per step: the first few say what is wrong; a wholly wrong payload need not list every field. */
const MAX_PER_STEP = 5;

export function checkSampleRequests(ctx: RuleContext): void {
  const adcp = ctx.adcp;
  if (!adcp?.schemas || checkedByItsRelease(ctx, adcp.schemas.version)) return;
  for (const step of ctx.steps) {
    const task = step.raw.task;
    const request = step.raw.sample_request;
    if (typeof task !== 'string' || !isPlainObject(request)) continue;
    if (step.raw.sample_request_skip_schema === true) continue;
    // A payload malformed on purpose (negative_path absent or schema_invalid) is not checked; every other value says it
    // is well formed (payload_well_formed, or a runtime rejection the 3.1 corpus names: mode_mismatch, …).
    const negative = step.raw.negative_path;
    if (step.raw.expect_error === true && (negative === undefined || negative === 'schema_invalid')) continue;
    // A step that grades an error code without saying expect_error is a rejection test all the same (the 3.1 corpus's
    // si_send_message_with_mismatched_receipt): its payload may be wrong on purpose.
    if (step.raw.expect_error === undefined && negative === undefined && expectsErrorCode(step)) continue;
    const ref = adcp.requestSchemaFor(task);
    if (!ref) continue;
    let verdict;
    try {
      verdict = adcp.schemas.validate(ref, request);
    } catch {
      continue; // a schema the registry cannot serve: the run reports it where it matters
    }
    if (verdict.valid) continue;
    const validate = (data: unknown) => adcp.schemas!.validate(ref, data).errors;
    report(ctx, step, task, ref, request, verdict.errors.map(withMissingProperty), validate);
  }
}

/** A storyboard of the compliance corpus, and the schemas of that corpus's release (`schemasVersion`: their manifest's). */
function checkedByItsRelease(ctx: RuleContext, schemasVersion: string | undefined): boolean {
  return inComplianceTree(ctx) && ctx.formatVersion !== undefined && ctx.formatVersion === schemasVersion;
}

/** A schema error of the registry, with the field a `required` error names (in its message: the registry keeps no ajv `params`). */
interface SchemaError {
  instance_path: string;
  keyword: string;
  message: string;
  missingProperty?: string;
}

function withMissingProperty(error: SchemaError): SchemaError {
  if (error.keyword !== 'required') return error;
  const missing = /required property '([^']*)'/.exec(error.message)?.[1];
  return missing === undefined ? error : { ...error, missingProperty: missing };
}

/**
 * The key an `additionalProperties` error is about (the registry's errors do not name it): the key without which
 * the object has one such error fewer — validated again without each key in turn, only for a reported error.
 */
function unexpectedKey(
  error: SchemaError,
  request: Record<string, unknown>,
  validate: (data: unknown) => SchemaError[],
  claimed: Set<string>,
): string | undefined {
  const target = getPointer(request, error.instance_path);
  if (!isPlainObject(target)) return undefined;
  const count = (errors: SchemaError[]) =>
    errors.filter((e) => e.keyword === 'additionalProperties' && e.instance_path === error.instance_path).length;
  const before = count(validate(request));
  for (const key of Object.keys(target)) {
    const id = `${error.instance_path}/${key}`;
    if (claimed.has(id)) continue;
    const copy = structuredClone(request);
    delete (getPointer(copy, error.instance_path) as Record<string, unknown>)[key];
    if (count(validate(copy)) < before) {
      claimed.add(id);
      return key;
    }
  }
  return undefined;
}

function getPointer(root: unknown, pointer: string): unknown {
  let value = root;
  for (const segment of parsePointer(pointer))
    value = (value as Record<string | number, unknown> | undefined)?.[segment];
  return value;
}

function runnerAdds(task: string, field: string): boolean {
  return RUNNER_ADDED['*']!.has(field) || (Object.hasOwn(RUNNER_ADDED, task) && RUNNER_ADDED[task]!.has(field));
}

function report(
  ctx: RuleContext,
  step: RawStep,
  task: string,
  ref: string,
  request: Record<string, unknown>,
  errors: readonly SchemaError[],
  validate: (data: unknown) => SchemaError[],
): void {
  const wild = placeholderPointers(request);
  const under = (pointer: string, prefix: string) => pointer === prefix || pointer.startsWith(`${prefix}/`);
  const branchings = errors.filter((e) => BRANCHING.has(e.keyword));
  const kept: SchemaError[] = [];
  for (const error of errors) {
    const at = error.instance_path;
    // A placeholder takes any value: nothing at or below it is known, nor whether a composite above it would match.
    if (wild.some((w) => under(at, w))) continue;
    if (COMPOSITE.has(error.keyword) && wild.some((w) => under(w, at))) continue;
    // The errors of each branch an anyOf / oneOf tried: the composite speaks for them.
    if (!BRANCHING.has(error.keyword) && branchings.some((b) => under(at, b.instance_path))) continue;
    if (
      error.keyword === 'required' &&
      at === '' &&
      error.missingProperty !== undefined &&
      runnerAdds(task, error.missingProperty)
    )
      continue;
    if (error.keyword === 'if') continue; // its `then`/`else` error says what is wrong
    kept.push(error);
  }
  const seen = new Set<string>();
  const unique = kept.filter((e) => {
    const key = `${e.instance_path}\0${e.keyword}\0${e.message}\0${e.missingProperty ?? ''}`;
    return !seen.has(key) && Boolean(seen.add(key));
  });
  // A published storyboard passed the corpus's own lint; a mismatch with the schemas here is reported, not refused.
  const severity = ctx.strictKeys && !inComplianceTree(ctx) ? 'error' : 'warning';
  const claimed = new Set<string>();
  for (const error of unique.slice(0, MAX_PER_STEP)) {
    const extra =
      error.keyword === 'additionalProperties' ? unexpectedKey(error, request, validate, claimed) : undefined;
    const { path, field } = locate(step, error, extra);
    const shown = field === '' ? 'the request' : field;
    const more =
      unique.length > MAX_PER_STEP && error === unique[MAX_PER_STEP - 1]
        ? ` (+${unique.length - MAX_PER_STEP} more)`
        : '';
    ctx.sink.add(
      severity,
      'sample_request_schema',
      extra !== undefined ? ctx.keyAt(path) : ctx.at(path),
      `sample_request of ${stepLabel(step)} does not match ${ref}: ${shown} ${describe(error, extra)}${more}`,
      hint(step),
    );
  }
}

/** The data path a schema error points at (an unexpected key: that key), and the field as the author reads it. */
function locate(step: RawStep, error: SchemaError, extra: string | undefined): { path: DataPath; field: string } {
  const inner = parsePointer(error.instance_path);
  const segments = extra !== undefined ? [...inner, extra] : [...inner];
  const field = segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
  return { path: [...step.path, 'sample_request', ...segments], field };
}

function describe(error: SchemaError, extra: string | undefined): string {
  switch (error.keyword) {
    case 'additionalProperties':
      return extra !== undefined ? 'is not a field of this request' : error.message;
    case 'required':
      return error.missingProperty !== undefined
        ? `lacks the required field "${error.missingProperty}"`
        : error.message;
    case 'anyOf':
    case 'oneOf':
      return `matches none of the shapes the schema allows here (${error.keyword})`;
    default:
      return error.message;
  }
}

function hint(step: RawStep): string {
  const negative = step.raw.expect_error === true;
  return negative
    ? 'this step expects an error but declares negative_path: payload_well_formed, so its payload must be valid; if it is malformed on purpose, use negative_path: schema_invalid'
    : 'fix the field (the agent would be graded on a request AdCP does not define); a payload malformed on purpose takes expect_error: true (negative_path: schema_invalid), or sample_request_skip_schema: true';
}

/** JSON Pointers of every value of `request` that holds a placeholder. */
function placeholderPointers(request: unknown): string[] {
  const out: string[] = [];
  const walk = (value: unknown, pointer: string) => {
    if (typeof value === 'string') {
      if (PLACEHOLDER.test(value)) out.push(pointer);
    } else if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${pointer}/${i}`));
    else if (isPlainObject(value)) {
      for (const [key, child] of Object.entries(value))
        walk(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    }
  };
  walk(request, '');
  return out;
}

function expectsErrorCode(step: RawStep): boolean {
  return step.validations.some((v) => v.raw.check === 'error_code');
}
