import { describe, expect, it } from 'vitest';
import {
  StoryboardLoadError,
  formatDiagnostic,
  loadStoryboard,
  loadStoryboardFile,
  unwrapLoadResult,
} from '../../src/storyboard/index.js';
import { STRICT_KEYS_ESCAPE } from '../../src/storyboard/unknown-keys.js';
import { load, rulesOf, storyboardYaml } from './helpers.js';

describe('positions', () => {
  const source = [
    '# a comment line',
    'id: positions', //                        2:1
    'title: Positions',
    'phases:',
    '  - id: first', //                         5:5
    '    steps:',
    '      - id: s1', //                        7:9
    '        task: get_products',
    '        validations:',
    '          - check: response_schema', //    10:13
    '          - { check: field_present, path: products }', // 11:15 (first key of a flow map)
    '  - title: Second',
    '    id: second', //                        phase starts at its first key: 12:5
    '    steps:',
    '      -   task: list_creatives', //        15:11
    '          id: s2',
  ].join('\n');

  it('points storyboard, phase, step and validation at their first key', () => {
    const result = loadStoryboard(source, 'positions.yaml');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const sb = result.storyboard;
    expect(sb.file).toBe('positions.yaml');
    expect(sb.loc).toEqual({ line: 2, column: 1 });
    expect(sb.phases[0]!.loc).toEqual({ line: 5, column: 5 });
    expect(sb.phases[0]!.steps[0]!.loc).toEqual({ line: 7, column: 9 });
    expect(sb.phases[0]!.steps[0]!.validations[0]!.loc).toEqual({ line: 10, column: 13 });
    expect(sb.phases[0]!.steps[0]!.validations[1]!.loc).toEqual({ line: 11, column: 15 });
    expect(sb.phases[1]!.loc).toEqual({ line: 12, column: 5 });
    expect(sb.phases[1]!.steps[0]!.loc).toEqual({ line: 15, column: 11 });
  });

  it('reports YAML syntax errors at the parser position', () => {
    const result = load('id: x\ntitle: [unclosed\nphases: []\n');
    expect(result.ok).toBe(false);
    expect(result.diagnostics[0]).toMatchObject({ rule: 'yaml_syntax', severity: 'error', line: 3, column: 1 });
  });

  it('reports a duplicate YAML key as a syntax error at the second key', () => {
    const result = load('id: x\ntitle: A\nid: y\nphases: []\n');
    expect(result.diagnostics[0]).toMatchObject({ rule: 'yaml_syntax', line: 3, column: 1 });
  });

  it('maps schema errors to the node they are about', () => {
    const result = load(
      storyboardYaml(`
  - id: p
    steps:
      - id: s1
        task: get_products
        stateful: "yes"
      - id: s2
        title: no task here
`),
    );
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map((d) => [d.rule, d.line, d.column, d.message])).toEqual([
      ['schema', 8, 19, 'phases[0].steps[0].stateful: must be a boolean'],
      ['schema', 9, 9, "phases[0].steps[1]: must have required property 'task'"],
    ]);
    expect(result.diagnostics[1]!.hint).toMatch(/^add `task:`/);
  });

  it('explains anyOf failures once, with did-you-mean for literals', () => {
    const result = load(
      storyboardYaml(`
  - id: p
    steps:
      - id: s1
        task: list_creatives
        auth: nome
      - id: s2
        task: list_creatives
        auth: { type: api_key, from_test_kit: 5 }
`),
    );
    expect(result.diagnostics.map((d) => `${d.line}:${d.column} ${d.message} (${d.hint})`)).toEqual([
      '8:15 phases[0].steps[0].auth: must be "none" or an object (did you mean "none"?)',
      expect.stringMatching(
        /^11:47 phases\[0\]\.steps\[1\]\.auth\.from_test_kit: must be a boolean or a string \(got number 5/,
      ),
    ]);
  });

  it('treats an empty file as a storyboard that is not an object', () => {
    expect(load('').diagnostics[0]).toMatchObject({
      rule: 'schema',
      line: 1,
      column: 1,
      message: 'storyboard: must be an object',
    });
  });
});

