/**
 * The check-kind table (src/checks/kinds.ts) is the one place a kind is declared: this file holds everything derived
 * from it to it — the shipped schema's `check` enum and validation keys, the graders, the loader's argument rule —
 * and the table to the runner-output contract 2.6.0 it implements (its `authored_check_kinds` and
 * `cross_response_check_kinds`, copied here from compliance/3.1.x/universal/runner-output-contract.yaml: the test
 * needs no corpus).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHECK_KINDS, checks } from '../../src/checks/index.js';
import { NEWER_CHECK_KINDS, VALIDATION_KEYS } from '../../src/checks/kinds.js';
import { loadStoryboard } from '../../src/storyboard/index.js';

const schemaFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema/storyboard.schema.json');
const schema = JSON.parse(readFileSync(schemaFile, 'utf8'));
const validation = schema.definitions.validation;

/** runner-output-contract.yaml 2.6.0 (AdCP 3.1.15 and 3.1.19). */
const CONTRACT_AUTHORED = [
  'response_schema',
  'field_present',
  'field_absent',
  'field_pattern',
  'envelope_field_present',
  'envelope_field_absent',
  'envelope_field_pattern',
  'field_value',
  'field_value_or_absent',
  'field_contains',
  'status_code',
  'http_status',
  'http_status_in',
  'error_code',
  'on_401_require_header',
  'resource_equals_agent_url',
  'any_of',
  'refs_resolve',
  'a2a_submitted_artifact',
  'a2a_context_continuity',
  'field_less_than',
  'field_equals_context',
  'upstream_traffic',
  'canonical_format_satisfaction',
];
const CONTRACT_CROSS_RESPONSE = [
  'cross_response_field_equal',
  'cross_response_count_distinct',
  'replay_not_cached_rate_limit',
];

describe('check kinds (src/checks/kinds.ts)', () => {
  it('are every kind of runner-output contract 2.6.0, in its family, and no other', () => {
    const byFamily = (family: string) =>
      CHECK_KINDS.filter((k) => k.family === family)
        .map((k) => k.name)
        .sort();
    expect(byFamily('authored')).toEqual([...CONTRACT_AUTHORED].sort());
    expect(byFamily('cross_response')).toEqual([...CONTRACT_CROSS_RESPONSE].sort());
    expect(new Set(CHECK_KINDS.map((k) => k.name)).size).toBe(CHECK_KINDS.length);
  });

  it('are the `check` enum of schema/storyboard.schema.json, in the table order', () => {
    expect(validation.properties.check.enum).toEqual(CHECK_KINDS.map((k) => k.name));
  });

  it('take exactly the validation keys the schema defines, and need only keys they take', () => {
    const taken = new Set([...VALIDATION_KEYS, ...CHECK_KINDS.flatMap((k) => k.takes)]);
    expect([...taken].sort()).toEqual(Object.keys(validation.properties).sort());
    for (const kind of CHECK_KINDS)
      for (const group of kind.needs) for (const key of group) expect(kind.takes, kind.name).toContain(key);
  });

  it('each have a grader, but any_of, which the engine grades on assert_contribution steps', () => {
    const ungraded = CHECK_KINDS.filter((k) => !k.grade).map((k) => k.name);
    expect(ungraded).toEqual(['any_of']);
    expect(Object.keys(checks).sort()).toEqual(
      CHECK_KINDS.map((k) => k.name)
        .filter((n) => n !== 'any_of')
        .sort(),
    );
  });

  it('are known to the loader with their arguments: each kind without what it needs is check_missing_argument', () => {
    for (const kind of CHECK_KINDS.filter((k) => k.needs.length > 0 && !k.name.startsWith('field_value'))) {
      const yaml = `id: s\ntitle: S\nphases:\n  - id: p\n    steps:\n      - id: a\n        task: get_adcp_capabilities\n        validations:\n          - check: ${kind.name}\n`;
      const result = loadStoryboard(yaml, 'kinds.yaml', { schemasDir: false });
      expect(
        result.diagnostics.map((d) => d.rule),
        kind.name,
      ).toContain('check_missing_argument');
    }
  });

  it("name a newer minor's kinds apart, so they are never taken for a typo of one of ours", () => {
    for (const name of NEWER_CHECK_KINDS) expect(CHECK_KINDS.map((k) => k.name)).not.toContain(name);
  });
});
