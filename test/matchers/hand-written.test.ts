/**
 * The AdCP matchers on what a hand-written test has in hand — a
 * createAdcpClient() response, a storyboard step's result, a fetch Response,
 * an MCP CallToolResult — from the real fixture agent (its auth modes
 * included: 401 without WWW-Authenticate, 403) over real sockets. Each matcher:
 * pass, fail, `.not` pass, `.not` fail, and its failure message pinned.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, inject, it } from 'vitest';
import '../../src/matchers/index.js';
import { createAdcpClient, type AdcpClient, type AdcpResponse } from '../../src/index.js';
import { formatStepFailure } from '../../src/report/format.js';
import { runInline, storyboard } from '../helpers/inline-run.js';
import { failureOf } from '../helpers/matcher-failure.js';

const origin = () => inject('agentOrigin');
const mcp = (behaviours?: string) => (behaviours ? `${origin()}/x/${behaviours}/mcp` : `${origin()}/mcp`);
const a2a = (behaviours?: string) => (behaviours ? `${origin()}/x/${behaviours}/a2a` : `${origin()}/a2a`);
const TOKEN = 'demo-hand-written-v1';

const clients: AdcpClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});
/** One call through a client of the given endpoint; the client is closed after the file. */
async function call(
  url: string,
  task: string,
  payload: Record<string, unknown> = {},
  auth: 'none' | string = TOKEN,
  protocol: 'mcp' | 'a2a' = 'mcp',
): Promise<AdcpResponse> {
  const adcp = createAdcpClient({ url, protocol, auth: TOKEN, timeoutMs: 5_000 });
  clients.push(adcp);
  return adcp.call(task, payload, { auth });
}

/** A call the agent never answers: the client gives up after 300 ms. */
async function hanging(task: string): Promise<AdcpResponse> {
  const adcp = createAdcpClient({ url: mcp('missing_auth_check+hang'), timeoutMs: 300 });
  clients.push(adcp);
  return adcp.call(task);
}

/** The message of the assertion `run` makes, which must fail; agent URL and colours normalised. */

/** A raw tools/call through fetch (the user's own HTTP client). */
const fetchCall = (url: string, args: Record<string, unknown>, authorization?: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_creatives', arguments: args },
    }),
  });

