/**
 * The webhook receiver (src/webhooks/receiver.ts), its main-process hosting
 * and the workers' view of it (remote.ts), and how a run's receiver is
 * configured (options.ts) — over real HTTP on 127.0.0.1. Waiting is on
 * deliveries (`next()` resolves when one arrives), never on the clock.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/model/errors.js';
import { resolveWebhookReceiver } from '../../src/webhooks/options.js';
import { WebhookReceiver, type WebhookReceiverOptions } from '../../src/webhooks/receiver.js';
import { HostedWebhookReceiver, RemoteWebhookSink } from '../../src/webhooks/remote.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function receiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const r = await WebhookReceiver.start(options);
  open.push(r);
  return r;
}

/** One POST (or other method), answered: the status. */
function post(
  url: string,
  body: string | Buffer = '{}',
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'POST', headers: { 'content-type': 'application/json', ...options.headers } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('WebhookReceiver', () => {
  it('listens on 127.0.0.1, an ephemeral port, and its base URL is its own address', async () => {
    const r = await receiver();
    expect(r.listenUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(r.baseUrl).toBe(r.listenUrl);
    expect(r.urlFor('trigger', 'op-1')).toBe(`${r.listenUrl}/step/trigger/op-1`);
  });

  it('records a POST at a registered URL: method, absolute URL, header lines, the raw body bytes, the time, what it answered', async () => {
    const r = await receiver();
    await r.open('trigger', 'op-1');
    const body = Buffer.from('{"b":1,  "a":"é"}');
    const before = Date.now();
    expect(await post(`${r.urlFor('trigger', 'op-1')}?x=1`, body, { headers: { 'x-extra': 'one' } })).toBe(200);
    const [d] = await r.next('trigger', 'op-1', 0, 0);
    expect(d).toMatchObject({
      seq: 1,
      stepId: 'trigger',
      operationId: 'op-1',
      method: 'POST',
      url: `${r.urlFor('trigger', 'op-1')}?x=1`,
      answered: 200,
    });
    expect(d!.body.equals(body)).toBe(true);
    expect(d!.headers).toContainEqual(['x-extra', 'one']);
    expect(d!.headers).toContainEqual(['content-type', 'application/json']);
    expect(d!.receivedAt).toBeGreaterThanOrEqual(before);
  });

  it('accepts only registered URLs (404) and only POST (405); neither is recorded', async () => {
    const r = await receiver();
    await r.open('trigger', 'op-1');
    expect(await post(r.urlFor('trigger', 'op-2'))).toBe(404);
    expect(await post(r.urlFor('other', 'op-1'))).toBe(404);
    expect(await post(`${r.listenUrl}/step/trigger/op-1/extra`)).toBe(404);
    expect(await post(`${r.listenUrl}/`)).toBe(404);
    expect(await post(r.urlFor('trigger', 'op-1'), '', { method: 'PUT' })).toBe(405);
    expect(r.deliveries()).toEqual([]);
  });

  it('applies the retry policy: http_status for the first `count` deliveries of a URL, then 200', async () => {
    const r = await receiver();
    await r.open('retry', 'op', { count: 3, httpStatus: 503 });
    await r.open('other', 'op');
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await post(r.urlFor('retry', 'op')));
    expect(statuses).toEqual([503, 503, 503, 200, 200]);
    // Per URL: another URL is not affected.
    expect(await post(r.urlFor('other', 'op'))).toBe(200);
    expect((await r.next('retry', 'op', 0, 0)).map((d) => d.answered)).toEqual([503, 503, 503, 200, 200]);
  });

  it('a policy given again replaces the previous one; registering again keeps the deliveries', async () => {
    const r = await receiver();
    await r.open('retry', 'op', { count: 1, httpStatus: 429 });
    expect(await post(r.urlFor('retry', 'op'))).toBe(429);
    await r.open('retry', 'op', { count: 3, httpStatus: 500 });
    expect(await post(r.urlFor('retry', 'op'))).toBe(500);
    await r.open('retry', 'op');
    expect((await r.next('retry', 'op', 0, 0)).length).toBe(2);
  });

  it('next() waits for the first delivery after `afterSeq` and resolves when it arrives', async () => {
    const r = await receiver();
    await r.open('trigger', 'op');
    const waiting = r.next('trigger', 'op', 0, 60_000);
    await post(r.urlFor('trigger', 'op'), '{"n":1}');
    const [first] = await waiting;
    expect(first!.body.toString()).toBe('{"n":1}');
    const later = r.next('trigger', 'op', first!.seq, 60_000);
    await post(r.urlFor('trigger', 'op'), '{"n":2}');
    expect((await later).map((d) => d.body.toString())).toEqual(['{"n":2}']);
  });

  it('next() answers [] when nothing arrives within the wait (a zero wait returns at once)', async () => {
    const r = await receiver();
    await r.open('trigger', 'op');
    expect(await r.next('trigger', 'op', 0, 0)).toEqual([]);
    expect(await r.next('trigger', 'op', 0, 1)).toEqual([]);
  });

  it('bounds the body: over maxBodyBytes it answers 413 and records the delivery as oversize, without its bytes', async () => {
    const r = await receiver({ maxBodyBytes: 1024 });
    await r.open('big', 'op');
    expect(await post(r.urlFor('big', 'op'), Buffer.alloc(1025, 'a'))).toBe(413);
    expect(await post(r.urlFor('big', 'op'), Buffer.alloc(1024, 'a'))).toBe(200);
    const [oversize, fits] = await r.next('big', 'op', 0, 0);
    expect(oversize).toMatchObject({ oversize: true, answered: 413 });
    expect(oversize!.body.length).toBe(0);
    expect(fits!.body.length).toBe(1024);
  });

  it('bounds a chunked body without content-length the same way', async () => {
    const r = await receiver({ maxBodyBytes: 1000 });
    await r.open('big', 'op');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        r.urlFor('big', 'op'),
        { method: 'POST', headers: { 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', (error) =>
        String(error).includes('ECONNRESET') || String(error).includes('EPIPE') ? undefined : reject(error),
      );
      for (let i = 0; i < 10; i++) req.write(Buffer.alloc(500, 'b'));
      req.end();
    });
    expect(status).toBe(413);
    expect((await r.next('big', 'op', 0, 0))[0]).toMatchObject({ oversize: true });
  });

  it('bounds what it keeps per URL: past the cap it answers 503 + Retry-After and records nothing more', async () => {
    const r = await receiver({ maxDeliveriesPerUrl: 2 });
    await r.open('loop', 'op');
    expect([
      await post(r.urlFor('loop', 'op')),
      await post(r.urlFor('loop', 'op')),
      await post(r.urlFor('loop', 'op')),
    ]).toEqual([200, 200, 503]);
    expect((await r.next('loop', 'op', 0, 0)).length).toBe(2);
  });

  it('release() stops accepting at a URL, drops its deliveries and ends its waits', async () => {
    const r = await receiver();
    await r.open('trigger', 'op');
    await post(r.urlFor('trigger', 'op'));
    const waiting = r.next('trigger', 'op', 1, 60_000);
    await r.release([{ stepId: 'trigger', operationId: 'op' }]);
    expect(await waiting).toEqual([]);
    expect(await post(r.urlFor('trigger', 'op'))).toBe(404);
    expect(r.deliveries()).toEqual([]);
  });

  it('close() ends pending waits', async () => {
    const r = await WebhookReceiver.start();
    await r.open('trigger', 'op');
    const waiting = r.next('trigger', 'op', 0, 60_000);
    await r.close();
    expect(await waiting).toEqual([]);
  });

  it('refuses URL segments a path could not carry', async () => {
    const r = await receiver();
    await expect(r.open('../x', 'op')).rejects.toThrow(/segments/);
    await expect(r.open('ok', 'a/b')).rejects.toThrow(/segments/);
  });

  it('proxy mode: the base URL is the public one (its path prefix routed), the recorded URL is what the sender addressed', async () => {
    const r = await receiver({ publicBaseUrl: 'https://hooks.example.com/run-7/' });
    expect(r.baseUrl).toBe('https://hooks.example.com/run-7');
    await r.open('trigger', 'op');
    // A proxy forwards the path unchanged to the listener.
    expect(await post(`${r.listenUrl}/run-7/step/trigger/op`)).toBe(200);
    expect(await post(`${r.listenUrl}/step/trigger/op`)).toBe(404);
    expect((await r.next('trigger', 'op', 0, 0))[0]!.url).toBe('https://hooks.example.com/run-7/step/trigger/op');
  });

  it('refuses a public base URL with credentials, a query or CR/LF', async () => {
    await expect(WebhookReceiver.start({ publicBaseUrl: 'https://u:p@hooks.example.com' })).rejects.toThrow(
      /credentials/,
    );
    await expect(WebhookReceiver.start({ publicBaseUrl: 'https://hooks.example.com/?a=1' })).rejects.toThrow(/query/);
    await expect(WebhookReceiver.start({ publicBaseUrl: 'https://hooks.example.com/\r\nx' })).rejects.toThrow(/CR/);
  });
});

