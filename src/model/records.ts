/**
 * Result records in the shape of the AdCP runner output contract
 * (`compliance/cache/<version>/universal/runner-output-contract.yaml`, v1.1.0 for the 3.0 corpus, v2.6.0 for 3.1; one model, the fields 2.6.0 adds optional).
 * These are what the engine produces per step, what a test's `meta` carries to
 * the main process, and what the contract reporter writes. Field names are the
 * contract's (snake_case) on purpose: the JSON is consumed by AdCP tooling.
 */

type TransportKind = 'mcp' | 'a2a' | 'http';

export interface RequestRecord {
  transport: TransportKind;
  /** Task/tool/skill actually invoked, after test-kit interpolation. */
  operation: string;
  /** Fully resolved payload (after substitution), secrets redacted on the way out. */
  payload: unknown;
  url?: string;
  /** Not populated by default (contract: security.request_headers). */
  headers?: Record<string, string>;
}

export interface ResponseRecord {
  transport: TransportKind;
  /** MCP: `{ isError, structuredContent, content }`; A2A: the Task (or Message); JSON-RPC errors: `{ error: { code, message, data } }`. */
  payload: unknown;
  /** A2A: the Task's `status.state`, normalised (`completed`, `working`, …), recorded alongside the payload (contract > response.payload). */
  task_state?: string;
  status?: number;
  /** Filtered through the contract's response-header allowlist. */
  headers?: Record<string, string>;
  duration_ms?: number;
}

type ExtractionPath = 'structured_content' | 'text_fallback' | 'error' | 'none';

export interface ExtractionRecord {
  path: ExtractionPath;
  note?: string;
}

export interface SchemaError {
  instance_path: string;
  schema_path: string;
  keyword: string;
  message: string;
}

export interface ValidationResult {
  check: string;
  passed: boolean;
  description: string;
  /** The storyboard validation's own `id`, echoed unchanged (contract 2.6.0). */
  id?: string;
  /** `advisory`: a failure does not fail the step (contract 2.6.0 > validation_result.severity). Absent: required. */
  severity?: 'required' | 'advisory';
  /**
   * Tri-state (contract 2.6.0): true — the storyboard's `expires_after_version` is at or below the runner's capability
   * version, so the advisory was promoted to required; false — it is above; absent — no expiry declared, or the check
   * was not graded.
   */
  severity_promoted_from_advisory?: boolean;
  /**
   * Why a check passed without grading anything: a kind this runner does not implement (contract 2.6.0 >
   * validation_result > Forward compatibility). Counted in `validations_not_applicable`.
   */
  note?: string;
  /** Failure-only fields (null when not applicable). */
  json_pointer?: string | null;
  expected?: unknown;
  actual?: unknown;
  schema_id?: string | null;
  schema_url?: string | null;
  /** On a failed validation always present: `null` when the check never reached the agent (contract > required_on_failure). */
  request?: RequestRecord | null;
  response?: ResponseRecord | null;
  /** Why it failed, in words, when `expected`/`actual` don't say it all. */
  error?: string;
  remediation?: string;
  /** Notes on a verdict that did not change it (e.g. refs_resolve's out-of-scope refs under `warn`). */
  observations?: string[];
  /**
   * A webhook signature check whose keys came from the operator's JWKS (`webhooks.signerJwks`, local development),
   * not from the spec's brand.json discovery: its verdict is not one under the spec (vitest-adcp extension).
   */
  key_source?: 'operator_jwks';
  /** A validation that does not apply to this run (e.g. `a2a_submitted_artifact` over MCP): passed, with the reason. */
  not_applicable?: string;
  /** Where the validation is written: `file:line:column` of the YAML node (vitest-adcp extension). */
  source?: { file: string; line: number; column: number };
}

export type SkipReason =
  | 'not_applicable'
  | 'no_phases'
  | 'prerequisite_failed'
  | 'missing_tool'
  | 'missing_test_controller'
  | 'unsatisfied_contract'
  | 'peer_branch_taken'
  | 'peer_substituted'
  /** Contract 2.6.0: a storyboard-level `requires` / `required_any_of_tools` gate was not met. */
  | 'requirement_unmet';

export interface SkipResult {
  reason: SkipReason;
  detail: string;
}

