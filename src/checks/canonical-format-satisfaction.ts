/**
 * `canonical_format_satisfaction` (storyboard-schema.yaml > "Canonical format satisfaction", AdCP 3.1): on a
 * create_media_buy step, each package's format selector is judged against the product a prior get_products answer
 * described, and the agent's answer against that verdict.
 *
 * - Packages: the request's `packages[]`, or what `path` selects in the request — one package object or an array.
 * - Product: the most recent prior get_products answer whose `products[]` holds the package's `product_id` (the
 *   run's `history`, oldest first). None is an authoring or setup error: the check fails, whatever `value` says.
 * - Local satisfaction: format-satisfaction.ts (legacy ids normalised through `v1_format_ref[]` and the v1-canonical
 *   registry, `format_option_refs[]` resolved, directional gating of dimensions, durations and canonical params, range
 *   containment).
 * - `value: true`: the request should be accepted — every package satisfies its product and the agent accepted it.
 *   `value: false`: it should be rejected for a format-selector cause — a package does not satisfy its product, the
 *   agent rejected the request, and the rejection is attributable to formats: an error code of the FORMAT_ family, a
 *   `field` / issue pointer / `details.reason` naming a format selector, or a message naming formats. An unrelated
 *   rejection (auth, tenant, budget) does not pass a negative case, so it cannot mask a selector bug.
 *
 * Output (runner-output-contract.yaml > validation_result): `expected` `{ accepted, local_satisfied }` — both the
 * validation's value —, `actual` `{ accepted, local_satisfied, rejection? }` — the observed success, the local verdict,
 * and on a rejection what it said and which part of it names formats. `json_pointer` points into the request at the
 * deciding selector for an input-level failure, into the response at the error code for a rejection.
 */
import { answerError, findErrorCode, type AnswerError } from '../model/answer-error.js';
import { isPlainObject, resolvePath } from '../model/path.js';
import { packageSatisfaction, type Satisfaction } from './format-satisfaction.js';
import type { Check, CheckInput, CheckVerdict, PriorAnswer } from './types.js';

const TASK = 'create_media_buy';

type Json = Readonly<Record<string, unknown>>;

interface PackageVerdict extends Satisfaction {
  /** `packages[0]`: where the package is in the request. */
  label: string;
  /** The deciding selector as a JSON Pointer into the request. */
  pointer: string;
  /** The product and the get_products step it came from; absent: a setup error, in `reason`. */
  source?: { product_id: string; step: string };
}

interface Rejection {
  codes: string[];
  fields: string[];
  messages: string[];
  /** What in the rejection names formats; empty: nothing does. */
  format_evidence: string[];
}

/** `/packages/0/format_ids/1` → `packages[0].format_ids[1]`. */
function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, token) => (/^\d+$/.test(token) ? `${path}[${token}]` : path ? `${path}.${token}` : token), '');
}

type Packages = { packages: { value: Json; pointer: string }[] } | { error: string; pointer: string | null };

/** The packages the validation judges: `packages[]`, or what `path` selects in the request. */
function selectPackages(payload: unknown, path: string | undefined): Packages {
  if (!isPlainObject(payload)) return { error: 'the request payload is not an object', pointer: null };
  const found = path === undefined ? resolvePath(payload, 'packages') : resolvePath(payload, path);
  const where = path === undefined ? 'packages[]' : `"${path}"`;
  const items = found.matches
    ? found.matches
    : Array.isArray(found.value)
      ? found.value.map((value, i) => ({ value, pointer: `${found.pointer}/${i}` }))
      : found.found
        ? [{ value: found.value, pointer: found.pointer }]
        : [];
  if (items.length === 0)
    return {
      error: `${where} selects no package in the request (expected a package object or a non-empty array of them)`,
      pointer: found.pointer,
    };
  const stray = items.find((item) => !isPlainObject(item.value));
  if (stray)
    return {
      error: `${where} selects ${JSON.stringify(stray.value)} at ${stray.pointer}, which is not a package object`,
      pointer: stray.pointer,
    };
  return { packages: items as { value: Json; pointer: string }[] };
}

