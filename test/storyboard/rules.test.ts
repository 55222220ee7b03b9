/** Each authoring rule: a storyboard that breaks it and the fixed storyboard that passes. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadStoryboard } from '../../src/storyboard/index.js';
import { errorsOf, load, rulesOf, storyboardYaml } from './helpers.js';

interface Case {
  rule: string;
  bad: string;
  good: string;
}

/** Branch-set storyboard skeleton: `peers` are the optional phases, then the assertion. */
const withAssert = (peers: string, flag = 'flag') =>
  storyboardYaml(`${peers.replace(/^\n/, '')}
  - id: grade
    steps:
      - id: assert_flag
        task: assert_contribution
        validations:
          - check: any_of
            allowed_values: [${flag}]
`);

const steps = (body: string) => storyboardYaml(`  - id: p\n    steps:\n${body.replace(/^\n/, '')}`);

const validation = (v: string) =>
  steps(`      - id: s\n        task: get_products\n        validations:\n          - ${v}\n`);

const stateful = (provides: string, targetStateful = true, substituteStateful = true) =>
  steps(`
      - id: sync_accounts
        task: sync_accounts
        stateful: ${targetStateful}
      - id: list_accounts
        task: list_accounts
        stateful: ${substituteStateful}
        provides_state_for: ${provides}
`);

