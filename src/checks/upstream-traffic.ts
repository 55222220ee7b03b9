import { resolvePath } from '../model/path.js';
import type { PayloadMatch, Validation } from '../model/storyboard.js';
import { wildcardSource } from '../model/wildcard.js';
import { jsonEqual } from './equality.js';
import type { Check, CheckVerdict } from './types.js';
import type { RecordedCall, UpstreamObservation } from './upstream-observation.js';

/** The upstream_traffic assertion fields (storyboard-schema.yaml > Upstream side-effects), as the storyboard may declare them. */
export const UPSTREAM_TRAFFIC_FIELDS = [
  'min_count',
  'endpoint_pattern',
  'payload_must_contain',
  'identifier_paths',
  'purpose_filter',
  'since',
  'attestation_mode_required',
] as const;

/**
 * `upstream_traffic` (storyboard-schema.yaml > Upstream side-effects; runner-output-contract.yaml 2.6.0 >
 * validation_result, notes.upstream_traffic_*): the agent caused upstream calls carrying what the storyboard sent.
 * Graded on what its comply_test_controller reported for the step's window (engine/upstream.ts):
 *
 * - the controller does not offer `query_upstream_traffic`: not applicable (passed, with a note) — opt-in by adopter;
 * - the query failed: failed, with the query's request and answer — except JCS_NON_FINITE_NUMBER (a digest the
 *   controller could not compute): not applicable;
 * - else the calls matching `endpoint_pattern` (an anchored glob over `recorded_calls[].endpoint`, `*` = any run of
 *   characters, `/` included) and `purpose_filter` (a call without `purpose` counts as `other`) must number at least
 *   `min_count` (default 1; `0` asserts none); each `payload_must_contain` entry must hold in one matching call's raw
 *   JSON payload; each value `identifier_paths` reaches in the step's request must appear, at any depth, in one
 *   matching call's raw payload (or be proven found by a digest-mode call's `identifier_match_proofs`). An assertion
 *   only digest or non-JSON calls could answer is not applicable, not failed; `attestation_mode_required: raw` with
 *   only digest calls makes the whole check not applicable.
 *
 * `expected` echoes the declared fields; `actual` is `{ matched_count, total_calls, missing_payload_paths,
 * missing_identifier_values }` (plus `unclassified_calls` when a purpose filter matched nothing). On failure the record
 * carries the controller query and its answer as request and response, and `json_pointer` names the payload of the
 * matching call an unmet `payload_must_contain` was looked for in (null for a count).
 */
export const upstreamTraffic: Check = ({ validation, exchange, upstream }) => {
  const expected = declared(validation as unknown as Record<string, unknown>);
  const badPath = (validation.identifier_paths ?? []).map(identifierPathProblem).find(Boolean);
  if (badPath) return failure(expected, null, `storyboard authoring error: ${badPath}`);
  const observation = upstream?.[typeof validation.since === 'string' ? validation.since : ''];
  if (observation?.status !== 'observed') return unobserved(observation, expected);
  return graded(validation, exchange.request.payload, observation.calls, expected, records(observation));
};

type Observed = Extract<UpstreamObservation, { status: 'observed' }>;
type Indexed = { call: RecordedCall; index: number };

/** The verdict when there are no calls to grade: not applicable, or the query's own failure. */
function unobserved(observation: Exclude<UpstreamObservation, Observed> | undefined, expected: unknown): CheckVerdict {
  if (!observation)
    return notApplicable(expected, 'no upstream traffic was observed for this step (the run had no controller to ask)');
  switch (observation.status) {
    case 'not_advertised':
      return notApplicable(expected, `${observation.detail} — graded as not_applicable`);
    case 'unresolved_since':
      return failure(
        expected,
        null,
        `since: "${observation.since}" names no earlier step of this run that sent a request`,
      );
    default:
      return observation.nonFinite
        ? {
            ...notApplicable(
              expected,
              'the controller could not canonicalise a non-finite JSON number for a digest (RFC 8785) — graded as not_applicable',
            ),
            ...records(observation),
          }
        : {
            ...failure(expected, null, `the upstream traffic query failed: ${observation.error}`),
            ...records(observation),
          };
  }
}

function notApplicable(expected: unknown, note: string): CheckVerdict {
  return { passed: true, json_pointer: null, note, expected, actual: null, schema_id: null, schema_url: null };
}

