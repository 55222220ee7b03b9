/**
 * One receiver for a whole Vitest run, in the main process, and the workers'
 * view of it.
 *
 * Vitest runs storyboard files in several worker processes, but a public base
 * URL (proxy_url mode: a tunnel or ingress routing to one port) can only reach
 * one listener. So the plugin hosts the receiver in the main process and
 * beside it a control endpoint on 127.0.0.1 (ephemeral port, a random bearer
 * token handed to the workers with `provide`), through which each worker's
 * `RemoteWebhookSink` registers its URLs and long-polls its deliveries:
 *
 *   POST /open     { step_id, operation_id, retry?: { count, http_status } }
 *   POST /release  { urls: [{ step_id, operation_id }] }
 *   GET  /next?step_id=&operation_id=&after=&wait_ms=   → { deliveries: [...] }  (bodies base64)
 *
 * The control endpoint never faces the network, whatever the receiver binds.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import {
  WebhookReceiver,
  type RetryPolicy,
  type WebhookDelivery,
  type WebhookReceiverOptions,
  type WebhookSink,
} from './receiver.js';

/** What a worker needs to reach the main process's receiver (serialisable: it travels through `provide`). */
export interface RemoteWebhookConfig {
  baseUrl: string;
  controlUrl: string;
  token: string;
}

/** Longest single long-poll; the client loops for longer waits. */
const MAX_POLL_MS = 25_000;
const MAX_CONTROL_BODY = 64 * 1024;

interface WireDelivery extends Omit<WebhookDelivery, 'body'> {
  body_base64: string;
}

/** The receiver plus its control endpoint, as the plugin runs them. */
export class HostedWebhookReceiver {
  private closing?: Promise<void>;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly receiver: WebhookReceiver,
    private readonly control: Server,
    readonly config: RemoteWebhookConfig,
  ) {}

  static async start(options: WebhookReceiverOptions = {}): Promise<HostedWebhookReceiver> {
    const receiver = await WebhookReceiver.start(options);
    const token = randomBytes(32).toString('hex');
    const control = createServer();
    control.headersTimeout = 10_000;
    try {
      await new Promise<void>((resolve, reject) => {
        control.once('error', reject);
        control.listen(0, '127.0.0.1', () => resolve());
      });
    } catch (error) {
      await receiver.close();
      throw error;
    }
    const { port } = control.address() as AddressInfo;
    const hosted = new HostedWebhookReceiver(receiver, control, {
      baseUrl: receiver.baseUrl,
      controlUrl: `http://127.0.0.1:${port}`,
      token,
    });
    control.on('request', (req, res) => {
      hosted
        .serve(req, res)
        .catch((error) => send(res, 500, { error: error instanceof Error ? error.message : String(error) }));
    });
    control.on('connection', (socket) => {
      hosted.sockets.add(socket);
      socket.once('close', () => hosted.sockets.delete(socket));
    });
    return hosted;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.receiver.close();
      await new Promise<void>((resolve) => {
        this.control.close(() => resolve());
        for (const socket of this.sockets) socket.destroy();
      });
    })();
    return this.closing;
  }

  private authorised(req: IncomingMessage): boolean {
    const presented = Buffer.from(String(req.headers.authorization ?? ''));
    const expected = Buffer.from(`Bearer ${this.config.token}`);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.authorised(req)) return send(res, 401, { error: 'unauthorised' });
    const url = new URL(req.url ?? '/', 'http://control.invalid');
    if (req.method === 'GET' && url.pathname === '/next') {
      const q = url.searchParams;
      const wait = Math.max(0, Math.min(Number(q.get('wait_ms')) || 0, MAX_POLL_MS));
      const deliveries = await this.receiver.next(
        q.get('step_id') ?? '',
        q.get('operation_id') ?? '',
        Number(q.get('after')) || 0,
        wait,
      );
      return send(res, 200, { deliveries: deliveries.map(toWire) });
    }
    if (req.method !== 'POST') return send(res, 404, { error: 'not found' });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a worker's JSON, every field read through String()/Number()/Array.isArray
    const body = (await readJson(req)) as any;
    if (url.pathname === '/open') {
      const retry = body?.retry
        ? { count: Number(body.retry.count), httpStatus: Number(body.retry.http_status) }
        : undefined;
      await this.receiver.open(String(body?.step_id), String(body?.operation_id), retry);
      return send(res, 200, { ok: true });
    }
    if (url.pathname === '/release') {
      const urls = Array.isArray(body?.urls)
        ? body.urls.map((u: { step_id?: unknown; operation_id?: unknown } | null) => ({
            stepId: String(u?.step_id),
            operationId: String(u?.operation_id),
          }))
        : [];
      await this.receiver.release(urls);
      return send(res, 200, { ok: true });
    }
    return send(res, 404, { error: 'not found' });
  }
}

function toWire(d: WebhookDelivery): WireDelivery {
  const { body, ...rest } = d;
  return { ...rest, body_base64: body.toString('base64') };
}

function fromWire(w: WireDelivery): WebhookDelivery {
  const { body_base64, ...rest } = w;
  return { ...rest, body: Buffer.from(body_base64, 'base64') };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_CONTROL_BODY) throw new Error('control request too large');
    chunks.push(chunk);
  }
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

let dispatcher: Agent | undefined;

/** A worker's handle on the main process's receiver. */
export class RemoteWebhookSink implements WebhookSink {
  readonly baseUrl: string;

  constructor(private readonly config: RemoteWebhookConfig) {
    this.baseUrl = config.baseUrl;
  }

  async open(stepId: string, operationId: string, policy?: RetryPolicy): Promise<void> {
    await this.call('POST', '/open', {
      step_id: stepId,
      operation_id: operationId,
      ...(policy ? { retry: { count: policy.count, http_status: policy.httpStatus } } : {}),
    });
  }

  async next(stepId: string, operationId: string, afterSeq: number, waitMs: number): Promise<WebhookDelivery[]> {
    const deadline = Date.now() + Math.max(0, waitMs);
    for (;;) {
      // Whole milliseconds: AbortSignal.timeout refuses a fraction.
      const wait = Math.ceil(Math.max(0, Math.min(deadline - Date.now(), MAX_POLL_MS)));
      const query = new URLSearchParams({
        step_id: stepId,
        operation_id: operationId,
        after: String(afterSeq),
        wait_ms: String(wait),
      });
      const answer = (await this.call('GET', `/next?${query}`, undefined, wait + 10_000)) as {
        deliveries: WireDelivery[];
      };
      if (answer.deliveries.length > 0 || Date.now() >= deadline) return answer.deliveries.map(fromWire);
    }
  }

  async release(urls: readonly { stepId: string; operationId: string }[]): Promise<void> {
    if (urls.length === 0) return;
    await this.call('POST', '/release', {
      urls: urls.map((u) => ({ step_id: u.stepId, operation_id: u.operationId })),
    });
  }

  private async call(method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<unknown> {
    dispatcher ??= new Agent({ keepAliveTimeout: 1_000 });
    const response = await undiciFetch(`${this.config.controlUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.config.token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(Math.ceil(timeoutMs)),
      dispatcher,
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(
        `the webhook receiver's control endpoint answered ${response.status} to ${method} ${path.split('?')[0]}: ${text.slice(0, 200)}`,
      );
    return JSON.parse(text);
  }
}
