/**
 * Edge cases of the pure checks that no conformant or misbehaving fixture
 * endpoint produces, on hand-made exchanges: where else an AdCP error code may
 * sit, an empty code or header value, URL normalisation of
 * `resource_equals_agent_url`, and `response_schema` without a schema to apply.
 */
import { describe, expect, it } from 'vitest';
import { checks, type CheckInput, type CheckVerdict, type Exchange } from '../../src/checks/index.js';
import { findErrorCode } from '../../src/checks/error-code.js';
import { defaultSchemasDir } from '../../src/corpus.js';
import { schemaRegistryFor } from '../../src/schemas/registry.js';
import type { Validation } from '../../src/model/storyboard.js';

const loc = { line: 1, column: 1 };

function answered(data: unknown, response: Partial<NonNullable<Exchange['response']>> = {}): Exchange {
  return {
    request: { transport: 'mcp', operation: 'get_products', payload: {} },
    response: { transport: 'mcp', payload: {}, status: 200, ...response },
    extraction: { path: 'structured_content' },
    data,
  };
}

function grade(
  validation: Record<string, unknown> & { check: string },
  exchange: Exchange,
  more: Partial<CheckInput> = {},
): CheckVerdict {
  return checks[validation.check]!({
    validation: { loc, ...validation } as Validation,
    step: { id: 's', task: 'get_products', validations: [], loc },
    task: 'get_products',
    exchange,
    ...more,
  });
}

describe('error_code: where the code is found', () => {
  it.each([
    [{ errors: [{ code: 'A' }] }, '/errors/0/code', 'errors[0].code'],
    [{ payload: { errors: [{ code: 'A' }] } }, '/payload/errors/0/code', 'payload.errors[0].code'],
    [{ payload: { adcp_error: { code: 'A' } } }, '/payload/adcp_error/code', 'payload.adcp_error.code'],
  ])('%j: at %s', (data, pointer, location) => {
    expect(findErrorCode(answered(data))).toEqual({ code: 'A', pointer, location });
    expect(grade({ check: 'error_code', value: 'A' }, answered(data))).toEqual({ passed: true, json_pointer: pointer });
    expect(grade({ check: 'error_code', value: 'B' }, answered(data))).toEqual({
      passed: false,
      json_pointer: pointer,
      expected: 'B',
      actual: 'A',
      error: `error code "A" (at ${location}) is not the one expected`,
    });
  });

  it('an empty or non-string code is no code: the next location is read, else none is found', () => {
    expect(findErrorCode(answered({ adcp_error: { code: '' }, errors: [{ code: 'REAL' }] }))).toMatchObject({
      code: 'REAL',
      pointer: '/errors/0/code',
    });
    expect(findErrorCode(answered({ adcp_error: { code: 42 } }))).toBeUndefined();
    expect(findErrorCode(answered({ adcp_error: 'CODE' }))).toBeUndefined();
    expect(findErrorCode(answered({ adcp_error: null, errors: null, payload: null }))).toBeUndefined();
    expect(grade({ check: 'error_code', allowed_values: ['X'] }, answered({ adcp_error: { code: '' } }))).toMatchObject(
      { passed: false, json_pointer: null, expected: ['X'], actual: null },
    );
  });

  it("comply_test_controller's own shape: success false with an upper-case code in error, on that task only", () => {
    const controller = (data: unknown): Exchange => ({
      ...answered(data),
      request: { transport: 'mcp', operation: 'comply_test_controller', payload: {} },
    });
    expect(findErrorCode(controller({ success: false, error: 'NOT_FOUND', error_detail: 'no such buy' }))).toEqual({
      code: 'NOT_FOUND',
      pointer: '/error',
      location: 'error (controller error)',
      message: 'no such buy',
    });
    for (const data of [
      { success: true, error: 'NOT_FOUND' },
      { error: 'NOT_FOUND' },
      { success: false, error: 'not found' },
      { success: false, error: 'xNOT_FOUND' },
      { success: false, error: 'NOT_FOUNDx' },
      { success: false, error: 'NO' },
    ]) {
      expect(findErrorCode(controller(data)), JSON.stringify(data)).toBeUndefined();
    }
    // Another task's `error` string is a field of its own, no AdCP code.
    expect(findErrorCode(answered({ success: false, error: 'NOT_FOUND' }))).toBeUndefined();
  });

  it('without value or allowed_values, any AdCP error code passes; no code still fails', () => {
    expect(grade({ check: 'error_code' }, answered({ adcp_error: { code: 'ANYTHING' } }))).toEqual({
      passed: true,
      json_pointer: '/adcp_error/code',
    });
    expect(grade({ check: 'error_code' }, answered({ products: [] }))).toMatchObject({
      passed: false,
      expected: 'an AdCP error code',
      actual: null,
    });
  });
});

