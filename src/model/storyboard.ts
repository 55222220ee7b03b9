/**
 * The storyboard format as the loader hands it to the compiler and the engine.
 *
 * Each interface lists exactly the keys schema/storyboard.schema.json defines
 * at that level (test/storyboard/types.test.ts keeps the two in step), plus
 * what the loader adds: a `loc` on every node pointing back into the YAML, and
 * the shorthands it resolves (normalise.ts). There is no catch-all index
 * signature, so `sb.phases[0].titel` does not compile. Annotations (`x-…`,
 * `$comment`) are typed `unknown`. Keys the format does not define only get
 * past the loader with `strictKeys: false`; they are carried in the data but
 * not typed (read them through a cast). Objects are plain JSON so that the
 * compiler can inline them into a test module and the engine can read them in
 * a worker.
 *
 * Authoring format: `compliance/cache/<version>/universal/storyboard-schema.yaml`.
 */

/** A 1-based line and column in the storyboard's YAML file. */
export interface SourceLocation {
  line: number;
  column: number;
}

/** `x-…` and `$…` keys (`$comment`): allowed on every object of the format, ignored by runners. */
export interface Annotations {
  [annotation: `x-${string}`]: unknown;
  [annotation: `$${string}`]: unknown;
}

/** `auth:` on a step — overrides the transport's default credentials. */
export type StepAuth =
  | 'none'
  | (Annotations & {
      type: 'api_key' | 'oauth_bearer' | 'basic' | (string & {});
      /** `true` (the kit's `auth.api_key`) or a dotted path inside the test kit. */
      from_test_kit?: boolean | string;
      value_strategy?: 'random_invalid' | 'random_invalid_jwt' | (string & {});
    });

/** One side of a `refs_resolve` check. */
export interface RefsEndpoint extends Annotations {
  from: 'current_step' | 'context';
  path: string;
}

/** upstream_traffic `payload_must_contain` entry. */
export interface PayloadMatch extends Annotations {
  path: string;
  match: 'present' | 'equals' | 'contains_any';
  value?: unknown;
  allowed_values?: unknown[];
}

export interface Validation extends Annotations {
  /**
   * A kind of src/checks/kinds.ts (AdCP 3.1). Another name loads only in a storyboard of a newer format (or with
   * `strictKeys: false`), and is graded as the runner-output contract says for a kind the runner does not implement.
   */
  check: string;
  /** AdCP 3.1: stable id, echoed as `validation_result.id`. */
  id?: string;
  /** AdCP 3.1: an `advisory` failure does not fail the step. */
  severity?: 'required' | 'advisory';
  expires_after_version?: string;
  permanent_advisory?: Annotations & { reason: string };
  path?: string;
  value?: unknown;
  allowed_values?: unknown[];
  description?: string;
  /** refs_resolve */
  source?: RefsEndpoint;
  target?: RefsEndpoint;
  match_keys?: string[];
  scope?: Annotations & { key: string; equals: string };
  on_out_of_scope?: 'warn' | 'ignore' | 'fail';
  /** field_pattern / envelope_field_pattern. */
  pattern?: string;
  /** field_equals_context / field_less_than. */
  context_key?: string;
  // upstream_traffic
  min_count?: number;
  endpoint_pattern?: string;
  payload_must_contain?: PayloadMatch[];
  identifier_paths?: string[];
  purpose_filter?: string[];
  since?: string;
  attestation_mode_required?: 'raw';
  loc: SourceLocation;
}

export interface ContextOutput extends Annotations {
  /** Always set by the loader (copied from `key` when the author wrote `key:`). */
  name: string;
  /** Alternate spelling of `name` used by part of the AdCP corpus; kept as written. */
  key?: string;
  /** Exactly one of `path` (capture from the answer) and `generate` (mint at run start). */
  path?: string;
  /** AdCP 3.1: `uuid_v4` / `opaque_id`, minted once per run. */
  generate?: 'uuid_v4' | 'opaque_id';
}

export interface ContextInput extends Annotations {
  key: string;
  inject_at: string;
}

/** expect_substitution_safe: one macro → catalog item binding. */
export interface CatalogBinding extends Annotations {
  macro?: string;
  catalog_item_id?: string;
  vector_name?: string;
  raw_value?: string;
  expected_encoded?: string;
}

