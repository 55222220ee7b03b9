/**
 * The runner's webhook receiver (test-kits/webhook-receiver-runner.yaml): an
 * HTTP listener the agent under test POSTs its webhooks to, at per-step URLs
 * `<base>/step/<step_id>/<operation_id>` the runner mints and registers before
 * the triggering call. It records every delivery (method, URL, header lines,
 * the raw body bytes, time, the status it answered) and applies the retry
 * contract: a URL registered with a retry policy answers `http_status` to its
 * first `count` deliveries, then 200.
 *
 * Bounded on purpose — in proxy mode this listener faces the network:
 *   - only registered URLs are accepted (404 otherwise), only POST (405).
 *     The operation id is the URL's unguessable part (the engine mints a
 *     random UUID per step and keeps it out of every output: roles/webhook-receiver/webhooks.ts
 *     `secrets()`), so a delivery is accepted only from whoever was sent the
 *     URL — the agent — not from a process that read a report;
 *   - a body over `maxBodyBytes` is not kept (413; the delivery is recorded as
 *     oversize so the step can say so);
 *   - at most `maxDeliveriesPerUrl` per URL and `maxStoredBytes` in all, then
 *     503 + Retry-After (back-pressure, not recorded);
 *   - header/request timeouts, a connection cap and a header-count cap.
 *
 * `WebhookSink` is what the engine needs from a receiver; this class is one
 * (in-process), `RemoteWebhookSink` (remote.ts) the other (a receiver in the
 * Vitest main process, reached over a loopback control endpoint).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One POST the receiver got at a registered URL. */
export interface WebhookDelivery {
  /** Arrival order on this receiver, from 1. */
  seq: number;
  stepId: string;
  operationId: string;
  /** Epoch milliseconds at which the body was complete. */
  receivedAt: number;
  method: string;
  /** The absolute URL the sender addressed: the public base's origin + the request target as received. */
  url: string;
  /** Header field lines as received: lower-cased names, repeated fields kept as separate lines. */
  headers: [string, string][];
  /** The raw body bytes (empty when oversize). */
  body: Buffer;
  /** The body exceeded the receiver's limit and was dropped (answered 413). */
  oversize?: boolean;
  /** The status the receiver answered. */
  answered: number;
}

/** receiver_returns_5xx_then_2xx (webhook-receiver-runner.yaml > retry_replay_contract). */
export interface RetryPolicy {
  count: number;
  httpStatus: number;
}

/** What the engine needs from a webhook receiver. */
export interface WebhookSink {
  /** `{{runner.webhook_base}}`: where the agent reaches the receiver. */
  readonly baseUrl: string;
  /** Accept deliveries at `<base>/step/<stepId>/<operationId>` from now on (idempotent; a policy replaces the previous one). */
  open(stepId: string, operationId: string, policy?: RetryPolicy): Promise<void>;
  /**
   * Deliveries at that URL with `seq > afterSeq`, oldest first, waiting until
   * at least one exists or `waitMs` has passed (then `[]`).
   */
  next(stepId: string, operationId: string, afterSeq: number, waitMs: number): Promise<WebhookDelivery[]>;
  /** Stop accepting at these URLs and drop what they recorded (a storyboard run ends). */
  release(urls: readonly { stepId: string; operationId: string }[]): Promise<void>;
}

export interface WebhookReceiverOptions {
  /** Interface to bind. @default '127.0.0.1' */
  host?: string;
  /** @default 0 (an ephemeral port) */
  port?: number;
  /**
   * proxy_url mode: the public base URL the agent is given (an HTTPS URL that
   * routes to this listener, path preserved). @default the listener's own http://host:port
   */
  publicBaseUrl?: string;
  /** Largest body kept. @default 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /** Deliveries kept per URL. @default 100 */
  maxDeliveriesPerUrl?: number;
  /** Body bytes kept in all. @default 67108864 (64 MiB) */
  maxStoredBytes?: number;
  /** Longest single `next()` wait. @default 600000 */
  maxWaitMs?: number;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const STEP_ID = /^[A-Za-z0-9_.-]{1,128}$/;
const OPERATION_ID = /^[A-Za-z0-9_.-]{1,128}$/;

interface Registered {
  policy?: RetryPolicy;
  deliveries: WebhookDelivery[];
}

interface Waiter {
  key: string;
  afterSeq: number;
  resolve: (deliveries: WebhookDelivery[]) => void;
  timer: NodeJS.Timeout;
}

const keyOf = (stepId: string, operationId: string) => `${stepId}\u0000${operationId}`;

/** True for a `(stepId, operationId)` pair the receiver can route (safe as URL path segments). */
export function isRoutable(stepId: string, operationId: string): boolean {
  return STEP_ID.test(stepId) && OPERATION_ID.test(operationId) && stepId !== '.' && stepId !== '..';
}

export class WebhookReceiver implements WebhookSink {
  readonly baseUrl: string;
  /** The listener's own address, `http://host:port`. */
  readonly listenUrl: string;
  private readonly registered = new Map<string, Registered>();
  private waiters: Waiter[] = [];
  private seq = 0;
  private storedBytes = 0;
  private readonly sockets = new Set<Socket>();
  private readonly prefix: string;
  private readonly publicOrigin: string;
  private closing?: Promise<void>;