describe('on_401_require_header', () => {
  it('an empty header value is no header', () => {
    expect(
      grade(
        { check: 'on_401_require_header', value: 'WWW-Authenticate' },
        answered({}, { status: 401, headers: { 'www-authenticate': '' } }),
      ),
    ).toMatchObject({ passed: false, expected: 'www-authenticate' });
  });

  it('a 401 without recorded headers fails; no answer at all is not a 401', () => {
    expect(grade({ check: 'on_401_require_header' }, answered({}, { status: 401 })).passed).toBe(false);
    expect(grade({ check: 'on_401_require_header' }, { ...answered({}), response: undefined }).passed).toBe(true);
  });

  it('http_status_in without allowed_values expects [] when nothing was observed', () => {
    expect(grade({ check: 'http_status_in' }, { ...answered({}), response: undefined })).toMatchObject({
      passed: false,
      expected: [],
      actual: null,
    });
  });
});

describe('resource_equals_agent_url', () => {
  const agentUrl = 'http://127.0.0.1:4000/mcp';

  it.each(['http://127.0.0.1:4000/mcp', 'HTTP://127.0.0.1:4000/mcp/', 'http://127.0.0.1:4000/mcp//'])(
    '%s names the agent',
    (resource) => {
      expect(grade({ check: 'resource_equals_agent_url' }, answered({ resource }), { agentUrl })).toEqual({
        passed: true,
        json_pointer: '/resource',
      });
    },
  );

  it('the default port is the same URL, another path or port is not', () => {
    expect(
      grade({ check: 'resource_equals_agent_url' }, answered({ resource: 'https://agent.example:443/mcp' }), {
        agentUrl: 'https://agent.example/mcp',
      }).passed,
    ).toBe(true);
    for (const resource of [
      'http://127.0.0.1:4000/other',
      'http://127.0.0.1:4001/mcp',
      'http://127.0.0.1:4000/mcp?x=1',
    ]) {
      expect(grade({ check: 'resource_equals_agent_url' }, answered({ resource }), { agentUrl }), resource).toEqual({
        passed: false,
        json_pointer: '/resource',
        expected: agentUrl,
        actual: resource,
        error: `"resource" ${resource} is not the agent URL ${agentUrl}`,
      });
    }
  });

  it('strings that are not URLs compare trimmed, without trailing slashes', () => {
    expect(
      grade({ check: 'resource_equals_agent_url' }, answered({ resource: ' not a url/ ' }), { agentUrl: 'not a url' })
        .passed,
    ).toBe(true);
    expect(
      grade({ check: 'resource_equals_agent_url' }, answered({ resource: 'not a url' }), { agentUrl: 'another' })
        .passed,
    ).toBe(false);
  });

  it('no resource string, or no agent URL to compare with, fails', () => {
    expect(grade({ check: 'resource_equals_agent_url' }, answered({ resource: 7 }), { agentUrl })).toEqual({
      passed: false,
      json_pointer: '/resource',
      expected: agentUrl,
      actual: 7,
      error: 'the metadata has no "resource" string',
    });
    expect(grade({ check: 'resource_equals_agent_url' }, answered(undefined), { agentUrl })).toMatchObject({
      passed: false,
      actual: null,
    });
    expect(grade({ check: 'resource_equals_agent_url' }, answered({ resource: agentUrl })).passed).toBe(false);
  });
});

