/**
 * What the loader catches before the agent is called (issue 21, item 5): task names, `$context` references, path
 * syntax and `sample_request` against the task's AdCP request schema — each at `file:line:col` of the offending token.
 * (Silent on the corpus: test/storyboard/corpus.test.ts loads every corpus storyboard with its corpusRoot.)
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REQUEST_SIGNING_PROBE_TASK } from '../../src/model/runner-tasks.js';
import { WEBHOOK_TASKS } from '../../src/roles/webhook-receiver/webhooks.js';
import { PROBE_TASKS } from '../../src/transport/probe.js';
import { adcpKnowledge, RUNNER_TASKS } from '../../src/storyboard/adcp-tasks.js';
import { formatDiagnostic, loadStoryboard, type LoadOptions } from '../../src/storyboard/index.js';
import { STORYBOARD_RULES } from '../../src/storyboard/rule-catalog.js';

const corpusRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../node_modules/@adcp/sdk/compliance/cache/3.0.6',
);
const FILE = '/project/flow.storyboard.yaml';

function load(yaml: string, options: LoadOptions = {}, file = FILE) {
  return loadStoryboard(yaml, file, { corpusRoot, ...options });
}
/** `rule@line:col` of every diagnostic, severity first letter for warnings. */
function where(yaml: string, options: LoadOptions = {}, file = FILE): string[] {
  return load(yaml, options, file).diagnostics.map(
    (d) => `${d.severity === 'warning' ? 'w:' : ''}${d.rule}@${d.line}:${d.column}`,
  );
}
/** `line:col` of the `n`-th (0-based) appearance of `token` in the YAML text: where a diagnostic about it must point. */
function at(yaml: string, token: string, n = 0): string {
  let offset = -1;
  for (let i = 0; i <= n; i++) offset = yaml.indexOf(token, offset + 1);
  if (offset < 0) throw new Error(`${token} is not in the text`);
  const before = yaml.slice(0, offset).split('\n');
  return `${before.length}:${before.at(-1)!.length + 1}`;
}
/** One phase of the given steps (indented by 6). */
const sb = (steps: string, header = '') =>
  `id: s\ntitle: S\n${header}phases:\n  - id: p\n    title: P\n    steps:\n${steps.replace(/^\n/, '')}`;

describe('task names', () => {
  it('a near miss of an AdCP task is an error at the task, naming the task meant', () => {
    const yaml = sb(`
      - id: caps
        task: get_adcp_capabilites
`);
    const result = load(yaml);
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      `${FILE}:${at(yaml, 'get_adcp_capabilites')}: [misspelled_task] task "get_adcp_capabilites" in step "caps" is not an AdCP or runner task (did you mean "get_adcp_capabilities"? As written, no agent advertises it and the step is skipped as missing_tool)`,
    ]);
  });

  it('near misses of runner tasks, other spellings (case, dashes) and task_default too', () => {
    const yaml = sb(`
      - { id: a, task: expect_webhok }
      - { id: b, task: Get-Products }
      - { id: c, task: $test_kit.auth.probe_task, task_default: list_acounts }
      - { id: d, task: $test_kit.auth.probe_task, task_default: list_accounts }
`);
    expect(where(yaml)).toEqual([
      `misspelled_task@${at(yaml, 'expect_webhok')}`,
      `misspelled_task@${at(yaml, 'Get-Products')}`,
      `misspelled_task@${at(yaml, 'list_acounts')}`,
    ]);
    expect(load(yaml).diagnostics.map((d) => d.hint?.match(/did you mean "([^"]+)"/)?.[1])).toEqual([
      'expect_webhook',
      'get_products',
      'list_accounts',
    ]);
  });

  it('a custom task far from any known one is a warning; the storyboard loads', () => {
    const yaml = sb(`
      - { id: mine, task: acme_reconcile_ledger }
      - { id: t, task: x }
`);
    const result = load(yaml);
    expect(result.ok).toBe(true);
    expect(where(yaml)).toEqual([
      `w:unknown_task@${at(yaml, 'acme_reconcile_ledger')}`,
      `w:unknown_task@${at(yaml, 'x }')}`,
    ]);
  });

  it('every AdCP task of the installed schemas and every runner task is known', () => {
    const known = adcpKnowledge({ corpusRoot });
    expect(known.adcpTasks.size).toBeGreaterThan(50);
    const steps = [...known.adcpTasks, ...known.runnerTasks]
      .map((task, i) => `      - { id: s${i}, task: ${task} }\n`)
      .join('');
    expect(where(sb(steps)).filter((r) => r.includes('task'))).toEqual([]);
  });

  it("the runner's task list covers every task the engine handles itself (it mirrors them, to keep the loader light)", () => {
    for (const task of [
      ...WEBHOOK_TASKS,
      ...PROBE_TASKS,
      REQUEST_SIGNING_PROBE_TASK,
      'assert_contribution',
      'expect_substitution_safe',
    ]) {
      expect(RUNNER_TASKS.has(task), task).toBe(true);
    }
    // storyboard-schema.yaml's own task definitions are read from the corpus.
    expect([...adcpKnowledge({ corpusRoot }).runnerTasks]).toEqual(
      expect.arrayContaining(['expect_webhook_signature_valid', 'expect_substitution_safe']),
    );
  });

  it('not checked without an AdCP version to check against (no corpusRoot, no schemasDir, or schemasDir: false)', () => {
    const yaml = sb('      - { id: caps, task: get_adcp_capabilites }\n');
    expect(loadStoryboard(yaml, FILE).diagnostics).toEqual([]);
    expect(where(yaml, { schemasDir: false })).toEqual([]);
  });
});