/** A CallToolResult from the MCP SDK's own client (what an agent builder's MCP tests already have). */
async function callTool(url: string, name: string, args: Record<string, unknown>) {
  const client = new Client({ name: 'hand-written-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
  );
  try {
    return await client.callTool({ name, arguments: args });
  } finally {
    await client.close();
  }
}

describe('toRejectUnauthenticated', () => {
  it('passes on a 401 and on the 403 mode, from the client and from fetch', async () => {
    expect(await call(mcp(), 'list_creatives', {}, 'none')).toRejectUnauthenticated();
    expect(await call(mcp('forbid_unauthenticated'), 'list_creatives', {}, 'none')).toRejectUnauthenticated();
    expect(await call(a2a('forbid_unauthenticated'), 'list_creatives', {}, 'none', 'a2a')).toRejectUnauthenticated();
    await expect(await fetchCall(mcp('no_www_authenticate'), {})).toRejectUnauthenticated();
  });

  it('fails on a 2xx, saying the agent is not checking credentials', async () => {
    const served = await call(mcp('missing_auth_check'), 'list_creatives', {}, 'none');
    expect(await failureOf(() => expect(served).toRejectUnauthenticated())).toMatchInlineSnapshot(`
      "expect(answer).toRejectUnauthenticated(options)

      Expected the recorded answer to list_creatives to be refused with "HTTP 401 or 403"
      Received: "HTTP 200"

      An agent that answers protected tasks without credentials is not checking them."
    `);
  });

  it('fails on a 5xx (the hostile fixture case escape_http500)', async () => {
    const crashed = await call(
      mcp('missing_auth_check+hostile'),
      'list_creatives',
      { context: { hostile: 'escape_http500' } },
      'none',
    );
    expect(crashed.status).toBe(500);
    expect(await failureOf(() => expect(crashed).toRejectUnauthenticated())).toMatch(
      /to be refused with "HTTP 401 or 403"\nReceived: "HTTP 500"$/,
    );
  });

  it('fails on a timeout (no HTTP answer) and on a CallToolResult, which has no HTTP status', async () => {
    const timedOut = await hanging('list_creatives');
    expect(await failureOf(() => expect(timedOut).toRejectUnauthenticated())).toMatch(
      /Received: "no HTTP answer \(no answer within 300 ms/,
    );
    const result = await callTool(mcp(), 'list_creatives', {});
    expect(await failureOf(() => expect(result).toRejectUnauthenticated())).toMatch(
      /Expected the CallToolResult to be refused with "HTTP 401 or 403"\nReceived: "no HTTP status \(the CallToolResult carries none\)"/,
    );
  });

  it('accepts 400 only behind allowBadRequest', () => {
    const badRequest = { status: 400, headers: {} };
    expect(badRequest).not.toRejectUnauthenticated();
    expect(badRequest).toRejectUnauthenticated({ allowBadRequest: true });
  });

  it('.not passes on a served call and fails on a refusal', async () => {
    expect(await call(mcp('missing_auth_check'), 'list_creatives', {}, 'none')).not.toRejectUnauthenticated();
    const refused = await call(mcp('forbid_unauthenticated'), 'list_creatives', {}, 'none');
    expect(await failureOf(() => expect(refused).not.toRejectUnauthenticated())).toMatchInlineSnapshot(`
      "expect(answer).not.toRejectUnauthenticated(options)

      Expected the recorded answer to list_creatives not to be a refusal, but it was: "HTTP 403""
    `);
  });
});

describe('toExposeWwwAuthenticate', () => {
  it('passes on a challenge of the scheme (any case) with the params asked for', async () => {
    const invalid = await call(mcp(), 'list_creatives', {}, 'not-a-demo-key');
    expect(invalid).toExposeWwwAuthenticate();
    expect(invalid).toExposeWwwAuthenticate('bearer', { error: 'invalid_token', realm: `${origin()}/mcp` });
    expect(invalid).toExposeWwwAuthenticate('Bearer', {
      ERROR: expect.stringMatching(/^invalid_/),
      resource_metadata: /oauth-protected-resource/,
    });
    expect(invalid).toExposeWwwAuthenticate('Basic', { charset: 'UTF-8' });
    await expect(await fetchCall(a2a('auth_basic_only').replace(/a2a$/, 'mcp'), {})).toExposeWwwAuthenticate('Basic');
  });

  it('fails when no challenge carries the params, listing the challenges offered', async () => {
    const missing = await call(mcp(), 'list_creatives', {}, 'none');
    expect(await failureOf(() => expect(missing).toExposeWwwAuthenticate('Bearer', { error: 'invalid_token' })))
      .toMatchInlineSnapshot(`
      "expect(answer).toExposeWwwAuthenticate(scheme, params)

      Expected the recorded answer to list_creatives to get "401 with WWW-Authenticate offering Bearer with error="invalid_token""
      Received: "401 with WWW-Authenticate: Bearer realm="<agent>/mcp", resource_metadata="<agent>/.well-known/oauth-protected-resource/mcp", Basic realm="<agent>/mcp", charset="UTF-8""

      Challenges offered:
        Bearer realm="<agent>/mcp", resource_metadata="<agent>/.well-known/oauth-protected-resource/mcp"
        Basic realm="<agent>/mcp", charset="UTF-8"

      Clients learn how to authenticate from this header (RFC 6750 §3, e.g. Bearer realm="<agent url>")."
    `);
  });

  it('fails on the 401-without-header mode and on the 403 mode', async () => {
    const bare = await call(mcp('no_www_authenticate'), 'list_creatives', {}, 'none');
    expect(await failureOf(() => expect(bare).toExposeWwwAuthenticate('Bearer'))).toMatchInlineSnapshot(`
      "expect(answer).toExposeWwwAuthenticate(scheme)

      Expected the recorded answer to list_creatives to get "401 with WWW-Authenticate offering Bearer"
      Received: "401 with no WWW-Authenticate header"

      Clients learn how to authenticate from this header (RFC 6750 §3, e.g. Bearer realm="<agent url>")."
    `);
    const forbidden = await call(a2a('forbid_unauthenticated'), 'list_creatives', {}, 'none', 'a2a');
    expect(await failureOf(() => expect(forbidden).toExposeWwwAuthenticate())).toMatch(/Received: "HTTP 403"/);
  });

  it('fails on a header that breaks RFC 9110, saying where', () => {
    const answer = { status: 401, headers: { 'www-authenticate': 'Bearer realm="unterminated' } };
    expect(() => expect(answer).toExposeWwwAuthenticate('Bearer')).toThrow(
      /The header does not follow RFC 9110 §11\.6\.1: unterminated quoted string for auth-param "realm" at character 14/,
    );
  });

  it('.not passes without the header and fails with it', async () => {
    expect(await call(mcp('no_www_authenticate'), 'list_creatives', {}, 'none')).not.toExposeWwwAuthenticate();
    expect(await call(mcp('auth_basic_only'), 'list_creatives', {}, 'none')).not.toExposeWwwAuthenticate('Bearer');
    const challenged = await call(mcp('auth_api_key_only'), 'list_creatives', {}, 'none');
    expect(await failureOf(() => expect(challenged).not.toExposeWwwAuthenticate('Bearer'))).toMatchInlineSnapshot(`
      "expect(answer).not.toExposeWwwAuthenticate(scheme)

      Expected the recorded answer to list_creatives not to get "401 with WWW-Authenticate offering Bearer"
      Received: "401 with WWW-Authenticate: Bearer realm="<agent>/x/auth_api_key_only/mcp"""
    `);
  });
});

describe('toMatchAdcpSchema', () => {
  it("passes on a conformant answer: by path, by task name, or the task's own response schema", async () => {
    const caps = await call(mcp(), 'get_adcp_capabilities');
    expect(caps).toMatchAdcpSchema();
    expect(caps).toMatchAdcpSchema('get_adcp_capabilities');
    expect(caps).toMatchAdcpSchema('protocol/get-adcp-capabilities-response.json');
    expect(await callTool(mcp(), 'get_adcp_capabilities', {})).toMatchAdcpSchema('get_adcp_capabilities');
  });

  it('fails listing each instance path and message', async () => {
    const invalid = await call(mcp('schema_invalid'), 'get_adcp_capabilities');
    expect(await failureOf(() => expect(invalid).toMatchAdcpSchema())).toMatchInlineSnapshot(`
      "expect(answer).toMatchAdcpSchema()

      Expected the recorded answer to get_adcp_capabilities to match "/schemas/3.0.6/protocol/get-adcp-capabilities-response.json"
      Received "1 schema error" (instance path: message):
        /adcp/major_versions: must be array

      Schema: https://adcontextprotocol.org/schemas/3.0.6/protocol/get-adcp-capabilities-response.json"
    `);
  });

  it('fails on an answer without task data, and throws on a schema it does not know', async () => {
    const timedOut = await hanging('get_adcp_capabilities');
    expect(await failureOf(() => expect(timedOut).toMatchAdcpSchema())).toMatch(
      /Received: no task data \(no HTTP answer \(no answer within 300 ms/,
    );
    expect(() => expect({ status: 200, headers: {} }).toMatchAdcpSchema('media-buy/no-such-response.json')).toThrow(
      /no AdCP schema "media-buy\/no-such-response\.json" in /,
    );
  });

  it('.not passes on an invalid answer and fails on a valid one', async () => {
    expect(await call(mcp('schema_invalid'), 'get_adcp_capabilities')).not.toMatchAdcpSchema();
    const caps = await call(mcp(), 'get_adcp_capabilities');
    expect(await failureOf(() => expect(caps).not.toMatchAdcpSchema())).toMatch(
      /Expected the recorded answer to get_adcp_capabilities not to match "\/schemas\/[^"]+\/protocol\/get-adcp-capabilities-response\.json", but it does/,
    );
  });
});

describe('toHaveAdcpErrorCode', () => {
  it('passes wherever the error_code check finds the code: structuredContent, JSON-RPC error.data, errors[], an A2A DataPart, a 401 body', async () => {
    expect(await call(mcp('error_response'), 'list_creatives')).toHaveAdcpErrorCode('INVALID_REQUEST');
    expect(await call(mcp('error_jsonrpc'), 'list_creatives')).toHaveAdcpErrorCode([
      'VALIDATION_ERROR',
      'INVALID_REQUEST',
    ]);
    expect(await call(mcp('error_errors_array'), 'list_creatives')).toHaveAdcpErrorCode();
    expect(await call(a2a('error_response'), 'list_creatives', {}, TOKEN, 'a2a')).toHaveAdcpErrorCode(
      'INVALID_REQUEST',
    );
    expect(await call(mcp(), 'list_creatives', {}, 'none')).toHaveAdcpErrorCode('AUTH_REQUIRED');
    expect(await callTool(mcp('error_text_only'), 'list_creatives', {})).toHaveAdcpErrorCode('INVALID_REQUEST');
  });

  it('fails on another code, naming where it was found', async () => {
    const refused = await call(mcp('forbid_unauthenticated'), 'list_creatives', {}, 'none');
    expect(await failureOf(() => expect(refused).toHaveAdcpErrorCode(['PERMISSION_DENIED', 'ACCOUNT_SUSPENDED'])))
      .toMatchInlineSnapshot(`
      "expect(answer).toHaveAdcpErrorCode(code)

      Expected the recorded answer to list_creatives to carry AdCP error code one of "PERMISSION_DENIED", "ACCOUNT_SUSPENDED"
      Received: "AUTH_REQUIRED" at adcp_error.code (JSON Pointer /adcp_error/code of the task data)"
    `);
  });

  it('fails on a success, saying where it looked', async () => {
    const ok = await call(mcp(), 'list_creatives');
    expect(await failureOf(() => expect(ok).toHaveAdcpErrorCode('INVALID_REQUEST'))).toMatchInlineSnapshot(`
      "expect(answer).toHaveAdcpErrorCode(code)

      Expected the recorded answer to list_creatives to carry AdCP error code "INVALID_REQUEST"
      Received: no AdCP error (extraction path "structured_content", HTTP 200); looked for adcp_error.code in structuredContent, text content, JSON-RPC error.data, errors[0].code (top-level or under payload), and comply_test_controller's error"
    `);
  });

  it('.not passes on a success or another code, and fails on the code', async () => {
    expect(await call(mcp(), 'list_creatives')).not.toHaveAdcpErrorCode();
    const refused = await call(mcp(), 'list_creatives', {}, 'none');
    expect(refused).not.toHaveAdcpErrorCode('INVALID_REQUEST');
    expect(await failureOf(() => expect(refused).not.toHaveAdcpErrorCode('AUTH_REQUIRED'))).toMatchInlineSnapshot(`
      "expect(answer).not.toHaveAdcpErrorCode(code)

      Expected the recorded answer to list_creatives not to carry AdCP error code "AUTH_REQUIRED"
      Received: "AUTH_REQUIRED" at adcp_error.code (JSON Pointer /adcp_error/code of the task data)"
    `);
  });
});

describe('toEchoContext', () => {
  const context = { correlation_id: 'hw-1', nested: { n: 1, on: true } };

  it("passes on a verbatim echo: the request's own context, or the one given, on success and error answers", async () => {
    expect(await call(mcp(), 'list_creatives', { context })).toEchoContext();
    expect(await call(mcp(), 'list_creatives', { context })).toEchoContext(context);
    expect(await call(mcp('error_response'), 'list_creatives', { context })).toEchoContext();
    expect(await call(a2a(), 'list_creatives', { context }, TOKEN, 'a2a')).toEchoContext(context);
    expect(await callTool(mcp(), 'list_creatives', { context })).toEchoContext(context);
    // Nothing sent, nothing back.
    expect(await call(mcp(), 'list_creatives')).toEchoContext();
  });

  it('fails on an altered echo with a diff', async () => {
    const altered = await call(mcp('wrong_value'), 'list_creatives', { context });
    expect(await failureOf(() => expect(altered).toEchoContext())).toMatchInlineSnapshot(`
      "expect(answer).toEchoContext()

      Expected the recorded answer to list_creatives to echo the context verbatim

      - Expected
      + Received

        {
      -   "correlation_id": "hw-1",
      +   "correlation_id": "hw-1-mutated",
          "nested": {
      -     "n": 1,
      -     "on": true,
      +     "n": 2,
      +     "on": false,
          },
        }"
    `);
  });

  it('fails on a dropped echo, and on a context the caller did not send', async () => {
    const dropped = await call(mcp('drop_context'), 'list_creatives', { context });
    expect(await failureOf(() => expect(dropped).toEchoContext())).toMatchInlineSnapshot(`
      "expect(answer).toEchoContext()

      Expected the recorded answer to list_creatives to echo the context verbatim: Object {
        "correlation_id": "hw-1",
        "nested": Object {
          "n": 1,
          "on": true,
        },
      }
      Received: "no context""
    `);
    // The CallToolResult carries no request: toEchoContext(undefined) says none was sent.
    const echoed = await callTool(mcp(), 'list_creatives', { context });
    expect(await failureOf(() => expect(echoed).toEchoContext(undefined))).toMatchInlineSnapshot(`
      "expect(answer).toEchoContext(sent)

      Expected the CallToolResult to carry no context: none was sent, and an agent never invents one
      Received context: Object {
        "correlation_id": "hw-1",
        "nested": Object {
          "n": 1,
          "on": true,
        },
      }"
    `);
  });

  it('.not passes on a dropped echo and fails on a verbatim one', async () => {
    expect(await call(mcp('drop_context'), 'list_creatives', { context })).not.toEchoContext();
    const echoed = await call(mcp(), 'list_creatives', { context });
    expect(await failureOf(() => expect(echoed).not.toEchoContext())).toMatchInlineSnapshot(`
      "expect(answer).not.toEchoContext()

      Expected the recorded answer to list_creatives not to echo Object {
        "correlation_id": "hw-1",
        "nested": Object {
          "n": 1,
          "on": true,
        },
      }, but it echoed it verbatim"
    `);
  });
});

describe('toPassStoryboardStep', () => {
  const yaml = storyboard(
    '- { id: caps, title: caps, task: get_adcp_capabilities, sample_request: { context: { correlation_id: sb-1 } }, validations: [ { check: response_schema }, { check: field_value, path: context.correlation_id, value: sb-1 } ] }',
  );

  it('passes on a passed step (result or outcome), fails with the step’s own message', async () => {
    const passed = await runInline(yaml, mcp());
    expect(passed.caps!).toPassStoryboardStep();
    expect(passed.caps!.result).toPassStoryboardStep();
    const failed = (await runInline(yaml, mcp('wrong_value'))).caps!.result;
    // The step's own message (report/format.ts, pinned by its own tests) follows the matcher's lines.
    // Fences carry a random id per message.
    const unfenced = (text: string) => text.replace(/(<<(?:agent [a-z]+|end)) [0-9a-f]{12}>>/g, '$1>>');
    const message = unfenced(await failureOf(() => expect(failed).toPassStoryboardStep()));
    expect(message).toContain(unfenced(formatStepFailure(failed).message.replaceAll(origin(), '<agent>')));
    expect(
      message
        .split('\n')
        .slice(0, 4)
        .join('\n')
        .replace(/(\.\.\/)+virtual/, '/virtual'),
    ).toMatchInlineSnapshot(`
      "expect(stepResult).toPassStoryboardStep()

      Expected step "caps" (task get_adcp_capabilities) to pass
      "
    `);
    const skipped = {
      ...failed,
      passed: true,
      skip: { reason: 'not_applicable' as const, detail: 'the agent does not claim media_buy' },
    };
    expect(await failureOf(() => expect(skipped).toPassStoryboardStep())).toMatchInlineSnapshot(`
      "expect(stepResult).toPassStoryboardStep()

      Expected step "caps" (task get_adcp_capabilities) to pass
      Received: "skipped (not_applicable)": the agent does not claim media_buy"
    `);
  });

  it('.not passes on a failed or skipped step and fails on a passed one', async () => {
    const failed = (await runInline(yaml, mcp('wrong_value'))).caps!.result;
    expect(failed).not.toPassStoryboardStep();
    expect({
      ...failed,
      passed: true,
      skip: { reason: 'not_applicable', detail: 'not for this agent' },
    }).not.toPassStoryboardStep();
    const passed = (await runInline(yaml, mcp())).caps!.result;
    expect(await failureOf(() => expect(passed).not.toPassStoryboardStep())).toMatchInlineSnapshot(`
      "expect(stepResult).not.toPassStoryboardStep()

      Expected step "caps" (task get_adcp_capabilities) not to pass, but it passed "4 validations""
    `);
  });

  it('refuses what is not a step result, saying what it takes', async () => {
    const res = await call(mcp(), 'list_creatives');
    expect(() => expect(res).toPassStoryboardStep()).toThrow(
      'expected a storyboard step result (StepResult, a StepOutcome, task.meta.adcp), received object',
    );
  });
});

describe('every received form, normalised in one place (matchers/answer.ts)', () => {
  const context = { correlation_id: 'forms-1' };
  const yaml = storyboard(
    '- { id: ok, title: ok, task: list_creatives, sample_request: { context: { correlation_id: forms-1 } } }',
    '- { id: unauth, title: unauth, task: list_creatives, auth: none, expect_error: true, sample_request: { context: { correlation_id: forms-1 } } }',
  );

  it.each(['mcp', 'a2a'] as const)(
    'a %s step result: the task data re-extracted from the recorded response',
    async (protocol) => {
      const steps = await runInline(yaml, protocol === 'mcp' ? mcp() : a2a(), { protocol });
      const ok = steps.ok!.result;
      expect(ok).toMatchAdcpSchema();
      expect(ok).toEchoContext();
      expect(ok).not.toHaveAdcpErrorCode();
      const unauth = steps.unauth!.result;
      expect(unauth).toRejectUnauthenticated();
      expect(unauth).toHaveAdcpErrorCode('AUTH_REQUIRED');
      expect(unauth).toEchoContext(context);
      const failed = (await runInline(yaml, protocol === 'mcp' ? mcp('wrong_value') : a2a('wrong_value'), { protocol }))
        .ok!.result;
      expect(failed).not.toEchoContext();
    },
  );

  it('a fetch Response: status, headers and the (SSE or JSON) body, read from a clone', async () => {
    const ok = await fetchCall(mcp(), { context }, `Bearer ${TOKEN}`);
    await expect(ok).toEchoContext(context);
    await expect(ok).toMatchAdcpSchema('list_creatives');
    await expect(ok).not.toRejectUnauthenticated();
    expect(await ok.text()).toContain('forms-1');
    const refused = await fetchCall(mcp(), { context });
    await expect(refused).toHaveAdcpErrorCode('AUTH_REQUIRED');
    await expect(refused).toEchoContext(context);
    await expect(await fetchCall(mcp('wrong_value'), { context }, `Bearer ${TOKEN}`)).not.toEchoContext(context);
  });

  it('a CallToolResult: task data only', async () => {
    const errorResult = await callTool(mcp('error_response'), 'list_creatives', { context });
    expect(errorResult).toHaveAdcpErrorCode('INVALID_REQUEST');
    expect(errorResult).toEchoContext(context);
    expect(errorResult).not.toMatchAdcpSchema('get_adcp_capabilities');
  });
});

describe('as asymmetric matchers (records only)', () => {
  it('inside toEqual', async () => {
    const res = await call(mcp(), 'list_creatives', {}, 'none');
    expect({ answer: res }).toEqual({ answer: expect.toRejectUnauthenticated() });
    expect({ answer: res }).not.toEqual({ answer: expect.toHaveAdcpErrorCode('INVALID_REQUEST') });
  });
});