const cases: Case[] = [
  {
    rule: 'duplicate_phase_id',
    bad: storyboardYaml('  - id: a\n  - id: a\n'),
    good: storyboardYaml('  - id: a\n  - id: b\n'),
  },
  {
    rule: 'duplicate_step_id',
    bad: steps('      - { id: s, task: a }\n      - { id: s, task: b }\n'),
    good: steps('      - { id: s, task: a }\n      - { id: t, task: b }\n'),
  },
  {
    rule: 'duplicate_step_id_across_phases',
    bad: storyboardYaml('  - id: a\n    steps: [{ id: s, task: x }]\n  - id: b\n    steps: [{ id: s, task: x }]\n'),
    good: storyboardYaml('  - id: a\n    steps: [{ id: s, task: x }]\n  - id: b\n    steps: [{ id: s2, task: x }]\n'),
  },
  {
    rule: 'field_value_or_absent_without_value',
    bad: validation('{ check: field_value_or_absent, path: replayed }'),
    good: validation('{ check: field_value_or_absent, path: replayed, value: false }'),
  },
  {
    rule: 'field_value_without_value',
    bad: validation('{ check: field_value, path: status }'),
    good: validation('{ check: field_value, path: status, allowed_values: [active, pending] }'),
  },
  {
    rule: 'check_missing_argument',
    bad: validation('{ check: refs_resolve, source: { from: context, path: "a[*]" } }'),
    good: validation(
      '{ check: refs_resolve, source: { from: context, path: "a[*]" }, target: { from: current_step, path: "b[*]" }, match_keys: [id] }',
    ),
  },
  {
    rule: 'misspelled_check',
    bad: validation('{ check: response_schmea }'),
    good: validation('{ check: response_schema }'),
  },
  {
    rule: 'contributes_outside_branch_set',
    bad: withAssert('  - id: a\n    optional: true\n    steps: [{ id: s, task: x, contributes: true }]'),
    good: withAssert('  - id: a\n    optional: true\n    steps: [{ id: s, task: x, contributes_to: flag }]'),
  },
  {
    rule: 'contributes_with_contributes_to',
    bad: withAssert(
      '  - id: a\n    optional: true\n    branch_set: { id: flag, semantics: any_of }\n    steps: [{ id: s, task: x, contributes: true, contributes_to: flag }]',
    ),
    good: withAssert(
      '  - id: a\n    optional: true\n    branch_set: { id: flag, semantics: any_of }\n    steps: [{ id: s, task: x, contributes: true }]',
    ),
  },
  {
    rule: 'contributes_to_mismatch',
    bad: withAssert(
      '  - id: a\n    optional: true\n    branch_set: { id: flag, semantics: any_of }\n    steps: [{ id: s, task: x, contributes_to: flgs }]',
    ),
    good: withAssert(
      '  - id: a\n    optional: true\n    branch_set: { id: flag, semantics: any_of }\n    steps: [{ id: s, task: x, contributes_to: flag }]',
    ),
  },
  {
    rule: 'branch_set_not_optional',
    bad: withAssert(
      '  - id: a\n    branch_set: { id: flag, semantics: any_of }\n    steps: [{ id: s, task: x, contributes: true }]',
    ),
    good: withAssert(
      '  - id: a\n    optional: true\n    branch_set: { id: flag, semantics: any_of }\n    steps: [{ id: s, task: x, contributes: true }]',
    ),
  },
  {
    rule: 'branch_set_unsupported_semantics',
    bad: withAssert(
      '  - id: a\n    optional: true\n    branch_set: { id: flag, semantics: all_of }\n    steps: [{ id: s, task: x, contributes: true }]',
    ),
    good: withAssert(
      '  - id: a\n    optional: true\n    branch_set: { id: flag, semantics: any_of }\n    steps: [{ id: s, task: x, contributes: true }]',
    ),
  },
  {
    rule: 'branch_set_semantics_conflict',
    bad: withAssert(`
  - id: a
    optional: true
    branch_set: { id: flag, semantics: any_of }
    steps: [{ id: s1, task: x, contributes: true }]
  - id: b
    optional: true
    branch_set: { id: flag, semantics: first_of }
    steps: [{ id: s2, task: x, contributes: true }]`),
    good: withAssert(`
  - id: a
    optional: true
    branch_set: { id: flag, semantics: any_of }
    steps: [{ id: s1, task: x, contributes: true }]
  - id: b
    optional: true
    branch_set: { id: flag, semantics: any_of }
    steps: [{ id: s2, task: x, contributes: true }]`),
  },
  {
    rule: 'branch_set_mixed_mode',
    bad: withAssert(`
  - id: a
    optional: true
    branch_set: { id: flag, semantics: any_of }
    steps: [{ id: s1, task: x, contributes: true }]
  - id: b
    optional: true
    steps: [{ id: s2, task: x, contributes_to: flag }]`),
    good: withAssert(`
  - id: a
    optional: true
    branch_set: { id: flag, semantics: any_of }
    steps: [{ id: s1, task: x, contributes: true }]
  - id: b
    optional: true
    branch_set: { id: flag, semantics: any_of }
    steps: [{ id: s2, task: x, contributes: true }]`),
  },
  {
    rule: 'orphan_contribution',
    bad: withAssert('  - id: a\n    optional: true\n    steps: [{ id: s, task: x, contributes_to: other_flag }]'),
    good: withAssert('  - id: a\n    optional: true\n    steps: [{ id: s, task: x, contributes_to: flag }]'),
  },
  { rule: 'provides_state_for_unknown_target', bad: stateful('sync_acounts'), good: stateful('sync_accounts') },
  {
    rule: 'provides_state_for_cross_phase',
    bad: storyboardYaml(`
  - id: a
    steps: [{ id: sync_accounts, task: sync_accounts, stateful: true }]
  - id: b
    steps: [{ id: list_accounts, task: list_accounts, stateful: true, provides_state_for: sync_accounts }]
`),
    good: stateful('sync_accounts'),
  },
  {
    rule: 'provides_state_for_self',
    bad: stateful('[sync_accounts, list_accounts]'),
    good: stateful('[sync_accounts]'),
  },
  {
    rule: 'provides_state_for_substitute_not_stateful',
    bad: stateful('sync_accounts', true, false),
    good: stateful('sync_accounts'),
  },
  {
    rule: 'provides_state_for_target_not_stateful',
    bad: stateful('sync_accounts', false, true),
    good: stateful('sync_accounts'),
  },
  {
    rule: 'provides_state_for_cycle',
    bad: steps(`
      - { id: a, task: x, stateful: true, provides_state_for: b }
      - { id: b, task: x, stateful: true, provides_state_for: c }
      - { id: c, task: x, stateful: true, provides_state_for: a }
`),
    good: steps(`
      - { id: a, task: x, stateful: true, provides_state_for: [b, c] }
      - { id: b, task: x, stateful: true }
      - { id: c, task: x, stateful: true }
`),
  },
  {
    rule: 'literal_auth_value',
    bad: steps('      - { id: s, task: list_creatives, auth: { type: api_key, value: demo-key } }\n'),
    good: steps('      - { id: s, task: list_creatives, auth: { type: api_key, from_test_kit: true } }\n'),
  },
  {
    rule: 'contributes_if_invalid',
    bad: withAssert(
      '  - id: a\n    optional: true\n    steps:\n      - { id: s0, task: x }\n      - { id: s, task: x, contributes_to: flag, contributes_if: "s0 passed" }',
    ),
    good: withAssert(
      '  - id: a\n    optional: true\n    steps:\n      - { id: s0, task: x }\n      - { id: s, task: x, contributes_to: flag, contributes_if: "prior_step.s0.passed" }',
    ),
  },
  {
    rule: 'unknown_step_reference',
    bad: steps(`
      - { id: wait, task: expect_webhook, triggered_by: create }
      - { id: create, task: create_media_buy, sample_request: { push_notification_config: { url: "{{runner.webhook_url:create}}" } } }
`),
    good: steps(`
      - { id: create, task: create_media_buy, sample_request: { push_notification_config: { url: "{{runner.webhook_url:create}}" } } }
      - { id: wait, task: expect_webhook, triggered_by: create, filter: { operation_id: "{{prior_step.create.operation_id}}" } }
`),
  },
  {
    rule: 'shared_receiver_unsupported',
    bad: steps('      - { id: s, task: create_media_buy, shared_receiver: true }\n'),
    good: steps('      - { id: s, task: create_media_buy }\n'),
  },
  {
    rule: 'schema',
    bad: steps('      - { id: s, task: get_products, expect_error: yes-please }\n'),
    good: steps('      - { id: s, task: get_products, expect_error: true }\n'),
  },
  {
    rule: 'negative_path_value',
    bad: steps('      - { id: s, task: get_products, negative_path: payload_wellformed }\n'),
    good: steps('      - { id: s, task: get_products, negative_path: mode_mismatch }\n'),
  },
  {
    rule: 'invalid_pattern',
    bad: validation('{ check: field_pattern, path: adcp_version, pattern: "^(3" }'),
    good: validation('{ check: field_pattern, path: adcp_version, pattern: "^3\\\\." }'),
  },
  {
    rule: 'invalid_expires_after_version',
    bad: validation('{ check: field_present, path: products, severity: advisory, expires_after_version: "3.2" }'),
    good: validation('{ check: field_present, path: products, severity: advisory, expires_after_version: "3.2.0-0" }'),
  },
  {
    rule: 'yaml_syntax',
    bad: steps('      - { id: s, task: get_products\n'),
    good: steps('      - { id: s, task: get_products }\n'),
  },
];

