/**
 * Hostile agents against the transports, issue 20 cases 6–8, each against a real server on 127.0.0.1 speaking the
 * wire protocol by hand (node:http), so the hostile bytes are exactly what an attacker can send:
 *
 * 6. a server-sent-events ping flood: server→client requests in the answer of one MCP call are answered at most
 *    MAX_SERVER_REQUESTS_PER_CALL times, then the call fails in one line naming the bound (src/transport/mcp.ts);
 * 7. an A2A `tasks/get` answering another task (its id, its context, no id) is a transport error on that call, in one
 *    line (src/transport/a2a.ts);
 * 8. an A2A card naming a loopback alias of the agent's host (127.0.0.2, [::1], localhost) on the same port is
 *    another host: never connected to, the bearer never sent (src/transport/url-guard.ts sameOrigin, a2a.ts
 *    guardEndpoint). MCP's only agent-supplied URL on the call path, a redirect's Location, holds the same rule.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2aTransport } from '../../src/transport/a2a.js';
import { MAX_SERVER_REQUESTS_PER_CALL } from '../../src/transport/mcp-server-requests.js';
import { McpTransport } from '../../src/transport/mcp.js';
import type { CallOptions } from '../../src/transport/types.js';
import { sameOrigin, vetUrl } from '../../src/transport/url-guard.js';
import { readJson } from '../helpers/read-json.js';

const TOKEN = 'hostile-transport-secret-token';
const opts = (more: Partial<CallOptions> = {}): CallOptions => ({
  credentials: { kind: 'bearer', token: TOKEN },
  timeoutMs: 8_000,
  ...more,
});

async function listen(server: http.Server, host = '127.0.0.1', port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const sendJson = (res: http.ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

// ─── 6. MCP: server→client request flood ────────────────────────────────────

/**
 * A Streamable HTTP MCP agent by hand. `tools/call` answers with an SSE stream that first sends
 * `arguments.pings` JSON-RPC `ping` requests (server→client), then the tool result; `arguments.batch` sends them
 * as one JSON batch answer instead. It counts every answer the client POSTs back.
 */
