/**
 * The authoring rules also run on storyboards that fail the schema (to list
 * every problem at once), so they must never throw on unexpected shapes.
 * Replace each node of a storyboard that uses every feature with values of
 * the wrong type and check the loader still answers with diagnostics.
 */
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadStoryboard } from '../../src/storyboard/index.js';

const full = parse(`
id: everything
title: Everything
requires_scenarios: [x/y]
prerequisites: { test_kit: test-kits/acme-outdoor.yaml, controller_seeding: true }
phases:
  - id: setup
    steps:
      - id: sync
        task: sync_accounts
        stateful: true
        context_outputs: [{ name: account_id, path: "accounts[0].account_id" }]
      - id: list
        task: list_accounts
        stateful: true
        provides_state_for: [sync]
        sample_request: { url: "{{runner.webhook_url:list}}" }
  - id: branch
    optional: true
    branch_set: { id: flag, semantics: any_of }
    steps:
      - id: probe
        task: "$test_kit.auth.probe_task"
        auth: { type: api_key, from_test_kit: true }
        contributes: true
        contributes_if: prior_step.sync.passed
        triggered_by: sync
        context_inputs: [{ key: account_id, inject_at: account.id }]
        validations:
          - { check: field_value_or_absent, path: replayed, allowed_values: [false] }
          - { check: refs_resolve, source: { from: context, path: "a[*]" }, target: { from: current_step, path: "b[*]" }, match_keys: [id] }
  - id: grade
    steps:
      - id: assert
        task: assert_contribution
        validations: [{ check: any_of, allowed_values: [flag] }]
`) as unknown;

function* paths(value: unknown, prefix: (string | number)[] = []): Generator<(string | number)[]> {
  if (prefix.length > 0) yield prefix;
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* paths(value[i], [...prefix, i]);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) yield* paths(v, [...prefix, k]);
}

function replaced(root: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const segment of path.slice(0, -1)) node = node[segment] as Record<string | number, unknown>;
  node[path[path.length - 1]!] = value;
  return copy;
}

describe('robustness', () => {
  it('the full storyboard loads cleanly', () => {
    expect(loadStoryboard(stringify(full), 'full.yaml').diagnostics).toEqual([]);
  });

  it('never throws on a node of the wrong type', () => {
    const weird: unknown[] = [null, 7, 'text', true, [], {}, [1, 'x'], { id: 3 }];
    let loads = 0;
    for (const path of paths(full)) {
      for (const value of weird) {
        const source = stringify(replaced(full, path, value));
        const result = loadStoryboard(source, 'mutant.yaml');
        loads++;
        for (const d of result.diagnostics) {
          expect(d.line).toBeGreaterThanOrEqual(1);
          expect(d.column).toBeGreaterThanOrEqual(1);
        }
        if (!result.ok) expect(result.diagnostics[0]!.severity).toBe('error');
      }
    }
    expect(loads).toBeGreaterThan(300);
  });
});

describe('names that collide with Object.prototype', () => {
  it('treats "constructor" and "toString" as ordinary unknown names', () => {
    const source = `id: a\ntitle: A\nphases:\n  - id: p\n    constructor: 1\n    steps:\n      - id: s\n        task: x\n        validations:\n          - check: constructor\n          - check: toString\n`;
    const result = loadStoryboard(source, 'proto.yaml');
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map((d) => `${d.rule} ${d.message.split(' in ')[0]}`)).toEqual([
      'unknown_key unknown key "constructor"',
      'unknown_check check "constructor"',
      'unknown_check check "toString"',
    ]);
    const lenient = loadStoryboard(source, 'proto.yaml', { strictKeys: false });
    expect(lenient.ok).toBe(true);
    expect(lenient.diagnostics.map((d) => d.rule)).toEqual(['unknown_check', 'unknown_check']);
  });
});

describe('hostile storyboards', () => {
  const injecting = (at: string) =>
    `id: a\ntitle: A\ncontext: { v: 1 }\nphases:\n  - id: p\n    steps:\n      - id: s\n        task: get_products\n        context_inputs:\n          - { key: v, inject_at: "${at}" }\n`;

  it('refuses context_inputs that would write onto a prototype, at the inject_at line', () => {
    for (const at of ['__proto__.polluted', 'a.constructor.prototype.polluted', 'constructor', 'items[*].id', 'a..b']) {
      const result = loadStoryboard(injecting(at), 'hostile.yaml');
      expect([at, result.ok]).toEqual([at, false]);
      expect(result.diagnostics[0]).toMatchObject({
        rule: 'context_input_path',
        severity: 'error',
        line: 10,
        file: 'hostile.yaml',
      });
    }
    expect(loadStoryboard(injecting('filters.product_ids[0]'), 'fine.yaml').ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('caps alias expansion at the yaml default and names the first alias', () => {
    const bomb = ['id: bomb', 'title: Bomb', 'x0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]'];
    for (let i = 1; i <= 8; i++)
      bomb.push(`x${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
    bomb.push('phases: []');
    const result = loadStoryboard(bomb.join('\n'), 'bomb.yaml');
    expect(result.ok).toBe(false);
    expect(result.diagnostics[0]).toMatchObject({ rule: 'yaml_syntax', severity: 'error', line: 4, column: 10 });
    expect(result.diagnostics[0]!.hint).toContain('at most 100 aliases');
    // A handful of aliases (the common `<<: *defaults` idiom, anchored under an `x-` key) still loads.
    const merge =
      'id: m\ntitle: M\nx-defaults: &d { task: get_products }\nphases:\n  - id: p\n    steps:\n      - { id: s, <<: *d }\n';
    expect(loadStoryboard(merge, 'merge.yaml').ok).toBe(true);
  });
});