/** The most recent prior get_products answer whose products[] holds the product. */
function priorProduct(history: readonly PriorAnswer[], productId: string) {
  for (let i = history.length - 1; i >= 0; i--) {
    const prior = history[i];
    if (prior.task !== 'get_products' || !isPlainObject(prior.data) || !Array.isArray(prior.data.products)) continue;
    const product = prior.data.products.find((p) => isPlainObject(p) && p.product_id === productId);
    if (product) return { product: product as Json, step: prior.step };
  }
  return undefined;
}

function judgePackage(pkg: { value: Json; pointer: string }, history: readonly PriorAnswer[]): PackageVerdict {
  const label = pointerToPath(pkg.pointer) || 'the request';
  const productId = pkg.value.product_id;
  const setup = (reason: string): PackageVerdict => ({
    satisfied: false,
    at: '/product_id',
    reason,
    notes: [],
    label,
    pointer: `${pkg.pointer}/product_id`,
  });
  if (typeof productId !== 'string') return setup(`${label} has no product_id to find its product by`);
  const prior = priorProduct(history, productId);
  if (!prior) {
    const seen = history.filter((h) => h.task === 'get_products').map((h) => `"${h.step}"`);
    return setup(
      `expected a get_products answer before this step holding product "${productId}" (${label}), but ${seen.length > 0 ? `none of ${seen.join(', ')} lists it` : 'no get_products step ran before this one'}: the storyboard must discover the product before it buys it`,
    );
  }
  const verdict = packageSatisfaction(pkg.value, prior.product);
  return { ...verdict, label, pointer: pkg.pointer + verdict.at, source: { product_id: productId, step: prior.step } };
}

const FORMAT_WORD = /\bformat/i;
/** A field path or pointer naming a format selector: `packages[0].format_kind`, `/packages/0/format_option_refs/1`. */
const namesSelector = (field: string): boolean =>
  field.split(/[^A-Za-z0-9_]+/).some((token) => token.startsWith('format') || token === 'params');

/** The error objects of a rejection: `adcp_error`, `errors[]` (top level or under `payload`) and their `issues[]`. */
function errorEntries(data: unknown): Json[] {
  const entries: Json[] = [];
  for (const body of [data, isPlainObject(data) ? data.payload : undefined]) {
    if (!isPlainObject(body)) continue;
    if (isPlainObject(body.adcp_error)) entries.push(body.adcp_error);
    if (Array.isArray(body.errors)) entries.push(...body.errors.slice(0, 100).filter(isPlainObject));
  }
  const issues = entries.flatMap((e) => (Array.isArray(e.issues) ? e.issues.slice(0, 100).filter(isPlainObject) : []));
  return [...entries, ...issues];
}

function rejectionOf(input: CheckInput, failure: AnswerError | { message: string }): Rejection {
  const entries = errorEntries(input.exchange.data);
  const strings = (key: string, from: readonly Json[] = entries) => [
    ...new Set(from.map((e) => e[key]).filter((v): v is string => typeof v === 'string' && v.length > 0)),
  ];
  const codes = strings('code');
  const fields = [...strings('field'), ...strings('pointer')];
  const reasons = strings(
    'reason',
    entries.flatMap((e) => (isPlainObject(e.details) ? [e.details] : [])),
  );
  const messages = [...new Set([...strings('message'), ...(failure.message ? [failure.message] : [])])];
  const evidence = [
    ...codes.filter((code) => code.startsWith('FORMAT_')).map((code) => `code ${code}`),
    ...fields.filter(namesSelector).map((field) => `field ${field}`),
    ...reasons.filter((reason) => FORMAT_WORD.test(reason)).map((reason) => `details.reason ${reason}`),
    ...messages.filter((message) => FORMAT_WORD.test(message)).map((message) => `message ${JSON.stringify(message)}`),
  ];
  return { codes, fields, messages, format_evidence: evidence };
}

function describeRejection(rejection: Rejection): string {
  const parts = [
    rejection.codes.length > 0 ? `code ${rejection.codes.join(', ')}` : 'no error code',
    ...(rejection.fields.length > 0 ? [`field ${rejection.fields.join(', ')}`] : []),
    ...(rejection.messages.length > 0
      ? [`message ${rejection.messages.map((m) => JSON.stringify(m)).join(', ')}`]
      : []),
  ];
  return parts.join('; ');
}

