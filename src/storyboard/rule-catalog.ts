/**
 * Every diagnostic rule the loader can report, with its severity and what it
 * means. Stable ids: reporters, docs and fixtures/broken/ refer to them.
 */
export interface RuleInfo {
  severity: 'error' | 'warning' | 'error|warning';
  summary: string;
}

export const STORYBOARD_RULES = {
  yaml_syntax: { severity: 'error', summary: 'The file is not valid YAML (or has a duplicate key).' },
  yaml_warning: { severity: 'warning', summary: 'The YAML parser warns about the text (e.g. an unknown tag).' },
  storyboard_bound: {
    severity: 'error',
    summary:
      'The file is over a size or complexity bound (bytes, YAML anchors or aliases, expanded size, phases, steps); the message names the bound, its value and the option (storyboardBounds) to raise it.',
  },
  file_unreadable: { severity: 'error', summary: 'The storyboard file cannot be read.' },
  schema: {
    severity: 'error',
    summary: 'The storyboard does not match schema/storyboard.schema.json (missing key, wrong type, bad enum value).',
  },
  unknown_key: {
    severity: 'error|warning',
    summary:
      'A key the storyboard format does not define at that level (a typo that would silently disable something, e.g. `validation:` for `validations:`). An error with the closest known key; with strictKeys: false only near misses are reported, as warnings; in a storyboard of a newer AdCP format (a 3.2 corpus), every unknown key is a warning naming it.',
  },
  duplicate_phase_id: { severity: 'error', summary: 'Two phases share an id.' },
  duplicate_step_id: { severity: 'error', summary: 'Two steps of one phase share an id.' },
  duplicate_step_id_across_phases: {
    severity: 'error',
    summary: 'Two steps in different phases share an id (step ids are referenced storyboard-wide).',
  },
  field_value_or_absent_without_value: {
    severity: 'error',
    summary: 'check: field_value_or_absent without value or allowed_values.',
  },
  field_value_without_value: { severity: 'error', summary: 'check: field_value without value or allowed_values.' },
  check_missing_argument: {
    severity: 'error',
    summary: 'A check without the argument it needs (path, value, allowed_values, source/target/match_keys).',
  },
  misspelled_check: { severity: 'error', summary: 'A check name that is a near-miss of a known check.' },
  unknown_check: {
    severity: 'error|warning',
    summary:
      'A check kind the AdCP 3.1 format does not define, so vitest-adcp cannot grade it. An error; with strictKeys: false, or in a storyboard of a newer AdCP format, a warning — the validation is then graded as the runner-output contract says for a kind the runner does not implement: passed, with a note on the coverage gap.',
  },
  negative_path_value: {
    severity: 'error',
    summary:
      "A step's `negative_path` is a near miss of `schema_invalid` or `payload_well_formed` (other values name a runtime rejection, as the 3.1 corpus writes them, and are graded as payload_well_formed).",
  },
  invalid_pattern: {
    severity: 'error',
    summary:
      'A field_pattern / envelope_field_pattern check whose `pattern` is missing or not a JavaScript regular expression source.',
  },
  invalid_identifier_path: {
    severity: 'error',
    summary:
      'An upstream_traffic `identifier_paths` entry outside the portable grammar (dotted keys, each optionally `[*]`; no indexes, quoting, `$` or request/response/context roots): the spec requires rejecting it at load time.',
  },
  invalid_expires_after_version: {
    severity: 'error',
    summary:
      "A validation's `expires_after_version` is not a semver version (the runner compares it with its runner_capability_version by semver).",
  },
  advisory_without_expiry: {
    severity: 'warning',
    summary:
      'A `severity: advisory` validation declares neither `expires_after_version` nor `permanent_advisory`, or both: the format asks for exactly one.',
  },
  contributes_outside_branch_set: { severity: 'error', summary: 'contributes: true in a phase without branch_set.' },
  contributes_with_contributes_to: {
    severity: 'error',
    summary: 'A step declares both contributes and contributes_to.',
  },
  contributes_to_mismatch: {
    severity: 'error',
    summary: 'contributes_to inside a branch_set phase differs from branch_set.id.',
  },
  branch_set_not_optional: { severity: 'error', summary: 'A phase with branch_set is not optional: true.' },
  branch_set_unsupported_semantics: { severity: 'error', summary: 'branch_set.semantics other than any_of.' },
  branch_set_semantics_conflict: {
    severity: 'error',
    summary: 'Phases sharing a branch_set id declare different semantics.',
  },
  branch_set_mixed_mode: {
    severity: 'error',
    summary: 'An optional phase contributes to a declared branch set without declaring it.',
  },
  orphan_contribution: {
    severity: 'error|warning',
    summary: 'A contributed flag no assert_contribution any_of grades (warning when requires_scenarios may grade it).',
  },
  provides_state_for_unknown_target: {
    severity: 'error',
    summary: 'provides_state_for names a step that does not exist.',
  },
  provides_state_for_cross_phase: { severity: 'error', summary: 'provides_state_for names a step of another phase.' },
  provides_state_for_self: { severity: 'error', summary: 'provides_state_for names the step itself.' },
  provides_state_for_substitute_not_stateful: {
    severity: 'error',
    summary: 'A step with provides_state_for is not stateful: true.',
  },
  provides_state_for_target_not_stateful: {
    severity: 'error',
    summary: 'A provides_state_for target is not stateful: true.',
  },
  provides_state_for_cycle: { severity: 'error', summary: 'provides_state_for declarations form a cycle.' },
  literal_auth_value: { severity: 'error', summary: 'auth with a literal value (DISALLOWED).' },
  contributes_if_invalid: { severity: 'error', summary: 'contributes_if is not "prior_step.<id>.passed".' },
  unknown_step_reference: {
    severity: 'error',
    summary: 'prior_step / triggered_by / webhook_url names a step that does not exist or has not run yet.',
  },
  unknown_context_reference: {
    severity: 'error|warning',
    summary:
      "A $context.<name> / {{context.<name>}} placeholder or a context_inputs key reads a name that neither the storyboard's context: sets nor an earlier step's context_outputs captures (located at the placeholder). An error; with strictKeys: false a warning. In the compliance corpus, only near misses of a declared name.",
  },
  misspelled_task: {
    severity: 'error',
    summary:
      "A step's task (or task_default) is a near miss of an AdCP task of the installed schemas or of a runner task; it would be skipped as missing_tool at run time.",
  },
  unknown_task: {
    severity: 'warning',
    summary:
      "A step's task is neither an AdCP task of the installed schemas nor a runner task, nor close to one: a custom task (it runs only where the agent advertises it, and its sample_request is not schema-checked).",
  },
  path_syntax: {
    severity: 'error',
    summary:
      "A path (validations[].path, refs_resolve source/target path, context_outputs[].path, auth.from_test_kit, the field of {{prior_step.<id>.<field>}}) does not parse in the runner's path dialect (empty segment, bad bracket).",
  },
  sample_request_schema: {
    severity: 'error|warning',
    summary:
      "A step's sample_request does not match its task's AdCP request schema (placeholders match anything; skipped for expect_error with negative_path absent or schema_invalid, and for sample_request_skip_schema: true). An error; with strictKeys: false a warning.",
  },
  context_input_path: {
    severity: 'error',
    summary:
      'A context_inputs inject_at that does not parse, has a wildcard, or reaches __proto__ / constructor / prototype (it would change every object of the test worker).',
  },
  shared_receiver_unsupported: { severity: 'error', summary: 'shared_receiver: true (out of scope, MUST NOT be set).' },
  deprecated_key: { severity: 'warning', summary: 'A deprecated key spelling (still honoured).' },
  test_kit_not_found: {
    severity: 'warning',
    summary:
      'prerequisites.test_kit does not resolve to a file (checked when corpusRoot is given; an error from loadTestKit).',
  },
  test_kit_shape: { severity: 'error', summary: 'A test kit is not a mapping or has a malformed auth block.' },
} as const satisfies Record<string, RuleInfo>;