describe('response_schema without a schema to apply fails, saying why', () => {
  const schemas = schemaRegistryFor(defaultSchemasDir()!);
  const products = answered({ products: [] });

  it('no schema registry at all', () => {
    expect(grade({ check: 'response_schema' }, products)).toMatchObject({
      passed: false,
      json_pointer: null,
      expected: 'response schema for get_products',
      actual: { reason: 'no_schema_registry' },
      schema_id: null,
      schema_url: null,
    });
  });

  it('a task the manifest declares no response schema for', () => {
    const verdict = checks.response_schema!({
      validation: { check: 'response_schema', loc },
      step: { id: 's', task: 'no_such_task', validations: [], loc },
      task: 'no_such_task',
      exchange: products,
      schemas,
    });
    expect(verdict).toEqual({
      passed: false,
      json_pointer: null,
      expected: 'response schema for no_such_task',
      actual: { reason: 'no_schema_for_task', task: 'no_such_task' },
      schema_id: null,
      schema_url: null,
      error: 'no response schema is known for task "no_such_task": add response_schema_ref to the step',
    });
  });

  it('a response_schema_ref that names no schema: the presumed identity, never a pass', () => {
    const ref = 'media-buy/no-such-response.json';
    const verdict = checks.response_schema!({
      validation: { check: 'response_schema', loc },
      step: { id: 's', task: 'get_products', response_schema_ref: ref, validations: [], loc },
      task: 'get_products',
      exchange: products,
      schemas,
    });
    expect(verdict).toMatchObject({
      passed: false,
      json_pointer: null,
      actual: { reason: 'schema_not_found', ref },
      ...schemas.presumedIdentity(ref),
    });
    expect(verdict.schema_id).toMatch(/\/media-buy\/no-such-response\.json$/);
  });

  it('errors at the root of the response are reported at "/"', () => {
    const verdict = grade({ check: 'response_schema' }, answered('not an object'), { schemas });
    expect(verdict).toMatchObject({ passed: false, json_pointer: '' });
    expect(verdict.error).toMatch(/^\/ /);
  });
});

describe('field_absent / envelope_field_absent', () => {
  it('passes when the path does not resolve, or resolves to null; fails naming the value found', () => {
    expect(grade({ check: 'field_absent', path: 'gone' }, answered({ a: 1 }))).toEqual({
      passed: true,
      json_pointer: '/gone',
    });
    expect(grade({ check: 'field_absent', path: 'a' }, answered({ a: null }))).toEqual({
      passed: true,
      json_pointer: '/a',
    });
    expect(grade({ check: 'field_absent', path: 'a.b' }, answered({ a: { b: 0 } }))).toEqual({
      passed: false,
      json_pointer: '/a/b',
      expected: null,
      actual: 0,
      error: '"a.b" is present in the response, and must not be',
    });
  });

  it('envelope_field_absent reads the protocol envelope (the data when there is none) and says so', () => {
    const withEnvelope = { ...answered({ replayed: true }), envelope: { replayed: false } };
    expect(grade({ check: 'envelope_field_absent', path: 'replayed' }, withEnvelope)).toMatchObject({
      passed: false,
      actual: false,
      error: '"replayed" is present in the protocol envelope, and must not be',
    });
    expect(grade({ check: 'envelope_field_absent', path: 'replayed' }, answered({ replayed: true }))).toMatchObject({
      passed: false,
      actual: true,
    });
    expect(grade({ check: 'field_absent', path: 'replayed' }, withEnvelope)).toMatchObject({
      passed: false,
      actual: true,
    });
  });
});

