/**
 * The SSRF guard (src/transport/url-guard.ts) on URLs the agent supplies: one
 * test per refused target class, each against a real listener on 127.0.0.1
 * that records every TCP connection. The guard's `dial` seam routes every
 * dial to that listener, so a target the guard wrongly let through would be
 * connected to — and counted. Every refusal must leave the count at zero; a
 * positive control shows the same set-up does count an allowed target.
 */
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRuntimeConfig } from '../../src/config.js';
import { OAuthProbes } from '../../src/roles/oauth-probes/probes.js';
import { A2aTransport } from '../../src/transport/a2a.js';
import { McpTransport } from '../../src/transport/mcp.js';
import { probe } from '../../src/transport/probe.js';
import { isLoopbackHost, nonPublicAddress } from '../../src/model/addresses.js';
import {
  agentOriginRedirects,
  guardedFetch,
  guardedGet,
  UrlRefusedError,
  type Resolver,
  type UrlGuardOptions,
} from '../../src/transport/url-guard.js';

/** A listener that counts connections and answers every request 200 {"ok":true}. */
async function listener() {
  let connections = 0;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A tiny "agent" on 127.0.0.1 (the user's configured origin) whose routes are given. */
async function agentServer(routes: Record<string, (res: http.ServerResponse) => void>) {
  const server = http.createServer((req, res) => {
    const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
    if (route) return route(res);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not_found"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const json =
  (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  (res: http.ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

let sink: Awaited<ReturnType<typeof listener>>;
beforeAll(async () => {
  sink = await listener();
});
afterAll(() => sink?.close());

const AGENT = 'https://agent.example/mcp';
/** Names this test controls. */
const NAMES: Record<string, { address: string; family: number }[]> = {
  'public.test': [{ address: '93.184.216.34', family: 4 }],
  'internal.test': [{ address: '10.0.0.5', family: 4 }],
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'cgnat.test': [{ address: '100.64.1.1', family: 4 }],
  'ula.test': [{ address: 'fd00::5', family: 6 }],
  'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'mixed.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ],
};

function guard(more: Partial<UrlGuardOptions> = {}) {
  const lookups: string[] = [];
  const dials: string[] = [];
  const lookup: Resolver = async (name) => {
    lookups.push(name);
    const found = NAMES[name];
    if (!found) throw new Error(`getaddrinfo ENOTFOUND ${name}`);
    return found;
  };
  const options: UrlGuardOptions = {
    agentUrl: AGENT,
    lookup,
    dial: (address) => {
      dials.push(address);
      return '127.0.0.1';
    },
    ...more,
  };
  return { options, lookups, dials };
}

const bounds = { timeoutMs: 3_000, maxResponseBytes: 1024 * 1024 };

async function refusal(url: string, more: Partial<UrlGuardOptions> = {}) {
  const g = guard(more);
  const before = sink.connections;
  const error = await guardedGet(url, g.options, bounds).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error: error as Error | undefined, connections: sink.connections - before, ...g };
}

describe('address classes', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'RFC 1918'],
    ['172.16.0.1', 'RFC 1918'],
    ['172.31.255.255', 'RFC 1918'],
    ['192.168.1.1', 'RFC 1918'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'unspecified IPv6'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped IPv6 address of 127.0.0.1, a loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped IPv6 address of 127.0.0.1, a loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped IPv6 address of 10.0.0.1, a private'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped IPv6 address of 169.254.169.254, a link-local'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::8.8.8.8', 'IPv4-compatible'],
    ['::ffff:0:10.0.0.1', 'IPv4-translated'],
    ['64:ff9b::a00:1', 'NAT64 address of 10.0.0.1'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['2002:a9fe:a9fe::1', '6to4 address of 169.254.169.254'],
  ])('%s is refused (%s)', (address, what) => {
    expect(nonPublicAddress(address)).toContain(what);
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '100.63.255.255',
    '100.128.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '192.169.0.1',
    '169.255.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (address) => {
    expect(nonPublicAddress(address)).toBeUndefined();
  });

  it('loopback hosts: localhost names, 127/8, ::1', () => {
    for (const host of ['localhost', 'api.localhost', 'LOCALHOST.', '127.0.0.1', '127.9.9.9', '[::1]'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['10.0.0.1', 'localhost.example', 'example.com', '[::2]'])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});

describe('each refused target class: refused before any connection is opened', () => {
  it('the positive control: an allowed public target IS dialled, and the listener counts it', async () => {
    const { error, connections, dials, lookups } = await refusal(`https://public.test:${sink.port}/meta`);
    // The listener speaks plain HTTP, so the TLS handshake fails — after the connection was opened.
    expect(error).toBeDefined();
    expect(error).not.toBeInstanceOf(UrlRefusedError);
    expect(connections).toBe(1);
    expect(lookups).toEqual(['public.test']);
    expect(dials).toEqual(['93.184.216.34']);
  });

  it.each([
    ['loopback', 'https://127.0.0.1:PORT/', 'a loopback address'],
    ['loopback (127/8)', 'https://127.1.2.3:PORT/', 'a loopback address'],
    [
      'loopback (a numeric host URL parsers turn into 127.0.0.1)',
      'https://2130706433:PORT/',
      '127.0.0.1 is a loopback address',
    ],
    ['loopback (hex)', 'https://0x7f.1:PORT/', '127.0.0.1 is a loopback address'],
    ['RFC 1918 10/8', 'https://10.1.2.3:PORT/', 'RFC 1918'],
    ['RFC 1918 172.16/12', 'https://172.20.0.1:PORT/', 'RFC 1918'],
    ['RFC 1918 192.168/16', 'https://192.168.1.1:PORT/', 'RFC 1918'],
    ['link-local: the cloud metadata endpoint', 'https://169.254.169.254:PORT/latest/meta-data/', 'link-local'],
    ['CGNAT', 'https://100.64.0.1:PORT/', 'carrier-grade NAT'],
    ['unspecified', 'https://0.0.0.0:PORT/', 'unspecified'],
    ['IPv6 loopback', 'https://[::1]:PORT/', 'IPv6 loopback'],
    ['IPv6 unspecified', 'https://[::]:PORT/', 'unspecified IPv6'],
    ['IPv6 ULA', 'https://[fd00::1]:PORT/', 'unique local'],
    ['IPv6 link-local', 'https://[fe80::1]:PORT/', 'IPv6 link-local'],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]:PORT/', 'IPv4-mapped IPv6 address of 127.0.0.1'],
    [
      'IPv4-mapped IPv6 metadata endpoint',
      'https://[::ffff:169.254.169.254]:PORT/',
      'IPv4-mapped IPv6 address of 169.254.169.254',
    ],
    ['IPv4-compatible IPv6', 'https://[::127.0.0.1]:PORT/', 'IPv4-compatible'],
    ['the name localhost', 'https://localhost:PORT/', 'localhost is a loopback name'],
    ['a *.localhost name', 'https://auth.localhost:PORT/', 'auth.localhost is a loopback name'],
    ['plain http', 'http://public.test:PORT/', 'is not https'],
  ])('%s', async (_, template, why) => {
    const { error, connections, lookups, dials } = await refusal(template.replace('PORT', String(sink.port)));
    expect(error).toBeInstanceOf(UrlRefusedError);
    expect(error!.message).toContain(why);
    expect(connections).toBe(0);
    expect(dials).toEqual([]);
    // Literal addresses and loopback names are refused without even a DNS query.
    expect(lookups).toEqual([]);
  });

  it.each([
    ['RFC 1918', 'internal.test', 'internal.test resolves to 10.0.0.5, a private address (RFC 1918'],
    ['link-local (metadata)', 'metadata.test', 'metadata.test resolves to 169.254.169.254, a link-local address'],
    ['CGNAT', 'cgnat.test', 'cgnat.test resolves to 100.64.1.1, a carrier-grade NAT address'],
    ['IPv6 ULA', 'ula.test', 'ula.test resolves to fd00::5, an IPv6 unique local address'],
    [
      'IPv4-mapped loopback',
      'mapped.test',
      'mapped.test resolves to ::ffff:127.0.0.1, an IPv4-mapped IPv6 address of 127.0.0.1',
    ],
    ['one bad address among public ones', 'mixed.test', 'mixed.test resolves to 127.0.0.1, a loopback address'],
  ])('a DNS name resolving to %s', async (_, name, why) => {
    const { error, connections, lookups, dials } = await refusal(
      `https://${name}:${sink.port}/.well-known/oauth-authorization-server`,
    );
    expect(error).toBeInstanceOf(UrlRefusedError);
    expect(error!.message).toContain(why);
    expect(lookups).toEqual([name]);
    expect(dials).toEqual([]);
    expect(connections).toBe(0);
  });

  it("this machine's own host name, resolved by the system resolver (no custom lookup)", async (ctx) => {
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (addresses.length === 0 || addresses.every((a) => nonPublicAddress(a.address) === undefined)) return ctx.skip();
    const before = sink.connections;
    const error = await guardedGet(`https://${name}:${sink.port}/`, { agentUrl: AGENT }, bounds).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UrlRefusedError);
    expect((error as Error).message).toMatch(new RegExp(`^${name.toLowerCase()} resolves to `));
    expect(sink.connections - before).toBe(0);
  });

  it('a redirect to another host (a refused one, and even a public one) is not followed; a same-host redirect is', async () => {
    const agent = await agentServer({
      '/to-loopback': json({}, 302, { location: `http://localhost:${sink.port}/steal` }),
      '/to-metadata': json({}, 307, { location: `https://metadata.test:${sink.port}/latest/meta-data/` }),
      '/to-public': json({}, 301, { location: `https://public.test:${sink.port}/` }),
      '/same-host': json({}, 302, { location: '/final' }),
      '/final': json({ ok: 'final' }),
      '/loop': json({}, 302, { location: '/loop' }),
    });
    try {
      for (const path of ['/to-loopback', '/to-metadata', '/to-public']) {
        const before = sink.connections;
        const g = guard({ agentUrl: `${agent.origin}/mcp` });
        const error = await guardedGet(`${agent.origin}${path}`, g.options, bounds).catch((e: unknown) => e);
        expect(error, path).toBeInstanceOf(UrlRefusedError);
        expect((error as Error).message).toMatch(/another host \(redirects are followed on the same host only\)/);
        expect(sink.connections - before, path).toBe(0);
        expect(g.lookups).toEqual([]);
      }
      const followed = await guardedGet(`${agent.origin}/same-host`, { agentUrl: `${agent.origin}/mcp` }, bounds);
      expect(followed).toMatchObject({
        status: 200,
        url: `${agent.origin}/final`,
        redirects: [`${agent.origin}/final`],
      });
      expect(JSON.parse(followed.text)).toEqual({ ok: 'final' });
      await expect(guardedGet(`${agent.origin}/loop`, { agentUrl: `${agent.origin}/mcp` }, bounds)).rejects.toThrow(
        /more than 3 redirects/,
      );
    } finally {
      await agent.close();
    }
  });
});

describe('pinning, bounds and allowHttp', () => {
  it('the name is resolved once and the connection goes to the vetted address (a rebinding DNS answer is never asked for)', async () => {
    let answers = 0;
    const flip: Resolver = async () =>
      answers++ === 0 ? [{ address: '203.0.113.7', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    const dials: string[] = [];
    await guardedGet(
      `https://flip.test:${sink.port}/`,
      { agentUrl: AGENT, lookup: flip, dial: (a) => (dials.push(a), '127.0.0.1') },
      bounds,
    ).catch(() => {});
    expect(answers).toBe(1);
    expect(dials).toEqual(['203.0.113.7']);
  });

  it('resolution is bounded by the timeout', async () => {
    const never: Resolver = () => new Promise(() => {});
    const started = performance.now();
    await expect(
      guardedGet('https://slow.test/', { agentUrl: AGENT, lookup: never }, { ...bounds, timeoutMs: 200 }),
    ).rejects.toThrow(/timed out after 200 ms resolving slow.test/);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('the body is bounded in size', async () => {
    const agent = await agentServer({ '/big': json({ pad: 'x'.repeat(5_000) }) });
    try {
      await expect(
        guardedGet(
          `${agent.origin}/big`,
          { agentUrl: `${agent.origin}/mcp` },
          { timeoutMs: 3_000, maxResponseBytes: 1_000 },
        ),
      ).rejects.toThrow(/exceeded 1000 bytes/);
    } finally {
      await agent.close();
    }
  });

  it('allowHttp (local development) lets http and private targets through — still pinned to what was resolved', async () => {
    const g = guard({ allowHttp: true });
    const answer = await guardedGet(`http://internal.test:${sink.port}/x`, g.options, bounds);
    expect(answer.status).toBe(200);
    expect(g.dials).toEqual(['10.0.0.5']);
    const literal = await guardedGet(`http://127.0.0.1:${sink.port}/x`, { agentUrl: AGENT, allowHttp: true }, bounds);
    expect(literal.status).toBe(200);
  });

  it('as a fetch function (GET only) for code that takes one: the same guard', async () => {
    const g = guard();
    const fetch = guardedFetch(g.options, bounds);
    const before = sink.connections;
    await expect(fetch(`https://metadata.test:${sink.port}/jwks.json`)).rejects.toThrow(
      /metadata\.test resolves to 169\.254\.169\.254/,
    );
    await expect(fetch(`https://public.test:${sink.port}/`, { method: 'POST' })).rejects.toThrow(
      'the guarded fetch sends GET only, not POST',
    );
    expect(sink.connections - before).toBe(0);
    const allowed = await guardedFetch({ agentUrl: AGENT, allowHttp: true }, bounds)(
      `http://127.0.0.1:${sink.port}/jwks.json`,
      { headers: { accept: 'application/json' } },
    );
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ ok: true });
  });

  it("the agent's own origin is the user's choice: never vetted, never resolved by the guard", async () => {
    const g = guard({ agentUrl: `http://127.0.0.1:${sink.port}/mcp` });
    const answer = await guardedGet(
      `http://127.0.0.1:${sink.port}/.well-known/oauth-protected-resource/mcp`,
      g.options,
      bounds,
    );
    expect(answer.status).toBe(200);
    expect(g.lookups).toEqual([]);
    expect(g.dials).toEqual([]);
  });
});

describe('where the runner applies it', () => {
  it('the RFC 8414 probe: an issuer named in the metadata that resolves to a private address is not fetched', async () => {
    const agent = await agentServer({
      '/.well-known/oauth-protected-resource/mcp': json({
        resource: 'x',
        authorization_servers: [`https://internal.test:${sink.port}`],
      }),
    });
    try {
      const g = guard({ agentUrl: `${agent.origin}/mcp` });
      const probes = new OAuthProbes({
        agentUrl: `${agent.origin}/mcp`,
        timeoutMs: 3_000,
        maxResponseBytes: 1024 * 1024,
        guard: { lookup: g.options.lookup, dial: g.options.dial },
      });
      const phase = { id: 'oauth', title: 'oauth', steps: [] } as never;
      const before = sink.connections;
      const prm = await probes.run('protected_resource_metadata', phase);
      expect('exchange' in prm && prm.exchange?.response?.status).toBe(200);
      const as = await probes.run('oauth_auth_server_metadata', phase);
      expect('exchange' in as && as.exchange?.transportError).toBe(
        `the runner will not fetch https://internal.test:${sink.port}/.well-known/oauth-authorization-server: internal.test resolves to 10.0.0.5, a private address (RFC 1918, 10.0.0.0/8)`,
      );
      expect(g.lookups).toEqual(['internal.test']);
      expect(sink.connections - before).toBe(0);
    } finally {
      await agent.close();
    }
  });

  it('the RFC 8414 probe: a literal private issuer is refused without a lookup', async () => {
    const agent = await agentServer({
      '/.well-known/oauth-protected-resource/mcp': json({ authorization_servers: ['https://169.254.169.254'] }),
    });
    try {
      const probes = new OAuthProbes({
        agentUrl: `${agent.origin}/mcp`,
        timeoutMs: 3_000,
        maxResponseBytes: 1024 * 1024,
      });
      const phase = { id: 'oauth', title: 'oauth', steps: [] } as never;
      await probes.run('protected_resource_metadata', phase);
      expect(await probes.run('oauth_auth_server_metadata', phase)).toEqual({
        error:
          'the runner will not fetch the authorization server the agent named: 169.254.169.254 is a link-local address (169.254.0.0/16, cloud metadata endpoints included)',
      });
    } finally {
      await agent.close();
    }
  });

  it('a probe that is refused is a transport error naming the guard, with nothing recorded as an answer', async () => {
    const exchange = await probe('oauth_auth_server_metadata', `https://metadata.test:${sink.port}/`, {
      agentUrl: AGENT,
      timeoutMs: 3_000,
      maxResponseBytes: 1024,
      guard: { lookup: guard().options.lookup },
    });
    expect(exchange.response).toBeUndefined();
    expect(exchange.extraction).toEqual({ path: 'none', note: 'not sent: refused by the SSRF guard' });
    expect(exchange.transportError).toMatch(/metadata\.test resolves to 169\.254\.169\.254/);
  });

  it("an A2A card's endpoint on another host that resolves to a private address: no call, no connection, no credentials sent", async () => {
    const agent = await agentServer({
      '/a2a/.well-known/agent-card.json': json({
        name: 'x',
        url: `https://ula.test:${sink.port}/a2a`,
        skills: [{ id: 'get_products' }],
      }),
    });
    try {
      const g = guard({ agentUrl: `${agent.origin}/a2a` });
      const transport = new A2aTransport({
        url: `${agent.origin}/a2a`,
        maxResponseBytes: 1024 * 1024,
        urlGuard: { lookup: g.options.lookup, dial: g.options.dial },
      });
      const before = sink.connections;
      const answer = await transport.call(
        'get_products',
        {},
        { credentials: { kind: 'bearer', token: 'demo-secret' }, timeoutMs: 3_000 },
      );
      await transport.close();
      expect(answer.transportError).toMatch(
        /names its JSON-RPC endpoint https:\/\/ula\.test:\d+\/a2a, which the runner does not call \(ula\.test resolves to fd00::5, an IPv6 unique local address/,
      );
      expect(sink.connections - before).toBe(0);
      expect(g.dials).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it("an A2A card's endpoint on a public host: calls are pinned to the vetted address", async () => {
    const agent = await agentServer({
      '/a2a/.well-known/agent-card.json': json({
        name: 'x',
        url: `https://public.test:${sink.port}/a2a`,
        skills: [{ id: 'get_products' }],
      }),
    });
    try {
      const g = guard({ agentUrl: `${agent.origin}/a2a` });
      const transport = new A2aTransport({
        url: `${agent.origin}/a2a`,
        maxResponseBytes: 1024 * 1024,
        urlGuard: { lookup: g.options.lookup, dial: g.options.dial },
      });
      const before = sink.connections;
      const answer = await transport.call('get_products', {}, { credentials: { kind: 'none' }, timeoutMs: 3_000 });
      await transport.close();
      // Dialled (TLS then fails against the plain listener): the vetted address, once resolved.
      expect(answer.transportError).toBeDefined();
      expect(g.lookups).toEqual(['public.test']);
      expect(g.dials).toEqual(['93.184.216.34']);
      expect(sink.connections - before).toBe(1);
    } finally {
      await agent.close();
    }
  });
});

describe("redirects of the agent's own endpoint (MCP)", () => {
  it('a redirect to another origin is refused before it is followed: no connection, no credentials sent', async () => {
    const agent = await agentServer({ '/mcp': json({}, 307, { location: `http://localhost:${sink.port}/mcp` }) });
    try {
      const transport = new McpTransport({ url: `${agent.origin}/mcp`, maxResponseBytes: 1024 * 1024 });
      const before = sink.connections;
      const answer = await transport.call(
        'list_creatives',
        {},
        { credentials: { kind: 'bearer', token: 'demo-secret' }, timeoutMs: 3_000 },
      );
      await transport.close();
      expect(answer.transportError).toContain(
        `the agent redirected ${agent.origin}/mcp to http://localhost:${sink.port}, another origin (the runner follows redirects on the agent's own origin only)`,
      );
      expect(sink.connections - before).toBe(0);
    } finally {
      await agent.close();
    }
  });

  it('307 / 308 on the same origin are followed with the same method and body; 301-303 are the answer', async () => {
    const seen: string[] = [];
    const routes: Record<string, [number, string?]> = {
      '/mcp': [307, '/mcp/'],
      '/mcp/': [308, '/v2/mcp'],
      '/v2/mcp': [200],
      '/moved': [301, '/mcp'],
      '/loop': [307, '/loop'],
    };
    const fake = (async (url: string | URL, init?: RequestInit) => {
      const path = new URL(String(url)).pathname;
      seen.push(`${init?.method} ${path} ${init?.body} ${init?.redirect}`);
      const [status, location] = routes[path]!;
      return new Response(status === 200 ? '{}' : null, { status, headers: location ? { location } : {} });
    }) as never;
    const fetch = agentOriginRedirects(fake, 'http://127.0.0.1:9/mcp');
    expect((await fetch('http://127.0.0.1:9/mcp', { method: 'POST', body: '{"a":1}' })).status).toBe(200);
    expect(seen).toEqual(['POST /mcp {"a":1} manual', 'POST /mcp/ {"a":1} manual', 'POST /v2/mcp {"a":1} manual']);
    expect((await fetch('http://127.0.0.1:9/moved', { method: 'POST', body: '{}' })).status).toBe(301);
    await expect(fetch('http://127.0.0.1:9/loop', { method: 'POST', body: '{}' })).rejects.toThrow(
      /more than 3 redirects/,
    );
  });
});

describe('the agent URL itself (configuration)', () => {
  it('plain http to a host that is not loopback is a configuration error naming the fix, unless allowHttp', () => {
    const error = resolveRuntimeConfig({ agentUrl: 'http://agent.example/mcp' }, {}).error;
    expect(error).toBe(
      'agent URL http://agent.example/mcp is plain http to a host that is not loopback: the credentials would go out in cleartext. Use https://, or for a development agent set agent.allowHttp: true in adcpStoryboards() (env ADCP_ALLOW_HTTP=1, CLI --allow-http); results are then not publishable',
    );
    expect(resolveRuntimeConfig({ agentUrl: 'http://10.0.0.8:3000/mcp' }, {}).error).toMatch(/plain http/);
    expect(resolveRuntimeConfig({ agentUrl: 'http://agent.example/mcp', allowHttp: true }, {}).error).toBeUndefined();
    const fromEnv = resolveRuntimeConfig({ agentUrl: 'http://agent.example/mcp' }, { ADCP_ALLOW_HTTP: '1' });
    expect(fromEnv.allowHttp).toBe(true);
    expect(fromEnv.error).toBeUndefined();
    for (const ok of [
      'https://agent.example/mcp',
      'http://127.0.0.1:3000/mcp',
      'http://localhost:3000/mcp',
      'http://[::1]:3000/mcp',
    ]) {
      expect(resolveRuntimeConfig({ agentUrl: ok }, {}).error, ok).toBeUndefined();
    }
  });
});
