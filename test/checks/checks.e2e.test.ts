/**
 * Every check, against the real fixture agent over MCP: passing on the
 * conformant endpoint, failing on an endpoint that misbehaves in exactly the
 * way the check exists to catch — with the runner-output-contract fields filled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { runInline, storyboard } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

const capabilities = (validation: string) =>
  storyboard(`- id: caps
  title: Capabilities
  task: get_adcp_capabilities
  sample_request:
    context:
      correlation_id: "inline--caps"
  validations:
${validation.replace(/^/gm, '    ')}`);

function expectFailureRecord(v: any) {
  // runner-output-contract.yaml > validation_result.required_on_failure
  for (const field of ['request', 'response', 'json_pointer', 'expected', 'actual', 'schema_id', 'schema_url'])
    expect(v).toHaveProperty(field);
  expect(v.request).toMatchObject({ transport: 'mcp', operation: expect.any(String), payload: expect.anything() });
  expect(v.response).toMatchObject({ transport: 'mcp' });
  expect(v.description).toEqual(expect.any(String));
  expect(v.source).toMatchObject({ line: expect.any(Number), column: expect.any(Number) });
}

describe('field_present', () => {
  const yaml = capabilities(`- check: field_present
  path: context
  description: Response echoes back the context object`);

  it('passes when the agent echoes context', async () => {
    const { caps } = await runInline(yaml, agent.url);
    expect(caps!.status).toBe('passed');
    expect(caps!.result.validations[0]).toMatchObject({
      check: 'field_present',
      passed: true,
      description: 'Response echoes back the context object',
    });
    expect(caps!.result.extraction.path).toBe('structured_content');
  });

  it('fails when the agent drops the context echo', async () => {
    const { caps } = await runInline(yaml, agent.urlFor(['drop_context']));
    expect(caps!.status).toBe('failed');
    const v = caps!.result.validations[0]!;
    expectFailureRecord(v);
    expect(v).toMatchObject({
      passed: false,
      json_pointer: '/context',
      expected: 'context',
      actual: null,
      schema_id: null,
      schema_url: null,
    });
  });
});

describe('field_value', () => {
  const yaml = capabilities(`- check: field_value
  path: context.correlation_id
  value: "inline--caps"
  description: Context correlation_id returned unchanged`);

  it('passes on the verbatim echo, also when only text content carries the payload', async () => {
    expect((await runInline(yaml, agent.url)).caps!.status).toBe('passed');
    const text = (await runInline(yaml, agent.urlFor(['text_only']))).caps!;
    expect(text.status).toBe('passed');
    expect(text.result.extraction.path).toBe('text_fallback');
  });

  it('fails on a mutated value, with pointer, expected and actual', async () => {
    const { caps } = await runInline(yaml, agent.urlFor(['wrong_value']));
    const v = caps!.result.validations[0]!;
    expectFailureRecord(v);
    expect(v).toMatchObject({
      passed: false,
      json_pointer: '/context/correlation_id',
      expected: 'inline--caps',
      actual: 'inline--caps-mutated',
    });
  });

  it('accepts allowed_values', async () => {
    const yaml2 = capabilities(`- check: field_value
  path: context.correlation_id
  allowed_values: ["other", "inline--caps"]`);
    expect((await runInline(yaml2, agent.url)).caps!.status).toBe('passed');
    expect((await runInline(yaml2, agent.urlFor(['wrong_value']))).caps!.result.validations[0]).toMatchObject({
      passed: false,
      expected: ['other', 'inline--caps'],
    });
  });
});

describe('field_value_or_absent', () => {
  const yaml = capabilities(`- check: field_value_or_absent
  path: context.correlation_id
  value: "inline--caps"
  description: May be omitted, must not be wrong`);

  it('passes when present and equal', async () => {
    expect((await runInline(yaml, agent.url)).caps!.status).toBe('passed');
  });

  it('passes when absent (the step still fails: dropping the echo breaks the context.echo invariant)', async () => {
    const { caps } = await runInline(yaml, agent.urlFor(['drop_context']));
    expect(caps!.result.validations[0]).toMatchObject({ check: 'field_value_or_absent', passed: true });
    expect(caps!.result.validations.find((v) => v.check === 'invariant' && !v.passed)).toMatchObject({
      description: expect.stringMatching(/^context\.echo/),
    });
  });

  it('fails when present with a wrong value', async () => {
    const { caps } = await runInline(yaml, agent.urlFor(['wrong_value']));
    const v = caps!.result.validations[0]!;
    expectFailureRecord(v);
    expect(v).toMatchObject({
      passed: false,
      json_pointer: '/context/correlation_id',
      expected: 'inline--caps',
      actual: 'inline--caps-mutated',
    });
  });
});

describe('response_schema', () => {
  const yaml = storyboard(`- id: products
  title: Products
  task: get_products
  sample_request:
    buying_mode: brief
    brief: "display"
  validations:
    - check: response_schema
      description: Response matches get-products-response.json`);

  it('passes against the AdCP schema, naming the schema applied', async () => {
    const { products } = await runInline(yaml, agent.url);
    expect(products!.status).toBe('passed');
    expect(products!.result.validations[0]).toMatchObject({
      passed: true,
      schema_id: '/schemas/3.0.6/media-buy/get-products-response.json',
      schema_url: 'https://adcontextprotocol.org/schemas/3.0.6/media-buy/get-products-response.json',
    });
  });

  it('fails on a schema-invalid body with ajv errors as actual', async () => {
    const { products } = await runInline(yaml, agent.urlFor(['schema_invalid']));
    const v = products!.result.validations[0]!;
    expectFailureRecord(v);
    expect(v).toMatchObject({
      passed: false,
      expected: '/schemas/3.0.6/media-buy/get-products-response.json',
      schema_id: '/schemas/3.0.6/media-buy/get-products-response.json',
    });
    expect(v.actual).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          instance_path: expect.any(String),
          schema_path: expect.any(String),
          keyword: expect.any(String),
          message: expect.any(String),
        }),
      ]),
    );
    expect(v.json_pointer).toBe((v.actual as any[])[0].instance_path);
  });

  it('uses the step response_schema_ref when given', async () => {
    const yaml2 = capabilities(`- check: response_schema`).replace(
      /^(\s+)task: get_adcp_capabilities$/m,
      '$1task: get_adcp_capabilities\n$1response_schema_ref: "protocol/get-adcp-capabilities-response.json"',
    );
    const { caps } = await runInline(yaml2, agent.url);
    expect(caps!.result.validations[0]).toMatchObject({
      passed: true,
      schema_id: '/schemas/3.0.6/protocol/get-adcp-capabilities-response.json',
    });
  });
});

describe('error_code', () => {
  const yaml = storyboard(`- id: bad_request
  title: Rejects the request
  task: get_products
  expect_error: true
  sample_request:
    buying_mode: brief
    brief: "display"
    context:
      correlation_id: "inline--bad"
  validations:
    - check: error_code
      allowed_values: ["INVALID_REQUEST", "VALIDATION_ERROR"]
      description: Agent rejects with a request error`);

  it.each([
    ['error_response', '/adcp_error/code', 'error', /structuredContent/],
    ['error_text_only', '/adcp_error/code', 'error', /content\[\]\.text/],
    ['error_errors_array', '/errors/0/code', 'structured_content', /^/],
    ['error_jsonrpc', '/adcp_error/code', 'error', /JSON-RPC/],
  ])('finds the code where %s puts it', async (behaviour, pointer, path, note) => {
    const { bad_request } = await runInline(yaml, agent.urlFor([behaviour]));
    expect(bad_request!.status, JSON.stringify(bad_request!.result, null, 1)).toBe('passed');
    expect(bad_request!.result.validations[0]).toMatchObject({ passed: true, json_pointer: pointer });
    expect(bad_request!.result.extraction.path).toBe(path);
    expect(bad_request!.result.extraction.note ?? '').toMatch(note);
  });

  it('fails when the agent answers with success', async () => {
    const { bad_request } = await runInline(yaml, agent.url);
    const v = bad_request!.result.validations[0]!;
    expectFailureRecord(v);
    expect(v).toMatchObject({
      passed: false,
      json_pointer: null,
      expected: ['INVALID_REQUEST', 'VALIDATION_ERROR'],
      actual: null,
    });
  });

  it('fails on a different code, naming it', async () => {
    const wrong = yaml.replace('["INVALID_REQUEST", "VALIDATION_ERROR"]', '["PRODUCT_NOT_FOUND"]');
    const v = (await runInline(wrong, agent.urlFor(['error_response']))).bad_request!.result.validations[0]!;
    expectFailureRecord(v);
    expect(v).toMatchObject({
      passed: false,
      expected: ['PRODUCT_NOT_FOUND'],
      actual: 'INVALID_REQUEST',
      json_pointer: '/adcp_error/code',
    });
  });

  it('an unexpected error response fails a success step even without an error_code check', async () => {
    const success = storyboard(`- id: products
  task: get_products
  sample_request: { buying_mode: brief, brief: "display" }
  validations:
    - check: field_present
      path: products`);
    const { products } = await runInline(success, agent.urlFor(['error_response']));
    expect(products!.status).toBe('failed');
    expect(products!.result.error).toMatch(/the agent returned an error INVALID_REQUEST/);
    expect(products!.result.extraction.path).toBe('error');
  });
});
