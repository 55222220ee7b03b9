/**
 * Rate-limited answers wait and resend (src/transport/rate-limit.ts): the pure wait rule, then RateLimitedTransport
 * over real McpTransport / A2aTransport against the shared fixture agent's `rate_limited_<n>` (AdCP RATE_LIMITED,
 * `retry_after: 1`) and `http_429_<n>` (HTTP 429, `Retry-After: 1`) endpoints, counted by a pass-through proxy.
 *
 * Each test names a fresh `session_<key>` in its behaviour segment: the agent counts refusals per segment, and it is
 * shared by the whole test run.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { findErrorCode } from '../../src/model/answer-error.js';
import type { Exchange } from '../../src/model/exchange.js';
import { A2aTransport } from '../../src/transport/a2a.js';
import { McpTransport } from '../../src/transport/mcp.js';
import { RateGate, RateLimitedTransport, rateLimitWait, type RateLimitBounds } from '../../src/transport/rate-limit.js';
import type { AgentTransport, CallOptions } from '../../src/transport/types.js';
import { countingProxy, type CountingProxy } from '../helpers/counting-proxy.js';

const MB = 1024 * 1024;
const opts: CallOptions = { credentials: { kind: 'bearer', token: 'demo-rate-limit-test' }, timeoutMs: 10_000 };

/** A bare exchange: what the transports record, with only what the wait rule reads set. */
function exchange(data: unknown, response: { status?: number; headers?: Record<string, string> } = {}): Exchange {
  return {
    request: { transport: 'mcp', operation: 'get_products', payload: {} },
    response: { transport: 'mcp', payload: data, ...response },
    extraction: { path: 'error' },
    data,
  };
}

const rateLimited = (retryAfter?: unknown) => ({
  adcp_error: {
    code: 'RATE_LIMITED',
    message: 'slow down',
    recovery: 'transient',
    ...(retryAfter !== undefined ? { retry_after: retryAfter } : {}),
  },
});

