/**
 * Human-readable failure text for a step: a one-line headline (check,
 * pointer, expected vs got, YAML line), then each failed validation (the
 * author's description, pointer, expected/actual, reason), what was sent and
 * the part of the answer around the failing pointer — whole with `verbose`;
 * the full records are always in the test meta and the report. Agent-controlled
 * text is fenced, control characters escaped and known secrets scrubbed
 * (runner-output-contract.yaml > security). An advisory validation that failed
 * (contract 2.6.0 > validation_result.severity) fails no step: it is never the
 * headline, and is listed apart, each line starting `[ADVISORY]`.
 */
import { relative } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { answerError, type AnswerLike } from '../model/answer-error.js';
import {
  failsStep,
  type ResponseRecord,
  type SignedRequestRecord,
  type StepResult,
  type ValidationResult,
} from '../model/records.js';
import { extractA2aResult } from '../transport/a2a-extract.js';
import { jsonRpcErrorOf } from '../transport/answer-body.js';
import { extractMcpResult } from '../transport/mcp-extract.js';
import { isAdvisoryFailure } from './counters.js';
import { excerptAround } from './excerpt.js';
import {
  sanitizeOutput,
  escapeControlDeep,
  fence,
  redactPayload,
  scrubSecrets,
  scrubSecretsDeep,
} from '../model/redact.js';
import { cutSize } from './record.js';

/** Checks whose reason text carries agent-controlled content (instance paths, codes, messages). */
const AGENT_TEXT_CHECKS = new Set(['response_schema', 'error_code']);

/**
 * What the storyboard's paths were read against: the task result, not the
 * whole MCP envelope (which repeats it as text) or A2A Task. The full
 * envelope stays in the record.
 */
export function taskResult(response: ResponseRecord): unknown {
  const payload = response.payload as Record<string, unknown> | undefined;
  if (
    response.transport === 'mcp' &&
    payload &&
    typeof payload === 'object' &&
    ('structuredContent' in payload || 'content' in payload)
  ) {
    const { data } = extractMcpResult(payload);
    if (data !== undefined) return data;
  }
  // An A2A Task or Message: the DataPart the paths were read against.
  if (
    response.transport === 'a2a' &&
    payload &&
    typeof payload === 'object' &&
    ('status' in payload || 'parts' in payload || 'task' in payload)
  ) {
    const { data } = extractA2aResult(payload);
    if (data !== undefined) return data;
  }
  return payload;
}

const MAX_JSON_CHARS = 1_500;
/** An error or reason printed in the terminal (the record keeps more: report/record.ts). */
const MAX_TEXT_CHARS = 1_500;

function clip(text: string, max: number): string {
  return text.length > max
    ? `${text.slice(0, max)}… (${text.length - max} more characters; full text in the test meta / contract report)`
    : text;
}
/** The response excerpt around a failing pointer (or the start of the answer). */
const MAX_EXCERPT_CHARS = 800;
/** A request printed inline when it is this short; longer ones behind `verbose`. */
const MAX_INLINE_REQUEST_CHARS = 200;

export interface FormatOptions {
  /** Known secrets to scrub from the text (the run's credentials). */
  secrets?: readonly string[];
  /** Paths are printed relative to this. @default process.cwd() */
  cwd?: string;
  /**
   * Print the request and the response whole, not an excerpt
   * (`ADCP_VERBOSE=1`). They are always whole in the test meta and the report.
   */
  verbose?: boolean;
}

export interface FormattedFailure {
  /** First line: what failed, in one line (JUnit's `message=`, a CI annotation's title). */
  headline: string;
  message: string;
  /** For a diff, only where one helps (structures, multi-line text): the first failed validation that has both. */
  expected?: unknown;
  actual?: unknown;
}

function json(value: unknown, max = MAX_JSON_CHARS): string {
  let text: string;
  try {
    text = JSON.stringify(redactPayload(value), null, 2) ?? 'undefined';
  } catch {
    text = String(value);
  }
  return text.length > max
    ? `${text.slice(0, max)}\n… (${text.length - max} more characters; full record in the test meta / contract report)`
    : text;
}