describe('field_pattern / envelope_field_pattern', () => {
  it('passes an unanchored match; fails a non-match, a missing field and a non-string, each said', () => {
    const data = answered({ id: 'mb_123', n: 5, list: ['mb_1'] });
    expect(grade({ check: 'field_pattern', path: 'id', pattern: '\\d+' }, data)).toEqual({
      passed: true,
      json_pointer: '/id',
    });
    expect(grade({ check: 'field_pattern', path: 'id', pattern: '^x' }, data)).toEqual({
      passed: false,
      json_pointer: '/id',
      expected: { pattern: '^x' },
      actual: 'mb_123',
      error: '"id" does not match the pattern',
    });
    expect(grade({ check: 'field_pattern', path: 'nope', pattern: 'x' }, data)).toEqual({
      passed: false,
      json_pointer: '/nope',
      expected: { pattern: 'x' },
      actual: null,
      error: '"nope" is missing from the response',
    });
    expect(grade({ check: 'field_pattern', path: 'n', pattern: '5' }, data)).toMatchObject({
      passed: false,
      actual: 5,
      error: '"n" is a number, not a string',
    });
    expect(grade({ check: 'field_pattern', path: 'list', pattern: 'mb' }, data)).toMatchObject({
      passed: false,
      error: '"list" is an array, not a string',
    });
  });

  it('a pattern that is missing, empty, not a string or not a regular expression fails the validation, naming why', () => {
    const data = answered({ id: 'x' });
    for (const pattern of [undefined, '', 7]) {
      expect(grade({ check: 'field_pattern', path: 'id', pattern }, data)).toEqual({
        passed: false,
        json_pointer: '/id',
        expected: { pattern: typeof pattern === 'string' ? pattern : null },
        actual: null,
        error: 'the check needs a non-empty `pattern` (a JavaScript regular expression source)',
      });
    }
    expect(grade({ check: 'field_pattern', path: 'id', pattern: '(' }, data)).toMatchObject({
      passed: false,
      expected: { pattern: '(' },
      actual: null,
      error: expect.stringMatching(/^the check has a pattern that is not a valid JavaScript regular expression: .+/),
    });
  });

  it('envelope_field_pattern reads the protocol envelope and says so', () => {
    const exchange = { ...answered({ v: '3.1' }), envelope: { adcp_version: 'x' } };
    expect(grade({ check: 'envelope_field_pattern', path: 'adcp_version', pattern: '^x$' }, exchange)).toEqual({
      passed: true,
      json_pointer: '/adcp_version',
    });
    expect(grade({ check: 'envelope_field_pattern', path: 'v', pattern: '3' }, exchange)).toMatchObject({
      passed: false,
      error: '"v" is missing from the protocol envelope',
    });
    expect(grade({ check: 'envelope_field_pattern', path: 'v', pattern: '^3' }, answered({ v: '3.1' }))).toMatchObject({
      passed: true,
    });
  });
});