describe('rateLimitWait: how long the agent asked to wait', () => {
  it('is undefined for an answer that is not a rate limit', () => {
    expect(rateLimitWait(exchange({ products: [] }, { status: 200 }), 0)).toBeUndefined();
    expect(rateLimitWait(exchange({ adcp_error: { code: 'INVALID_REQUEST', retry_after: 3 } }), 0)).toBeUndefined();
    expect(rateLimitWait(exchange({ message: 'HTTP 503' }, { status: 503, headers: { 'retry-after': '3' } }), 0)).toBe(
      undefined,
    );
  });

  it('is retry_after seconds of a RATE_LIMITED error, wherever findErrorCode reads the code', () => {
    expect(rateLimitWait(exchange(rateLimited(3)), 0)).toBe(3000);
    expect(rateLimitWait(exchange(rateLimited(3)), 4)).toBe(3000); // the agent's ask, not the back-off
    expect(rateLimitWait(exchange(rateLimited('2')), 0)).toBe(2000);
    expect(rateLimitWait(exchange(rateLimited(1.5)), 0)).toBe(1500);
    expect(rateLimitWait(exchange({ products: [], errors: [{ code: 'RATE_LIMITED', retry_after: 3 }] }), 0)).toBe(3000);
    expect(rateLimitWait(exchange({ errors: [{ code: 'RATE_LIMITED' }], retry_after: 4 }), 0)).toBe(4000);
  });

  it('reads retry_after beside the code under payload too, and an HTTP-date Retry-After from now', () => {
    expect(rateLimitWait(exchange({ payload: { errors: [{ code: 'RATE_LIMITED', retry_after: 7 }] } }), 0)).toBe(7000);
    expect(rateLimitWait(exchange({ payload: { adcp_error: { code: 'RATE_LIMITED', retry_after: 6 } } }), 0)).toBe(
      6000,
    );
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    const wait = rateLimitWait(
      exchange({ message: 'x' }, { status: 429, headers: { 'retry-after': inTenSeconds } }),
      0,
    )!;
    expect(wait).toBeGreaterThanOrEqual(9000);
    expect(wait).toBeLessThanOrEqual(11_000);
    const past = new Date(Date.now() - 60_000).toUTCString();
    expect(rateLimitWait(exchange({ message: 'x' }, { status: 429, headers: { 'retry-after': past } }), 0)).toBe(0);
  });

  it('clamps retry_after to 1..3600 s, as core/error.json tells clients to (Retry-After: 0 is valid HTTP)', () => {
    expect(rateLimitWait(exchange(rateLimited(0)), 3)).toBe(1000);
    expect(rateLimitWait(exchange(rateLimited(0.25)), 0)).toBe(1000);
    expect(rateLimitWait(exchange(rateLimited('0')), 0)).toBe(1000);
    expect(rateLimitWait(exchange(rateLimited(86_400)), 0)).toBe(3_600_000);
    expect(rateLimitWait(exchange({ message: 'x' }, { status: 429, headers: { 'retry-after': '0' } }), 3)).toBe(0);
    expect(rateLimitWait(exchange({ message: 'x' }, { status: 429, headers: { 'retry-after': '86400' } }), 0)).toBe(
      3_600_000,
    );
  });

  it('is the Retry-After header seconds of an HTTP 429, unless the body says retry_after', () => {
    const jsonRpc = { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Too Many Requests' } };
    expect(rateLimitWait(exchange(jsonRpc, { status: 429, headers: { 'retry-after': '7' } }), 0)).toBe(7000);
    expect(rateLimitWait(exchange(rateLimited(2), { status: 429, headers: { 'retry-after': '7' } }), 0)).toBe(2000);
    expect(rateLimitWait(exchange(rateLimited(), { headers: { 'retry-after': '5' } }), 0)).toBe(5000);
    // A 429 counts even when the transport recorded it as a failure.
    expect(
      rateLimitWait(
        { ...exchange(undefined, { status: 429, headers: { 'retry-after': '1' } }), transportError: 'HTTP 429' },
        0,
      ),
    ).toBe(1000);
  });

  it('backs off 1 s, doubling, at most 30 s, when neither says how long', () => {
    const waits = [0, 1, 2, 3, 4, 5, 6, 10].map((attempt) => rateLimitWait(exchange(rateLimited()), attempt));
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(rateLimitWait(exchange({ message: 'HTTP 429' }, { status: 429 }), 2)).toBe(4000);
  });

  it.each([
    ['a word', 'soon'],
    ['negative', -5],
    ['null', null],
    ['an object', { seconds: 3 }],
    ['NaN', Number.NaN],
    ['an exponent', '1e3'],
    ['empty', ''],
  ])('backs off when retry_after is garbage (%s)', (_label, garbage) => {
    expect(rateLimitWait(exchange(rateLimited(garbage)), 1)).toBe(2000);
    expect(
      rateLimitWait(exchange({ message: 'x' }, { status: 429, headers: { 'retry-after': String(garbage) } }), 0),
    ).toBe(1000);
  });

  it('ignores a RATE_LIMITED code on an answer that is a transport failure', () => {
    expect(rateLimitWait({ ...exchange(rateLimited(1)), transportError: 'socket hang up' }, 0)).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------------------------

// Closed once the file is done, not after each test: the tests that wait on the agent's retry_after (the spec's 1 s
// minimum) run concurrently, each on its own session, proxy and gate, so one test's end must not close another's.
const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** A counting proxy in front of the shared agent's endpoint for these behaviours and a fresh session. */
async function endpoint(tokens: string[], protocol: 'mcp' | 'a2a' = 'mcp'): Promise<CountingProxy> {
  const segment = [...tokens, `session_${randomUUID()}`].map(encodeURIComponent).join('+');
  const proxy = await countingProxy(`${inject('agentOrigin')}/x/${segment}/${protocol}`);
  open.push(proxy);
  return proxy;
}

function mcp(url: string): McpTransport {
  const transport = new McpTransport({ url, maxResponseBytes: 8 * MB });
  open.push(transport);
  return transport;
}

function a2a(url: string): A2aTransport {
  const transport = new A2aTransport({ url, maxResponseBytes: 8 * MB });
  open.push(transport);
  return transport;
}

/** A real transport whose calls are timed as they start (observation only: every call goes through). */
function timed(inner: AgentTransport): { transport: AgentTransport; starts: number[] } {
  const starts: number[] = [];
  const transport: AgentTransport = {
    kind: inner.kind,
    url: inner.url,
    call(task, payload, options) {
      starts.push(Date.now());
      return inner.call(task, payload, options);
    },
    listTools: (options) => inner.listTools(options),
    close: () => inner.close(),
  };
  return { transport, starts };
}

/** A real gate that reports each pause as it is taken: when it ends (at the earliest). */
class WatchedGate extends RateGate {
  onPause?: (until: number) => void;
  override pause(ms: number): void {
    const until = Date.now() + ms;
    super.pause(ms);
    this.onPause?.(until);
  }
}

async function timedCall(
  inner: AgentTransport,
  bounds: RateLimitBounds = {},
  task = 'get_products',
  payload: unknown = { buying_mode: 'wholesale' },
) {
  const transport = new RateLimitedTransport(inner, new RateGate(), bounds);
  const started = Date.now();
  const answer = await transport.call(task, payload, opts);
  return { answer, elapsed: Date.now() - started };
}

const products = (answer: Exchange) => (answer.data as { products?: unknown[] } | undefined)?.products;

describe.concurrent('RateLimitedTransport over MCP: rate_limited_<n> (AdCP RATE_LIMITED, retry_after: 1)', () => {
  it('what the agent answers: a RATE_LIMITED error with retry_after 1, no transport error', async () => {
    const proxy = await endpoint(['rate_limited_1']);
    const answer = await mcp(proxy.url).call('get_products', { buying_mode: 'wholesale' }, opts);
    expect(answer.transportError).toBeUndefined();
    expect(findErrorCode(answer)?.code).toBe('RATE_LIMITED');
    expect(answer.data).toMatchObject({ adcp_error: { retry_after: 1, recovery: 'transient' } });
    expect(rateLimitWait(answer, 0)).toBe(1000);
  });

  it('waits retry_after and resends: the normal answer after 2 resends, at least 2 s later', async () => {
    const proxy = await endpoint(['rate_limited_2']);
    const { answer, elapsed } = await timedCall(mcp(proxy.url));
    expect(answer.transportError).toBeUndefined();
    expect(findErrorCode(answer)).toBeUndefined();
    expect(products(answer)).toHaveLength(4);
    expect(proxy.toolCalls()).toEqual(['get_products', 'get_products', 'get_products']);
    expect(elapsed).toBeGreaterThanOrEqual(2000);
  });

  it('an agent that always refuses: at most maxRetries resends, then the RATE_LIMITED answer', async () => {
    const proxy = await endpoint(['rate_limited_1000']);
    const { answer } = await timedCall(mcp(proxy.url), { maxRetries: 2, maxWaitMs: 10_000 });
    expect(findErrorCode(answer)?.code).toBe('RATE_LIMITED');
    expect(proxy.toolCalls()).toHaveLength(3);
  });

  it('a call aborted while it waits ends with the RATE_LIMITED answer it had, not a resend cut short', async () => {
    const proxy = await endpoint(['rate_limited_1000']);
    // The call is aborted the moment the transport starts its wait (the RATE_LIMITED answer in hand), not after a fixed
    // delay a loaded machine can outrun.
    const controller = new AbortController();
    class AbortOnPause extends RateGate {
      override pause(ms: number): void {
        super.pause(ms);
        controller.abort();
      }
    }
    const transport = new RateLimitedTransport(mcp(proxy.url), new AbortOnPause());
    const signal = controller.signal;
    const answer = await transport.call('get_products', { buying_mode: 'wholesale' }, { ...opts, signal });
    expect(answer.transportError).toBeUndefined();
    expect(findErrorCode(answer)?.code).toBe('RATE_LIMITED');
    expect(proxy.toolCalls()).toHaveLength(1);
  });

  it('an agent that always refuses: no more waiting than maxWaitMs, then the RATE_LIMITED answer', async () => {
    const proxy = await endpoint(['rate_limited_1000']);
    // 1 s waited after the first answer; another 1 s would pass 1.5 s.
    const { answer } = await timedCall(mcp(proxy.url), { maxRetries: 5, maxWaitMs: 1500 });
    expect(findErrorCode(answer)?.code).toBe('RATE_LIMITED');
    expect(proxy.toolCalls()).toHaveLength(2);
  });

  it('a wait longer than maxWaitMs is not waited at all', async () => {
    const proxy = await endpoint(['rate_limited_1000']);
    const { answer } = await timedCall(mcp(proxy.url), { maxRetries: 5, maxWaitMs: 999 });
    expect(findErrorCode(answer)?.code).toBe('RATE_LIMITED');
    expect(proxy.toolCalls()).toHaveLength(1);
  });

  it('a conformant agent: one call, the answer as is', async () => {
    const proxy = await endpoint([]);
    const { answer } = await timedCall(mcp(proxy.url), { maxRetries: 2 });
    expect(products(answer)).toHaveLength(4);
    expect(proxy.toolCalls()).toEqual(['get_products']);
  });

  it('the pause is the gate’s: a second transport on the same gate sends its call only once the pause is over', async () => {
    const limited = await endpoint(['rate_limited_1']);
    const conformant = await endpoint([]);
    const gate = new WatchedGate();
    const first = new RateLimitedTransport(mcp(limited.url), gate);
    const watched = timed(mcp(conformant.url));
    const second = new RateLimitedTransport(watched.transport, gate);

    let pausedUntil: number | undefined;
    let secondCall: Promise<Exchange> | undefined;
    // The second call is made while the pause is on (synchronously as it is taken).
    gate.onPause = (until) => {
      gate.onPause = undefined;
      pausedUntil = until;
      secondCall = second.call('get_adcp_capabilities', {}, opts);
    };
    const firstAnswer = await first.call('get_products', { buying_mode: 'wholesale' }, opts);
    expect(products(firstAnswer)).toHaveLength(4);
    expect(pausedUntil).toBeDefined();
    const secondAnswer = await secondCall!;
    expect(secondAnswer.transportError).toBeUndefined();
    expect(findErrorCode(secondAnswer)).toBeUndefined();
    // The second transport's agent was not rate limiting; it waited for the other's pause all the same.
    expect(watched.starts).toHaveLength(1);
    expect(watched.starts[0]).toBeGreaterThanOrEqual(pausedUntil!);
    expect(limited.toolCalls()).toEqual(['get_products', 'get_products']);
    expect(conformant.toolCalls()).toEqual(['get_adcp_capabilities']);
  });
});

describe.concurrent('RateLimitedTransport over MCP: http_429_<n> (HTTP 429, Retry-After: 1)', () => {
  it('what McpTransport records of a 429: the status, Retry-After and the JSON-RPC error, no transport error', async () => {
    const proxy = await endpoint(['http_429_1']);
    const answer = await mcp(proxy.url).call('get_products', { buying_mode: 'wholesale' }, opts);
    expect(answer.transportError).toBeUndefined();
    expect(answer.response?.status).toBe(429);
    expect(answer.response?.headers?.['retry-after']).toBe('1');
    expect(answer.rpcError).toMatchObject({ code: -32000, message: expect.stringMatching(/Too Many Requests/) });
    expect(answer.extraction.path).toBe('error');
    expect(rateLimitWait(answer, 0)).toBe(1000);
  });

  it('honours Retry-After and resends: the normal answer after 2 resends, at least 2 s later', async () => {
    const proxy = await endpoint(['http_429_2']);
    const { answer, elapsed } = await timedCall(mcp(proxy.url));
    expect(answer.transportError).toBeUndefined();
    expect(answer.response?.status).toBe(200);
    expect(products(answer)).toHaveLength(4);
    expect(proxy.toolCalls()).toEqual(['get_products', 'get_products', 'get_products']);
    expect(elapsed).toBeGreaterThanOrEqual(2000);
  });

  it('an agent that always answers 429: at most maxRetries resends, then the 429 answer', async () => {
    const proxy = await endpoint(['http_429_1000']);
    const { answer } = await timedCall(mcp(proxy.url), { maxRetries: 2, maxWaitMs: 10_000 });
    expect(answer.response?.status).toBe(429);
    expect(proxy.toolCalls()).toHaveLength(3);
  });

  it('429 then RATE_LIMITED then the answer: both kinds waited in one call', async () => {
    const proxy = await endpoint(['http_429_1', 'rate_limited_1']);
    const { answer, elapsed } = await timedCall(mcp(proxy.url));
    expect(products(answer)).toHaveLength(4);
    expect(proxy.toolCalls()).toHaveLength(3);
    expect(elapsed).toBeGreaterThanOrEqual(2000);
  });
});

describe.concurrent('RateLimitedTransport over A2A', () => {
  const sends = (proxy: CountingProxy) => [...proxy.counts('message/send').values()].reduce((a, b) => a + b, 0);

  it.each([['rate_limited_1'], ['http_429_1']])('%s: the normal answer after one resend', async (token) => {
    const proxy = await endpoint([token], 'a2a');
    const { answer, elapsed } = await timedCall(a2a(proxy.url));
    expect(answer.transportError).toBeUndefined();
    expect(findErrorCode(answer)).toBeUndefined();
    expect(products(answer)).toHaveLength(4);
    expect(sends(proxy)).toBe(2);
    expect(elapsed).toBeGreaterThanOrEqual(1000);
  });

  it.each([['rate_limited_1000'], ['http_429_1000']])('%s: bounded, then the rate-limited answer', async (token) => {
    const proxy = await endpoint([token], 'a2a');
    const { answer } = await timedCall(a2a(proxy.url), { maxRetries: 1, maxWaitMs: 10_000 });
    expect(answer.response?.status === 429 || findErrorCode(answer)?.code === 'RATE_LIMITED').toBe(true);
    expect(rateLimitWait(answer, 0)).toBe(1000);
    expect(sends(proxy)).toBe(2);
  });
});