/** The assertions on the calls the controller reported for the window. */
function graded(
  validation: Validation,
  request: unknown,
  calls: RecordedCall[],
  expected: unknown,
  query: Partial<Pick<CheckVerdict, 'request' | 'response'>>,
): CheckVerdict {
  const purposes = validation.purpose_filter;
  const matched = calls
    .map((call, index) => ({ call, index }))
    .filter(({ call }) => endpointMatches(call, validation.endpoint_pattern))
    .filter(({ call }) => !purposes || purposes.includes(typeof call.purpose === 'string' ? call.purpose : 'other'));
  const minCount = typeof validation.min_count === 'number' ? validation.min_count : 1;
  const countOk = minCount === 0 ? matched.length === 0 : matched.length >= minCount;
  const payload = payloadAssertions(validation.payload_must_contain ?? [], matched);
  const identifiers = identifierAssertions(validation.identifier_paths ?? [], request, matched);
  const introspects =
    (validation.payload_must_contain?.length ?? 0) > 0 || (validation.identifier_paths?.length ?? 0) > 0;
  const rawRequiredButDigest =
    validation.attestation_mode_required === 'raw' &&
    introspects &&
    matched.length > 0 &&
    matched.every(({ call }) => call.attestation_mode === 'digest');
  const actual = summary(calls, matched.length, purposes, rawRequiredButDigest, payload.missing, identifiers.missing);
  const held = rawRequiredButDigest || (payload.missing.length === 0 && identifiers.missing.length === 0);
  if (countOk && held) {
    const why = notApplicableWhy(rawRequiredButDigest, payload.notApplicable, identifiers.notApplicable, validation);
    return why
      ? { ...notApplicable(expected, `${why} — graded as not_applicable`), actual }
      : { passed: true, json_pointer: null, expected, actual, schema_id: null, schema_url: null };
  }
  const reasons = failureReasons(countOk, minCount, matched.length, calls.length, payload.missing, identifiers.missing);
  const firstInspected = payload.missing.length ? matched.find(({ call }) => rawJson(call)) : undefined;
  return {
    ...failure(expected, firstInspected ? `/recorded_calls/${firstInspected.index}/payload` : null, reasons.join('; ')),
    actual,
    ...query,
  };
}

/** contract > validation_result.actual for upstream_traffic (plus the unclassified count a purpose filter asks for). */
function summary(
  calls: readonly RecordedCall[],
  matchedCount: number,
  purposes: readonly string[] | undefined,
  rawRequiredButDigest: boolean,
  missingPaths: readonly string[],
  missingValues: readonly unknown[],
): Record<string, unknown> {
  return {
    matched_count: matchedCount,
    total_calls: calls.length,
    missing_payload_paths: rawRequiredButDigest ? [] : missingPaths,
    missing_identifier_values: rawRequiredButDigest ? [] : missingValues,
    ...(purposes && matchedCount === 0
      ? { unclassified_calls: calls.filter((c) => typeof c.purpose !== 'string').length }
      : {}),
  };
}

function failureReasons(
  countOk: boolean,
  minCount: number,
  matched: number,
  total: number,
  missingPaths: readonly string[],
  missingValues: readonly unknown[],
): string[] {
  const reasons: string[] = [];
  if (!countOk)
    reasons.push(
      minCount === 0
        ? `expected no matching upstream call, observed ${matched}`
        : `expected at least ${minCount} matching upstream call(s), observed ${matched} of ${total}`,
    );
  if (missingPaths.length) reasons.push(`no matching call's payload holds ${missingPaths.join(', ')}`);
  if (missingValues.length)
    reasons.push(`${missingValues.length} identifier value(s) the request sent never reached upstream`);
  return reasons;
}

/** Each payload_must_contain entry: held by a matching raw JSON call, missing, or only answerable by other calls. */
function payloadAssertions(specs: readonly PayloadMatch[], matched: readonly Indexed[]) {
  const missing: string[] = [];
  const notApplicable: string[] = [];
  const inspectable = matched.filter(({ call }) => rawJson(call));
  for (const spec of specs) {
    if (inspectable.some(({ call }) => payloadHolds(call.payload, spec))) continue;
    (inspectable.length > 0 ? missing : notApplicable).push(spec.path);
  }
  return { missing, notApplicable };
}

/** Each value identifier_paths reaches in the request: echoed in a raw call, proven by a digest call, or missing. */
function identifierAssertions(paths: readonly string[], request: unknown, matched: readonly Indexed[]) {
  const missing: unknown[] = [];
  const notApplicable: unknown[] = [];
  const raw = matched.filter(({ call }) => call.attestation_mode !== 'digest' && call.payload !== undefined);
  const proven = matched.some(({ call }) => call.identifier_match_proofs?.some((p) => p.found === true));
  for (const path of paths)
    for (const value of identifierValues(request, path)) {
      if (proven || raw.some(({ call }) => containsAnywhere(call.payload, value, 0))) continue;
      (raw.length > 0 ? missing : notApplicable).push(value);
    }
  return { missing, notApplicable };
}