/**
 * A sender as many HTTP/1.1 clients are (Go's net/http, Python's urllib3): it honours `Connection: close` (RFC 9112
 * §9.6) but not the non-standard `Keep-Alive: timeout=` hint, keeping an idle connection for longer than the receiver
 * does. It delivers a webhook, stays idle `idleMs`, then delivers again — on the same connection unless it was told to
 * close it. A POST is not retried on a dropped connection (a webhook_no_retry sender, or any non-idempotent request).
 */
async function twoDeliveriesApart(url: string, idleMs: number): Promise<(number | 'lost')[]> {
  const { hostname, port, pathname } = new URL(url);
  const open = () => connect(Number(port), hostname);
  const deliver = (socket: Socket) =>
    new Promise<{ status: number | 'lost'; close: boolean }>((resolve) => {
      let text = '';
      const lost = () => resolve({ status: 'lost', close: true });
      // The receiver dropped the idle connection: what the sender writes goes nowhere.
      if (socket.destroyed || !socket.writable) return lost();
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
        const head = text.indexOf('\r\n\r\n');
        if (head < 0) return;
        socket.removeAllListeners();
        const status = Number(text.slice(9, 12));
        resolve({ status, close: /\r\nconnection: close\r\n/i.test(text.slice(0, head + 2)) });
      });
      socket.once('error', lost);
      socket.once('close', lost);
      const body = '{"status":"completed"}';
      socket.write(
        `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
    });
  const first = open();
  const one = await deliver(first);
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  const second = one.close ? open() : first;
  const two = await deliver(second);
  first.destroy();
  second.destroy();
  return [one.status, two.status];
}

describe('WebhookReceiver: a delivery is never lost to its idle timeout', () => {
  // Issue 31 item 10: the receiver kept idle connections open 5 s (keepAliveTimeout), then dropped them; a sender that
  // reused one after that lost the delivery on the closed socket, and the step graded the agent no_webhook_received.
  it('each answer closes its connection (Connection: close), so a sender idle past the timeout still delivers', async () => {
    const r = await receiver();
    await r.open('trigger', 'op-1');
    // Node drops an idle connection 1 s after keepAliveTimeout (5 s): idle 6.5 s, the old receiver had dropped it.
    expect(await twoDeliveriesApart(r.urlFor('trigger', 'op-1'), 6_500)).toEqual([200, 200]);
    expect((await r.next('trigger', 'op-1', 0, 0)).map((d) => d.seq)).toEqual([1, 2]);
  }, 20_000);
});

describe('HostedWebhookReceiver + RemoteWebhookSink (receiver in the main process, workers over the control endpoint)', () => {
  async function hosted(options: WebhookReceiverOptions = {}) {
    const h = await HostedWebhookReceiver.start(options);
    open.push(h);
    return h;
  }

  it('a worker registers URLs with their retry policy and long-polls deliveries, bodies byte-exact', async () => {
    const h = await hosted();
    expect(h.config.controlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const sink = new RemoteWebhookSink(h.config);
    expect(sink.baseUrl).toBe(h.receiver.baseUrl);
    await sink.open('retry', 'op', { count: 1, httpStatus: 502 });
    const waiting = sink.next('retry', 'op', 0, 60_000);
    const body = Buffer.from([0x7b, 0x22, 0xc3, 0xa9, 0x22, 0x3a, 0x31, 0x7d]);
    expect(await post(h.receiver.urlFor('retry', 'op'), body)).toBe(502);
    const [first] = await waiting;
    expect(first).toMatchObject({ stepId: 'retry', operationId: 'op', answered: 502 });
    expect(first!.body.equals(body)).toBe(true);
    expect(await post(h.receiver.urlFor('retry', 'op'))).toBe(200);
    expect((await sink.next('retry', 'op', first!.seq, 0)).map((d) => d.answered)).toEqual([200]);
    await sink.release([{ stepId: 'retry', operationId: 'op' }]);
    expect(await post(h.receiver.urlFor('retry', 'op'))).toBe(404);
  });

  it('the control endpoint refuses a caller without the token', async () => {
    const h = await hosted();
    const stranger = new RemoteWebhookSink({ ...h.config, token: 'not-the-token' });
    await expect(stranger.open('x', 'y')).rejects.toThrow(/401/);
    const status = await new Promise<number>((resolve) => {
      request(`${h.config.controlUrl}/next?step_id=x&operation_id=y`, (res) => {
        res.resume();
        resolve(res.statusCode!);
      }).end();
    });
    expect(status).toBe(401);
  });
});

describe('resolveWebhookReceiver (plugin / CLI options, ADCP_RUNNER_WEBHOOK_BASE_URL)', () => {
  it('is off by default, and loopback on 127.0.0.1 with an ephemeral port when asked', () => {
    expect(resolveWebhookReceiver({}, {})).toBeUndefined();
    expect(resolveWebhookReceiver({ receiver: 'loopback' }, {})).toEqual({ host: '127.0.0.1', port: 0 });
    expect(resolveWebhookReceiver({ receiver: 'loopback', port: 4555, maxBodyBytes: 10 }, {})).toEqual({
      host: '127.0.0.1',
      port: 4555,
      maxBodyBytes: 10,
    });
  });

  it('ADCP_RUNNER_WEBHOOK_BASE_URL turns on proxy mode, which needs https and a fixed port', () => {
    expect(
      resolveWebhookReceiver(
        {},
        { ADCP_RUNNER_WEBHOOK_BASE_URL: 'https://hooks.example.com/', ADCP_RUNNER_WEBHOOK_PORT: '4100' },
      ),
    ).toEqual({
      host: '127.0.0.1',
      port: 4100,
      publicBaseUrl: 'https://hooks.example.com',
    });
    expect(() => resolveWebhookReceiver({}, { ADCP_RUNNER_WEBHOOK_BASE_URL: 'https://hooks.example.com' })).toThrow(
      /fixed port/,
    );
    expect(() =>
      resolveWebhookReceiver({ port: 4100 }, { ADCP_RUNNER_WEBHOOK_BASE_URL: 'http://hooks.example.com' }),
    ).toThrow(/requires https/);
    expect(
      resolveWebhookReceiver(
        { port: 4100, allowHttpBaseUrl: true },
        { ADCP_RUNNER_WEBHOOK_BASE_URL: 'http://127.0.0.1:4100' },
      ),
    ).toMatchObject({ publicBaseUrl: 'http://127.0.0.1:4100' });
  });

  it('an explicit choice wins over the environment; contradictions are configuration errors', () => {
    const env = { ADCP_RUNNER_WEBHOOK_BASE_URL: 'https://hooks.example.com' };
    expect(resolveWebhookReceiver({ receiver: 'off' }, env)).toBeUndefined();
    expect(resolveWebhookReceiver({ receiver: 'loopback' }, env)).toEqual({ host: '127.0.0.1', port: 0 });
    expect(() => resolveWebhookReceiver({ receiver: 'loopback', publicBaseUrl: 'https://x.example' }, {})).toThrow(
      ConfigurationError,
    );
    expect(() => resolveWebhookReceiver({ receiver: 'proxy', port: 1 }, {})).toThrow(/public base URL/);
    expect(() => resolveWebhookReceiver({ receiver: 'loopback', host: '0.0.0.0' }, {})).toThrow(/not loopback/);
    expect(() => resolveWebhookReceiver({ publicBaseUrl: 'ftp://x.example', port: 1 }, {})).toThrow(/http\(s\)/);
    expect(() => resolveWebhookReceiver({ publicBaseUrl: 'https://x.example', port: 70000 }, {})).toThrow(/not a port/);
  });
});
