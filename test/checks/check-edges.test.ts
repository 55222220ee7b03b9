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
