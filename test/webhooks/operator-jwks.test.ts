/**
 * Loading the operator's webhook signer JWKS (src/webhooks/operator-jwks.ts) from a real file and a real loopback
 * HTTP server: the public members of each key kept and nothing else, and every way it cannot be used a one-line
 * ConfigurationError naming the fix — from the configuration (env ADCP_RUNNER_WEBHOOK_SIGNER_JWKS), the CLI flag and
 * the loader alike. No message quotes the document (it may hold a private key).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookOptions } from '../../src/cli/flags.js';
import { resolveRuntimeConfig } from '../../src/config.js';
import { ConfigurationError } from '../../src/model/errors.js';
import { checkOptions } from '../../src/plugin/check-options.js';
import { loadSignerJwks, signerJwksFor } from '../../src/webhooks/operator-jwks.js';
import { closedPort } from '../helpers/ports.js';

const FIX =
  'set webhooks.signerJwks (--webhook-signer-jwks, ADCP_RUNNER_WEBHOOK_SIGNER_JWKS) to a JWKS JSON file ({"keys": [...]}) or to an https URL that serves one (plain http only to a loopback host)';
const PUBLIC = {
  kty: 'OKP',
  crv: 'Ed25519',
  x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
  kid: 'dev-key',
  alg: 'EdDSA',
  use: 'sig',
  key_ops: ['verify'],
  adcp_use: 'webhook-signing',
};
const PRIVATE_D = 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A';

const dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-operator-jwks-'));
/** path → [status, body, headers] the server answers. */
const routes = new Map<string, [number, string, Record<string, string>?]>();
let server: Server;
let origin: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const [status, body, headers] = routes.get(req.url!) ?? [404, '{}'];
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}
const load = (location: string, allowHttp = false) =>
  loadSignerJwks(location, { timeoutMs: 3_000, baseDir: dir, allowHttp });

/** The loader's error: a ConfigurationError of one line. */
async function loadError(location: string): Promise<string> {
  const error = await load(location).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigurationError);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  return message;
}

describe('a JWKS file', () => {
  it('keeps the public members of each key with a kid, drops private members and symmetric keys', async () => {
    const path = file('keys.json', {
      keys: [
        { ...PUBLIC, d: PRIVATE_D, p: 'p', q: 'q', dp: 'dp', dq: 'dq', qi: 'qi' },
        { kty: 'oct', kid: 'shared', k: 'c2VjcmV0' },
        { kty: 'OKP', crv: 'Ed25519', x: 'no-kid' },
      ],
    });
    const jwks = await load(path);
    expect(jwks).toEqual({ location: path, keys: [PUBLIC] });
    expect(JSON.stringify(jwks)).not.toContain(PRIVATE_D);
  });

  it('a relative path is read from the base directory', async () => {
    file('relative.json', { keys: [PUBLIC] });
    expect((await load('relative.json')).location).toBe(join(dir, 'relative.json'));
  });

  it('each way it cannot be used is one line with the fix, and never quotes the document', async () => {
    const missing = join(dir, 'missing.json');
    expect(await loadError(missing)).toBe(`the webhook signer JWKS ${missing} cannot be read (ENOENT): ${FIX}`);
    mkdirSync(join(dir, 'a-dir'));
    expect(await loadError(join(dir, 'a-dir'))).toBe(
      `the webhook signer JWKS ${join(dir, 'a-dir')} is not a file: ${FIX}`,
    );
    const big = file('big.json', `{"keys":[${' '.repeat(70_000)}]}`);
    expect(await loadError(big)).toBe(
      `the webhook signer JWKS ${big} is ${70_011} bytes, over the 65536-byte bound: ${FIX}`,
    );
    const broken = file('broken.json', `{"keys":[{"d":"${PRIVATE_D}",}]}`);
    const brokenError = await loadError(broken);
    expect(brokenError).toBe(`the webhook signer JWKS ${broken} is not JSON: ${FIX}`);
    expect(brokenError).not.toContain(PRIVATE_D);
    const duplicate = file('duplicate.json', `{"keys":[],"keys":[]}`);
    expect(await loadError(duplicate)).toBe(
      `the webhook signer JWKS ${duplicate} has a duplicate object key "keys": ${FIX}`,
    );
    const notJwks = file('not-jwks.json', { kty: 'OKP' });
    expect(await loadError(notJwks)).toBe(`the webhook signer JWKS ${notJwks} is not a JWKS (no "keys" array): ${FIX}`);
    const noKid = file('no-kid.json', { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'x' }] });
    expect(await loadError(noKid)).toBe(
      `the webhook signer JWKS ${noKid} holds no key with a "kid" and public key material: ${FIX}`,
    );
  });
});