/** Why a check that held is not applicable after all (its assertions could only be answered by digest calls). */
function notApplicableWhy(
  rawRequiredButDigest: boolean,
  paths: readonly string[],
  values: readonly unknown[],
  validation: Validation,
): string | undefined {
  if (rawRequiredButDigest)
    return 'attestation_mode_required: raw, but the controller attested the matching calls as digests';
  if (paths.length > 0)
    return `payload_must_contain ${paths.join(', ')} could only be looked for in digest or non-JSON calls`;
  if (values.length > 0 && (validation.payload_must_contain?.length ?? 0) === 0)
    return 'identifier_paths values could only be looked for in digest calls without proofs';
  return undefined;
}

function failure(expected: unknown, pointer: string | null, error: string): CheckVerdict {
  return { passed: false, json_pointer: pointer, expected, actual: null, error, schema_id: null, schema_url: null };
}

/** The contract: a failed upstream_traffic names the controller query and its answer, not the step's own call. */
function records(observation: { request?: CheckVerdict['request']; response?: CheckVerdict['response'] }) {
  return {
    ...(observation.request ? { request: observation.request } : {}),
    ...(observation.response ? { response: observation.response } : {}),
  };
}

/** The assertion as the storyboard declared it (contract > validation_result.expected). */
function declared(v: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(UPSTREAM_TRAFFIC_FIELDS.filter((f) => v[f] !== undefined).map((f) => [f, v[f]]));
}

/** comply-test-controller-request.json > endpoint_pattern: `*` is the only wildcard, the match is anchored. */
function endpointMatches(call: RecordedCall, pattern: string | undefined): boolean {
  if (pattern === undefined) return true;
  const endpoint = typeof call.endpoint === 'string' ? call.endpoint : `${call.method ?? ''} ${call.url ?? ''}`;
  return new RegExp(`^${wildcardSource(pattern, '[\\s\\S]*')}$`).test(endpoint);
}

/** A raw-mode call with a JSON-shaped body (`application/json` or a `+json` suffix, RFC 6839). */
function rawJson(call: RecordedCall): boolean {
  if (call.attestation_mode === 'digest' || call.payload === undefined) return false;
  const type = (call.content_type ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^[\w.-]+\/[\w.+-]+\+json$/.test(type);
}

/** One `payload_must_contain` entry against a payload (JSONPath-lite: `$`/`$.` tolerated, `[*]` flattens). */
function payloadHolds(payload: unknown, spec: PayloadMatch): boolean {
  const path = spec.path.replace(/^\$\.?/, '');
  let found;
  try {
    found = resolvePath(payload, path);
  } catch {
    return false;
  }
  const values = !found.found ? [] : found.matches ? found.matches.map((m) => m.value) : [found.value];
  switch (spec.match) {
    case 'present':
      return values.some((v) => v !== undefined && v !== null);
    case 'equals':
      return values.some((v) => jsonEqual(v, spec.value));
    case 'contains_any':
      return values.some((v) => (spec.allowed_values ?? []).some((a) => jsonEqual(v, a)));
    default:
      return false;
  }
}

/**
 * identifier_paths' portable grammar (storyboard-schema.yaml): dotted identifier segments, each optionally `[*]`; no
 * indexes, quoting, recursive descent, absolute or reserved roots. The problem with a path, or undefined.
 */
export function identifierPathProblem(path: string): string | undefined {
  const segments = path.split('.');
  if (['request', 'response', 'context'].includes(segments[0]!.replace(/\[\*\]$/, '')))
    return `identifier path "${path}" starts at a reserved root (request, response, context)`;
  const bad = segments.find((s) => !/^[A-Za-z_][A-Za-z0-9_-]*(\[\*\])?$/.test(s));
  return bad === undefined
    ? undefined
    : `identifier path "${path}" has a segment "${bad}" the portable grammar does not allow`;
}

/** The values an identifier path reaches in the step's request, flattened. */
function identifierValues(request: unknown, path: string): unknown[] {
  let found;
  try {
    found = resolvePath(request, path);
  } catch {
    return [];
  }
  if (!found.found) return [];
  const values = found.matches ? found.matches.map((m) => m.value) : [found.value];
  return values.flatMap((v) => (Array.isArray(v) ? v : [v])).filter((v) => v !== undefined && v !== null);
}

/** `value` appears in `root` at any depth (JSON equality), bounded. */
function containsAnywhere(root: unknown, value: unknown, depth: number): boolean {
  if (jsonEqual(root, value)) return true;
  if (depth > 64 || root === null || typeof root !== 'object') return false;
  return Object.values(root).some((child) => containsAnywhere(child, value, depth + 1));
}
