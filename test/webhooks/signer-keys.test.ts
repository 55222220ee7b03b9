/**
 * How the receiver finds an agent's webhook-signing keys (src/webhooks/signer-keys.ts,
 * security.mdx > Webhook callbacks > JWKS discovery), against a real HTTP
 * server on 127.0.0.1 serving brand.json variants; and the strict JSON parse
 * (checklist step 14) it and the verifier rely on.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignerKeys } from '../../src/webhooks/signer-keys.js';
import { parseStrictJson } from '../../src/webhooks/strict-json.js';

const KEY = {
  kty: 'OKP',
  crv: 'Ed25519',
  x: 'MCowBQYDK2VwAyEA',
  kid: 'k1',
  alg: 'EdDSA',
  use: 'sig',
  key_ops: ['verify'],
  adcp_use: 'webhook-signing',
};
/** path → [status, body] the server answers; tests set their routes per origin path prefix. */
const routes = new Map<string, [number, string, Record<string, string>?]>();
const hits: string[] = [];
let server: Server;
let origin: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url!);
    const [status, body, headers] = routes.get(req.url!) ?? [404, '{}'];
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const serve = (path: string, body: unknown, status = 200, headers?: Record<string, string>) =>
  routes.set(path, [status, typeof body === 'string' ? body : JSON.stringify(body), headers]);
const keys = (agentPath = '/mcp') => new SignerKeys(`${origin}${agentPath}`, { timeoutMs: 5_000 });

describe('SignerKeys', () => {
  it("resolves a keyid through brand.json agents[] (the entry whose url is the agent's) and its jwks_uri", async () => {
    routes.clear();
    serve('/.well-known/brand.json', {
      agents: [
        { type: 'sales', url: `${origin}/other`, jwks_uri: `${origin}/wrong.json` },
        { type: 'sales', url: `${origin}/mcp`, jwks_uri: `${origin}/keys/jwks.json` },
      ],
    });
    serve('/keys/jwks.json', { keys: [KEY] });
    const k = keys();
    expect(await k.lookup('k1')).toEqual(KEY);
    expect(await k.source()).toEqual({
      brandJsonUrl: `${origin}/.well-known/brand.json`,
      jwksUri: `${origin}/keys/jwks.json`,
    });
  });

  it('matches the agent URL after canonicalization (case, default port) and defaults jwks_uri to /.well-known/jwks.json', async () => {
    routes.clear();
    serve('/.well-known/brand.json', { agents: [{ type: 'sales', url: `${origin.replace('http', 'HTTP')}/mcp` }] });
    serve('/.well-known/jwks.json', { keys: [KEY] });
    expect(await keys().lookup('k1')).toEqual(KEY);
  });

  it('finds agents of a house portfolio (house.agents, brands[].agents)', async () => {
    routes.clear();
    serve('/.well-known/brand.json', {
      house: { domain: 'x.example', agents: [] },
      brands: [{ id: 'b', agents: [{ type: 'sales', url: `${origin}/mcp`, jwks_uri: `${origin}/j.json` }] }],
    });
    serve('/j.json', { keys: [KEY] });
    expect(await keys().lookup('k1')).toEqual(KEY);
  });

  it('follows one authoritative_location redirect, and not a second', async () => {
    routes.clear();
    serve('/.well-known/brand.json', { authoritative_location: `${origin}/hosted/brand.json` });
    serve('/hosted/brand.json', { agents: [{ type: 'sales', url: `${origin}/mcp`, jwks_uri: `${origin}/j.json` }] });
    serve('/j.json', { keys: [KEY] });
    expect(await keys().lookup('k1')).toEqual(KEY);

    serve('/hosted/brand.json', { authoritative_location: `${origin}/again.json` });
    const twice = keys();
    expect(await twice.lookup('k1')).toBeUndefined();
    expect((await twice.source()).problem).toMatch(/redirects more than once/);
  });

  it('refetches the JWKS once on an unknown kid (key rotation), then gives up', async () => {
    routes.clear();
    serve('/.well-known/brand.json', { agents: [{ url: `${origin}/mcp`, jwks_uri: `${origin}/rotating.json` }] });
    serve('/rotating.json', { keys: [KEY] });
    const k = keys();
    expect(await k.lookup('k1')).toEqual(KEY);
    serve('/rotating.json', { keys: [KEY, { ...KEY, kid: 'k2' }] });
    hits.length = 0;
    expect(await k.lookup('k2')).toMatchObject({ kid: 'k2' });
    expect(await k.lookup('k3')).toBeUndefined();
    expect(hits).toEqual(['/rotating.json']);
  });

  it('says why nothing resolves: no brand.json, no entry for the agent, two entries, a bad JWKS, duplicate keys', async () => {
    routes.clear();
    const problem = async (agentPath = '/mcp') => {
      const k = keys(agentPath);
      expect(await k.lookup('k1')).toBeUndefined();
      return (await k.source()).problem;
    };
    expect(await problem()).toBe(`GET ${origin}/.well-known/brand.json answered HTTP 404`);
    serve('/.well-known/brand.json', { agents: [{ url: `${origin}/mcp/` }] });
    expect(await problem()).toBe(`no agents[] entry of ${origin}/.well-known/brand.json has url ${origin}/mcp`);
    serve('/.well-known/brand.json', { agents: [{ url: `${origin}/mcp` }, { url: `${origin}/mcp` }] });
    expect(await problem()).toMatch(/^2 agents\[\] entries/);
    serve('/.well-known/brand.json', { agents: [{ url: `${origin}/mcp`, jwks_uri: `${origin}/bad.json` }] });
    serve('/bad.json', { nokeys: true });
    expect(await problem()).toBe(`${origin}/bad.json is not a JWKS (no "keys" array)`);
    serve('/.well-known/brand.json', '{"agents":[],"agents":[{"url":"x"}]}');
    expect(await problem()).toMatch(/duplicate object key "agents"/);
    serve('/.well-known/brand.json', '', 302, { location: '/elsewhere' });
    expect(await problem()).toMatch(/answered HTTP 302/);
  });

  it('does not fetch a jwks_uri the agent points at a private address off its own origin', async () => {
    routes.clear();
    serve('/.well-known/brand.json', { agents: [{ url: `${origin}/mcp`, jwks_uri: 'http://10.0.0.1/jwks.json' }] });
    const k = keys();
    expect(await k.lookup('k1')).toBeUndefined();
    expect((await k.source()).problem).toMatch(/does not fetch the jwks_uri http:\/\/10\.0\.0\.1\/jwks\.json/);
  });

  it('vets what an https jwks_uri resolves to: a name pointing at a private address is refused before any connection; a public one is fetched, pinned', async () => {
    routes.clear();
    serve('/.well-known/brand.json', {
      agents: [{ url: `${origin}/mcp`, jwks_uri: 'https://keys.example/jwks.json' }],
    });
    serve('/jwks.json', { keys: [KEY] });
    const dials: string[] = [];
    // Every dial goes to the loopback server (plain TCP: the https URL is dialled there only to record that it was).
    const guard = (address: string) => ({
      lookup: async () => [{ address, family: 4 }],
      dial: (to: string) => (dials.push(to), '127.0.0.1'),
    });
    const rebound = new SignerKeys(`${origin}/mcp`, { timeoutMs: 5_000, guard: guard('10.1.2.3') });
    expect(await rebound.lookup('k1')).toBeUndefined();
    expect((await rebound.source()).problem).toMatch(/keys\.example resolves to 10\.1\.2\.3, .*private/);
    expect(dials).toEqual([]);
    const pub = new SignerKeys(`${origin}/mcp`, { timeoutMs: 5_000, guard: guard('93.184.215.14') });
    expect(await pub.lookup('k1')).toBeUndefined(); // the TLS handshake with the plain-http recorder fails
    expect(dials).toEqual(['93.184.215.14']);
  });
});

