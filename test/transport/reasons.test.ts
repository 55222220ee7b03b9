/**
 * Reasons that mislead (issue 20, case 10 a–c): a hostile MCP agent on 127.0.0.1, written by hand (node:http), whose
 * answers the SDK's own reader swallowed, so the call waited for its bound and said "raise the step timeout":
 *
 * a. 10^6 notifications in the server-sent events of one answer: the body goes over maxResponseBytes, the SDK's SSE
 *    reader keeps the error to itself. The call fails at once with the bound's one-line reason (src/transport/http.ts
 *    `onTooLarge`, src/transport/mcp.ts `stopCall`).
 * b. an answer to another JSON-RPC id: the SDK drops it ("unknown message ID"). The call fails at once saying the agent
 *    answered another request id, quoted and cut short — no timeout advice.
 * c. a JSON-RPC -32000 error answered to `get_adcp_capabilities`: the agent's answer on the error path (the SDK's own
 *    "connection closed" has the same code), so capability selection warns and falls back to the universal
 *    storyboards; an agent that cannot be reached is still an AgentUnreachableError (exit 2 in the bin).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { AgentUnreachableError, readAgentCapabilities } from '../../src/plugin/capabilities.js';
import { McpTransport } from '../../src/transport/mcp.js';
import type { CallOptions } from '../../src/transport/types.js';
import { closedPort } from '../helpers/ports.js';
import { readJson } from '../helpers/read-json.js';

const TIMEOUT_MS = 20_000;
const opts = (more: Partial<CallOptions> = {}): CallOptions => ({
  credentials: { kind: 'bearer', token: 'reasons-token' },
  timeoutMs: TIMEOUT_MS,
  ...more,
});
const STRAY_ID = `not-your-request-${'x'.repeat(500)}\u001b[2J`;

const sendJson = (res: http.ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

/** 10^6 notifications then the result, as server-sent events, with backpressure, until the client goes away. */
async function notificationFlood(res: http.ServerResponse, id: unknown, seen: { written: number }): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.on('error', () => {});
  const event = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'flood' } })}\n\n`;
  const batch = event.repeat(1000);
  for (let i = 0; i < 1000 && !res.destroyed; i++) {
    seen.written += batch.length;
    if (!res.write(batch)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    }
  }
  if (!res.destroyed)
    res.end(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [], structuredContent: { ok: true } } })}\n\n`,
    );
}

/**
 * A Streamable HTTP MCP agent: initialize and tools/list conformant; every `tools/call` answered the way the first
 * path segment says — `notifications`, `stray` (a result for another id), `rpc32000` (JSON-RPC error -32000).
 */
async function hostileMcpAgent() {
  const seen = { written: 0 };
  const server = http.createServer(async (req, res) => {
    if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    const body = await readJson(req);
    if (body?.id === undefined) return void res.writeHead(202).end();
    if (body.method === 'initialize') {
      return sendJson(
        res,
        {
          jsonrpc: '2.0',
          id: body.id,
          result: {
            protocolVersion: body.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'reasons', version: '1.0.0' },
          },
        },
        { 'mcp-session-id': 's-1' },
      );
    }
    if (body.method === 'tools/list')
      return sendJson(res, {
        jsonrpc: '2.0',
        id: body.id,
        result: { tools: [{ name: 'get_adcp_capabilities', inputSchema: { type: 'object' } }] },
      });
    const mode = (req.url ?? '').split('/')[1];
    if (mode === 'notifications') return notificationFlood(res, body.id, seen);
    if (mode === 'stray')
      return sendJson(res, {
        jsonrpc: '2.0',
        id: STRAY_ID,
        result: { content: [], structuredContent: { supported_protocols: ['media_buy'] } },
      });
    if (mode === 'rpc32000')
      return sendJson(res, {
        jsonrpc: '2.0',
        id: body.id,
        error: { code: -32000, message: 'Internal failure: capabilities backend down' },
      });
    return sendJson(res, {
      jsonrpc: '2.0',
      id: body.id,
      result: { content: [], structuredContent: { supported_protocols: ['media_buy'] } },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (mode: string) => `${origin}/${mode}/mcp`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let agent: Awaited<ReturnType<typeof hostileMcpAgent>>;
beforeAll(async () => {
  agent = await hostileMcpAgent();
});
afterAll(() => agent.close());

describe('a. notifications over the size bound in one answer', () => {
  it("10^6 notifications in the SSE answer: the bound's one-line reason, at once, not a timeout", async () => {
    const transport = new McpTransport({ url: agent.url('notifications'), maxResponseBytes: 2 * 1024 * 1024 });
    try {
      const started = performance.now();
      const answer = await transport.call('get_products', {}, opts());
      const elapsed = performance.now() - started;
      expect(answer.transportError).toBe(
        `the agent's response exceeded ${2 * 1024 * 1024} bytes; the runner stopped reading it (limit: option maxResponseBytes)`,
      );
      expect(answer.transportError).not.toMatch(/timeout|no answer within/);
      expect(elapsed).toBeLessThan(TIMEOUT_MS / 2);
      // It stopped reading: the agent did not get to write its million.
      expect(agent.seen.written).toBeLessThan(1000 * 1000 * 100);
    } finally {
      await transport.close();
    }
  });
});

describe('b. an answer to another JSON-RPC id', () => {
  it('says the agent answered another request id (quoted, cut short, escaped), at once, without timeout advice', async () => {
    const transport = new McpTransport({ url: agent.url('stray'), maxResponseBytes: 1 << 20 });
    try {
      const started = performance.now();
      const answer = await transport.call('get_products', {}, opts());
      expect(performance.now() - started).toBeLessThan(TIMEOUT_MS / 2);
      expect(answer.transportError).toMatch(
        /^the agent answered another request id: its JSON-RPC response has id "not-your-request-x+…, which is not the id of any request the runner sent \(the runner was waiting for id \d+\); the answer to this call never came/,
      );
      expect(answer.transportError).not.toMatch(/timeout|no answer within/);
      expect(answer.transportError!.length).toBeLessThan(400);
      expect(answer.transportError).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    } finally {
      await transport.close();
    }
  });
});

describe('c. a JSON-RPC -32000 answered to get_adcp_capabilities', () => {
  it("is the agent's answer on the error path, not a closed connection", async () => {
    const transport = new McpTransport({ url: agent.url('rpc32000'), maxResponseBytes: 1 << 20 });
    try {
      const answer = await transport.call('get_adcp_capabilities', {}, opts());
      expect(answer.transportError).toBeUndefined();
      expect(answer.rpcError).toMatchObject({ code: -32000 });
      expect(answer.extraction.path).toBe('error');
    } finally {
      await transport.close();
    }
  });

  it('capability selection: an answer without capabilities (the universal storyboards), with the error in one line', async () => {
    const read = await readAgentCapabilities({
      url: agent.url('rpc32000'),
      timeoutMs: TIMEOUT_MS,
      maxResponseBytes: 1 << 20,
    });
    expect(read.capabilities).toEqual({});
    expect(read.problem).toBe(
      `get_adcp_capabilities at ${agent.url('rpc32000')} answered without capabilities ("MCP error -32000: Internal failure: capabilities backend down")`,
    );
  });

  it('an agent that cannot be reached is still AgentUnreachableError', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    await expect(
      readAgentCapabilities({ url, timeoutMs: TIMEOUT_MS, maxResponseBytes: 1 << 20 }),
    ).rejects.toBeInstanceOf(AgentUnreachableError);
  });
});