async function mcpFloodAgent() {
  const seen = { answers: 0, initialize: 0, calls: 0 };
  /** Pings sent in the SSE answer of the next `initialize` (then back to a JSON answer). */
  const flood = { initialize: 0 };
  const server = http.createServer(async (req, res) => {
    if (req.method === 'GET') return void res.writeHead(405).end();
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    const body = await readJson(req);
    if (!body || typeof body !== 'object') return sendJson(res, { error: 'bad' }, 400);
    if (body.method === undefined) {
      seen.answers++;
      return void res.writeHead(202).end();
    }
    if (body.id === undefined) return void res.writeHead(202).end();
    if (body.method === 'initialize') {
      seen.initialize++;
      if (flood.initialize > 0) {
        const pings = flood.initialize;
        flood.initialize = 0;
        const result = {
          jsonrpc: '2.0',
          id: body.id,
          result: {
            protocolVersion: body.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'ping-flood', version: '1.0.0' },
          },
        };
        return writeSse(
          res,
          Array.from({ length: pings }, (_, i) => ({ jsonrpc: '2.0', id: `init-ping-${i}`, method: 'ping' })),
          result,
          { 'mcp-session-id': `s-${seen.initialize}` },
        );
      }
      return sendJson(
        res,
        {
          jsonrpc: '2.0',
          id: body.id,
          result: {
            protocolVersion: body.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'ping-flood', version: '1.0.0' },
          },
        },
        200,
        { 'mcp-session-id': `s-${seen.initialize}` },
      );
    }
    if (body.method === 'tools/list')
      return sendJson(res, {
        jsonrpc: '2.0',
        id: body.id,
        result: { tools: [{ name: 'get_products', inputSchema: { type: 'object' } }] },
      });
    if (body.method !== 'tools/call')
      return sendJson(res, { jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'no' } });
    seen.calls++;
    const { pings = 0, batch = false } = body.params.arguments ?? {};
    const result = { jsonrpc: '2.0', id: body.id, result: { content: [], structuredContent: { products: [], pings } } };
    const ping = (i: number) => ({ jsonrpc: '2.0', id: `ping-${seen.calls}-${i}`, method: 'ping' });
    if (batch) return sendJson(res, [...Array.from({ length: pings }, (_, i) => ping(i)), result]);
    return writeSse(
      res,
      Array.from({ length: pings }, (_, i) => ping(i)),
      result,
    );
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/mcp`, seen, flood, close: () => close(server) };
}

/** An SSE answer: each message an event, with backpressure, until the client goes away. */
async function writeSse(
  res: http.ServerResponse,
  before: unknown[],
  last: unknown,
  headers: Record<string, string> = {},
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  res.on('error', () => {});
  for (const message of before) {
    if (res.destroyed) return;
    if (!res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    }
  }
  if (!res.destroyed) res.end(`event: message\ndata: ${JSON.stringify(last)}\n\n`);
}

describe('6. MCP: server→client requests in one answer are bounded', () => {
  let agent: Awaited<ReturnType<typeof mcpFloodAgent>>;
  beforeAll(async () => {
    agent = await mcpFloodAgent();
  });
  afterAll(() => agent?.close());

  /** Lets answers still in flight land before they are counted (longer only makes the bound's check stricter). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

  it('a few pings during a call are answered and the call passes, each call counted afresh', async () => {
    const transport = new McpTransport({ url: agent.url, maxResponseBytes: 8 << 20 });
    try {
      const before = agent.seen.answers;
      for (let i = 0; i < 3; i++) {
        const answer = await transport.call('get_products', { pings: MAX_SERVER_REQUESTS_PER_CALL - 2 }, opts());
        expect(answer.transportError).toBeUndefined();
        expect(answer.data).toEqual({ products: [], pings: MAX_SERVER_REQUESTS_PER_CALL - 2 });
      }
      // The answers are POSTed as the pings arrive, not awaited by the call: wait for them to land (a loaded machine).
      const expected = 3 * (MAX_SERVER_REQUESTS_PER_CALL - 2);
      for (
        const deadline = performance.now() + 10_000;
        agent.seen.answers - before < expected && performance.now() < deadline;
      )
        await settle();
      expect(agent.seen.answers - before).toBe(expected);
    } finally {
      await transport.close();
    }
  });

  for (const batch of [false, true]) {
    it(`a flood of 5,000 pings ${batch ? 'in one JSON batch answer' : 'in the SSE stream of one answer'}: at most ${MAX_SERVER_REQUESTS_PER_CALL} answered, the call fails in one line naming the bound, the next call is clean`, async () => {
      const transport = new McpTransport({ url: agent.url, maxResponseBytes: 8 << 20 });
      try {
        const before = agent.seen.answers;
        const initialized = agent.seen.initialize;
        const started = performance.now();
        const answer = await transport.call('get_products', { pings: 5_000, batch }, opts());
        const took = performance.now() - started;
        await settle();
        const answered = agent.seen.answers - before;
        expect(answered, `${answered} server→client requests answered`).toBeLessThanOrEqual(
          MAX_SERVER_REQUESTS_PER_CALL,
        );
        expect(answer.transportError).toBe(
          `the agent sent more than ${MAX_SERVER_REQUESTS_PER_CALL} server-to-client JSON-RPC requests during one call (the last one: ping); the runner answers at most ${MAX_SERVER_REQUESTS_PER_CALL} per call (MAX_SERVER_REQUESTS_PER_CALL), so the call was stopped and the session dropped`,
        );
        expect(answer.transportError).not.toMatch(/[\r\n]/);
        expect(answer.data).toBeUndefined();
        expect(took).toBeLessThan(5_000);
        // The session was dropped: the next call opens a new one and is not delayed or disturbed by the flood.
        const next = await transport.call('get_products', { pings: 1 }, opts());
        expect(next.transportError).toBeUndefined();
        expect(next.data).toEqual({ products: [], pings: 1 });
        expect(agent.seen.initialize - initialized).toBe(2);
      } finally {
        await transport.close();
      }
    });
  }

  it('a flood in the answer to initialize: the same bound, the same one-line reason, and the next call opens a clean session', async () => {
    const transport = new McpTransport({ url: agent.url, maxResponseBytes: 8 << 20 });
    try {
      const before = agent.seen.answers;
      agent.flood.initialize = 5_000;
      const answer = await transport.call('get_products', { pings: 0 }, opts());
      await settle();
      expect(agent.seen.answers - before).toBeLessThanOrEqual(MAX_SERVER_REQUESTS_PER_CALL);
      expect(answer.transportError).toMatch(
        new RegExp(
          `^the agent sent more than ${MAX_SERVER_REQUESTS_PER_CALL} server-to-client JSON-RPC requests during one call \\(the last one: ping\\); `,
        ),
      );
      const next = await transport.call('get_products', { pings: 0 }, opts());
      expect(next.transportError).toBeUndefined();
      expect(next.data).toEqual({ products: [], pings: 0 });
    } finally {
      await transport.close();
    }
  });
});

// ─── 7. A2A: tasks/get answering another task ───────────────────────────────

type PollMode = 'same' | 'other-id' | 'other-context' | 'no-id' | 'message';

/**
 * An A2A agent by hand: its card names its own endpoint; `message/send` answers a working Task (`task-mine` in
 * `ctx-mine`); `tasks/get` answers what the path's mode says, a completed Task that would pass.
 */
async function a2aPollAgent() {
  const polled: unknown[] = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const [, mode] = url.pathname.split('/') as [string, PollMode];
    if (req.method === 'GET' && url.pathname.endsWith('/.well-known/agent-card.json')) {
      return sendJson(res, {
        name: 'poll',
        url: `http://${req.headers.host}/${mode}/a2a`,
        skills: [{ id: 'get_products' }],
      });
    }
    if (req.method !== 'POST') return sendJson(res, { error: 'not_found' }, 404);
    const body = await readJson(req);
    const done = (id: string | undefined, contextId: string) => ({
      kind: 'task',
      ...(id === undefined ? {} : { id }),
      contextId,
      status: { state: 'completed' },
      artifacts: [{ artifactId: 'a1', parts: [{ kind: 'data', data: { products: [] } }] }],
    });
    if (body.method === 'message/send')
      return sendJson(res, {
        jsonrpc: '2.0',
        id: body.id,
        result: { kind: 'task', id: 'task-mine', contextId: 'ctx-mine', status: { state: 'working' } },
      });
    if (body.method !== 'tasks/get')
      return sendJson(res, { jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'no' } });
    polled.push(body.params);
    const result =
      mode === 'same'
        ? done('task-mine', 'ctx-mine')
        : mode === 'other-id'
          ? done('task-other', 'ctx-mine')
          : mode === 'other-context'
            ? done('task-mine', 'ctx-other')
            : mode === 'no-id'
              ? done(undefined, 'ctx-mine')
              : { kind: 'message', messageId: 'm1', role: 'agent', parts: [{ kind: 'data', data: { products: [] } }] };
    return sendJson(res, { jsonrpc: '2.0', id: body.id, result });
  });
  const port = await listen(server);
  return { urlFor: (mode: PollMode) => `http://127.0.0.1:${port}/${mode}/a2a`, polled, close: () => close(server) };
}