describe('parseStrictJson', () => {
  it('parses JSON and refuses duplicate keys at any depth, in arrays too', () => {
    expect(parseStrictJson('{"a":1,"b":[{"a":2}]}')).toEqual({ ok: true, value: { a: 1, b: [{ a: 2 }] } });
    expect(parseStrictJson('{"a":1,"a":2}')).toMatchObject({ ok: false, duplicateKey: 'a' });
    expect(parseStrictJson('{"x":{"y":{"z":1,"z":1}}}')).toMatchObject({ ok: false, duplicateKey: 'z' });
    expect(parseStrictJson('[{"k":1},{"k":2},{"k":3,"k":4}]')).toMatchObject({ ok: false, duplicateKey: 'k' });
    // Escapes decode before comparing; a key equal to a value is no duplicate.
    expect(parseStrictJson('{"\\u0061":1,"a":2}')).toMatchObject({ ok: false, duplicateKey: 'a' });
    expect(parseStrictJson('{"a":"a","b":"\\"a"}')).toMatchObject({ ok: true });
    expect(parseStrictJson('{"a":')).toMatchObject({ ok: false, error: expect.stringMatching(/^not JSON/) });
  });

  it('sanitises the key it reports (printable, at most 32 bytes)', () => {
    const long = 'k'.repeat(40);
    expect(parseStrictJson(`{"${long}":1,"${long}":2}`)).toMatchObject({
      error: `duplicate object key "${'k'.repeat(32)}<sanitized:40>"`,
    });
    expect(parseStrictJson('{"a\\u0000b":1,"a\\u0000b":2}')).toMatchObject({
      error: 'duplicate object key "a<sanitized:3>"',
    });
  });
});