describe('a JWKS URL', () => {
  it('plain http to a loopback host is fetched; userinfo and query are left out of what records show', async () => {
    routes.set('/jwks.json?t=1', [200, JSON.stringify({ keys: [{ ...PUBLIC, d: PRIVATE_D }] })]);
    const url = `${origin.replace('//', '//user:token@')}/jwks.json?t=1`;
    expect(await load(url)).toEqual({ location: `${origin}/jwks.json`, keys: [PUBLIC] });
  });

  it('an answer other than 200 (a redirect is not followed), an unreachable host, a body over the bound: one line each', async () => {
    routes.set('/missing', [404, '{}']);
    expect(await loadError(`${origin}/missing`)).toBe(
      `the webhook signer JWKS ${origin}/missing answered HTTP 404 to GET: ${FIX}`,
    );
    routes.set('/moved', [302, '', { location: '/jwks.json' }]);
    expect(await loadError(`${origin}/moved`)).toBe(
      `the webhook signer JWKS ${origin}/moved answered HTTP 302 to GET: ${FIX}`,
    );
    routes.set('/big', [200, `{"keys":[${' '.repeat(70_000)}]}`]);
    expect(await loadError(`${origin}/big`)).toMatch(
      /^the webhook signer JWKS http:\S+\/big could not be fetched \(.*65536 bytes.*\): /,
    );
    const dead = `http://127.0.0.1:${await closedPort()}/jwks.json`;
    expect(await loadError(dead)).toMatch(
      new RegExp(
        `^the webhook signer JWKS ${dead.replace(/[.?]/g, '\\$&')} could not be fetched \\(.*\\): set webhooks\\.signerJwks`,
      ),
    );
  });

  it('plain http to a host that is not loopback is refused before any connection, unless the run allows http; other schemes always', async () => {
    expect(await loadError('http://keys.example/jwks.json')).toBe(
      `the webhook signer JWKS http://keys.example/jwks.json is plain http to a host that is not loopback (keys fetched in cleartext): ${FIX}`,
    );
    expect(await loadError('ftp://keys.example/jwks.json')).toBe(
      `the webhook signer JWKS ftp://… is not an http(s) URL: ${FIX}`,
    );
  });

  it('is loaded once per process and location; a failed load is tried again', async () => {
    routes.set('/flaky', [503, '{}']);
    const options = { timeoutMs: 3_000 };
    await expect(signerJwksFor(`${origin}/flaky`, options)).rejects.toThrow(/HTTP 503/);
    routes.set('/flaky', [200, JSON.stringify({ keys: [PUBLIC] })]);
    const first = await signerJwksFor(`${origin}/flaky`, options);
    routes.set('/flaky', [500, '{}']);
    expect(await signerJwksFor(`${origin}/flaky`, options)).toBe(first);
  });
});

describe('where the location is given', () => {
  it('env ADCP_RUNNER_WEBHOOK_SIGNER_JWKS is the fallback; a location that cannot work is a configuration error', () => {
    const agentUrl = 'http://127.0.0.1:3000/mcp';
    expect(resolveRuntimeConfig({ agentUrl }, { ADCP_RUNNER_WEBHOOK_SIGNER_JWKS: ' keys.json ' })).toMatchObject({
      webhookSignerJwks: 'keys.json',
    });
    expect(resolveRuntimeConfig({ agentUrl }, { ADCP_RUNNER_WEBHOOK_SIGNER_JWKS: 'http://keys.example/j' }).error).toBe(
      `the webhook signer JWKS http://keys.example/j is plain http to a host that is not loopback (keys fetched in cleartext): ${FIX}`,
    );
    expect(
      resolveRuntimeConfig({ agentUrl, allowHttp: true }, { ADCP_RUNNER_WEBHOOK_SIGNER_JWKS: 'http://keys.example/j' })
        .error,
    ).toBeUndefined();
  });

  it('the CLI flag: a file made absolute against the working directory; a bad URL a usage error', () => {
    expect(webhookOptions({ 'webhook-signer-jwks': 'keys.json' }, {}, '/work/app')).toEqual({
      signerJwks: '/work/app/keys.json',
    });
    expect(
      webhookOptions({ 'webhook-receiver': true, 'webhook-signer-jwks': 'https://k.example/j' }, {}, '/w'),
    ).toEqual({
      receiver: 'loopback',
      signerJwks: 'https://k.example/j',
    });
    expect(() => webhookOptions({ 'webhook-signer-jwks': 'ftp://k.example/j' }, {}, '/w')).toThrow(
      `the webhook signer JWKS ftp://… is not an http(s) URL: ${FIX}`,
    );
  });

  it('the plugin option webhooks.signerJwks is a known key', () => {
    expect(() => checkOptions({ webhooks: { signerJwks: 'keys.json' } })).not.toThrow();
  });
});