describe('7. A2A: a tasks/get answer must be the task asked for', () => {
  let agent: Awaited<ReturnType<typeof a2aPollAgent>>;
  beforeAll(async () => {
    agent = await a2aPollAgent();
  });
  afterAll(() => agent?.close());

  it('the task asked for (same id, same context) is the answer', async () => {
    const answer = await new A2aTransport({ url: agent.urlFor('same'), maxResponseBytes: 1 << 20 }).call(
      'get_products',
      {},
      opts(),
    );
    expect(answer.transportError).toBeUndefined();
    expect(answer.extraction.path).toBe('structured_content');
    expect(answer.data).toEqual({ products: [] });
  });

  const cases: [PollMode, string][] = [
    [
      'other-id',
      'the agent answered A2A tasks/get for task "task-mine" with another task (id "task-other"); an answer about another task is not this call\'s',
    ],
    [
      'other-context',
      'the agent answered A2A tasks/get for task "task-mine" with the task in another context (contextId "ctx-other", the task\'s is "ctx-mine"); an answer about another task is not this call\'s',
    ],
    [
      'no-id',
      'the agent answered A2A tasks/get for task "task-mine" with no task id (a tasks/get answer is the Task asked for)',
    ],
    [
      'message',
      'the agent answered A2A tasks/get for task "task-mine" with no task id (a tasks/get answer is the Task asked for)',
    ],
  ];
  for (const [mode, reason] of cases) {
    it(`${mode}: a transport error on the call, in one line, instead of a pass`, async () => {
      const before = agent.polled.length;
      const answer = await new A2aTransport({ url: agent.urlFor(mode), maxResponseBytes: 1 << 20 }).call(
        'get_products',
        {},
        opts(),
      );
      expect(agent.polled.slice(before)).toEqual([{ id: 'task-mine' }]);
      expect(answer.transportError).toBe(reason);
      expect(answer.transportError).not.toMatch(/[\r\n]/);
      expect(answer.extraction).toEqual({
        path: 'none',
        note: 'no A2A answer: A2A tasks/get answered another task after 1 A2A tasks/get poll(s)',
      });
      expect(answer.data).toBeUndefined();
    });
  }
});

