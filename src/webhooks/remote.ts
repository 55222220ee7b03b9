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
import { ControlServer, controlRequest, type ControlAnswer, type ControlRequest } from '../transport/control-server.js';
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

  private constructor(
    readonly receiver: WebhookReceiver,
    private readonly control: ControlServer,
    readonly config: RemoteWebhookConfig,
  ) {}

  static async start(options: WebhookReceiverOptions = {}): Promise<HostedWebhookReceiver> {
    const receiver = await WebhookReceiver.start(options);
    let control: ControlServer;
    try {
      control = await ControlServer.start((request) => serve(receiver, request), { maxBodyBytes: MAX_CONTROL_BODY });
    } catch (error) {
      await receiver.close();
      throw error;
    }
    return new HostedWebhookReceiver(receiver, control, {
      baseUrl: receiver.baseUrl,
      controlUrl: control.url,
      token: control.token,
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.receiver.close();
      await this.control.close();
    })();
    return this.closing;
  }
}

async function serve(receiver: WebhookReceiver, { method, url, body: given }: ControlRequest): Promise<ControlAnswer> {
  if (method === 'GET' && url.pathname === '/next') {
    const q = url.searchParams;
    const wait = Math.max(0, Math.min(Number(q.get('wait_ms')) || 0, MAX_POLL_MS));
    const deliveries = await receiver.next(
      q.get('step_id') ?? '',
      q.get('operation_id') ?? '',
      Number(q.get('after')) || 0,
      wait,
    );
    return { status: 200, body: { deliveries: deliveries.map(toWire) } };
  }
  if (method !== 'POST') return { status: 404, body: { error: 'not found' } };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a worker's JSON, every field read through String()/Number()/Array.isArray
  const body = given as any;
  if (url.pathname === '/open') {
    const retry = body?.retry
      ? { count: Number(body.retry.count), httpStatus: Number(body.retry.http_status) }
      : undefined;
    await receiver.open(String(body?.step_id), String(body?.operation_id), retry);
    return { status: 200, body: { ok: true } };
  }
  if (url.pathname === '/release') {
    const urls = Array.isArray(body?.urls)
      ? body.urls.map((u: { step_id?: unknown; operation_id?: unknown } | null) => ({
          stepId: String(u?.step_id),
          operationId: String(u?.operation_id),
        }))
      : [];
    await receiver.release(urls);
    return { status: 200, body: { ok: true } };
  }
  return { status: 404, body: { error: 'not found' } };
}

function toWire(d: WebhookDelivery): WireDelivery {
  const { body, ...rest } = d;
  return { ...rest, body_base64: body.toString('base64') };
}

function fromWire(w: WireDelivery): WebhookDelivery {
  const { body_base64, ...rest } = w;
  return { ...rest, body: Buffer.from(body_base64, 'base64') };
}

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

  private async call(method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 10_000): Promise<unknown> {
    const endpoint = { url: this.config.controlUrl, token: this.config.token };
    const answer = await controlRequest(endpoint, method, path, { body, timeoutMs });
    const text = answer.bytes.toString('utf8');
    if (answer.status < 200 || answer.status > 299)
      throw new Error(
        `the webhook receiver's control endpoint answered ${answer.status} to ${method} ${path.split('?')[0]}: ${text.slice(0, 200)}`,
      );
    return JSON.parse(text);
  }
}
