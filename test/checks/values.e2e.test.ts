/**
 * How the value checks read JSON, on values a real agent sent back: the
 * fixture agent echoes the request `context` verbatim, so the values a check
 * compares are exactly the ones this test put on the wire.
 *
 * - equality is type-strict (1 ≠ "1", true ≠ "true"), at any depth;
 * - `field_present`: JSON null is absent; 0, false and "" are present.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import type { ValidationResult } from '../../src/model/records.js';
import { runInline, storyboard } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

const ECHOED = {
  correlation_id: 'values',
  one: 1,
  yes: true,
  nested: { one: 1 },
  list: [1, 2],
  nothing: null,
  zero: 0,
  no: false,
  empty: '',
};

/** One get_adcp_capabilities step that sends ECHOED as its context and runs `validations` (YAML) on the echo. */
async function gradeEcho(validations: string): Promise<ValidationResult[]> {
  const yaml = storyboard(`- id: echo
  task: get_adcp_capabilities
  sample_request:
    context: ${JSON.stringify(ECHOED)}
  validations:
${validations.replace(/^/gm, '    ')}`);
  const { echo } = await runInline(yaml, agent.url);
  // The echo is verbatim: what is graded below is what was sent.
  expect((echo!.result.request!.payload as { context: unknown }).context).toEqual(ECHOED);
  return echo!.result.validations.filter((v) => v.check !== 'invariant');
}

describe('equality is JSON equality: deep and type-strict', () => {
  it('field_value: a number never equals its string, a boolean never equals "true", also nested', async () => {
    const graded = await gradeEcho(`- { check: field_value, path: context.one, value: 1 }
- { check: field_value, path: context.one, value: "1" }
- { check: field_value, path: context.yes, value: "true" }
- { check: field_value, path: context.nested, value: { one: 1 } }
- { check: field_value, path: context.nested, value: { one: "1" } }
- { check: field_value, path: context.list, value: [1, 2] }
- { check: field_value, path: context.list, value: ["1", "2"] }`);
    expect(graded.map((v) => v.passed)).toEqual([true, false, false, true, false, true, false]);
    // A pass carries no failure fields.
    expect(graded[0]).toEqual({
      check: 'field_value',
      description: 'field_value',
      passed: true,
      json_pointer: '/context/one',
      schema_id: null,
      schema_url: null,
      source: expect.any(Object),
    });
    expect(graded[1]).toMatchObject({
      json_pointer: '/context/one',
      expected: '1',
      actual: 1,
      error: '"context.one" does not have the expected value',
    });
    expect(graded[4]).toMatchObject({ json_pointer: '/context/nested', expected: { one: '1' }, actual: { one: 1 } });
  });

  it('allowed_values and field_value_or_absent compare the same way; absent is absent', async () => {
    const graded = await gradeEcho(`- { check: field_value, path: context.one, allowed_values: ["1", "2"] }
- { check: field_value, path: context.one, allowed_values: ["1", 1] }
- { check: field_value_or_absent, path: context.one, value: "1" }
- { check: field_value_or_absent, path: context.one, allowed_values: ["1"] }
- { check: field_value_or_absent, path: context.one, value: 1 }
- { check: field_value_or_absent, path: context.one, allowed_values: [2, 1] }
- { check: field_value_or_absent, path: context.never_sent, value: "1" }
- { check: field_value, path: context.never_sent, value: "1" }`);
    expect(graded.map((v) => v.passed)).toEqual([false, true, false, false, true, true, true, false]);
    for (const pass of [graded[4], graded[5], graded[6]])
      expect(Object.keys(pass!).sort()).toEqual([
        'check',
        'description',
        'json_pointer',
        'passed',
        'schema_id',
        'schema_url',
        'source',
      ]);
    expect(graded[7]).toMatchObject({
      json_pointer: '/context/never_sent',
      expected: '1',
      actual: null,
      error: '"context.never_sent" is missing from the response',
    });
    expect(graded[0]).toMatchObject({
      expected: ['1', '2'],
      actual: 1,
      error: '"context.one" is not one of the allowed values',
    });
    expect(graded[2]).toMatchObject({ json_pointer: '/context/one', expected: '1', actual: 1 });
  });
});

describe('field_present', () => {
  it('JSON null counts as absent; 0, false and the empty string are present', async () => {
    const graded = await gradeEcho(`- { check: field_present, path: context.nothing }
- { check: field_present, path: context.zero }
- { check: field_present, path: context.no }
- { check: field_present, path: context.empty }
- { check: field_present, path: context.never_sent }`);
    expect(graded.map((v) => v.passed)).toEqual([false, true, true, true, false]);
    expect(graded[0]).toMatchObject({
      json_pointer: '/context/nothing',
      expected: 'context.nothing',
      actual: null,
      error: '"context.nothing" is missing from the response',
    });
    expect(graded[4]).toMatchObject({ json_pointer: '/context/never_sent', actual: null });
  });
});