export interface StepResult {
  storyboard_id: string;
  phase_id: string;
  step_id: string;
  task: string;
  passed: boolean;
  duration_ms: number;
  validations: ValidationResult[];
  extraction: ExtractionRecord;
  skip?: SkipResult;
  /** Transport-level (or configuration) error: no validations could be attempted. */
  error?: string;
  request?: RequestRecord;
  response?: ResponseRecord;
  /**
   * Rules of the storyboard this run could not apply (an unknown `skip_if`
   * expression, an invariant not implemented, …): shown with the step, never
   * silently ignored (vitest-adcp extension).
   */
  warnings?: string[];
  /** The step belongs to an `optional: true` phase: its failure does not fail the storyboard (vitest-adcp extension). */
  optional?: boolean;
  /**
   * On a failed step of a run that started the agent (`agent.start`) and keeps its log: where that log is
   * (`<report>.agent.log`), the agent's side of the failure (vitest-adcp extension).
   */
  agent_log?: string;
  /**
   * The run was cancelled (the bin's SIGINT/SIGTERM, Vitest's cancel key) while this step waited for the agent: its
   * call was aborted, so it has no verdict; `error` says so and the report lists it as not run (vitest-adcp extension).
   */
  cancelled?: true;
  /** A signed_requests vector step: the signature fields it sent (vitest-adcp extension; no key material). */
  signed_request?: SignedRequestRecord;
  /** Webhook steps: what the runner's receiver observed at the step's URL, oldest first (vitest-adcp extension). */
  webhook_deliveries?: WebhookDeliveryRecord[];
  /** Informational signals on a step that did not change `passed` (contract 2.6.0 > step_result.notices). */
  notices?: Notice[];
}

/**
 * runner-output-contract.yaml 2.6.0 > notice: a forward-looking or migration advisory about a passing observation. It
 * never changes `passed` or a counter. `severity` and `code` are open sets (receivers take unknown values verbatim).
 */
export interface Notice {
  /** `info` | `deprecation` | `future_required`, or a newer one. */
  severity: string;
  code: string;
  /** Rendered fenced: a storyboard author controls part of it. */
  message: string;
  /** Required for `future_required`, allowed on `deprecation`, never on `info`. */
  effective_version?: string;
  requirement?: string;
  capability_path?: string;
  reference_url?: string;
}

/** runner-output-contract.yaml 2.6.0 > selection_result > reasons. */
export type SelectionReason = 'run_mode_excluded' | 'explicit_scope_excluded' | 'version_excluded' | 'profile_excluded';

/**
 * A storyboard (or one of its phases or steps) the run's selection left out before execution — never a skip
 * (contract 2.6.0 > selection_result; `run_summary.not_selected`): the selection_result's `reason` and `detail` with the
 * identity of what it excluded and how many steps that is (`steps_not_selected` is their sum).
 */
export interface NotSelectedRecord {
  storyboard_id: string;
  phase_id?: string;
  step_id?: string;
  title?: string;
  track?: string;
  /** Project-relative path of the storyboard file, when it has one. */
  file?: string;
  /** The Vitest project whose selection left it out. */
  project?: string;
  reason: SelectionReason;
  /** Cites the selected scope, run mode, AdCP version or profile rule that excluded it. */
  detail: string;
  /** How many steps it stands for. */
  step_count: number;
}

/** One webhook delivery as a step record shows it (headers through the allowlist and the body redacted on the way out). */
export interface WebhookDeliveryRecord {
  url: string;
  received_at: string;
  method: string;
  /** What the receiver answered: the retry policy's status, then 200 (413 for an oversize body). */
  answered_status: number;
  headers: Record<string, string>;
  /** The parsed JSON body, or its text when it is not JSON; absent when oversize. */
  body?: unknown;
  body_bytes: number;
  oversize?: boolean;
  /** Whether it matched the step's filter. */
  matched: boolean;
}

/** What a request-signing probe put on the wire beyond the payload (the contract keeps request headers out of `request`). */
export interface SignedRequestRecord {
  /** `positive/<id>` or `negative/<id>`. */
  vector: string;
  /** The AdCP operation the `tools/call` named. */
  operation: string;
  signature_input?: string;
  signature?: string;
  content_digest?: string;
  /** A Host header sent instead of the URL's authority. */
  host?: string;
  /** How the request departs from the vector file beyond the endpoint and fresh times. */
  notes: string[];
}

/** What the test adapters learn about a step once its verdict can no longer change. */
export interface StepOutcome {
  status: 'passed' | 'failed' | 'skipped';
  result: StepResult;
}

/**
 * Whether a validation fails its step: it did not pass and is not advisory (runner-output-contract.yaml 2.6.0 >
 * validation_result.severity: an advisory failure "MUST NOT cause its step to grade as failed").
 */
export function failsStep(v: Pick<ValidationResult, 'passed' | 'severity'>): boolean {
  return !v.passed && v.severity !== 'advisory';
}