describe('authoring rules', () => {
  describe.each(cases)('$rule', ({ rule, bad, good }) => {
    it('fails when broken', () => {
      const result = load(bad);
      expect(result.ok).toBe(false);
      expect(errorsOf(result).map((d) => d.rule)).toContain(rule);
      expect(result.diagnostics[0]!.rule).toBe(rule);
      for (const d of errorsOf(result)) expect(d.hint, `${d.rule} should say how to fix it`).toBeTruthy();
    });
    it('passes when fixed', () => {
      const result = load(good);
      expect(rulesOf(result)).toEqual([]);
      expect(result.ok).toBe(true);
    });
  });
});

describe('warnings', () => {
  it('unknown_check: a check this format version does not define is an error, a warning with strictKeys: false (a newer format version)', () => {
    const source = validation('{ check: field_in_context_array, path: errors }');
    const strict = load(source);
    expect(strict.ok).toBe(false);
    expect(strict.diagnostics).toMatchObject([
      {
        severity: 'error',
        rule: 'unknown_check',
        line: 9,
        column: 22,
        hint: expect.stringContaining('strictKeys: false'),
      },
    ]);
    const lenient = load(source, 'sample.yaml', { strictKeys: false });
    expect(lenient.ok).toBe(true);
    expect(lenient.diagnostics).toMatchObject([{ severity: 'warning', rule: 'unknown_check', line: 9, column: 22 }]);
  });

  it('misspelled_check is for near misses only (all_of is not a typo of any_of)', () => {
    expect(rulesOf(load(validation('{ check: all_of, allowed_values: [x] }')))).toEqual(['unknown_check']);
  });

  it('orphan_contribution is a warning when a required scenario may grade the flag', () => {
    const source = storyboardYaml(
      '  - id: a\n    optional: true\n    steps: [{ id: s, task: x, contributes_to: flag }]\n',
      'requires_scenarios: [media_buy_seller/grades_flag]\n',
    );
    expect(load(source)).toMatchObject({
      ok: true,
      diagnostics: [{ severity: 'warning', rule: 'orphan_contribution' }],
    });
  });

  it('deprecated_key: old spellings warn and are honoured', () => {
    const result = load(
      steps(`
      - { id: sync_accounts, task: sync_accounts, stateful: true }
      - { id: list_accounts, task: list_accounts, stateful: true, peer_substitutes_for: sync_accounts }
`),
    );
    expect(rulesOf(result)).toEqual(['deprecated_key']);
    if (result.ok) expect(result.storyboard.phases[0]!.steps[1]!.provides_state_for).toEqual(['sync_accounts']);
  });

  it('test_kit_not_found: checked when corpusRoot is given', () => {
    const corpusRoot = path.resolve(
      path.dirname(fileURLToPath(import.meta.url)),
      '../../node_modules/@adcp/sdk/compliance/cache/3.0.6',
    );
    const source = (kit: string) => storyboardYaml('  - id: a\n', `prerequisites:\n  test_kit: ${kit}\n`);
    expect(loadStoryboard(source('test-kits/acme-outdoor.yaml'), '/tmp/x.yaml', { corpusRoot }).diagnostics).toEqual(
      [],
    );
    expect(
      loadStoryboard(source('test-kits/acme-outdoors.yaml'), '/tmp/x.yaml', { corpusRoot }).diagnostics,
    ).toMatchObject([{ severity: 'warning', rule: 'test_kit_not_found', line: 4, column: 13 }]);
    expect(loadStoryboard(source('test-kits/acme-outdoors.yaml'), '/tmp/x.yaml').diagnostics).toEqual([]);
  });
});
