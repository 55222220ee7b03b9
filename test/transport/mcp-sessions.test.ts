/**
 * MCP sessions shared between the storyboard runs of one worker
 * (src/transport/mcp.ts > McpSessionPool): a run takes a session for itself and
 * gives it back when it closes, one session per credential, a session the agent
 * ended is replaced without the step seeing it, and a transport error drops it.
 *
 * The agent here keeps real sessions (the SDK's stateful Streamable HTTP server
 * on 127.0.0.1): the fixture agent is stateless, so it cannot end one.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { McpSessionPool, McpTransport } from '../../src/transport/mcp.js';
import type { Credentials } from '../../src/transport/types.js';
import { readJson } from '../helpers/read-json.js';

const sessions = new Map<string, StreamableHTTPServerTransport>();
const seen = { initialize: 0, toolsList: 0, calls: 0 };
/** What the agent answers to a request naming a session it does not have: MCP says 404; many servers say 400. */
let unknownSessionStatus = 404;
let server: Server;
let url: string;

/** The agent ends every session (a restart, an expiry): a request naming one gets 404, as MCP says. */
async function endAllSessions(): Promise<void> {
  const open = [...sessions.values()];
  sessions.clear();
  await Promise.all(open.map((t) => t.close()));
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = await readJson(req);
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === 'string' || !isInitializeRequest(body)) {
        res.writeHead(unknownSessionStatus, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
            id: null,
          }),
        );
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, created),
      });
      const mcp = new McpServer({ name: 'stateful-test-agent', version: '1.0.0' });
      mcp.registerTool('get_adcp_capabilities', {}, async () => {
        seen.calls++;
        return {
          content: [],
          structuredContent: { adcp: { major_versions: [3] }, supported_protocols: ['media_buy'] },
        };
      });
      await mcp.connect(created);
      transport = created;
    }
    if (body?.method === 'initialize') seen.initialize++;
    if (body?.method === 'tools/list') seen.toolsList++;
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await endAllSessions();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(async () => {
  await endAllSessions();
  Object.assign(seen, { initialize: 0, toolsList: 0, calls: 0 });
  unknownSessionStatus = 404;
});

const bearer = (token: string): Credentials => ({ kind: 'bearer', token });
const transport = (pool?: McpSessionPool) =>
  new McpTransport({ url, maxResponseBytes: 1 << 20, ...(pool ? { sessions: pool } : {}) });
const call = (t: McpTransport, credentials: Credentials = bearer('a')) =>
  t.call('get_adcp_capabilities', {}, { credentials, timeoutMs: 5_000 });

describe('MCP sessions shared by the runs of one worker', () => {
  it('runs one after another use one session and list the tools once', async () => {
    const pool = new McpSessionPool();
    for (let run = 0; run < 3; run++) {
      const t = transport(pool);
      expect(await t.listTools({ credentials: bearer('a'), timeoutMs: 5_000 })).toEqual({
        tools: ['get_adcp_capabilities'],
      });
      expect((await call(t)).extraction.path).toBe('structured_content');
      await t.close();
    }
    expect(seen).toEqual({ initialize: 1, toolsList: 1, calls: 3 });
    await pool.close();
  });

  it('without a pool, each transport opens (and closes) its own', async () => {
    for (let run = 0; run < 2; run++) {
      const t = transport();
      await call(t);
      await t.close();
    }
    expect(seen.initialize).toBe(2);
  });

  it('a different credential is a different session', async () => {
    const pool = new McpSessionPool();
    const first = transport(pool);
    await call(first, bearer('a'));
    await first.close();
    const second = transport(pool);
    await call(second, bearer('b'));
    await call(second, { kind: 'none' });
    await second.close();
    expect(seen.initialize).toBe(3);
    await pool.close();
  });

  it('two runs at once never share one', async () => {
    const pool = new McpSessionPool();
    const [a, b] = [transport(pool), transport(pool)];
    await Promise.all([call(a), call(b)]);
    await Promise.all([a.close(), b.close()]);
    expect(seen.initialize).toBe(2);
    // Both went back to the pool: the next two runs need no new session.
    const [c, d] = [transport(pool), transport(pool)];
    await Promise.all([call(c), call(d)]);
    expect(seen.initialize).toBe(2);
    await Promise.all([c.close(), d.close(), pool.close()]);
  });

  it.each([404, 400])(
    'a session the agent ended (HTTP %i for it) is replaced: the step gets the answer, not the error',
    async (status) => {
      unknownSessionStatus = status;
      const pool = new McpSessionPool();
      const first = transport(pool);
      await call(first);
      await first.close();
      await endAllSessions();
      const second = transport(pool);
      const exchange = await call(second);
      expect(exchange.transportError).toBeUndefined();
      expect(exchange.response?.status).toBe(200);
      expect(exchange.data).toMatchObject({ supported_protocols: ['media_buy'] });
      expect(seen).toMatchObject({ initialize: 2, calls: 2 });
      await second.close();
      await pool.close();
    },
  );

  it("a 404 on a session this run already used is the agent's answer, not retried", async () => {
    const pool = new McpSessionPool();
    const t = transport(pool);
    await call(t);
    await endAllSessions();
    const exchange = await call(t);
    expect(exchange.response?.status).toBe(404);
    expect(seen).toMatchObject({ initialize: 1, calls: 1 });
    await t.close();
    await pool.close();
  });
});