function where(v: ValidationResult, cwd: string): string {
  return v.source ? `${relative(cwd, v.source.file) || v.source.file}:${v.source.line}:${v.source.column}` : '';
}

function indent(text: string, by = '    '): string {
  return text
    .split('\n')
    .map((line) => by + line)
    .join('\n');
}

/**
 * A value short and plain enough to print in the headline without a fence: a
 * number, boolean, null, or an identifier-like string (ids, codes, enum
 * values) — nothing that could read as an instruction or forge a line.
 */
function plainValue(value: unknown): string | undefined {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'string' && value.length <= 48 && /^[\w.:/@+-]*$/.test(value)) return JSON.stringify(value);
  return undefined;
}

/** The storyboard's own value (trusted, but kept short). */
function shortValue(value: unknown): string {
  const plain = plainValue(value);
  if (plain !== undefined) return plain;
  if (Array.isArray(value))
    return value.length <= 4 && value.every((x) => plainValue(x) !== undefined)
      ? `[${value.map((x) => plainValue(x)).join(', ')}]`
      : `[${value.length} items]`;
  if (value !== null && typeof value === 'object') return '{…}';
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 48 ? `${text.slice(0, 45)}…${typeof value === 'string' ? '"' : ''}` : text;
}

function observed(value: unknown): string {
  const plain = plainValue(value);
  if (plain !== undefined) return plain;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  // A value the record cut (report/record.ts boundPayload) is not the agent's object: say what it was instead.
  const size = cutSize(value);
  if (size) return `a value too large to keep (${size} characters of JSON, its start below)`;
  if (value !== null && typeof value === 'object') return 'an object';
  if (value === undefined) return 'nothing';
  return 'a different string (below)';
}

