/**
 * createAdcpClient against the real fixture agent over real sockets, MCP and
 * A2A: per-call credentials (the client's, 'none', a token, Basic), the
 * engine's response record, the URL guard, timeouts, close().
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createAdcpClient, type AdcpClient } from '../../src/index.js';
import { repoRoot } from '../helpers/run-vitest.js';

const origin = () => inject('agentOrigin');
const endpoint = (protocol: 'mcp' | 'a2a', behaviours?: string) =>
  behaviours ? `${origin()}/x/${behaviours}/${protocol}` : `${origin()}/${protocol}`;
const BASIC = { username: 'fixture-brand', password: 'fixture-brand-basic-v1' };

const clients: AdcpClient[] = [];
const client = (...args: Parameters<typeof createAdcpClient>) => {
  const made = createAdcpClient(...args);
  clients.push(made);
  return made;
};
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

describe.each(['mcp', 'a2a'] as const)('over %s', (protocol) => {
  it("sends the client's credentials by default and records the answer as the engine does", async () => {
    const adcp = client({ url: endpoint(protocol), protocol, auth: 'demo-client-test' });
    const res = await adcp.call('list_creatives', { context: { correlation_id: 'c-1' } });
    expect(res).toMatchObject({
      task: 'list_creatives',
      status: 200,
      request: { transport: protocol, operation: 'list_creatives', payload: { context: { correlation_id: 'c-1' } } },
      response: { transport: protocol, status: 200 },
      extraction: { path: 'structured_content' },
      data: { context: { correlation_id: 'c-1' }, creatives: expect.any(Array) },
    });
    expect(res.transportError).toBeUndefined();
    // Headers pass the contract's allowlist only (names lower-cased).
    expect(Object.keys(res.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(res.headers['content-type']).toMatch(/json|event-stream/);
  });

  it("'none' drops the credentials for one call; a token or Basic replaces them", async () => {
    const adcp = client({ url: endpoint(protocol), protocol, auth: 'demo-client-test' });
    const refused = await adcp.call('list_creatives', {}, { auth: 'none' });
    expect(refused).toMatchObject({
      status: 401,
      extraction: { path: 'error' },
      data: { adcp_error: { code: 'AUTH_REQUIRED' } },
      rpcError: { code: -32028 },
    });
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer realm=/);
    expect((await adcp.call('list_creatives', {}, { auth: { basic: BASIC } })).status).toBe(200);
    expect(
      (await adcp.call('list_creatives', {}, { auth: { basic: `${BASIC.username}:${BASIC.password}` } })).status,
    ).toBe(200);
    const wrong = await adcp.call('list_creatives', {}, { auth: 'not-a-demo-key' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  it('a client without auth sends none', async () => {
    expect((await client({ url: endpoint(protocol), protocol }).call('list_creatives')).status).toBe(401);
  });

  it('a 403 mode comes back as a 403 answer, not an error', async () => {
    const res = await client({ url: endpoint(protocol, 'forbid_unauthenticated'), protocol }).call('list_creatives');
    expect(res).toMatchObject({ status: 403, data: { adcp_error: { code: 'AUTH_REQUIRED' } } });
    expect(res.headers['www-authenticate']).toBeUndefined();
  });
});

describe('createAdcpClient', () => {
  it('reports a timeout in the record instead of throwing', async () => {
    const res = await client({ url: endpoint('mcp', 'missing_auth_check+hang'), timeoutMs: 300 }).call(
      'list_creatives',
    );
    expect(res.status).toBeUndefined();
    expect(res.transportError).toMatch(/no answer within 300 ms/);
  });

  it('opens new sessions after close()', async () => {
    const adcp = createAdcpClient({ url: endpoint('mcp'), auth: 'demo-client-test' });
    expect((await adcp.call('list_creatives')).status).toBe(200);
    await adcp.close();
    expect((await adcp.call('list_creatives')).status).toBe(200);
    await adcp.close();
  });

  it('refuses, as the plugin does, a plain-http agent that is not loopback unless allowHttp', () => {
    expect(() => createAdcpClient({ url: 'http://10.1.2.3/mcp' })).toThrow(
      'createAdcpClient: http://10.1.2.3/mcp is plain http to a host that is not loopback, so credentials would go out in cleartext. Use https://, or for a development agent pass allowHttp: true',
    );
    expect(() => createAdcpClient({ url: 'http://10.1.2.3/mcp', allowHttp: true })).not.toThrow();
    expect(() => createAdcpClient({ url: 'https://agent.example.com/mcp' })).not.toThrow();
  });

  it('says what it wants when given a wrong url, protocol or auth', async () => {
    expect(() => createAdcpClient({ url: 'agent.example.com' })).toThrow(
      /url must be the agent's http\(s\) URL, e\.g\. http:\/\/127\.0\.0\.1:3000\/mcp; received "agent\.example\.com"/,
    );
    expect(() => createAdcpClient({ url: endpoint('mcp'), protocol: 'grpc' as 'mcp' })).toThrow(
      /protocol is "grpc"; use 'mcp' or 'a2a'/,
    );
    expect(() => createAdcpClient({ url: endpoint('mcp'), auth: { basic: 'no-colon' } })).toThrow(
      /\{ basic: '…' \} must be 'username:password'/,
    );
    const adcp = client({ url: endpoint('mcp') });
    await expect(adcp.call('list_creatives', {}, { auth: { bearer: 'x' } as never })).rejects.toThrow(
      /auth must be 'none', a Bearer token string, or \{ basic: \{ username, password \} \}/,
    );
    await expect(adcp.call('list_creatives', {}, { auth: ' ' })).rejects.toThrow(/the auth token is empty/);
  });
});

describe('outside Vitest', () => {
  it("loads, with Jest's matchers entry, without importing vitest (a Jest project has none)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-no-vitest-'));
    try {
      // A loader hook that fails any import of vitest, then the package's main entry and vitest-adcp/matchers/jest.
      writeFileSync(
        join(dir, 'hook.mjs'),
        "export async function resolve(s, c, next) { if (/^(vitest|@vitest\\/)/.test(s)) throw new Error('vitest imported by ' + c.parentURL); return next(s, c); }\n",
      );
      writeFileSync(
        join(dir, 'register.mjs'),
        `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hook.mjs')).href)});\n`,
      );
      const script = [
        `const { createAdcpClient } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'src/index.ts')).href)});`,
        "globalThis.expect = { extend: (m) => console.log('extend ' + Object.keys(m).join(' ')) };",
        `await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'src/matchers/jest.ts')).href)});`,
        "console.log('client ' + typeof createAdcpClient);",
      ].join('\n');
      writeFileSync(join(dir, 'jest-like.mjs'), script);
      const result = spawnSync(
        process.execPath,
        ['--import', pathToFileURL(join(dir, 'register.mjs')).href, '--import', 'tsx', join(dir, 'jest-like.mjs')],
        { cwd: repoRoot, encoding: 'utf8' },
      );
      expect(result.stderr).not.toMatch(/vitest imported/);
      expect(result.stdout).toContain(
        'extend toRejectUnauthenticated toExposeWwwAuthenticate toMatchAdcpSchema toHaveAdcpErrorCode toEchoContext toPassStoryboardStep',
      );
      expect(result.stdout).toContain('client function');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