  private constructor(
    private readonly server: Server,
    address: AddressInfo,
    private readonly options: Required<Omit<WebhookReceiverOptions, 'publicBaseUrl' | 'host' | 'port'>> & {
      publicBaseUrl?: string;
    },
  ) {
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.listenUrl = `http://${host}:${address.port}`;
    const base = new URL(options.publicBaseUrl ?? this.listenUrl);
    this.prefix = base.pathname.replace(/\/+$/, '');
    this.publicOrigin = base.origin;
    this.baseUrl = `${base.origin}${this.prefix}`;
  }

  static async start(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
    if (options.publicBaseUrl !== undefined) checkBaseUrl(options.publicBaseUrl);
    const server = createServer();
    // A sender that trickles headers or a body must not hold a connection for long.
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    // No connection is kept alive between deliveries (reply: Connection: close), so this idle bound drops none.
    server.keepAliveTimeout = 5_000;
    server.maxHeadersCount = 100;
    server.maxConnections = 64;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const receiver = new WebhookReceiver(server, server.address() as AddressInfo, {
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      maxDeliveriesPerUrl: options.maxDeliveriesPerUrl ?? 100,
      maxStoredBytes: options.maxStoredBytes ?? 64 * 1024 * 1024,
      maxWaitMs: options.maxWaitMs ?? 600_000,
      ...(options.publicBaseUrl !== undefined ? { publicBaseUrl: options.publicBaseUrl } : {}),
    });
    server.on('request', (req, res) => receiver.handle(req, res));
    server.on('connection', (socket) => {
      receiver.sockets.add(socket);
      socket.once('close', () => receiver.sockets.delete(socket));
    });
    return receiver;
  }

  /** The URL of a registered step: `<base>/step/<stepId>/<operationId>`. */
  urlFor(stepId: string, operationId: string): string {
    return `${this.baseUrl}/step/${stepId}/${operationId}`;
  }

  async open(stepId: string, operationId: string, policy?: RetryPolicy): Promise<void> {
    if (!isRoutable(stepId, operationId))
      throw new Error(`webhook URL segments must match [A-Za-z0-9_.-]{1,128}: "${stepId}", "${operationId}"`);
    const key = keyOf(stepId, operationId);
    const existing = this.registered.get(key);
    if (existing) {
      if (policy) existing.policy = policy;
      return;
    }
    this.registered.set(key, { deliveries: [], ...(policy ? { policy } : {}) });
  }

