/**
 * The storyboard format as the loader hands it to the compiler and the engine.
 *
 * Every node keeps the keys its author wrote (the format evolves faster than
 * this package, so unknown keys are carried, not dropped) plus a `loc` that
 * points back into the YAML file. Objects are plain JSON so that the compiler
 * can inline them into a test module and the engine can read them in a worker.
 *
 * Authoring format: `compliance/cache/<version>/universal/storyboard-schema.yaml`.
 */

/** A 1-based line and column in the storyboard's YAML file. */
export interface SourceLocation {
  line: number;
  column: number;
}

/** `auth:` on a step — overrides the transport's default credentials. */
export type StepAuth =
  | 'none'
  | {
      type: 'api_key' | 'oauth_bearer' | 'basic' | (string & {});
      /** `true` (the kit's `auth.api_key`) or a dotted path inside the test kit. */
      from_test_kit?: boolean | string;
      value_strategy?: 'random_invalid' | 'random_invalid_jwt' | (string & {});
      [key: string]: unknown;
    };

export interface Validation {
  check: string;
  path?: string;
  value?: unknown;
  allowed_values?: unknown[];
  description?: string;
  /** Every other key the author wrote (source/target/match_keys, header names, …). */
  [key: string]: unknown;
  loc: SourceLocation;
}

export interface ContextOutput {
  /** Always set by the loader (copied from `key` when the author wrote `key:`). */
  name: string;
  /** Alternate spelling of `name` used by part of the AdCP corpus; kept as written. */
  key?: string;
  path: string;
}

export interface ContextInput {
  key: string;
  inject_at: string;
}

export interface Step {
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
  sample_request?: unknown;
  sample_response?: unknown;
  auth?: StepAuth;
  omit_idempotency_key?: boolean;
  expect_error?: boolean;
  negative_path?: 'schema_invalid' | 'payload_well_formed';
  sample_request_skip_schema?: boolean;
  /** `contributes: true` is resolved by the loader into `contributes_to: <branch_set.id>`. */
  contributes?: boolean;
  contributes_to?: string;
  contributes_if?: string;
  /** Always normalised to an array by the loader. */
  provides_state_for?: string[];
  context_outputs?: ContextOutput[];
  context_inputs?: ContextInput[];
  validations: Validation[];
  [key: string]: unknown;
  loc: SourceLocation;
}

export interface BranchSet {
  id: string;
  semantics: 'any_of' | (string & {});
}

export interface Phase {
  id: string;
  title?: string;
  narrative?: string;
  optional?: boolean;
  skip_if?: string;
  branch_set?: BranchSet;
  steps: Step[];
  [key: string]: unknown;
  loc: SourceLocation;
}

export interface Prerequisites {
  description?: string;
  /** Path of the test kit, relative to the compliance tree root (e.g. `test-kits/acme-outdoor.yaml`). */
  test_kit?: string;
  controller_seeding?: boolean;
  [key: string]: unknown;
}

export interface Storyboard {
  id: string;
  version?: string;
  title: string;
  category?: string;
  summary?: string;
  track?: string;
  required_tools?: string[];
  narrative?: string;
  requires_scenarios?: string[];
  prerequisites?: Prerequisites;
  fixtures?: Record<string, unknown>;
  /** Storyboard-root literal context values (lower precedence than captures). */
  context?: Record<string, unknown>;
  phases: Phase[];
  [key: string]: unknown;
  loc: SourceLocation;
  /** Path of the YAML file this storyboard was loaded from, as passed to the loader. */
  file: string;
}

/** A test kit: brand kit or runner contract. Kept as plain data. */
export interface TestKit {
  id?: string;
  auth?: { api_key?: string; probe_task?: string; basic?: { username?: string; password?: string }; [key: string]: unknown };
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
