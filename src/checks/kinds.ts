/**
 * Every `check` kind vitest-adcp knows, one descriptor each: its name, the AdCP minor that defines it, its family in
 * runner-output-contract.yaml (`authored_check_kinds` / `cross_response_check_kinds`), what it reads, the arguments it
 * needs and takes, and the function that grades it. Everything else is derived from this table and held to it by
 * test/checks/kinds.test.ts: the `check` enum and the validation keys of schema/storyboard.schema.json, the loader's
 * authoring rules (rules/validations.ts: a known name, its arguments), which validations read the async envelope
 * (engine/polling.ts), and the graders (`checks` in index.ts). A new kind is a row here and its module.
 *
 * Versions: `since` is the AdCP minor whose storyboard format defines the kind. A storyboard of a newer format than
 * the one this table implements may name a kind that is not here; the runner-output contract (2.6.0 > validation_result
 * > Forward compatibility) says how that is graded — engine/grade.ts `notImplemented`.
 */
import { a2aContextContinuity } from './a2a-context-continuity.js';
import { a2aSubmittedArtifact } from './a2a-submitted-artifact.js';
import { canonicalFormatSatisfaction } from './canonical-format-satisfaction.js';
import { fieldEqualsContext, fieldLessThan } from './context-comparison.js';
import { crossResponseCountDistinct, crossResponseFieldEqual, replayNotCachedRateLimit } from './cross-response.js';
import { envelopeFieldPresent } from './envelope-field-present.js';
import { errorCode } from './error-code.js';
import { envelopeFieldAbsent, fieldAbsent } from './field-absent.js';
import { fieldContains } from './field-contains.js';
import { envelopeFieldPattern, fieldPattern } from './field-pattern.js';
import { fieldPresent } from './field-present.js';
import { fieldValueOrAbsent } from './field-value-or-absent.js';
import { fieldValue } from './field-value.js';
import { httpStatus, httpStatusIn, on401RequireHeader, resourceEqualsAgentUrl } from './http-status.js';
import { refsResolve } from './refs-resolve.js';
import { responseSchema } from './response-schema.js';
import { statusCode } from './status-code.js';
import { UPSTREAM_TRAFFIC_FIELDS, upstreamTraffic } from './upstream-traffic.js';
import type { Check } from './types.js';

/** The AdCP minors whose storyboard formats this table covers, oldest first. */
export const FORMAT_MINORS = ['3.0', '3.1'] as const;
type FormatMinor = (typeof FORMAT_MINORS)[number];

/**
 * What a kind grades:
 * - `body`: the task result (structuredContent, the A2A DataPart) — the step's answer as storyboard paths see it;
 * - `envelope`: the protocol envelope (`status`, `task_id`, …): graded on the immediate answer, never a polled one;
 * - `http`: the HTTP status and headers of the call;
 * - `transport`: the A2A Task itself (its id, context id, state);
 * - `context`: the answer against what earlier steps captured;
 * - `contributions`: the run's branch-set flags (engine/contributions.ts grades `any_of` on `assert_contribution`);
 * - `upstream`: the traffic the agent reports through comply_test_controller `query_upstream_traffic`
 *   (engine/upstream.ts fetches it for the step before grading);
 * - `responses`: the response set of a multi-dispatch step, which a runner contract's role produced.
 */
type CheckReads = 'body' | 'envelope' | 'http' | 'transport' | 'context' | 'contributions' | 'upstream' | 'responses';

export interface CheckKind {
  readonly name: string;
  readonly since: FormatMinor;
  /** runner-output-contract.yaml: `authored_check_kinds` or `cross_response_check_kinds`. */
  readonly family: 'authored' | 'cross_response';
  readonly reads: CheckReads;
  /** Arguments the kind cannot work without: each group needs one of its keys (`[['value', 'allowed_values']]`). */
  readonly needs: readonly (readonly string[])[];
  /** Every argument key the kind reads (the needed ones included); the keys every validation takes are not listed. */
  readonly takes: readonly string[];
  /** The grader; absent: the engine grades the kind itself (`any_of`, which reads the run's contributions). */
  readonly grade?: Check;
}

/** Keys every validation may carry, whatever its kind (storyboard-schema.yaml > Validation). */
export const VALIDATION_KEYS = [
  'check',
  'id',
  'description',
  'severity',
  'expires_after_version',
  'permanent_advisory',
];

const PATH = [['path']] as const;
const VALUE = ['value', 'allowed_values'] as const;

