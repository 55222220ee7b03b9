/**
 * The auth matchers on A2A agents and on answers already recorded — an
 * exchange from the transports, a storyboard step's record, a raw HTTP answer
 * (transport/raw-http.ts, or fetch's status and headers) — against the real
 * fixture agent and its auth modes.
 */
import { describe, expect, inject, it } from 'vitest';
import '../../src/matchers/index.js';
import { createTransport } from '../../src/transport/create.js';
import { sendRaw } from '../../src/transport/raw-http.js';
import { runInline, storyboard } from '../helpers/inline-run.js';
import { failureOf } from '../helpers/matcher-failure.js';

const origin = () => inject('agentOrigin');
const a2a = (behaviours?: string) => (behaviours ? `${origin()}/x/${behaviours}/a2a` : `${origin()}/a2a`);
const mcp = (behaviours?: string) => (behaviours ? `${origin()}/x/${behaviours}/mcp` : `${origin()}/mcp`);

/** An unauthenticated list_creatives over a transport, as the engine records it. */
async function exchangeOf(protocol: 'mcp' | 'a2a', url: string) {
  const transport = createTransport(protocol, { url, maxResponseBytes: 1024 * 1024 });
  try {
    return await transport.call('list_creatives', {}, { credentials: { kind: 'none' }, timeoutMs: 5_000 });
  } finally {
    await transport.close();
  }
}

/** A raw JSON-RPC tools/call without credentials (transport/raw-http.ts). */
const raw = (url: string) =>
  sendRaw(
    {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_creatives', arguments: {} },
      }),
    },
    { timeoutMs: 5_000, maxResponseBytes: 1024 * 1024 },
  );

describe('over A2A (option protocol)', () => {
  it('toExposeWwwAuthenticate: each auth mode offers its own scheme', async () => {
    await expect(a2a()).toExposeWwwAuthenticate({ protocol: 'a2a', scheme: 'Bearer' });
    await expect(a2a('auth_basic_only')).toExposeWwwAuthenticate({ protocol: 'a2a', scheme: 'Basic' });
    await expect(a2a('auth_basic_only')).not.toExposeWwwAuthenticate({ protocol: 'a2a', scheme: 'Bearer' });
    await expect(a2a('auth_api_key_only')).not.toExposeWwwAuthenticate({ protocol: 'a2a', scheme: 'Basic' });
    await expect(a2a('no_www_authenticate')).not.toExposeWwwAuthenticate({ protocol: 'a2a' });
  });

  it('toRejectUnauthenticated: every mode refuses; an agent ignoring credentials does not', async () => {
    for (const mode of ['auth_api_key_only', 'auth_basic_only', 'auth_oauth_only'])
      await expect(a2a(mode)).toRejectUnauthenticated({ protocol: 'a2a' });
    expect(
      await failureOf(() =>
        expect(a2a('auth_oauth_only+missing_auth_check')).toRejectUnauthenticated({ protocol: 'a2a' }),
      ),
    ).toMatchInlineSnapshot(`
      "expect(agentUrl).toRejectUnauthenticated(options)

      Expected an unauthenticated list_creatives call to be refused with "HTTP 401 or 403"
      Received: "HTTP 200"

      An agent that answers protected tasks without credentials is not checking them."
    `);
  });

  it('the failure names the missing header on an A2A 401', async () => {
    expect(
      await failureOf(() => expect(a2a('no_www_authenticate')).toExposeWwwAuthenticate({ protocol: 'a2a' })),
    ).toMatch(
      /Expected the unauthenticated list_creatives call to get "401 with WWW-Authenticate"\nReceived: "401 with no WWW-Authenticate header"/,
    );
  });
});