describe('$context references', () => {
  it('an undeclared name is an error located at the placeholder inside its string, with the declared name meant', () => {
    const yaml = sb(
      `
      - id: caps
        task: get_adcp_capabilities
        context_outputs:
          - { name: correlation, path: context.correlation_id }
      - id: again
        task: get_adcp_capabilities
        sample_request:
          context: { correlation_id: "id-$context.corelation" }
`,
    );
    const result = load(yaml);
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      `${FILE}:${at(yaml, '$context.corelation')}: [unknown_context_reference] $context.corelation in step "again" reads "corelation", which no earlier step captures (context_outputs) and the storyboard's context: does not set (did you mean "correlation"?)`,
    ]);
  });

  it('finds the placeholder after escapes and line folds, and the second of two identical ones', () => {
    const yaml = sb(`
      - id: a
        task: get_products
        sample_request:
          buying_mode: wholesale
          brief: "tab\\there $context.nope and again $context.nope"
          context:
            note: >-
              folded text
              then $context.gone
`);
    expect(where(yaml)).toEqual([
      `unknown_context_reference@${at(yaml, '$context.nope')}`,
      `unknown_context_reference@${at(yaml, '$context.nope', 1)}`,
      `unknown_context_reference@${at(yaml, '$context.gone')}`,
    ]);
  });

  it('declared: the root context, a capture (name: or key:) by any earlier step — in an optional or branch phase too', () => {
    const yaml = `id: s
title: S
context:
  fixed: 1
phases:
  - id: maybe
    optional: true
    steps:
      - id: discover
        task: get_products
        sample_request: { buying_mode: wholesale }
        context_outputs:
          - { key: product_id, path: "products[0].product_id" }
          - { name: all, path: products }
  - id: use
    steps:
      - id: refine
        task: get_products
        sample_request:
          buying_mode: wholesale
          filters: { product_ids: ["$context.product_id"] }
          context: { n: "$context.fixed", first: "{{context.all[0].product_id}}", deep: "$context.all[0].product_id" }
        context_inputs:
          - { key: product_id, inject_at: "filters.product_ids[1]" }
        validations:
          - { check: field_value, path: "products[0].product_id", value: "$context.product_id" }
`;
    expect(load(yaml).diagnostics).toEqual([]);
  });

  it('a capture that comes later (or from the step itself), a context_inputs key and {{context.x}} are checked too', () => {
    const yaml = sb(`
      - id: early
        task: get_products
        sample_request: { buying_mode: wholesale, context: { a: "{{context.later_one}}" } }
        context_inputs:
          - { key: missing_key, inject_at: "context.x" }
      - id: self
        task: get_products
        sample_request: { buying_mode: wholesale, context: { a: "$context.own" } }
        context_outputs:
          - { name: own, path: products }
          - { name: later_one, path: products }
`);
    const result = load(yaml);
    expect(where(yaml)).toEqual([
      `unknown_context_reference@${at(yaml, '{{context.later_one}}')}`,
      `unknown_context_reference@${at(yaml, 'missing_key')}`,
      `unknown_context_reference@${at(yaml, '$context.own')}`,
    ]);
    expect(result.diagnostics[0]!.message).toMatch(
      new RegExp(
        `reads "later_one", which step "self" at ${at(yaml, 'id: self')} captures only after this step has run`,
      ),
    );
    expect(result.diagnostics[2]!.hint).toMatch(/captured from its own answer/);
  });

  it('with strictKeys: false (a newer format version) a warning; in the compliance tree only near misses', () => {
    const yaml = sb(
      '      - { id: a, task: get_products, sample_request: { buying_mode: wholesale, brief: "$context.nope" } }\n',
    );
    expect(where(yaml, { strictKeys: false })).toEqual([`w:unknown_context_reference@${at(yaml, '$context.nope')}`]);
    const inCorpus = (text: string) =>
      loadStoryboard(text, path.join(corpusRoot, 'protocols', 'x.yaml'), { corpusRoot }).diagnostics.map((d) => d.rule);
    expect(inCorpus(yaml)).toEqual([]);
    const typo = sb(`
      - { id: a, task: get_products, sample_request: { buying_mode: wholesale }, context_outputs: [{ name: media_buy_id, path: x }] }
      - { id: b, task: get_products, sample_request: { buying_mode: wholesale, brief: "$context.media_buy_di" } }
`);
    expect(inCorpus(typo)).toEqual(['unknown_context_reference']);
  });

  it('{{prior_step…}} references are located at the placeholder too', () => {
    const yaml = sb(`
      - id: a
        task: get_products
        sample_request: { buying_mode: wholesale, brief: "see {{prior_step.nope.x}}" }
`);
    expect(where(yaml)).toEqual([`unknown_step_reference@${at(yaml, '{{prior_step.nope.x}}')}`]);
  });
});

