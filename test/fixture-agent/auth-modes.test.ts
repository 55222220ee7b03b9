/**
 * The fixture agent's auth modes (fixtures/agent/auth-modes.mjs) over raw
 * HTTP, on the MCP endpoint and its A2A twin: which credential each mode
 * accepts, what its 401 challenges, whether it serves OAuth metadata, and the
 * OAuth-only token flow (client_credentials, RFC 8707 resource binding).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { FIXTURE_TEST_KIT_PATH, startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';

const { username, password } = parseYaml(readFileSync(FIXTURE_TEST_KIT_PATH, 'utf8')).auth.basic as {
  username: string;
  password: string;
};
const BASIC = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const KEY = 'Bearer demo-auth-modes';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

type Front = 'mcp' | 'a2a';
const urlOf = (front: Front, behaviours: string[]) =>
  front === 'a2a' ? agent.a2aUrlFor(behaviours) : agent.urlFor(behaviours);

/** One protected call (list_creatives) as raw JSON-RPC; status and WWW-Authenticate. */
async function call(front: Front, url: string, authorization?: string) {
  const body =
    front === 'a2a'
      ? {
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              messageId: 'm1',
              role: 'user',
              parts: [{ kind: 'data', data: { skill: 'list_creatives', parameters: {} } }],
            },
          },
        }
      : { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_creatives', arguments: {} } };
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return { status: response.status, challenge: response.headers.get('www-authenticate') };
}

async function token(resource: string): Promise<string> {
  const response = await fetch(`${agent.origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: BASIC },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource }).toString(),
  });
  expect(response.status).toBe(200);
  return `Bearer ${((await response.json()) as { access_token: string }).access_token}`;
}

const prmStatus = async (url: string) =>
  (await fetch(`${agent.origin}/.well-known/oauth-protected-resource${new URL(url).pathname}`)).status;

describe.each<Front>(['mcp', 'a2a'])('auth modes on the %s front', (front) => {
  it('the default endpoint accepts an API key, Basic and an OAuth token; challenges Bearer (with resource_metadata) and Basic', async () => {
    const url = urlOf(front, []);
    expect((await call(front, url, KEY)).status).toBe(200);
    expect((await call(front, url, BASIC)).status).toBe(200);
    expect((await call(front, url, await token(url))).status).toBe(200);
    const { status, challenge } = await call(front, url);
    expect(status).toBe(401);
    expect(challenge).toMatch(
      /^Bearer realm="[^"]+", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/(mcp|a2a)", Basic realm=/,
    );
    expect(await prmStatus(url)).toBe(200);
  });

  it('auth_api_key_only: only the API key; Bearer challenge only; no OAuth metadata', async () => {
    const url = urlOf(front, ['auth_api_key_only']);
    expect((await call(front, url, KEY)).status).toBe(200);
    const basic = await call(front, url, BASIC);
    expect(basic.status).toBe(401);
    expect(basic.challenge).toBe(
      `Bearer realm="${url}", error="invalid_token", error_description="This agent accepts only an API key (Authorization: Bearer demo-<key>)."`,
    );
    expect((await call(front, url)).challenge).toBe(`Bearer realm="${url}"`);
    expect(await prmStatus(url)).toBe(404);
  });

  it('auth_basic_only: only the Basic credential; Basic challenge only; no OAuth metadata', async () => {
    const url = urlOf(front, ['auth_basic_only']);
    expect((await call(front, url, BASIC)).status).toBe(200);
    expect(await call(front, url, KEY)).toEqual({ status: 401, challenge: `Basic realm="${url}", charset="UTF-8"` });
    expect((await call(front, url)).challenge).toBe(`Basic realm="${url}", charset="UTF-8"`);
    expect(await prmStatus(url)).toBe(404);
  });

  it('auth_oauth_only: only a token issued for this endpoint; Bearer challenge with resource_metadata; metadata served', async () => {
    const url = urlOf(front, ['auth_oauth_only']);
    expect((await call(front, url, await token(url))).status).toBe(200);
    // Bound to its RFC 8707 resource: a token issued for another endpoint is refused.
    expect((await call(front, url, await token(agent.url))).status).toBe(401);
    for (const credential of [KEY, BASIC]) {
      const refused = await call(front, url, credential);
      expect(refused.status).toBe(401);
      expect(refused.challenge).toMatch(
        /^Bearer realm="[^"]+", resource_metadata="[^"]+", error="invalid_token", error_description="This agent accepts only an OAuth access token from POST \/oauth\/token\."$/,
      );
    }
    expect(await prmStatus(url)).toBe(200);
    const as = await fetch(`${agent.origin}/.well-known/oauth-authorization-server`);
    expect(await as.json()).toMatchObject({ issuer: agent.origin, token_endpoint: `${agent.origin}/oauth/token` });
  });

  it('oauth_issuer_unserved: the metadata names an issuer whose RFC 8414 document is a 404', async () => {
    const url = urlOf(front, ['auth_oauth_only', 'oauth_issuer_unserved']);
    const prm = (await (
      await fetch(`${agent.origin}/.well-known/oauth-protected-resource${new URL(url).pathname}`)
    ).json()) as { authorization_servers: string[]; resource: string };
    expect(prm).toMatchObject({ resource: url, authorization_servers: [`${agent.origin}/issuers/unserved`] });
    expect((await fetch(`${agent.origin}/.well-known/oauth-authorization-server/issuers/unserved`)).status).toBe(404);
  });

  it('the call log records a valid credential of the wrong mechanism as invalid', async () => {
    const url = urlOf(front, ['auth_basic_only', 'session_modes_log']);
    agent.resetCalls();
    await call(front, url, KEY);
    await call(front, url, BASIC);
    expect(agent.calls.filter((c) => c.session === 'modes_log').map((c) => [c.auth, c.rejected])).toEqual([
      ['invalid', true],
      ['basic', false],
    ]);
  });
});

it('one auth mode per endpoint', () => {
  expect(() => agent.urlFor(['auth_basic_only', 'auth_oauth_only'])).toThrow('Only one auth_*_only mode per endpoint.');
  expect(() => agent.urlFor(['auth_basic_only@list_creatives'])).toThrow(/cannot be scoped/);
});