function observation(verdict: PackageVerdict): string[] {
  const from = verdict.source ? ` (product "${verdict.source.product_id}" from step "${verdict.source.step}")` : '';
  const head = `${verdict.label}${from}: ${verdict.satisfied ? 'satisfies' : 'does not satisfy'} — ${verdict.reason}`;
  return [head, ...verdict.notes.map((note) => `${verdict.label}: ${note}`)];
}

interface Problem {
  error: string;
  pointer: string | null;
}

export const canonicalFormatSatisfaction: Check = (input) => {
  const { validation, exchange } = input;
  if (input.task !== TASK)
    return fail(
      `canonical_format_satisfaction grades create_media_buy steps only; this step calls ${input.task}`,
      null,
      TASK,
      input.task,
    );
  if (typeof validation.value !== 'boolean')
    return fail(
      `value must be true (the request should be accepted) or false (rejected for its format selector), not ${JSON.stringify(validation.value)}`,
      null,
      'true or false',
      validation.value ?? null,
    );
  const expected = validation.value;
  const selected = selectPackages(
    exchange.request.payload,
    validation.path === undefined ? undefined : String(validation.path),
  );
  if ('error' in selected)
    return fail(selected.error, selected.pointer, 'a package object or a non-empty array of package objects', null);
  const verdicts = selected.packages.map((pkg) => judgePackage(pkg, input.history ?? []));
  const failure = exchange.transportError ? { message: exchange.transportError } : answerError(exchange);
  const accepted = failure === undefined;
  const rejection = failure ? rejectionOf(input, failure) : undefined;
  const setup = verdicts.find((v) => !v.source);
  const localSatisfied = setup ? null : verdicts.every((v) => v.satisfied);
  const actual = { accepted, local_satisfied: localSatisfied, ...(rejection ? { rejection } : {}) };
  const verdict = (passed: boolean, error?: string, pointer: string | null = verdicts[0].pointer): CheckVerdict => ({
    passed,
    json_pointer: pointer,
    ...(passed ? {} : { expected: { accepted: expected, local_satisfied: expected }, actual, error }),
    observations: verdicts.flatMap(observation),
  });
  if (setup) return verdict(false, setup.reason, setup.pointer);
  const problems = problemsFor(expected, verdicts, accepted, rejection, input);
  return problems.length === 0
    ? verdict(true)
    : verdict(false, problems.map((p) => p.error).join('; '), problems[0].pointer);
};

/** What disagrees with the validation's value, in the order an author reads them: the local verdict, then the agent. */
function problemsFor(
  expected: boolean,
  verdicts: readonly PackageVerdict[],
  accepted: boolean,
  rejection: Rejection | undefined,
  input: CheckInput,
): Problem[] {
  const problems: Problem[] = [];
  const unsatisfied = verdicts.find((v) => !v.satisfied);
  const codeAt = findErrorCode(input.exchange)?.pointer ?? null;
  if (expected && unsatisfied)
    problems.push({
      error: `expected every package's format selector to satisfy its product, but ${observation(unsatisfied)[0]}`,
      pointer: unsatisfied.pointer,
    });
  if (!expected && !unsatisfied)
    problems.push({
      error: `expected a package whose format selector does not satisfy its product, but each one does: ${verdicts.map((v) => observation(v)[0]).join('; ')}`,
      pointer: verdicts[0].pointer,
    });
  if (expected && rejection)
    problems.push({
      error: `expected the agent to accept the request, but it rejected it (${describeRejection(rejection)})`,
      pointer: codeAt,
    });
  if (!expected && accepted)
    problems.push({
      error: 'expected the agent to reject the request for its format selector, but it accepted it',
      pointer: (unsatisfied ?? verdicts[0]).pointer,
    });
  if (!expected && rejection && rejection.format_evidence.length === 0)
    problems.push({
      error: `expected the rejection to name a format cause (a FORMAT_ error code, a field naming the format selector, or a message naming formats), but it names none (${describeRejection(rejection)}): an unrelated rejection does not show the selector was refused`,
      pointer: codeAt,
    });
  return problems;
}

function fail(error: string, pointer: string | null, expected: unknown, actual: unknown): CheckVerdict {
  return { passed: false, json_pointer: pointer, expected, actual, error };
}
