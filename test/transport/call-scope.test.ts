/**
 * A finished call leaves nothing behind that could abort later (src/transport/call.ts > openCallScope).
 *
 * The MCP SDK adds an abort listener to every request's signal and never removes it; on abort it sends the agent
 * `notifications/cancelled` for that request, answered or not. The calls' signals used to be
 * `AbortSignal.any([run, AbortSignal.timeout(timeoutMs)])`: every request, long answered, was "cancelled" 30 s after
 * it was sent, or when the run was cancelled (seen against the @adcp/sdk 13 example sellers through a proxy). The
 * agent here is a real MCP server (the SDK's, stateless as those sellers are) on 127.0.0.1 that records every
 * JSON-RPC message it receives; the run's signal aborting after the calls is the deterministic way to fire what the
 * timeout fired 30 s later.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { dispatchAll } from '../../src/roles/parallel-dispatch/dispatch.js';
import { openCallScope } from '../../src/transport/call.js';
import { McpTransport } from '../../src/transport/mcp.js';
import type { CallOptions } from '../../src/transport/types.js';
import { readJson } from '../helpers/read-json.js';

/** The JSON-RPC methods the agent received (requests and notifications), in arrival order. */
let received: string[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body: unknown = await readJson(req);
    for (const message of Array.isArray(body) ? body : [body])
      if (message && typeof message === 'object' && 'method' in message) received.push(String(message.method));
    // One server and transport per POST, no session: as the @adcp/sdk example sellers and our fixture agent answer.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const mcp = new McpServer({ name: 'cancel-watching-agent', version: '1.0.0' });
    mcp.registerTool('get_adcp_capabilities', {}, async () => ({
      content: [],
      structuredContent: { adcp: { major_versions: [3] } },
    }));
    await mcp.connect(transport);
    res.on('close', () => void mcp.close());
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received = [];
});

const options = (signal: AbortSignal): CallOptions => ({ credentials: { kind: 'none' }, timeoutMs: 10_000, signal });
const cancellations = () => received.filter((method) => method === 'notifications/cancelled');

/**
 * One more call, answered, then the session closed: the agent has received what the client sent before it (a
 * cancellation is sent the moment the signal aborts, ahead of this call).
 */
async function afterwards(transport: McpTransport): Promise<void> {
  const exchange = await transport.call('get_adcp_capabilities', {}, options(new AbortController().signal));
  expect(exchange.transportError).toBeUndefined();
  await transport.close();
}

describe('a finished MCP call sends the agent nothing when its signal aborts afterwards', () => {
  it('a call (and the session it opened), then the run is cancelled: no notifications/cancelled', async () => {
    const run = new AbortController();
    const transport = new McpTransport({ url, maxResponseBytes: 1 << 20 });
    const exchange = await transport.call('get_adcp_capabilities', {}, options(run.signal));
    expect(exchange.extraction.path).toBe('structured_content');
    run.abort(new Error('the run was cancelled after its steps'));
    await afterwards(transport);
    expect(received).toContain('initialize');
    expect(cancellations()).toEqual([]);
  });

  it('tools/list, then the run is cancelled: no notifications/cancelled', async () => {
    const run = new AbortController();
    const transport = new McpTransport({ url, maxResponseBytes: 1 << 20 });
    expect(await transport.listTools(options(run.signal))).toEqual({ tools: ['get_adcp_capabilities'] });
    run.abort(new Error('the run was cancelled after its steps'));
    await afterwards(transport);
    expect(cancellations()).toEqual([]);
  });

  it('two parallel dispatches on one session (parallel_dispatch), then the run is cancelled: none either', async () => {
    const run = new AbortController();
    const transport = new McpTransport({ url, maxResponseBytes: 1 << 20 });
    const dispatched = await dispatchAll({
      transport,
      task: 'get_adcp_capabilities',
      payloads: [{}, {}],
      callOptions: options(run.signal),
      budgetMs: 10_000,
    });
    expect(dispatched.map((d) => d.exchange.transportError)).toEqual([undefined, undefined]);
    run.abort(new Error('the run was cancelled after its steps'));
    await afterwards(transport);
    expect(received.filter((method) => method === 'tools/call')).toHaveLength(3);
    expect(cancellations()).toEqual([]);
  });

  it('a call still waiting when the run is cancelled is cancelled (the signal still reaches the SDK)', async () => {
    const run = new AbortController();
    const transport = new McpTransport({ url, maxResponseBytes: 1 << 20 });
    run.abort(new Error('cancelled before the call'));
    const exchange = await transport.call('get_adcp_capabilities', {}, options(run.signal));
    expect(exchange.transportError).toMatch(/cancelled before the call/);
    await transport.close();
  });
});

describe('openCallScope', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts with a TimeoutError when the call is out of time, and with the caller’s reason when the caller aborts', () => {
    vi.useFakeTimers();
    const timed = openCallScope({ timeoutMs: 1_000 });
    vi.advanceTimersByTime(1_000);
    expect((timed.signal.reason as Error).name).toBe('TimeoutError');
    const caller = new AbortController();
    const called = openCallScope({ signal: caller.signal, timeoutMs: 1_000 });
    caller.abort(new Error('stop'));
    expect((called.signal.reason as Error).message).toBe('stop');
  });

  it('once ended, leaves no timer behind and no longer hears the caller', () => {
    vi.useFakeTimers();
    const caller = new AbortController();
    const scope = openCallScope({ signal: caller.signal, timeoutMs: 1_000 });
    expect(vi.getTimerCount()).toBe(1);
    scope.end();
    expect(vi.getTimerCount()).toBe(0);
    caller.abort(new Error('the run was cancelled'));
    vi.advanceTimersByTime(60_000);
    expect(scope.signal.aborted).toBe(false);
  });
});