// ─── 8. Loopback aliases are other hosts ────────────────────────────────────

/** A listener on another loopback address, same port: counts connections and every Authorization it receives. */
async function aliasListener(host: string, port: number) {
  const seen = { connections: 0, authorizations: [] as string[] };
  const server = http.createServer((req, res) => {
    if (req.headers.authorization) seen.authorizations.push(req.headers.authorization);
    sendJson(res, {
      jsonrpc: '2.0',
      id: null,
      result: {
        kind: 'task',
        id: 't',
        status: { state: 'completed' },
        artifacts: [{ parts: [{ kind: 'data', data: { stolen: true } }] }],
      },
    });
  });
  server.on('connection', () => seen.connections++);
  try {
    await listen(server, host, port);
  } catch {
    return undefined; // no such address here (an IPv6-less container): that variant is skipped
  }
  return { seen, close: () => close(server) };
}

describe('8. the "same agent" is the configured host exactly: loopback aliases are other hosts', () => {
  it('sameOrigin: scheme, canonical host and port; aliases and opaque origins are not the same', () => {
    expect(sameOrigin('http://127.0.0.1:8080/a2a', 'http://127.0.0.1:8080/mcp')).toBe(true);
    expect(sameOrigin('http://127.1:8080/', 'http://127.0.0.1:8080/')).toBe(true); // one host, spelt two ways
    expect(sameOrigin('http://0x7f.0.0.1:80/', 'http://127.0.0.1/')).toBe(true);
    expect(sameOrigin('HTTP://LOCALHOST:3000/', 'http://localhost:3000/x')).toBe(true);
    for (const other of [
      'http://127.0.0.2:8080/',
      'http://[::1]:8080/',
      'http://localhost:8080/',
      'https://127.0.0.1:8080/',
      'http://127.0.0.1:8081/',
      'http://localhost.:8080/',
    ]) {
      expect(sameOrigin(other, 'http://127.0.0.1:8080/'), other).toBe(false);
    }
    expect(sameOrigin('file:///etc/passwd', 'file:///etc/shadow')).toBe(false);
    expect(sameOrigin('data:text/plain,a', 'data:text/plain,a')).toBe(false);
  });

  it('vetUrl refuses a loopback alias of the agent on its port', async () => {
    await expect(vetUrl('http://127.0.0.2:8080/a2a', { agentUrl: 'http://127.0.0.1:8080/a2a' }, 1_000)).rejects.toThrow(
      /is not https/,
    );
    await expect(vetUrl('https://[::1]:8080/a2a', { agentUrl: 'https://127.0.0.1:8080/a2a' }, 1_000)).rejects.toThrow(
      /IPv6 loopback/,
    );
  });

  for (const alias of ['127.0.0.2', '[::1]', 'localhost']) {
    it(`A2A: a card at 127.0.0.1 naming ${alias} on the same port is refused before any connection; the bearer is never sent`, async () => {
      let port = 0;
      const agentSeen = { calls: 0 };
      const agent = http.createServer(async (req, res) => {
        if (req.method === 'GET')
          return sendJson(res, { name: 'alias', url: `http://${alias}:${port}/a2a`, skills: [{ id: 'get_products' }] });
        agentSeen.calls++;
        const body = await readJson(req);
        sendJson(res, {
          jsonrpc: '2.0',
          id: body.id,
          result: {
            kind: 'task',
            id: 't',
            status: { state: 'completed' },
            artifacts: [{ parts: [{ kind: 'data', data: { products: [] } }] }],
          },
        });
      });
      port = await listen(agent);
      // `localhost` may resolve to 127.0.0.1 (the agent itself) or ::1: listen on ::1 too, and count the agent's calls.
      const aliasHost = alias === '127.0.0.2' ? '127.0.0.2' : '::1';
      const other = await aliasListener(aliasHost, port);
      if (!other && alias === '[::1]') {
        await close(agent);
        return; // no IPv6 loopback here
      }
      try {
        const transport = new A2aTransport({ url: `http://127.0.0.1:${port}/a2a`, maxResponseBytes: 1 << 20 });
        const answer = await transport.call('get_products', {}, opts());
        await transport.close();
        expect(other?.seen.connections ?? 0, `connections to ${aliasHost}:${port}`).toBe(0);
        expect(other?.seen.authorizations ?? []).toEqual([]);
        expect(agentSeen.calls).toBe(0);
        expect(answer.response).toBeUndefined();
        expect(answer.transportError).toBe(
          `the agent card at http://127.0.0.1:${port}/a2a/.well-known/agent-card.json names its JSON-RPC endpoint http://${alias}:${port}/a2a, which the runner does not call (http://${alias}:${port} is not https (plain http is allowed for local development only: --allow-http, agent.allowHttp, ADCP_ALLOW_HTTP=1); ${alias}:${port} is not the agent's host 127.0.0.1:${port}, and a loopback alias can be another process); test that endpoint's agent directly, or fix the card's url`,
        );
        expect(answer.transportError).not.toContain(TOKEN);
      } finally {
        await other?.close();
        await close(agent);
      }
    });
  }

  it('MCP: a redirect of the agent endpoint to a loopback alias on the same port is refused; nothing reaches it', async () => {
    let port = 0;
    const agent = http.createServer((_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.2:${port}/mcp` });
      res.end();
    });
    port = await listen(agent);
    const other = await aliasListener('127.0.0.2', port);
    try {
      const transport = new McpTransport({ url: `http://127.0.0.1:${port}/mcp`, maxResponseBytes: 1 << 20 });
      const answer = await transport.call('get_products', {}, opts());
      await transport.close();
      expect(other!.seen.connections).toBe(0);
      expect(answer.transportError).toContain(
        `the agent redirected http://127.0.0.1:${port}/mcp to http://127.0.0.2:${port}, another origin`,
      );
    } finally {
      await other?.close();
      await close(agent);
    }
  });
});