describe('normalisation', () => {
  const result = load(
    storyboardYaml(`
  - id: branch
    optional: true
    branch_set: { id: flag, semantics: any_of }
    steps:
      - id: sync
        task: sync_accounts
        stateful: true
        contributes: true
        x-vendor-note: kept
        context_outputs:
          - key: account_id
            path: accounts[0].account_id
      - id: list
        task: list_accounts
        stateful: true
        provides_state_for: sync
  - id: assert
    steps:
      - id: assert_flag
        task: assert_contribution
        validations:
          - check: any_of
            allowed_values: [flag]
  - id: synthesized
`),
  );

  it('produces plain JSON with the shorthands resolved', () => {
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [branch, assert, synthesized] = result.storyboard.phases;
    const [sync, list] = branch!.steps;
    expect(sync).toMatchObject({ contributes: true, contributes_to: 'flag', 'x-vendor-note': 'kept', validations: [] });
    expect(sync!.context_outputs).toEqual([{ key: 'account_id', name: 'account_id', path: 'accounts[0].account_id' }]);
    expect(list!.provides_state_for).toEqual(['sync']);
    expect(assert!.steps[0]!.validations[0]).toMatchObject({ check: 'any_of', allowed_values: ['flag'] });
    expect(synthesized!.steps).toEqual([]);
    expect(JSON.parse(JSON.stringify(result.storyboard))).toEqual(result.storyboard);
  });

  it('resolves YAML anchors and merge keys', () => {
    const r = load(
      storyboardYaml(`
  - id: p
    steps:
      - &base
        id: s1
        task: get_products
        stateful: false
      - <<: *base
        id: s2
`),
    );
    expect(r.ok).toBe(true);
    if (r.ok)
      expect(r.storyboard.phases[0]!.steps[1]).toMatchObject({ id: 's2', task: 'get_products', stateful: false });
  });
});