describe('field_contains', () => {
  const data = answered({
    name: 'x',
    items: [
      { id: 'a', tags: ['t1', 't2'] },
      { id: 'b', tags: [] },
    ],
  });

  it('passes on any value a wildcard path resolves to, pointing at it', () => {
    expect(grade({ check: 'field_contains', path: 'items[*].id', value: 'b' }, data)).toEqual({
      passed: true,
      json_pointer: '/items/1/id',
    });
    expect(grade({ check: 'field_contains', path: 'name', value: 'x' }, data)).toEqual({
      passed: true,
      json_pointer: '/name',
    });
  });

  it('fails with every value resolved as actual, and says whether the path reached anything', () => {
    expect(grade({ check: 'field_contains', path: 'items[*].id', value: 'c' }, data)).toMatchObject({
      passed: false,
      expected: 'c',
      actual: ['a', 'b'],
      error: 'no value at "items[*].id" contains the expected value',
    });
    expect(grade({ check: 'field_contains', path: 'name', value: 'y' }, data)).toMatchObject({
      passed: false,
      actual: ['x'],
    });
    expect(grade({ check: 'field_contains', path: 'nothing[*].id', value: 'a' }, data)).toMatchObject({
      passed: false,
      actual: [],
      error: '"nothing[*].id" resolves to nothing in the response',
    });
  });

  it('allowed_values: any one of them matches; an empty list means value', () => {
    expect(grade({ check: 'field_contains', path: 'items[*].id', allowed_values: ['z', 'a'] }, data)).toEqual({
      passed: true,
      json_pointer: '/items/0/id',
    });
    expect(grade({ check: 'field_contains', path: 'items[*].id', allowed_values: ['y', 'z'] }, data)).toMatchObject({
      passed: false,
      expected: ['y', 'z'],
      error: 'no value at "items[*].id" matches any of the allowed values',
    });
    expect(grade({ check: 'field_contains', path: 'items[*].id', allowed_values: [], value: 'b' }, data)).toMatchObject(
      { passed: true },
    );
    expect(grade({ check: 'field_contains', path: 'items[*].id', allowed_values: [], value: 'q' }, data)).toMatchObject(
      { passed: false, expected: 'q' },
    );
  });

  it('an object expectation is a deep subset: its keys present and matching, more keys allowed', () => {
    const contains = (value: unknown) => grade({ check: 'field_contains', path: 'items[*]', value }, data).passed;
    expect(contains({ id: 'a' })).toBe(true);
    expect(contains({ id: 'a', tags: ['t2'] })).toBe(true);
    expect(contains({ id: 'a', tags: ['t3'] })).toBe(false);
    expect(contains({ id: 'a', colour: 'red' })).toBe(false);
    expect(contains({ id: 'b', tags: [] })).toBe(true);
    // Own keys only: what every object inherits is not "listed".
    expect(contains({ toString: Object.prototype.toString })).toBe(false);
    expect(grade({ check: 'field_contains', path: 'name', value: { id: 'x' } }, data).passed).toBe(false);
    expect(grade({ check: 'field_contains', path: 'items', value: { id: 'a' } }, data).passed).toBe(false);
    expect(grade({ check: 'field_contains', path: 'n', value: { id: 'a' } }, answered({ n: null })).passed).toBe(false);
  });

  it('an array expectation: each listed item matches a distinct item, in any order; [] only an empty array', () => {
    const contains = (path: string, value: unknown) => grade({ check: 'field_contains', path, value }, data).passed;
    expect(contains('items[0].tags', ['t2', 't1'])).toBe(true);
    expect(contains('items[0].tags', ['t2', 't2'])).toBe(false);
    expect(contains('items[0].tags', ['t1', 't9'])).toBe(false);
    expect(contains('items[0].tags', [])).toBe(false);
    expect(contains('items[1].tags', [])).toBe(true);
    expect(contains('items', [{ id: 'b' }, { id: 'a' }])).toBe(true);
    expect(contains('items', [{ id: 'b' }, { id: 'b' }])).toBe(false);
    expect(contains('name', ['x'])).toBe(false);
    expect(contains('items[0]', ['a'])).toBe(false);
  });
});

