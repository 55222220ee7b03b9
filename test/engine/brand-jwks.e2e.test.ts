/**
 * The brand-JWKS role (src/roles/brand-jwks/): `fetch_brand_jwks` and `assert_jwks_purpose` of AdCP 3.1's
 * webhook-emission storyboard, against the fixture agent's published keys (passing) and against a small origin on
 * 127.0.0.1 that publishes each way of getting it wrong (failing, with the storyboard's codes).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { runInline, storyboard } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

const yaml = storyboard(
  `- id: fetch_brand_json
  title: Fetch brand.json
  task: fetch_brand_jwks`,
  `- id: assert_key
  title: Assert a webhook-valid key
  task: assert_jwks_purpose`,
);

/** An origin serving `documents` (path → body; a string is sent as is) on 127.0.0.1, and its /mcp URL. */
async function origin(documents: Record<string, unknown>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const body = documents[req.url ?? ''];
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, server };
}

async function grade(documents: Record<string, unknown>) {
  const { url, server } = await origin(documents);
  try {
    const steps = await runInline(yaml, url, { timeoutMs: 3_000 });
    return { fetch: steps.fetch_brand_json!, assert: steps.assert_key!, url };
  } finally {
    server.close();
  }
}

const brandFor = (url: string, jwksUri?: string) => ({
  version: '1.0',
  agents: [{ type: 'sales', url, ...(jwksUri ? { jwks_uri: jwksUri } : {}) }],
});

describe('fetch_brand_jwks and assert_jwks_purpose', () => {
  it('pass on an agent that publishes brand.json, a jwks_uri, and a webhook-signing key', async () => {
    const steps = await runInline(yaml, agent.url);
    expect(steps.fetch_brand_json!.status).toBe('passed');
    expect(steps.assert_key!.status).toBe('passed');
    expect(steps.assert_key!.result.validations[0]!.observations![0]).toMatch(
      /^1 key\(s\) with a webhook-valid purpose/,
    );
  });

  it('brand_json_unreachable when there is no brand.json; the JWKS check then says unpublished', async () => {
    const { fetch, assert } = await grade({});
    expect(fetch.status).toBe('failed');
    expect(fetch.result.validations[0]).toMatchObject({ actual: 'brand_json_unreachable' });
    expect(fetch.result.error).toMatch(/^brand_json_unreachable: GET .*brand\.json answered HTTP 404/);
    expect(assert.result.error).toMatch(/^webhook_signing_keys_unpublished:/);
  });

  it('brand_json_malformed when brand.json is not JSON', async () => {
    const { fetch } = await grade({ '/.well-known/brand.json': '{ "agents": [' });
    expect(fetch.result.validations[0]).toMatchObject({ passed: false, actual: 'brand_json_malformed' });
  });

  it('agents_jwks_uri_missing when no agents[] entry names the agent', async () => {
    const { fetch } = await grade({ '/.well-known/brand.json': brandFor('https://someone-else.example/mcp') });
    expect(fetch.result.validations[0]).toMatchObject({ passed: false, actual: 'agents_jwks_uri_missing' });
  });

  it('webhook_signing_keys_wrong_purpose when every key is for another purpose; unpublished when there is none', async () => {
    const docs = (keys: unknown[]) => ({ keys });
    const wrong = await gradeWith((url) => ({
      '/.well-known/brand.json': brandFor(url),
      '/.well-known/jwks.json': docs([
        { kty: 'OKP', crv: 'Ed25519', kid: 'gov', x: 'AA', adcp_use: 'governance-signing' },
      ]),
    }));
    expect(wrong.fetch.status).toBe('passed');
    expect(wrong.assert.result.validations[0]).toMatchObject({
      passed: false,
      actual: ['governance-signing'],
      error: expect.stringMatching(/^webhook_signing_keys_wrong_purpose:/),
    });
    const none = await gradeWith((url) => ({
      '/.well-known/brand.json': brandFor(url),
      '/.well-known/jwks.json': docs([]),
    }));
    expect(none.assert.result.error).toMatch(/^webhook_signing_keys_unpublished:/);
    const current = await gradeWith((url) => ({
      '/.well-known/brand.json': brandFor(url),
      '/.well-known/jwks.json': docs([{ kty: 'OKP', crv: 'Ed25519', kid: 'k1', x: 'AA', adcp_use: 'request-signing' }]),
    }));
    expect(current.assert.status).toBe('passed');
  });
});

/** Like grade, with documents that depend on the origin's own URL (brand.json names the agent by it). */
async function gradeWith(documents: (agentUrl: string) => Record<string, unknown>) {
  const docs: Record<string, unknown> = {};
  const { url, server } = await origin(docs);
  Object.assign(docs, documents(url));
  try {
    const steps = await runInline(yaml, url, { timeoutMs: 3_000 });
    return { fetch: steps.fetch_brand_json!, assert: steps.assert_key! };
  } finally {
    server.close();
  }
}