  next(stepId: string, operationId: string, afterSeq: number, waitMs: number): Promise<WebhookDelivery[]> {
    const key = keyOf(stepId, operationId);
    const ready = (this.registered.get(key)?.deliveries ?? []).filter((d) => d.seq > afterSeq);
    if (ready.length > 0 || waitMs <= 0 || this.closing) return Promise.resolve(ready);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        key,
        afterSeq,
        resolve,
        timer: setTimeout(() => this.settle(waiter, []), Math.min(waitMs, this.options.maxWaitMs)),
      };
      this.waiters.push(waiter);
    });
  }

  async release(urls: readonly { stepId: string; operationId: string }[]): Promise<void> {
    for (const { stepId, operationId } of urls) {
      const key = keyOf(stepId, operationId);
      for (const d of this.registered.get(key)?.deliveries ?? []) this.storedBytes -= d.body.length;
      this.registered.delete(key);
      for (const waiter of this.waiters.filter((w) => w.key === key)) this.settle(waiter, []);
    }
  }

  /** Every delivery still held, oldest first (for tests and diagnostics). */
  deliveries(): WebhookDelivery[] {
    return [...this.registered.values()].flatMap((r) => r.deliveries).sort((a, b) => a.seq - b.seq);
  }

  close(): Promise<void> {
    this.closing ??= new Promise((resolve) => {
      for (const waiter of [...this.waiters]) this.settle(waiter, []);
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
    return this.closing;
  }

  private settle(waiter: Waiter, deliveries: WebhookDelivery[]): void {
    clearTimeout(waiter.timer);
    this.waiters = this.waiters.filter((w) => w !== waiter);
    waiter.resolve(deliveries);
  }

  private route(target: string): { stepId: string; operationId: string } | undefined {
    const path = target.split('?')[0]!;
    if (!path.startsWith(`${this.prefix}/step/`)) return undefined;
    const [stepId, operationId, ...rest] = path.slice(this.prefix.length + '/step/'.length).split('/');
    if (stepId === undefined || operationId === undefined || rest.length > 1 || (rest.length === 1 && rest[0] !== ''))
      return undefined;
    return isRoutable(stepId, operationId) ? { stepId, operationId } : undefined;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const target = req.url ?? '/';
    const route = this.route(target);
    const entry = route && this.registered.get(keyOf(route.stepId, route.operationId));
    if (!route || !entry) return reply(res, 404, req);
    if (req.method !== 'POST') return reply(res, 405, req, { allow: 'POST' });
    if (
      entry.deliveries.length >= this.options.maxDeliveriesPerUrl ||
      this.storedBytes >= this.options.maxStoredBytes
    ) {
      return reply(res, 503, req, { 'retry-after': '1' });
    }
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (oversize: boolean) => {
      if (done) return;
      done = true;
      // Registered again: the run may have released the URL while the body streamed in.
      if (!this.registered.has(keyOf(route.stepId, route.operationId))) return reply(res, 404, req);
      const body = oversize ? Buffer.alloc(0) : Buffer.concat(chunks);
      const index = entry.deliveries.length;
      const answered = oversize ? 413 : entry.policy && index < entry.policy.count ? entry.policy.httpStatus : 200;
      const delivery: WebhookDelivery = {
        seq: ++this.seq,
        stepId: route.stepId,
        operationId: route.operationId,
        receivedAt: Date.now(),
        method: req.method ?? 'POST',
        url: `${this.publicOrigin}${target}`,
        headers: headerLines(req.rawHeaders),
        body,
        ...(oversize ? { oversize: true } : {}),
        answered,
      };
      entry.deliveries.push(delivery);
      this.storedBytes += body.length;
      const key = keyOf(route.stepId, route.operationId);
      for (const waiter of this.waiters.filter((w) => w.key === key && w.afterSeq < delivery.seq)) {
        this.settle(
          waiter,
          entry.deliveries.filter((d) => d.seq > waiter.afterSeq),
        );
      }
      // An oversize body is not read to its end: answer, then drop the connection.
      if (oversize) {
        res.writeHead(413, { 'content-length': '0', connection: 'close' });
        res.end(() => req.socket.destroy());
        return;
      }
      reply(res, answered, req);
    };
    if (Number.isFinite(declared) && declared > this.options.maxBodyBytes) return finish(true);
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > this.options.maxBodyBytes) finish(true);
      else if (!done) chunks.push(chunk);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => finish(false));
  }
}

/**
 * Every answer closes its connection (`Connection: close`). A kept-alive connection is dropped once idle past
 * keepAliveTimeout, and a sender that reuses it then (many HTTP/1.1 clients keep idle connections longer than the
 * receiver, ignoring the Keep-Alive hint) writes its delivery onto a closed socket: lost. The spec's retry signals are
 * the statuses the receiver answers, deterministically (storyboard-schema.yaml > expect_webhook_retry_keys_stable:
 * 5xx for the first `count` deliveries, from {429, 500, 502, 503, 504}; "other statuses are not retryable signals");
 * a dropped connection is none of them, so a sender need not retry it — a webhook_no_retry sender does not, and the
 * step graded the agent no_webhook_received for the receiver's drop (a retrying one shifted the retry count instead).
 * HTTP/1.1 senders MUST honour `Connection: close` (RFC 9112 §9.6): the next delivery opens its own connection, and
 * no delivery ever rides on one the receiver may drop. A connection per webhook costs nothing here.
 */
function reply(res: ServerResponse, status: number, req: IncomingMessage, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-length': '0', connection: 'close', ...headers });
  res.end();
  // An unread body must not keep the connection busy.
  if (!req.complete) req.resume();
}

/** `rawHeaders` → lower-cased [name, value] lines, in order. */
function headerLines(raw: string[]): [string, string][] {
  const lines: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) lines.push([raw[i]!.toLowerCase(), raw[i + 1]!]);
  return lines;
}

/** A base URL for webhooks: absolute http(s), no credentials, query or fragment, no CR/LF. */
export function checkBaseUrl(raw: string): void {
  if (/[\r\n\u0000]/.test(raw)) throw new Error('the webhook base URL must not contain CR, LF or NUL');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`the webhook base URL "${raw}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error(`the webhook base URL "${raw}" is not http(s)`);
  if (url.username || url.password) throw new Error('the webhook base URL must not carry credentials');
  if (url.search || url.hash) throw new Error('the webhook base URL must not carry a query or fragment');
}
