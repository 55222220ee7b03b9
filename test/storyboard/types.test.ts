/**
 * The storyboard types (src/model/storyboard.ts) say exactly what the loader
 * produces: the schema's keys at each level plus `loc` / `file`, no catch-all.
 *
 * Two halves: the `@ts-expect-error` lines below fail `npm run typecheck`
 * (tsc -p tsconfig.test.json) the day a catch-all index signature comes back,
 * and the key tables — which tsc holds to exactly the keys of each interface
 * (`satisfies Keys<…>`) — are compared at run time with the schema's
 * `properties`, so a key added to one and not the other fails here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadStoryboard } from '../../src/storyboard/index.js';
import type {
  BranchSet,
  ContextOutput,
  Phase,
  Prerequisites,
  Step,
  Storyboard,
  Validation,
} from '../../src/storyboard/index.js';

const schemaFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema/storyboard.schema.json');
const schema = JSON.parse(readFileSync(schemaFile, 'utf8'));

/** Exactly the named keys of `T` (annotation patterns and what the loader adds left out). */
type Named<T> = Exclude<keyof T, `x-${string}` | `$${string}` | 'loc' | 'file' | 'formatVersion'>;
type Keys<T> = { readonly [K in Named<T>]-?: true };

const storyboardKeys = {
  id: true,
  version: true,
  title: true,
  category: true,
  summary: true,
  track: true,
  protocol: true,
  required_tools: true,
  required_any_of_tools: true,
  requires: true,
  requires_capability: true,
  introduced_in: true,
  status: true,
  narrative: true,
  requires_scenarios: true,
  default_agent: true,
  agent: true,
  caller: true,
  prerequisites: true,
  fixtures: true,
  context: true,
  invariants: true,
  platform_types: true,
  grading: true,
  phases: true,
} as const satisfies Keys<Storyboard>;
const phaseKeys = {
  id: true,
  title: true,
  narrative: true,
  optional: true,
  skip_if: true,
  requires_capability: true,
  branch_set: true,
  depends_on: true,
  steps: true,
} as const satisfies Keys<Phase>;
const stepKeys = {
  id: true,
  title: true,
  narrative: true,
  task: true,
  task_default: true,
  schema_ref: true,
  response_schema_ref: true,
  doc_ref: true,
  comply_scenario: true,
  expected: true,
  stateful: true,
  requires_tool: true,
  agent: true,
  sample_request: true,
  sample_response: true,
  auth: true,
  omit_idempotency_key: true,
  expect_error: true,
  negative_path: true,
  expected_arm: true,
  sample_request_skip_schema: true,
  contributes: true,
  contributes_to: true,
  contributes_if: true,
  provides_state_for: true,
  peer_substitutes_for: true,
  context_outputs: true,
  context_inputs: true,
  validations: true,
  requires_contract: true,
  parallel_dispatch: true,
  rate_limit_trip: true,
  vector_ref: true,
  same_event_as: true,
  severity: true,
  triggered_by: true,
  filter: true,
  timeout_seconds: true,
  expect_idempotency_key: true,
  webhook_payload_schema_ref: true,
  expect_max_deliveries_per_logical_event: true,
  retry_trigger: true,
  expect_min_deliveries: true,
  verify_signature_on_every_delivery: true,
  require_tag: true,
  shared_receiver: true,
  source: true,
  source_path: true,
  macro_template: true,
  catalog_bindings: true,
  require_every_binding_observed: true,
  require_all_bindings_observed: true,
  reviewer_checks: true,
} as const satisfies Keys<Step>;
const validationKeys = {
  id: true,
  check: true,
  severity: true,
  expires_after_version: true,
  permanent_advisory: true,
  path: true,
  value: true,
  allowed_values: true,
  description: true,
  source: true,
  target: true,
  match_keys: true,
  scope: true,
  on_out_of_scope: true,
  pattern: true,
  context_key: true,
  min_count: true,
  endpoint_pattern: true,
  payload_must_contain: true,
  identifier_paths: true,
  purpose_filter: true,
  since: true,
  attestation_mode_required: true,
} as const satisfies Keys<Validation>;
const prerequisitesKeys = {
  description: true,
  test_kit: true,
  controller_seeding: true,
  vectors: true,
} as const satisfies Keys<Prerequisites>;
const branchSetKeys = { id: true, semantics: true } as const satisfies Keys<BranchSet>;
const contextOutputKeys = { name: true, key: true, path: true, generate: true } as const satisfies Keys<ContextOutput>;

describe('storyboard types', () => {
  it.each([
    ['Storyboard', storyboardKeys, schema.properties],
    ['Phase', phaseKeys, schema.definitions.phase.properties],
    ['Step', stepKeys, schema.definitions.step.properties],
    ['Validation', validationKeys, schema.definitions.validation.properties],
    ['Prerequisites', prerequisitesKeys, schema.definitions.prerequisites.properties],
    ['BranchSet', branchSetKeys, schema.definitions.branch_set.properties],
    ['ContextOutput', contextOutputKeys, schema.definitions.context_output.properties],
  ])('%s has exactly the keys the schema defines', (_name, keys, properties) => {
    expect(Object.keys(keys).sort()).toEqual(Object.keys(properties).sort());
  });

  it('type what the loader produces, and nothing else', () => {
    const result = loadStoryboard(
      'id: t\ntitle: T\nx-owner: me\nphases:\n  - id: p\n    title: P\n    steps:\n      - { id: s, task: get_products }\n',
      't.yaml',
    );
    if (!result.ok) throw new Error('did not load');
    const sb: Storyboard = result.storyboard;
    expect(sb.phases[0]!.title).toBe('P');
    // @ts-expect-error — a misspelt key does not compile (no catch-all index signature).
    expect(sb.phases[0]!.titel).toBeUndefined();
    // @ts-expect-error — nor on a step, a validation or the storyboard.
    expect(sb.phases[0]!.steps[0]!.sample_requst).toBeUndefined();
    // @ts-expect-error — nor a misspelled storyboard key.
    expect(sb.titel).toBeUndefined();
    // Annotations are typed, as unknown.
    const owner: unknown = sb['x-owner'];
    expect(owner).toBe('me');
    // The loader's additions.
    expect(sb.phases[0]!.steps[0]!.loc).toEqual({ line: 8, column: 11 });
    expect(sb.phases[0]!.steps[0]!.validations).toEqual([]);
  });
});