describe('path syntax', () => {
  it('a validation path with an empty segment is an error at the path', () => {
    const yaml = sb(`
      - id: caps
        task: get_adcp_capabilities
        validations:
          - check: field_present
            path: adcp..major_versions
`);
    const result = load(yaml);
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      `${FILE}:${at(yaml, 'adcp..major_versions')}: [path_syntax] validations[0].path in step "caps": invalid path "adcp..major_versions": empty segment. Paths look like "a.b[0].c" or "items[*].id". (write the path as dotted keys with [n] indexes or [*], e.g. "adcp.major_versions" or "products[0].product_id")`,
    ]);
  });

  it('bad brackets, a trailing dot, refs_resolve paths, captures and the field of {{prior_step.<id>.<field>}}', () => {
    const yaml = sb(`
      - id: a
        task: get_products
        sample_request: { buying_mode: wholesale }
        context_outputs:
          - { name: x, path: "task_completion.products[0" }
          - { name: y, path: "task_completion.products[0].id" }
        validations:
          - { check: field_present, path: "products[x]" }
          - { check: field_present, path: "products." }
          - check: refs_resolve
            source: { from: current_step, path: "products[*]..format_ids" }
            target: { from: current_step, path: "formats[*].format_id" }
            match_keys: [id]
      - id: b
        task: get_products
        sample_request: { buying_mode: wholesale, brief: "{{prior_step.a.products..id}}" }
`);
    expect(where(yaml)).toEqual([
      `path_syntax@${at(yaml, '"task_completion.products[0"')}`,
      `path_syntax@${at(yaml, '"products[x]"')}`,
      `path_syntax@${at(yaml, '"products."')}`,
      `path_syntax@${at(yaml, '"products[*]..format_ids"')}`,
      `path_syntax@${at(yaml, '{{prior_step.a.products..id}}')}`,
    ]);
  });
});

describe('auth.from_test_kit', () => {
  // Issue 31 item 10: such a path was found only when the step ran, as "vitest-adcp internal error (please report it)".
  it('a test-kit path that does not parse is a load error at the path (path_syntax); a good one and `true` load', () => {
    const yaml = sb(`
      - id: caps
        task: get_adcp_capabilities
        auth: { type: bearer, from_test_kit: "auth..x" }
      - id: caps2
        task: get_adcp_capabilities
        auth: { type: bearer, from_test_kit: "auth.api_key" }
      - id: caps3
        task: get_adcp_capabilities
        auth: { type: bearer, from_test_kit: true }
`);
    const result = load(yaml);
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      `${FILE}:${at(yaml, '"auth..x"')}: [path_syntax] auth.from_test_kit in step "caps": invalid path "auth..x": empty segment. Paths look like "a.b[0].c" or "items[*].id". (write the path as dotted keys with [n] indexes or [*], e.g. "adcp.major_versions" or "products[0].product_id")`,
    ]);
  });
});