describe('on recorded answers', () => {
  it('an exchange from either transport', async () => {
    for (const protocol of ['mcp', 'a2a'] as const) {
      const url = protocol === 'a2a' ? a2a : mcp;
      await expect(await exchangeOf(protocol, url())).toRejectUnauthenticated();
      await expect(await exchangeOf(protocol, url())).toExposeWwwAuthenticate({ scheme: 'Basic' });
      await expect(await exchangeOf(protocol, url('missing_auth_check'))).not.toRejectUnauthenticated();
      await expect(await exchangeOf(protocol, url('no_www_authenticate'))).not.toExposeWwwAuthenticate();
    }
  });

  it("a storyboard step's record (what task.meta.adcp and the contract report carry)", async () => {
    const yaml = storyboard(
      '- { id: unauth, title: unauth, task: list_creatives, auth: none, expect_error: true, sample_request: {} }',
    );
    const conformant = (await runInline(yaml, mcp())).unauth!.result;
    await expect(conformant).toRejectUnauthenticated();
    await expect(conformant).toExposeWwwAuthenticate({ scheme: 'Bearer' });
    const open = (await runInline(yaml, a2a('missing_auth_check'), { protocol: 'a2a' })).unauth!.result;
    expect(await failureOf(() => expect(open).toRejectUnauthenticated())).toMatchInlineSnapshot(`
      "expect(answer).toRejectUnauthenticated(options)

      Expected the recorded answer to list_creatives to be refused with "HTTP 401 or 403"
      Received: "HTTP 200"

      An agent that answers protected tasks without credentials is not checking them."
    `);
  });

  it('a raw HTTP answer (transport/raw-http.ts, or status and headers from fetch)', async () => {
    const refused = await raw(mcp('auth_basic_only'));
    await expect(refused).toRejectUnauthenticated();
    await expect(refused).toExposeWwwAuthenticate({ scheme: 'Basic' });
    expect(await failureOf(() => expect(refused).toExposeWwwAuthenticate({ scheme: 'Bearer' }))).toMatchInlineSnapshot(`
      "expect(answer).toExposeWwwAuthenticate(options)

      Expected the recorded answer to get "401 with WWW-Authenticate offering Bearer"
      Received: "401 with WWW-Authenticate: Basic realm="<agent>/x/auth_basic_only/mcp", charset="UTF-8""

      Clients learn how to authenticate from this header (RFC 6750 §3, e.g. Bearer realm="<agent url>")."
    `);
    const response = await fetch(mcp('no_www_authenticate'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_creatives","arguments":{}}}',
    });
    const answer = { status: response.status, headers: Object.fromEntries(response.headers) };
    await expect(answer).toRejectUnauthenticated();
    expect(await failureOf(() => expect(answer).toExposeWwwAuthenticate())).toMatch(
      /Expected the recorded answer to get "401 with WWW-Authenticate"\nReceived: "401 with no WWW-Authenticate header"/,
    );
    expect(await failureOf(() => expect(answer).not.toRejectUnauthenticated())).toMatch(
      /Expected the recorded answer not to be a refusal, but it was: "HTTP 401"/,
    );
  });

  it('prints an expected auth-param as written: a string quoted, a RegExp, an asymmetric matcher with its argument', async () => {
    const answer = { status: 401, headers: { 'www-authenticate': 'Bearer realm="https://agent.example/mcp"' } };
    const expected = async (params: Record<string, unknown>) =>
      /Expected the recorded answer to get "(.*)"\n/.exec(
        await failureOf(() => expect(answer).toExposeWwwAuthenticate('Bearer', params)),
      )?.[1];
    expect(await expected({ realm: expect.stringContaining('nope') })).toBe(
      '401 with WWW-Authenticate offering Bearer with realm=StringContaining "nope"',
    );
    expect(await expected({ realm: expect.stringMatching(/^nope/) })).toBe(
      '401 with WWW-Authenticate offering Bearer with realm=StringMatching /^nope/',
    );
    expect(await expected({ realm: expect.not.stringContaining('agent') })).toBe(
      '401 with WWW-Authenticate offering Bearer with realm=StringNotContaining "agent"',
    );
    expect(await expected({ realm: /nope/i, error: 'invalid_token' })).toBe(
      '401 with WWW-Authenticate offering Bearer with realm=/nope/i, error="invalid_token"',
    );
  });

  it('a raw failure has no HTTP answer, and says so', async () => {
    const failed = await raw('http://127.0.0.1:1/mcp');
    expect(await failureOf(() => expect(failed).toRejectUnauthenticated())).toMatch(
      /Received: "no HTTP answer \(POST http:\/\/127\.0\.0\.1:1\/mcp failed: /,
    );
  });

  it('anything else is refused, saying what it wants', async () => {
    expect(() => expect({ nothing: true }).toRejectUnauthenticated()).toThrow(
      "expected the agent's URL (a http(s) string), received object; or a recorded answer: a createAdcpClient() response, a step result, a fetch Response, an MCP CallToolResult, or { status, headers }",
    );
  });
});