describe('field_less_than / field_equals_context', () => {
  const ctx = (entries: Record<string, unknown>) => ({ context: new Map(Object.entries(entries)) });

  it('field_less_than: strictly below a literal or a captured value', () => {
    const data = answered({ n: 5 });
    expect(grade({ check: 'field_less_than', path: 'n', value: 6 }, data)).toEqual({
      passed: true,
      json_pointer: '/n',
    });
    expect(grade({ check: 'field_less_than', path: 'n', value: 5 }, data)).toEqual({
      passed: false,
      json_pointer: '/n',
      expected: 5,
      actual: 5,
      error: '"n" is 5, not < 5',
    });
    expect(grade({ check: 'field_less_than', path: 'n', context_key: 'max' }, data, ctx({ max: 10 }))).toMatchObject({
      passed: true,
    });
    expect(grade({ check: 'field_less_than', path: 'n', context_key: 'max' }, data, ctx({ max: 4 }))).toMatchObject({
      passed: false,
      expected: 4,
    });
  });

  it('field_less_than: a comparand or a field that is not a finite number, or a missing field, fails naming it', () => {
    expect(grade({ check: 'field_less_than', path: 'n', value: 'x' }, answered({ n: 1 }))).toMatchObject({
      passed: false,
      expected: 'x',
      error: 'the comparand "x" is not a finite number',
    });
    expect(grade({ check: 'field_less_than', path: 'n' }, answered({ n: 1 }))).toMatchObject({
      passed: false,
      expected: null,
      error: 'the comparand undefined is not a finite number',
    });
    expect(grade({ check: 'field_less_than', path: 'n', value: Infinity }, answered({ n: 1 }))).toMatchObject({
      passed: false,
      error: 'the comparand null is not a finite number',
    });
    expect(grade({ check: 'field_less_than', path: 'm', value: 3 }, answered({ n: 1 }))).toMatchObject({
      passed: false,
      actual: null,
      error: '"m" is missing from the response',
    });
    for (const n of ['1', Number.NaN, Infinity])
      expect(grade({ check: 'field_less_than', path: 'n', value: 3 }, answered({ n }))).toMatchObject({
        passed: false,
        error: '"n" is not a finite number',
      });
  });

  it('a context_key the context does not hold passes with the context_key_absent observation (both kinds)', () => {
    for (const check of ['field_less_than', 'field_equals_context']) {
      for (const more of [{}, ctx({}), ctx({ k: undefined })])
        expect(grade({ check, path: 'n', context_key: 'k', value: 1 }, answered({ n: 9 }), more)).toEqual({
          passed: true,
          json_pointer: null,
          observations: [
            'context_key_absent: "k" is not in the run\'s context (the step that captures it was skipped or did not run)',
          ],
        });
    }
  });

  it('field_equals_context: deep-equal to the captured value, never to a literal value', () => {
    const data = answered({ buy: { id: 'mb_1', tags: ['a'] } });
    expect(
      grade({ check: 'field_equals_context', path: 'buy.id', context_key: 'id' }, data, ctx({ id: 'mb_1' })),
    ).toEqual({ passed: true, json_pointer: '/buy/id' });
    expect(
      grade(
        { check: 'field_equals_context', path: 'buy', context_key: 'b' },
        data,
        ctx({ b: { tags: ['a'], id: 'mb_1' } }),
      ),
    ).toMatchObject({ passed: true });
    expect(
      grade({ check: 'field_equals_context', path: 'buy.id', context_key: 'id' }, data, ctx({ id: 'mb_2' })),
    ).toEqual({
      passed: false,
      json_pointer: '/buy/id',
      expected: 'mb_2',
      actual: 'mb_1',
      error: '"buy.id" differs from the value captured as "id"',
    });
    expect(
      grade({ check: 'field_equals_context', path: 'gone', context_key: 'id' }, data, ctx({ id: 'mb_1' })),
    ).toEqual({
      passed: false,
      json_pointer: '/gone',
      expected: 'mb_1',
      actual: null,
      error: '"gone" is missing from the response',
    });
    // Without a context_key there is nothing captured to compare with: a literal value is not a comparand here.
    expect(grade({ check: 'field_equals_context', path: 'buy.id', value: 'mb_1' }, data)).toMatchObject({
      passed: false,
      expected: undefined,
    });
  });
});

describe('the field checks without a path: the whole answer is the field', () => {
  it('each reads the root of the data', () => {
    expect(grade({ check: 'field_absent' }, answered({ a: 1 }))).toMatchObject({
      passed: false,
      json_pointer: '',
      error: '"" is present in the response, and must not be',
    });
    expect(grade({ check: 'field_pattern', pattern: '^ok$' }, answered('ok'))).toEqual({
      passed: true,
      json_pointer: '',
    });
    expect(grade({ check: 'field_contains', value: 'ok' }, answered('ok'))).toEqual({ passed: true, json_pointer: '' });
    expect(grade({ check: 'field_less_than', value: 3 }, answered(2))).toEqual({ passed: true, json_pointer: '' });
    expect(
      grade({ check: 'field_equals_context', context_key: 'k' }, answered('v'), { context: new Map([['k', 'v']]) }),
    ).toEqual({ passed: true, json_pointer: '' });
  });
});

describe('field_contains: null and array-shaped objects', () => {
  it('a null expectation matches a null value; an object expectation never matches an array by its indexes', () => {
    expect(grade({ check: 'field_contains', path: 'n', value: null }, answered({ n: null }))).toMatchObject({
      passed: true,
    });
    expect(grade({ check: 'field_contains', path: 'n', value: null }, answered({ n: 0 }))).toMatchObject({
      passed: false,
    });
    expect(
      grade({ check: 'field_contains', path: 'tags', value: { 0: 't1' } }, answered({ tags: ['t1'] })).passed,
    ).toBe(false);
  });
});
