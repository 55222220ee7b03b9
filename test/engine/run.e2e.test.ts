/**
 * The engine against the real fixture agent: captures and substitution across
 * steps, the failed-producer rule, credentials, and hostile agents that must
 * fail only their own step, within bounded time and size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { runInline, storyboard, TOKEN } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent({ hugeBytes: 5 * 1024 * 1024 });
});
afterAll(() => agent?.close());

const captureThenUse = storyboard(
  `- id: discover
  title: Find a product
  task: get_products
  sample_request:
    buying_mode: brief
    brief: "display"
  context_outputs:
    - name: product_id
      path: "products[0].product_id"
  validations:
    - check: field_present
      path: "products[0].product_id"`,
  `- id: by_context
  title: Ask for it by captured id
  task: get_products
  sample_request:
    buying_mode: wholesale
    filters:
      product_ids: ["$context.product_id"]
  validations:
    - check: field_value
      path: "products[0].product_id"
      value: "$context.product_id"`,
  `- id: by_prior_step
  title: Ask for it by prior step
  task: get_products
  sample_request:
    buying_mode: wholesale
    filters:
      product_ids: ["{{prior_step.discover.products[0].product_id}}"]
  validations:
    - check: field_present
      path: "products[0]"`,
);

describe('context and substitution', () => {
  it('captures a typed value and sends it to later steps', async () => {
    const r = await runInline(captureThenUse, agent.url);
    expect(r.discover!.status).toBe('passed');
    const sent = r.by_context!.result.request!.payload as any;
    expect(sent.filters.product_ids).toEqual([expect.stringMatching(/^prod_/)]);
    expect(JSON.stringify(r.by_context!.result.request)).not.toContain('$context');
    expect(r.by_prior_step!.status, JSON.stringify(r.by_prior_step!.result)).toBe('passed');
    expect((r.by_prior_step!.result.request!.payload as any).filters.product_ids).toEqual(sent.filters.product_ids);
  });

  it('a failed producer captures nothing: the consumer grades unresolved_substitution and nothing is sent', async () => {
    const r = await runInline(captureThenUse, agent.urlFor(['error_response@get_products']));
    expect(r.discover!.status).toBe('failed');
    for (const id of ['by_context', 'by_prior_step']) {
      expect(r[id]!.status).toBe('failed');
      expect(r[id]!.result.validations).toEqual([
        expect.objectContaining({ check: 'unresolved_substitution', passed: false, json_pointer: null, actual: null }),
      ]);
      expect(r[id]!.result.response).toBeUndefined();
    }
    expect(r.by_context!.result.validations[0]!.expected).toEqual(['$context.product_id']);
  });

  it('a capture path that does not resolve fails the capturing step (capture_path_not_resolvable)', async () => {
    const yaml = captureThenUse.replace('path: "products[0].product_id"\n', 'path: "products[0].no_such_field"\n');
    const r = await runInline(yaml, agent.url);
    expect(r.discover!.status).toBe('failed');
    expect(r.discover!.result.validations.at(-1)).toMatchObject({
      check: 'capture_path_not_resolvable',
      passed: false,
      expected: 'products[0].no_such_field',
      json_pointer: '/products/0/no_such_field',
    });
  });
});

describe('credentials', () => {
  const probe = storyboard(`- id: probe
  task: list_creatives
  sample_request: {}
  validations:
    - check: field_present
      path: creatives`);

  it('sends the configured token', async () => {
    expect((await runInline(probe, agent.url)).probe!.status).toBe('passed');
  });

  it('without credentials the protected task fails with the 401 recorded', async () => {
    const r = (await runInline(probe, agent.url, { authToken: null })).probe!;
    expect(r.status).toBe('failed');
    expect(r.result.response).toMatchObject({
      status: 401,
      headers: expect.objectContaining({ 'www-authenticate': expect.stringMatching(/Bearer/) }),
    });
    expect(r.result.extraction.path).toBe('error');
  });

  it('auth: none strips the token; from_test_kit uses the kit key', async () => {
    const none = storyboard(`- id: probe
  task: list_creatives
  auth: none
  expect_error: true
  validations:
    - check: error_code
      allowed_values: [AUTH_REQUIRED, AUTH_INVALID, UNAUTHORIZED]`);
    expect((await runInline(none, agent.url)).probe!.status).toBe('passed');
    const kit = storyboard(`- id: probe
  task: list_creatives
  auth: { type: api_key, from_test_kit: true }
  validations:
    - check: field_present
      path: creatives`);
    expect(
      (await runInline(kit, agent.url, { authToken: 'wrong', testKit: { auth: { api_key: 'demo-kit-v1' } } })).probe!
        .status,
    ).toBe('passed');
  });

  it('never puts the token in the record', async () => {
    const r = await runInline(probe, agent.urlFor(['error_response']));
    expect(JSON.stringify(r)).not.toContain(TOKEN);
  });
});

describe('hostile agents fail only their own step, bounded in time and size', () => {
  const twoSteps = (first: string) =>
    storyboard(
      `- id: hostile
  task: ${first}
  sample_request: { buying_mode: brief, brief: "x" }
  validations:
    - check: field_present
      path: products`,
      `- id: after
  task: get_adcp_capabilities
  validations:
    - check: field_present
      path: adcp`,
    );

  it('a hanging agent: the step fails after the timeout with the transport error, the next step still runs', async () => {
    const r = await runInline(twoSteps('get_products'), agent.urlFor(['hang@get_products']), { timeoutMs: 800 });
    expect(r.hostile!.status).toBe('failed');
    expect(r.hostile!.result.error).toMatch(/no answer within 800 ms/);
    expect(r.hostile!.result.validations).toEqual([]);
    expect(r.after!.status).toBe('passed');
  });

  it('an oversized answer: reading stops at maxResponseBytes', async () => {
    const r = await runInline(twoSteps('get_products'), agent.urlFor(['huge@get_products']), {
      maxResponseBytes: 1024 * 1024,
    });
    expect(r.hostile!.status).toBe('failed');
    expect(r.hostile!.result.error).toMatch(/exceeded 1048576 bytes/);
    expect(r.after!.status).toBe('passed');
  });

  it('a non-JSON answer is a transport error on that step', async () => {
    const r = await runInline(twoSteps('get_products'), agent.urlFor(['garbage@get_products']));
    expect(r.hostile!.status).toBe('failed');
    expect(r.hostile!.result.error).toBeTruthy();
    expect(r.after!.status).toBe('passed');
  });

  it('an answer that is not an MCP tool result fails that step with one line saying where and what', async () => {
    const r = await runInline(twoSteps('get_products'), agent.urlFor(['malformed_result@get_products']));
    expect(r.hostile!.status).toBe('failed');
    expect(r.hostile!.result.error).toBe(
      "the agent's answer does not have the shape the protocol requires (content: expected array, received string; structuredContent: expected record, received array; isError: expected boolean, received string)",
    );
    expect(r.after!.status).toBe('passed');
  });

  it("a result that breaks its tool's declared outputSchema: a transport error naming the field, the result recorded as sent", async () => {
    const r = await runInline(twoSteps('get_products'), agent.urlFor(['output_schema@get_products']));
    expect(r.hostile!.status).toBe('failed');
    expect(r.hostile!.result.error).toBe(
      "get_products's structuredContent does not match the outputSchema it declares in tools/list (data must have required property 'declared_but_never_sent'): an MCP client refuses the result",
    );
    expect(r.hostile!.result.validations).toEqual([]);
    expect(r.hostile!.result.response?.payload).toMatchObject({
      isError: false,
      structuredContent: { products: expect.any(Array) },
    });
    expect(r.after!.status).toBe('passed');
  });

  it("a declared outputSchema whose pattern backtracks without bound: that tool's step fails within the bound, the run goes on", async () => {
    // Unbounded, the first long string of the result would hold this process's one thread for good.
    const r = await runInline(twoSteps('get_products'), agent.urlFor(['backtracking_output_schema@get_products']));
    expect(r.hostile!.status).toBe('failed');
    expect(r.hostile!.result.error).toBe(
      "get_products's outputSchema in tools/list cannot be checked in bounded time (a result took over 2 s: a `pattern` there backtracks without bound): an MCP client cannot take its results",
    );
    expect(r.hostile!.result.response?.payload).toMatchObject({
      isError: false,
      structuredContent: { products: expect.any(Array) },
    });
    expect(r.after!.status).toBe('passed');
  });

  it('a step expecting an error does not pass on such a result: the agent sent no error', async () => {
    const yaml = storyboard(`- id: must_fail
  task: get_adcp_capabilities
  expect_error: true
  sample_request: {}`);
    const step = (await runInline(yaml, agent.urlFor(['output_schema@get_adcp_capabilities']))).must_fail!;
    expect(step.status).toBe('failed');
    expect(step.result.error).toMatch(/^get_adcp_capabilities's structuredContent does not match the outputSchema/);
    // An error result is not held to it: the same step passes on the tool's error answer.
    const error = await runInline(
      yaml,
      agent.urlFor(['output_schema@get_adcp_capabilities', 'error_response@get_adcp_capabilities']),
    );
    expect(error.must_fail!.status).toBe('passed');
  });

  it('an unreachable agent fails each step with the connection error', async () => {
    const r = await runInline(twoSteps('get_products'), 'http://127.0.0.1:9/mcp', { timeoutMs: 2000 });
    expect(r.hostile!.status).toBe('failed');
    expect(r.hostile!.result.error).toMatch(/ECONNREFUSED|fetch failed|connect/i);
    expect(r.after!.status).toBe('failed');
  });
});

describe('grading rules of the runner itself', () => {
  it('expect_error without an error_code check: passes on an error answer, fails on success', async () => {
    const yaml = storyboard(`- id: must_fail
  task: get_products
  expect_error: true
  sample_request: { buying_mode: brief, brief: "x" }
  validations:
    - check: field_value_or_absent
      path: context.correlation_id
      value: "none"`);
    expect((await runInline(yaml, agent.urlFor(['error_response']))).must_fail!.status).toBe('passed');
    const success = (await runInline(yaml, agent.url)).must_fail!;
    expect(success.status).toBe('failed');
    expect(success.result.validations.find((v) => v.check === 'expect_error')).toMatchObject({
      check: 'expect_error',
      passed: false,
      expected: 'error',
      actual: 'success',
      json_pointer: null,
    });
  });

  it('skip_if on a phase skips it as not_applicable when the test kit lacks the field', async () => {
    const yaml = [
      'id: gated',
      'title: Gated',
      'phases:',
      '  - id: api_key_path',
      '    title: API key',
      '    optional: true',
      '    skip_if: "!test_kit.auth.api_key"',
      '    steps:',
      '      - id: probe',
      '        task: list_creatives',
      '        auth: { type: api_key, from_test_kit: true }',
      '        validations:',
      '          - check: field_present',
      '            path: creatives',
      '',
    ].join('\n');
    const skipped = (await runInline(yaml, agent.url, { testKit: { auth: {} } })).probe!;
    expect(skipped.status).toBe('skipped');
    expect(skipped.result.skip).toEqual({
      reason: 'not_applicable',
      detail: 'phase "api_key_path" skipped: skip_if "!test_kit.auth.api_key" is true for this test kit',
    });
    expect(skipped.result.request).toBeUndefined();
    const ran = (await runInline(yaml, agent.url, { testKit: { auth: { api_key: 'demo-kit-v1' } } })).probe!;
    expect(ran.status).toBe('passed');
  });
});