/** A substitution token as the engine reports one it could not resolve (engine/substitute.ts). */
const PLACEHOLDER = /^(?:\$context\.|\$test_kit\.|\$generate\b|\{\{)/;

/**
 * The placeholders of a validation that failed because they did not resolve — the request's
 * (`unresolved_substitution`) or the expected value's (engine/grade.ts: `expected` lists the tokens, `actual` null) —,
 * or undefined. Such a failure is no value mismatch: nothing was compared.
 */
function unresolvedPlaceholders(v: ValidationResult): string[] | undefined {
  const tokens =
    Array.isArray(v.expected) &&
    v.expected.length > 0 &&
    v.expected.every((t) => typeof t === 'string' && PLACEHOLDER.test(t))
      ? (v.expected as string[])
      : undefined;
  if (!tokens) return undefined;
  if (v.check === 'unresolved_substitution') return tokens;
  return (v.actual === null || v.actual === undefined) && /did not resolve/.test(v.error ?? '') ? tokens : undefined;
}

/** What an unresolved placeholder's headline says: which placeholder, and what became of the step that should have captured it. */
function unresolvedVerdict(v: ValidationResult, tokens: string[]): string {
  const first = (v.error ?? '').split('\n')[0]!;
  // The engine's sentence names the token first (engine/unresolved.ts, engine/grade.ts): "$context.x did not resolve: step …".
  const said =
    first.startsWith(tokens[0]!) && first.includes('did not resolve')
      ? first
      : `${tokens.join(', ')} did not resolve: the step that should have captured it failed, was skipped, or never ran`;
  const text = `placeholder ${said}`;
  return text.length > 220 ? `${text.slice(0, 219)}…` : text;
}

/** One key of a JSON Pointer, as RFC 6901 escapes it. */
const pointerKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** A key printed unfenced in a headline: short and identifier-like (agent-written keys are anything). */
const plainKey = (key: string) => /^[\w.@:+~/-]{1,64}$/.test(key);

interface FirstDifference {
  /** JSON Pointer of the difference, relative to the compared values ('' = the values themselves). */
  pointer: string;
  /** Whether the pointer is printable unfenced (every key on it plain). */
  plain: boolean;
  /** The expected value there (absent: the key or item should not be there). */
  expected?: unknown;
  /** The actual value there (absent: the key or item is missing). */
  actual?: unknown;
}

function has(o: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

/**
 * Where two JSON values first differ, depth first: the expected value's keys in its order, then keys only the actual
 * value has; array items by index. Undefined when they are equal.
 */
function firstDifference(
  expected: unknown,
  actual: unknown,
  path: string[] = [],
  depth = 0,
): FirstDifference | undefined {
  const isObject = (x: unknown): x is Record<string, unknown> =>
    x !== null && typeof x === 'object' && !Array.isArray(x);
  if (depth < 32 && Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      const key = String(i);
      if (i >= actual.length) return nested(path, key, { expected: expected[i] });
      if (i >= expected.length) return nested(path, key, { actual: actual[i] });
      const inner = firstDifference(expected[i], actual[i], [...path, key], depth + 1);
      if (inner) return inner;
    }
    return undefined;
  }
  if (depth < 32 && isObject(expected) && isObject(actual)) {
    for (const key of Object.keys(expected)) {
      if (!has(actual, key)) return nested(path, key, { expected: expected[key] });
      const inner = firstDifference(expected[key], actual[key], [...path, key], depth + 1);
      if (inner) return inner;
    }
    const extra = Object.keys(actual).find((key) => !has(expected, key));
    return extra === undefined ? undefined : nested(path, extra, { actual: actual[extra] });
  }
  return isDeepStrictEqual(expected, actual) ? undefined : at(path, { expected, actual });
}

function at(path: string[], values: Pick<FirstDifference, 'expected' | 'actual'>): FirstDifference {
  return { pointer: path.map((k) => `/${pointerKey(k)}`).join(''), plain: path.every(plainKey), ...values };
}

const nested = (path: string[], key: string, values: Pick<FirstDifference, 'expected' | 'actual'>) =>
  at([...path, key], values);

/** Two structures of the same kind (object and object, array and array): a first difference is worth naming. */
function sameKindStructures(expected: unknown, actual: unknown): boolean {
  if (expected === null || actual === null || typeof expected !== 'object' || typeof actual !== 'object') return false;
  return Array.isArray(expected) === Array.isArray(actual);
}

/** The first difference of a failed value check, for the headline; undefined when it would not help. */
function differenceOf(v: ValidationResult): FirstDifference | undefined {
  // allowed_values: `expected` is the list of candidates, not one value to walk (checks/field-value.ts says so in `error`).
  if (
    v.check === 'response_schema' ||
    !sameKindStructures(v.expected, v.actual) ||
    /allowed values/.test(v.error ?? '')
  )
    return undefined;
  return firstDifference(redactPayload(v.expected), redactPayload(v.actual));
}

/** `/base` + `/rel`, or a description when the path holds a key the agent wrote that is not plain. */
function differencePointer(v: ValidationResult, d: FirstDifference): string {
  if (!d.plain) return 'a key the agent wrote (below)';
  return `${typeof v.json_pointer === 'string' ? v.json_pointer : ''}${d.pointer}` || '/';
}

/** A first difference in a few words, agent values only when plain: `at /a/b: expected "x", got "y"`. */
function differenceVerdict(v: ValidationResult, d: FirstDifference): string {
  const kind = Array.isArray(v.expected) ? 'array' : 'object';
  const where = differencePointer(v, d);
  if (!('actual' in d))
    return `the ${kind} differs at ${where}: expected ${shortValue(d.expected)}, got nothing (missing)`;
  if (!('expected' in d)) return `the ${kind} differs at ${where}: not expected, got ${observed(d.actual)}`;
  return `the ${kind} differs at ${where}: expected ${shortValue(d.expected)}, got ${observed(d.actual)}`;
}

/** A failed response_schema check: the schema, how many errors, and where the first is when its path is plain. */
function schemaVerdict(v: ValidationResult): string {
  const errors = Array.isArray(v.actual) ? (v.actual as { instance_path?: unknown }[]) : [];
  const first = errors[0]?.instance_path;
  const at = typeof first === 'string' && /^[\w/~.-]{0,80}$/.test(first) ? ` (first at ${first || '/'})` : '';
  return `does not match ${v.schema_id ?? 'its schema'}: ${errors.length || 'some'} schema error${errors.length === 1 ? '' : 's'}${at}`;
}

/** What one failed validation says, in a few words. */
function verdictOf(v: ValidationResult): string {
  const tokens = unresolvedPlaceholders(v);
  if (tokens) return unresolvedVerdict(v, tokens);
  if (v.check === 'response_schema') return schemaVerdict(v);
  if (
    (v.check === 'field_present' || v.check === 'envelope_field_present') &&
    (v.actual === null || v.actual === undefined)
  )
    return 'not present';
  const difference = differenceOf(v);
  if (difference) return differenceVerdict(v, difference);
  if (v.expected !== undefined && v.actual !== undefined)
    return `expected ${shortValue(v.expected)}, got ${observed(v.actual)}`;
  if (v.expected !== undefined) return `expected ${shortValue(v.expected)}`;
  if (v.error && !AGENT_TEXT_CHECKS.has(v.check)) {
    const line = v.error.split('\n')[0]!;
    return line.length > 100 ? `${line.slice(0, 97)}…` : line;
  }
  return 'failed (reason below)';
}

/**
 * A failed step's one line (JUnit's message=, an annotation's title, the markdown and HTML views' line): what
 * formatStepFailure puts first, without rendering the rest.
 */
export function failureHeadline(result: StepResult, options: Pick<FormatOptions, 'cwd' | 'secrets'> = {}): string {
  const headline = headlineOf(result, result.validations.filter(failsStep), options.cwd ?? process.cwd());
  return sanitizeOutput(scrubSecrets(headline, options.secrets ?? []));
}

function headlineOf(result: StepResult, failed: ValidationResult[], cwd: string): string {
  if (result.error && failed.length === 0) {
    // Kept short enough for fence() to keep it on one line: the headline is JUnit's message= and an annotation's title.
    const first = sanitizeOutput(result.error.split('\n')[0]!);
    return `step "${result.step_id}" (task ${result.task}) failed: ${fence(first.length > 150 ? `${first.slice(0, 149)}…` : first, 'error')}`;
  }
  const v = failed[0];
  if (!v) return `step "${result.step_id}" (task ${result.task}) failed`;
  const at = v.json_pointer ? ` at ${v.json_pointer}` : '';
  const source = where(v, cwd);
  const more = failed.length > 1 ? ` (+${failed.length - 1} more failed check${failed.length === 2 ? '' : 's'})` : '';
  const code = unexpectedErrorCode(result, failed);
  const cause = code ? ` (the agent answered with error ${code})` : '';
  return `${v.check}${at}: ${verdictOf(v)}${cause}${source ? ` — ${source}` : ''}${more}`;
}

/**
 * The AdCP error code the agent answered with, when no failed check was about errors: the checks then fail on fields
 * a success carries ("not present"), and the real cause — the agent refused — belongs in the one line people read.
 * Whether the answer was an error is model/answer-error.ts's rule, the one grading used: so a failed `expect_error`
 * (the answer was no error) never gets this cause, and the headline never says both "success" and "error X".
 * Only a code-shaped value (agent text, printed unfenced in the headline).
 */
function unexpectedErrorCode(result: StepResult, failed: ValidationResult[]): string | undefined {
  if (!result.response || failed.some((v) => v.check === 'error_code' || v.check === 'expect_error')) return undefined;
  const code = answerError(answerOfRecord(result, result.response))?.code;
  return code && /^[A-Z][A-Z0-9_]{1,63}$/.test(code) ? code : undefined;
}

/** A step record's answer as the rule reads it: the task data (a JSON-RPC error's `data`), the extraction, the task. */
function answerOfRecord(result: StepResult, response: ResponseRecord): AnswerLike {
  const rpcError = jsonRpcErrorOf(response.payload);
  return {
    request: { operation: result.request?.operation ?? result.task },
    extraction: result.extraction,
    data: rpcError ? (rpcError.data ?? {}) : taskResult(response),
    ...(rpcError ? { rpcError } : {}),
  };
}

/** A diff helps for structures and multi-line text; for two scalars the expected/actual lines say it all. */
function diffHelps(expected: unknown, actual: unknown): boolean {
  const structured = (x: unknown) => x !== null && typeof x === 'object';
  const multiline = (x: unknown) => typeof x === 'string' && x.includes('\n');
  return (structured(expected) && structured(actual)) || (multiline(expected) && multiline(actual));
}

export function formatStepFailure(result: StepResult, options: FormatOptions = {}): FormattedFailure {
  const cwd = options.cwd ?? process.cwd();
  const verbose = options.verbose ?? false;
  const failed = result.validations.filter(failsStep);
  const advisory = result.validations.filter(isAdvisoryFailure);
  const headline = headlineOf(result, failed, cwd);
  // A placeholder that did not resolve stops the call: what is shown is what would have gone, never "sent".
  const unsent = !result.response && failed.some((v) => v.check === 'unresolved_substitution');
  const lines = [
    headline,
    ...stepPreambleLines(result, failed),
    ...failed.flatMap((v) => validationLines(v, cwd)),
    ...advisoryLines(advisory, cwd),
    ...requestLines(result, unsent, verbose),
    ...(result.signed_request ? signedRequestLines(result.signed_request) : []),
    ...responseLines(result, failed, unsent, verbose),
    ...(result.webhook_deliveries ? webhookDeliveryLines(result) : []),
  ];
  const secrets = options.secrets ?? [];
  // Agent text is fenced (and escaped) above; runner text quotes agent-supplied names too (tools, ids), so escape it all.
  const clean = (text: string) => sanitizeOutput(scrubSecrets(text, secrets));
  return {
    headline: clean(headline),
    message: clean(lines.join('\n')),
    ...diffOf(failed, secrets),
  };
}

/** What the step says before its validations: its own error, its optional phase, its warnings, how many checks failed. */
function stepPreambleLines(result: StepResult, failed: ValidationResult[]): string[] {
  const lines: string[] = [];
  if (result.error && (failed.length > 0 || result.error.includes('\n') || result.error.length > 150))
    lines.push(`step error: ${fence(clip(result.error, MAX_TEXT_CHARS), 'error')}`);
  if (result.optional)
    lines.push(`(optional phase "${result.phase_id}": this failure alone does not fail the storyboard)`);
  for (const warning of result.warnings ?? []) lines.push(`warning: ${warning}`);
  if (failed.length > 0) {
    lines.push(
      `${failed.length} of ${result.validations.length} validation${result.validations.length === 1 ? '' : 's'} failed in step "${result.step_id}" (task ${result.task}):`,
    );
  }
  return lines;
}

/** The advisory checks that failed, apart from the failures and marked: they do not fail the step. */
function advisoryLines(advisory: ValidationResult[], cwd: string): string[] {
  if (advisory.length === 0) return [];
  return [
    `${advisory.length} advisory check${advisory.length === 1 ? '' : 's'} failed too (advisory: reported, never failing the step):`,
    ...advisory.flatMap((v) => validationLines(v, cwd, '[ADVISORY] ')),
  ];
}

/** One failed validation: what and where, its reason, then the placeholders that did not resolve or what was compared. */
function validationLines(v: ValidationResult, cwd: string, mark = ''): string[] {
  const lines = [`  ${mark}✗ ${v.description} [${v.check}]${v.source ? ` at ${where(v, cwd)}` : ''}`];
  if (v.json_pointer !== undefined && v.json_pointer !== null)
    lines.push(`    pointer:  ${v.json_pointer === '' ? '"" (the whole response)' : v.json_pointer}`);
  if (v.error)
    lines.push(
      indent(
        AGENT_TEXT_CHECKS.has(v.check) ? fence(clip(v.error, MAX_TEXT_CHARS), 'reason') : clip(v.error, MAX_TEXT_CHARS),
      ),
    );
  if (v.check === 'response_schema' && v.schema_id) lines.push(`    schema ${v.schema_id} (${v.schema_url})`);
  // Notes on the verdict can quote the agent's values (refs out of scope): fenced.
  for (const observation of v.observations ?? [])
    lines.push(`    observation: ${fence(clip(observation, 300), 'observation')}`);
  const tokens = unresolvedPlaceholders(v);
  // Nothing was compared: the placeholders, not an expected value against a null.
  if (tokens) return [...lines, `    unresolved: ${tokens.join(', ')}`];
  return [...lines, ...comparisonLines(v)];
}

/** What a validation compared: the expected value, the agent's, and where the two first differ. */
function comparisonLines(v: ValidationResult): string[] {
  const lines: string[] = [];
  if (v.expected !== undefined) lines.push(...labelled('expected: ', valueText(v.expected)));
  if (v.actual !== undefined && v.check !== 'response_schema')
    lines.push(...labelled('actual:   ', actualText(v.actual)));
  const difference = differenceOf(v);
  if (difference && !(difference.pointer === '' && difference.plain)) lines.push(firstDifferenceLine(v, difference));
  return lines;
}

/** The agent's value in the details. */
function actualText(actual: unknown): string {
  // Only strings (or structures holding them) can carry agent-planted text.
  const text = valueText(actual);
  return (typeof actual === 'object' && actual !== null) || typeof actual === 'string'
    ? fence(text, 'agent value')
    : text;
}

/** Where a structure first differs, with both values there (the key path fenced when the agent wrote it). */
function firstDifferenceLine(v: ValidationResult, difference: FirstDifference): string {
  const where = difference.plain
    ? `${typeof v.json_pointer === 'string' ? v.json_pointer : ''}${difference.pointer}`
    : fence(difference.pointer, 'agent key path');
  const expectedThere =
    'expected' in difference ? valueThere(difference.expected, false) : 'nothing (the key should not be there)';
  const actualThere = 'actual' in difference ? valueThere(difference.actual, true) : 'nothing (missing)';
  return `    first difference at ${where}: expected ${expectedThere}, got ${actualThere}`;
}

/** A value at the first difference, cut at 120 characters; the agent's fenced unless a number, boolean or null. */
function valueThere(value: unknown, agent: boolean): string {
  const text = compactJson(value);
  const short = text.length > 120 ? `${text.slice(0, 119)}…` : text;
  return agent && typeof value !== 'number' && typeof value !== 'boolean' && value !== null
    ? fence(short, 'agent value')
    : short;
}

/** What was sent: inline when short, whole with `verbose`, else its size; what would have gone when it was not sent. */
function requestLines(result: StepResult, unsent: boolean, verbose: boolean): string[] {
  const request = result.request;
  if (!request) return [];
  if (unsent)
    return [
      `  not sent (a placeholder did not resolve); it would have been ${request.transport} ${request.operation}: ${compactJson(request.payload).slice(0, MAX_INLINE_REQUEST_CHARS)}`,
    ];
  const target = `${request.transport} ${request.operation}${request.url ? ` → ${request.url}` : ''}`;
  const compact = compactJson(request.payload);
  if (verbose) return [`  sent (${target}):`, indent(json(request.payload))];
  if (compact.length <= MAX_INLINE_REQUEST_CHARS) return [`  sent (${target}): ${compact}`];
  return [
    `  sent (${target}): ${compact.length} characters of JSON, in the test meta and the report (ADCP_VERBOSE=1 prints it here)`,
  ];
}

/** What came back (fenced): around the first failing pointer, or whole with `verbose`; or that nothing did. */
function responseLines(result: StepResult, failed: ValidationResult[], unsent: boolean, verbose: boolean): string[] {
  const response = result.response;
  if (!response) return result.request && !unsent ? ['  received: nothing (no response from the agent)'] : [];
  const status = response.status !== undefined ? ` HTTP ${response.status}` : '';
  const timing = response.duration_ms !== undefined ? `, ${response.duration_ms} ms` : '';
  const data = taskResult(response);
  const pointer = failed.map((v) => v.json_pointer).find((p): p is string => typeof p === 'string' && p !== '');
  if (verbose || pointer === undefined)
    return [
      `  received (${result.extraction.path}${status}${timing}):`,
      indent(fence(json(data, verbose ? MAX_JSON_CHARS : MAX_EXCERPT_CHARS), 'agent response')),
    ];
  return [
    `  received (${result.extraction.path}${status}${timing}), around ${pointer}:`,
    indent(fence(json(excerptAround(data, pointer), MAX_EXCERPT_CHARS), 'agent response')),
  ];
}

/** The expected and actual values for a diff: the first failed validation a diff helps with, made safe; {} when none. */
function diffOf(failed: ValidationResult[], secrets: readonly string[]): Pick<FormattedFailure, 'expected' | 'actual'> {
  const diffable = failed.find(
    (v) =>
      v.expected !== undefined &&
      v.actual !== undefined &&
      v.check !== 'response_schema' &&
      diffHelps(v.expected, v.actual),
  );
  if (!diffable) return {};
  // The diff is rendered beside the message: the same redaction and scrubbing; Vitest prints it raw, so control characters escaped too.
  const safe = (value: unknown) => escapeControlDeep(scrubSecretsDeep(redactPayload(value), secrets));
  return { expected: safe(diffable.expected), actual: safe(diffable.actual) };
}

/** An expected or actual value in the details: one line when short, else indented JSON (cut at 300 characters). */
function valueText(value: unknown): string {
  const compact = compactJson(value);
  return compact.length <= 100 ? compact : json(value, 300);
}

/** `label value` on one line, or the label alone with the value's lines indented under it. */
function labelled(label: string, text: string): string[] {
  if (!text.includes('\n')) return [`    ${label}${text}`];
  return [`    ${label.trimEnd()}`, indent(text, '      ')];
}

function compactJson(value: unknown): string {
  try {
    return JSON.stringify(redactPayload(value)) ?? 'undefined';
  } catch {
    return String(value);
  }
}

/** A webhook step: what the runner's receiver observed (the deliveries are agent-controlled: fenced). */
/** A signed_requests vector step: the signature fields it sent (the request record carries no headers). */
function signedRequestLines(signed: SignedRequestRecord): string[] {
  const lines = [`  signed request (vector ${signed.vector}, as ${signed.operation}):`];
  if (signed.signature_input !== undefined) lines.push(`    Signature-Input: ${signed.signature_input}`);
  if (signed.signature !== undefined) lines.push(`    Signature: ${signed.signature}`);
  if (signed.content_digest !== undefined) lines.push(`    Content-Digest: ${signed.content_digest}`);
  if (signed.host !== undefined) lines.push(`    Host: ${signed.host}`);
  if (signed.signature_input === undefined && signed.signature === undefined) lines.push('    (no signature headers)');
  for (const note of signed.notes) lines.push(`    note: ${note}`);
  return lines;
}

function webhookDeliveryLines(result: StepResult): string[] {
  const deliveries = result.webhook_deliveries ?? [];
  if (deliveries.length === 0) return ["  received: no webhook delivery at the step's URL"];
  const lines = [`  received ${deliveries.length} webhook deliver${deliveries.length === 1 ? 'y' : 'ies'}:`];
  for (const [i, d] of deliveries.entries()) {
    lines.push(
      `    #${i + 1} ${d.method} ${d.url} at ${d.received_at}, answered ${d.answered_status}${d.matched ? '' : ' (did not match the filter)'}${d.oversize ? `, body over the size limit` : ''}`,
    );
    if (i === 0 && d.body !== undefined)
      lines.push(indent(fence(json(d.body, MAX_EXCERPT_CHARS), 'webhook body'), '      '));
  }
  return lines;
}