export interface Step extends Annotations {
  id: string;
  title?: string;
  narrative?: string;
  /** AdCP task name, or a `$test_kit.<path>` reference resolved at run time. */
  task: string;
  task_default?: string;
  schema_ref?: string;
  response_schema_ref?: string;
  doc_ref?: string;
  comply_scenario?: string;
  expected?: string;
  stateful?: boolean;
  requires_tool?: string;
  /** Multi-agent runs: the logical agent this step is routed to. */
  agent?: string;
  sample_request?: unknown;
  sample_response?: unknown;
  auth?: StepAuth;
  omit_idempotency_key?: boolean;
  expect_error?: boolean;
  /** `schema_invalid` (default), `payload_well_formed`, or a named runtime rejection (3.1: `mode_mismatch`, …) graded as the latter. */
  negative_path?: 'schema_invalid' | 'payload_well_formed' | (string & {});
  /** AdCP 3.1: the response `oneOf` arm expected (authoring lints only). */
  expected_arm?: string;
  sample_request_skip_schema?: boolean;
  /** `contributes: true` is resolved by the loader into `contributes_to: <branch_set.id>`. */
  contributes?: boolean;
  contributes_to?: string;
  contributes_if?: string;
  /** Always normalised to an array by the loader (from itself or the deprecated `peer_substitutes_for`). */
  provides_state_for?: string[];
  /** Deprecated synonym of `provides_state_for`, kept as written. */
  peer_substitutes_for?: string | string[];
  context_outputs?: ContextOutput[];
  context_inputs?: ContextInput[];
  validations: Validation[];
  // Runner-side assertion steps (webhooks, substitution safety).
  requires_contract?: string;
  /** AdCP 3.1, parallel_dispatch_runner. */
  parallel_dispatch?: Annotations & {
    count: number;
    same_idempotency_key?: boolean;
    barrier_timeout_ms?: number;
    mode?: string;
  };
  /** AdCP 3.1, rate_limit_trip_runner. */
  rate_limit_trip?: Annotations & {
    trip_target_task: string;
    trip_target_sample_request: Record<string, unknown>;
    max_attempts: number;
    replay_max_wait_seconds?: number;
  };
  /** AdCP 3.1, replay_webhook_vector. */
  vector_ref?: string;
  same_event_as?: string;
  /** Used once by the 3.1 corpus on a step; grades nothing. */
  severity?: 'required' | 'advisory';
  triggered_by?: string;
  filter?: Record<string, unknown>;
  timeout_seconds?: number;
  expect_idempotency_key?: boolean;
  webhook_payload_schema_ref?: string;
  expect_max_deliveries_per_logical_event?: number;
  retry_trigger?: Annotations & { count: number; http_status?: 429 | 500 | 502 | 503 | 504 };
  expect_min_deliveries?: number;
  verify_signature_on_every_delivery?: boolean;
  require_tag?: string;
  shared_receiver?: boolean;
  source?: 'html_inline' | 'url_fetch';
  source_path?: string;
  macro_template?: string;
  catalog_bindings?: CatalogBinding[];
  /** Also set by the loader from the deprecated `require_all_bindings_observed`. */
  require_every_binding_observed?: boolean;
  require_all_bindings_observed?: boolean;
  reviewer_checks?: string[];
  loc: SourceLocation;
}

export interface BranchSet extends Annotations {
  id: string;
  semantics: 'any_of' | (string & {});
}

export interface Phase extends Annotations {
  id: string;
  title?: string;
  narrative?: string;
  optional?: boolean;
  skip_if?: string;
  branch_set?: BranchSet;
  depends_on?: string[];
  /** AdCP 3.1: the phase runs only when the agent's capabilities satisfy it. */
  requires_capability?: CapabilityPredicate;
  steps: Step[];
  loc: SourceLocation;
}

/** AdCP 3.1 `requires_capability`: a predicate over the agent's get_adcp_capabilities answer. */
export interface CapabilityPredicate extends Annotations {
  path: string;
  equals?: unknown;
  contains?: unknown;
  present?: boolean;
}

/** AdCP 3.1 `required_any_of_tools` entry. */
interface ToolFamily extends Annotations {
  tools: string[];
  rationale?: string;
}

export interface Prerequisites extends Annotations {
  description?: string;
  /** Path of the test kit, relative to the compliance tree root (e.g. `test-kits/acme-outdoor.yaml`). */
  test_kit?: string;
  controller_seeding?: boolean;
  /** AdCP 3.1: the test-vector file the storyboard replays, relative to the compliance tree. */
  vectors?: string;
}

/** Declarative state seeded through comply_test_controller (`prerequisites.controller_seeding`). */
export interface Fixtures extends Annotations {
  accounts?: unknown[];
  products?: unknown[];
  pricing_options?: unknown[];
  creatives?: unknown[];
  plans?: unknown[];
  media_buys?: unknown[];
  creative_formats?: unknown[];
}

export interface Storyboard extends Annotations {
  id: string;
  version?: string;
  title: string;
  category?: string;
  summary?: string;
  track?: string;
  protocol?: string;
  required_tools?: string[];
  /** AdCP 3.1: every family must have one tool the agent advertises. */
  required_any_of_tools?: ToolFamily[];
  /** AdCP 3.1: runtime requirements (controller, seeded_state, real_wire, webhook_receiver, multi_agent, …). */
  requires?: string[];
  /** AdCP 3.1: the storyboard applies only when the agent's capabilities satisfy it. */
  requires_capability?: CapabilityPredicate;
  /** AdCP 3.1: the AdCP version that introduced the storyboard. */
  introduced_in?: string;
  status?: string;
  narrative?: string;
  requires_scenarios?: string[];
  default_agent?: string;
  agent?: Annotations & { interaction_model?: string; capabilities?: string[]; examples?: string[] };
  caller?: Annotations & { role?: string; example?: string };
  prerequisites?: Prerequisites;
  fixtures?: Fixtures;
  /** Storyboard-root literal context values (lower precedence than captures). */
  context?: Record<string, unknown>;
  invariants?: string[];
  platform_types?: string[];
  grading?: Annotations & { pass_criteria?: string; report_format?: string };
  phases: Phase[];
  loc: SourceLocation;
  /** Path of the YAML file this storyboard was loaded from, as passed to the loader. */
  file: string;
  /**
   * The AdCP version whose format the storyboard is written for: its compliance tree's `index.json` `adcp_version`.
   * Absent for a storyboard outside a tree (a user's own), which is read in the newest format.
   */
  formatVersion?: string;
}

/** A test kit: brand kit or runner contract. Kept as plain data. */
export interface TestKit {
  id?: string;
  auth?: {
    api_key?: string;
    probe_task?: string;
    basic?: { username?: string; password?: string };
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** One problem found while loading a storyboard. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  /** Stable rule name, e.g. `yaml_syntax`, `schema`, `duplicate_step_id`, `unknown_key`. */
  rule: string;
  message: string;
  /** What to do about it. */
  hint?: string;
  file: string;
  line: number;
  column: number;
}