export const CHECK_KINDS: readonly CheckKind[] = [
  // AdCP 3.0
  {
    name: 'response_schema',
    since: '3.0',
    family: 'authored',
    reads: 'body',
    needs: [],
    takes: [],
    grade: responseSchema,
  },
  {
    name: 'field_present',
    since: '3.0',
    family: 'authored',
    reads: 'body',
    needs: PATH,
    takes: ['path'],
    grade: fieldPresent,
  },
  {
    name: 'envelope_field_present',
    since: '3.0',
    family: 'authored',
    reads: 'envelope',
    needs: PATH,
    takes: ['path'],
    grade: envelopeFieldPresent,
  },
  {
    name: 'field_value',
    since: '3.0',
    family: 'authored',
    reads: 'body',
    needs: [['path'], VALUE],
    takes: ['path', ...VALUE],
    grade: fieldValue,
  },
  {
    name: 'field_value_or_absent',
    since: '3.0',
    family: 'authored',
    reads: 'body',
    needs: [['path'], VALUE],
    takes: ['path', ...VALUE],
    grade: fieldValueOrAbsent,
  },
  {
    name: 'status_code',
    since: '3.0',
    family: 'authored',
    reads: 'body',
    needs: [],
    takes: [...VALUE],
    grade: statusCode,
  },
  {
    name: 'http_status',
    since: '3.0',
    family: 'authored',
    reads: 'http',
    needs: [['value']],
    takes: ['value'],
    grade: httpStatus,
  },
  {
    name: 'http_status_in',
    since: '3.0',
    family: 'authored',
    reads: 'http',
    needs: [['allowed_values']],
    takes: ['allowed_values'],
    grade: httpStatusIn,
  },
  {
    name: 'error_code',
    since: '3.0',
    family: 'authored',
    reads: 'body',
    needs: [],
    takes: [...VALUE],
    grade: errorCode,
  },
  {
    name: 'on_401_require_header',
    since: '3.0',
    family: 'authored',
    reads: 'http',
    needs: [['value']],
    takes: ['value'],
    grade: on401RequireHeader,
  },
  {
    name: 'resource_equals_agent_url',
    since: '3.0',
    family: 'authored',
    reads: 'http',
    needs: [],
    takes: [],
    grade: resourceEqualsAgentUrl,
  },
  {
    name: 'any_of',
    since: '3.0',
    family: 'authored',
    reads: 'contributions',
    needs: [['allowed_values']],
    takes: ['allowed_values'],
  },
  {
    name: 'refs_resolve',
    since: '3.0',
    family: 'authored',
    reads: 'context',
    needs: [['source'], ['target'], ['match_keys']],
    takes: ['source', 'target', 'match_keys', 'scope', 'on_out_of_scope'],
    grade: refsResolve,
  },
  {
    name: 'a2a_submitted_artifact',
    since: '3.0',
    family: 'authored',
    reads: 'envelope',
    needs: [],
    takes: [],
    grade: a2aSubmittedArtifact,
  },
  // AdCP 3.1
  {
    name: 'field_absent',
    since: '3.1',
    family: 'authored',
    reads: 'body',
    needs: PATH,
    takes: ['path'],
    grade: fieldAbsent,
  },
  {
    name: 'envelope_field_absent',
    since: '3.1',
    family: 'authored',
    reads: 'envelope',
    needs: PATH,
    takes: ['path'],
    grade: envelopeFieldAbsent,
  },
  {
    name: 'field_pattern',
    since: '3.1',
    family: 'authored',
    reads: 'body',
    needs: [['path'], ['pattern']],
    takes: ['path', 'pattern'],
    grade: fieldPattern,
  },
  {
    name: 'envelope_field_pattern',
    since: '3.1',
    family: 'authored',
    reads: 'envelope',
    needs: [['path'], ['pattern']],
    takes: ['path', 'pattern'],
    grade: envelopeFieldPattern,
  },
  {
    name: 'field_contains',
    since: '3.1',
    family: 'authored',
    reads: 'body',
    needs: [['path'], VALUE],
    takes: ['path', ...VALUE],
    grade: fieldContains,
  },
  {
    name: 'a2a_context_continuity',
    since: '3.1',
    family: 'authored',
    reads: 'transport',
    needs: [],
    takes: [],
    grade: a2aContextContinuity,
  },
  {
    name: 'field_less_than',
    since: '3.1',
    family: 'authored',
    reads: 'context',
    needs: [['path'], ['context_key', 'value']],
    takes: ['path', 'context_key', 'value'],
    grade: fieldLessThan,
  },
  {
    name: 'field_equals_context',
    since: '3.1',
    family: 'authored',
    reads: 'context',
    needs: [['path'], ['context_key']],
    takes: ['path', 'context_key'],
    grade: fieldEqualsContext,
  },
  {
    name: 'upstream_traffic',
    since: '3.1',
    family: 'authored',
    reads: 'upstream',
    needs: [],
    takes: [...UPSTREAM_TRAFFIC_FIELDS],
    grade: upstreamTraffic,
  },
  {
    name: 'canonical_format_satisfaction',
    since: '3.1',
    family: 'authored',
    reads: 'context',
    needs: [['value']],
    takes: ['value', 'path'],
    grade: canonicalFormatSatisfaction,
  },
  // AdCP 3.1, cross-response: graded on the response set of a runner contract's step (cross-response.ts).
  {
    name: 'cross_response_field_equal',
    since: '3.1',
    family: 'cross_response',
    reads: 'responses',
    needs: PATH,
    takes: ['path'],
    grade: crossResponseFieldEqual,
  },
  {
    name: 'cross_response_count_distinct',
    since: '3.1',
    family: 'cross_response',
    reads: 'responses',
    needs: [['path'], ['allowed_values']],
    takes: ['path', 'allowed_values'],
    grade: crossResponseCountDistinct,
  },
  {
    name: 'replay_not_cached_rate_limit',
    since: '3.1',
    family: 'cross_response',
    reads: 'responses',
    needs: [],
    takes: [],
    grade: replayNotCachedRateLimit,
  },
];

/** Kinds by name. */
export const CHECK_KIND: ReadonlyMap<string, CheckKind> = new Map(CHECK_KINDS.map((kind) => [kind.name, kind]));

/** Kinds AdCP 3.2 adds (beta): known by name so a 3.2 storyboard's use of one is not taken for a typo of another. */
export const NEWER_CHECK_KINDS: readonly string[] = [
  'field_in_context_array',
  'all_fields_in_context_array',
  'field_greater_than',
  'field_at_most',
  'field_at_least',
  'array_length',
  'oauth_metadata_graph',
];