describe('sample_request against the request schema', () => {
  const step = (request: string, extra = '') =>
    sb(`
      - id: gov
        task: check_governance
${extra}        sample_request:
${request}`);

  it('a wrong type is an error at the field, an unknown field (closed schema) at its key', () => {
    const yaml = step(`          plan_id: 42
          caller: "https://buyer.example"
          plna_note: x
`);
    const result = load(yaml);
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      `${FILE}:${at(yaml, '42')}: [sample_request_schema] sample_request of step "gov" does not match governance/check-governance-request.json: plan_id must be string (fix the field (the agent would be graded on a request AdCP does not define); a payload malformed on purpose takes expect_error: true (negative_path: schema_invalid), or sample_request_skip_schema: true)`,
      `${FILE}:${at(yaml, 'plna_note')}: [sample_request_schema] sample_request of step "gov" does not match governance/check-governance-request.json: plna_note is not a field of this request (fix the field (the agent would be graded on a request AdCP does not define); a payload malformed on purpose takes expect_error: true (negative_path: schema_invalid), or sample_request_skip_schema: true)`,
    ]);
  });

  it("a corpus storyboard: not checked against its own release's schemas (the corpus's build checked it), a warning against another release's", () => {
    const bad = step('          plan_id: 42\n          caller: "https://buyer.example"\n');
    const inCorpus = (options: LoadOptions = {}) => where(bad, options, path.join(corpusRoot, 'protocols', 'x.yaml'));
    // The 3.0.6 corpus and the schemas its SDK ships for it (their manifest's adcp_version: 3.0.6).
    expect(adcpKnowledge({ corpusRoot }).schemas?.version).toBe('3.0.6');
    expect(inCorpus()).toEqual([]);
    // A storyboard of the tree written for another release than the schemas': checked, a warning.
    expect(inCorpus({ formatVersion: '3.0.5' })).toEqual([`w:sample_request_schema@${at(bad, '42')}`]);
    // Your own storyboard, against the same schemas: an error, as ever.
    expect(where(bad)).toEqual([`sample_request_schema@${at(bad, '42')}`]);
  });

  it('a missing required field is reported at the request; an idempotency_key left out is not (the runner adds one)', () => {
    const products = sb(`
      - id: products
        task: get_products
        sample_request:
          brief: "outdoor"
`);
    expect(where(products)).toEqual([`sample_request_schema@${at(products, 'brief')}`]);
    expect(load(products).diagnostics[0]!.message).toMatch(/the request lacks the required field "buying_mode"/);
    expect(
      where(
        sb(`
      - id: plan
        task: sync_plans
        sample_request:
          plans: []
`),
      ).filter((r) => r.includes('idempotency')),
    ).toEqual([]);
  });

  it('placeholders match anything', () => {
    const yaml = step(
      `          plan_id: "$context.plan"
          caller: "{{prior_step.setup.url}}"
          purchase_type: "$test_kit.purchase"
          governance_context: "$generate:uuid_v4"
`,
      '        context_outputs: []\n',
    );
    expect(where(yaml, { strictKeys: true }).filter((r) => r.startsWith('sample_request_schema'))).toEqual([]);
  });

  it('a failed oneOf is reported once, at its field, without the errors of each branch; not when a placeholder is below it', () => {
    const update = (account: string) =>
      sb(
        `
      - id: u
        task: update_media_buy
        sample_request:
          media_buy_id: mb
          account: ${account}
          paused: "yes"
`,
        'context: { acct: a }\n',
      );
    const broken = update('{ brand: 1 }');
    expect(where(broken)).toEqual([
      `sample_request_schema@${at(broken, 'brand: 1')}`,
      `sample_request_schema@${at(broken, '"yes"')}`,
    ]);
    expect(load(broken).diagnostics.map((d) => d.message.replace(/.*json: /, ''))).toEqual([
      'account matches none of the shapes the schema allows here (oneOf)',
      'paused must be boolean',
    ]);
    const wild = update('{ account_id: "$context.acct" }');
    expect(where(wild)).toEqual([`sample_request_schema@${at(wild, '"yes"')}`]);
  });

  it('honours expect_error / negative_path and sample_request_skip_schema, and is a warning with strictKeys: false', () => {
    const bad = '          plan_id: 42\n          caller: "https://buyer.example"\n';
    expect(where(step(bad, '        expect_error: true\n'))).toEqual([]);
    expect(where(step(bad, '        expect_error: true\n        negative_path: schema_invalid\n'))).toEqual([]);
    expect(where(step(bad, '        sample_request_skip_schema: true\n'))).toEqual([]);
    expect(where(step(bad, '        expect_error: true\n        negative_path: payload_well_formed\n'))).toEqual([
      `sample_request_schema@${at(step(bad, '        expect_error: true\n        negative_path: payload_well_formed\n'), '42')}`,
    ]);
    expect(
      load(step(bad, '        expect_error: true\n        negative_path: payload_well_formed\n')).diagnostics[0]!.hint,
    ).toMatch(/negative_path: payload_well_formed/);
    expect(where(step(bad), { strictKeys: false })).toEqual([`w:sample_request_schema@${at(step(bad), '42')}`]);
  });
});

describe('the catalog', () => {
  it('lists each new rule', () => {
    for (const rule of [
      'misspelled_task',
      'unknown_task',
      'unknown_context_reference',
      'path_syntax',
      'sample_request_schema',
    ]) {
      expect(Object.hasOwn(STORYBOARD_RULES, rule), rule).toBe(true);
    }
  });
});