describe('unknown keys', () => {
  const misspelt = storyboardYaml(`
  - id: p
    steps:
      - id: x
        task: get_products
        sample_requst: { brief: coffee }
        validation:
          - check: response_schema
`);

  it('are load errors by default, at the key, with the key meant (a misspelt key would disable what it names)', () => {
    const result = load(misspelt);
    expect(result.ok).toBe(false);
    expect(result.diagnostics).toEqual([
      {
        severity: 'error',
        rule: 'unknown_key',
        message: 'unknown key "sample_requst" in step "x"',
        hint: `did you mean "sample_request"? (${STRICT_KEYS_ESCAPE})`,
        file: 'sample.yaml',
        line: 8,
        column: 9,
      },
      {
        severity: 'error',
        rule: 'unknown_key',
        message: 'unknown key "validation" in step "x"',
        hint: `did you mean "validations"? (${STRICT_KEYS_ESCAPE})`,
        file: 'sample.yaml',
        line: 9,
        column: 9,
      },
    ]);
    expect(() => unwrapLoadResult(result)).toThrow(
      /^sample\.yaml:8:9: \[unknown_key\] unknown key "sample_requst" in step "x" \(did you mean "sample_request"\?/,
    );
  });

  it('with strictKeys: false, warn "did you mean" at the misspelled key and keep it', () => {
    const result = load(misspelt, 'sample.yaml', { strictKeys: false });
    expect(result.ok).toBe(true);
    expect(
      result.diagnostics.map((d) => `${d.severity} ${d.rule} ${d.line}:${d.column} ${d.message} / ${d.hint}`),
    ).toEqual([
      'warning unknown_key 8:9 unknown key "sample_requst" in step "x" / did you mean "sample_request"?',
      'warning unknown_key 9:9 unknown key "validation" in step "x" / did you mean "validations"?',
    ]);
    if (result.ok)
      expect((result.storyboard.phases[0]!.steps[0]! as unknown as Record<string, unknown>).validation).toEqual([
        { check: 'response_schema' },
      ]);
  });

  it('recognises case, underscore and hyphen variants and nested levels', () => {
    const result = load(
      storyboardYaml(
        `
  - id: p
    Branch-Set: { id: f, semantics: any_of }
    steps:
      - id: x
        task: list_creatives
        auth: { type: api_key, from_testkit: true }
`,
        'Prerequisites:\n  test_kit: test-kits/acme-outdoor.yaml\n',
      ),
    );
    expect(
      result.diagnostics.map(
        (d) => `${d.rule} ${d.line}:${d.column} ${d.message} / ${d.hint?.replace(/ \(prefix .*$/, '')}`,
      ),
    ).toEqual([
      'unknown_key 3:1 unknown key "Prerequisites" in storyboard "sample" / did you mean "prerequisites"?',
      'unknown_key 7:5 unknown key "Branch-Set" in phase "p" / did you mean "branch_set"?',
      'unknown_key 11:32 unknown key "from_testkit" in auth of step "x" / did you mean "from_test_kit"?',
    ]);
  });

  it('an unrelated unknown key is an error too, unless strictKeys: false; annotations and open objects never are', () => {
    const source = storyboardYaml(
      `
  - id: p
    $comment: synthesized by the runner
    x-owner: team-a
    steps:
      - id: x
        task: get_products
        sample_request: { anything: true }
        vendor_extension: { anything: true }
`,
      'context: { mine: 1 }\n',
    );
    expect(load(source).diagnostics.map((d) => `${d.severity} ${d.line}:${d.column} ${d.message} / ${d.hint}`)).toEqual(
      [
        `error 12:9 unknown key "vendor_extension" in step "x" / the storyboard format has no such key here; ${STRICT_KEYS_ESCAPE}`,
      ],
    );
    expect(load(source, 'sample.yaml', { strictKeys: false })).toMatchObject({ ok: true, diagnostics: [] });
  });
});

describe('StoryboardLoadError', () => {
  it('formats file:line:col: [rule] message (hint), with the count of further errors', () => {
    const result = load(
      storyboardYaml(`
  - id: p
    steps:
      - id: s
        task: a
      - id: s
        task: b
  - id: p
`),
    );
    expect(rulesOf(result)).toEqual(['duplicate_step_id', 'duplicate_phase_id']);
    const error = (() => {
      try {
        unwrapLoadResult(result);
      } catch (e) {
        return e;
      }
    })() as StoryboardLoadError;
    expect(error).toBeInstanceOf(StoryboardLoadError);
    expect(error.name).toBe('StoryboardLoadError');
    expect(error.diagnostics).toHaveLength(2);
    expect(error.message.split('\n')[0]).toBe(
      'sample.yaml:8:9: [duplicate_step_id] step id "s" is already used in phase "p" at 6:9 (step ids must be unique within a phase; rename one of the steps) (+1 more error)',
    );
    expect(error.message.split('\n')[1]).toBe(`  ${formatDiagnostic(error.diagnostics[1]!)}`);
  });

  it('reports an unreadable file as a diagnostic', () => {
    const result = loadStoryboardFile('/nonexistent/dir/x.yaml');
    expect(result).toMatchObject({ ok: false, diagnostics: [{ rule: 'file_unreadable', line: 1, column: 1 }] });
  });
});

describe('schema messages', () => {
  it('names the alternatives when neither of two required properties is present', () => {
    const result = load(
      storyboardYaml(`
  - id: p
    steps:
      - id: s
        task: get_products
        context_outputs:
          - path: products[0].product_id
`),
    );
    expect(result.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`)).toEqual([
      "9:13 phases[0].steps[0].context_outputs[0]: must have required property 'name' or 'key'",
    ]);
  });
});
