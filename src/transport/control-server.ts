/**
 * A JSON endpoint on 127.0.0.1 for the plugin's workers to reach its main process, and the workers' side of it
 * (`controlRequest`) (the webhook receiver's control
 * endpoint, the run host): an ephemeral port, a random bearer token handed to the workers with `provide`, never facing
 * the network. Bodies are bounded; a request without the token is refused before its body is read.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ControlRequest {
  method: string;
  url: URL;
  /** The parsed JSON body (undefined without one). */
  body: unknown;
}

/** JSON, or bytes the two sides agree on (the run host's outcomes: node:v8 serialisation, shared values kept once). */
export type ControlAnswer = { status: number; body: unknown } | { status: number; bytes: Buffer };

export type ControlHandler = (request: ControlRequest) => Promise<ControlAnswer>;

const DEFAULT_MAX_BODY = 64 * 1024;

export class ControlServer {
  private closing?: Promise<void>;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    /** `http://127.0.0.1:<port>` */
    readonly url: string,
    readonly token: string,
  ) {}

  static async start(handle: ControlHandler, options: { maxBodyBytes?: number } = {}): Promise<ControlServer> {
    const server = createServer();
    server.headersTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const control = new ControlServer(server, `http://127.0.0.1:${port}`, randomBytes(32).toString('hex'));
    const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (!control.authorised(req)) return send(res, { status: 401, body: { error: 'unauthorised' } });
      readJson(req, maxBody)
        .then((body) =>
          handle({ method: req.method ?? 'GET', url: new URL(req.url ?? '/', 'http://control.invalid'), body }),
        )
        .then((answer) => send(res, answer))
        .catch((error: unknown) =>
          send(res, { status: 500, body: { error: error instanceof Error ? error.message : String(error) } }),
        );
    });
    server.on('connection', (socket) => {
      control.sockets.add(socket);
      socket.once('close', () => control.sockets.delete(socket));
    });
    return control;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
    return this.closing;
  }

  private authorised(req: IncomingMessage): boolean {
    const presented = Buffer.from(String(req.headers.authorization ?? ''));
    const expected = Buffer.from(`Bearer ${this.token}`);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }
}

function send(res: ServerResponse, answer: ControlAnswer): void {
  if (res.headersSent) return;
  const [type, data] =
    'bytes' in answer
      ? ['application/octet-stream', answer.bytes]
      : ['application/json', Buffer.from(JSON.stringify(answer.body))];
  res.writeHead(answer.status, { 'content-type': type, 'content-length': String(data.length) });
  res.end(data);
}

async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new Error('control request too large');
    chunks.push(chunk);
  }
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Where a worker reaches a ControlServer (what the plugin `provide`s). */
export interface ControlEndpoint {
  url: string;
  token: string;
}

/**
 * A worker's request to a ControlServer: a JSON body, the bearer token; the answer's status and bytes. Over node:http,
 * a connection each (loopback; a worker makes one or two a storyboard file): the workers' only HTTP when the run host
 * runs their files, and importing undici for it cost each worker a third of a second of its start.
 */
export function controlRequest(
  endpoint: ControlEndpoint,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: unknown; timeoutMs?: number } = {},
): Promise<{ status: number; bytes: Buffer }> {
  const body = options.body !== undefined ? Buffer.from(JSON.stringify(options.body)) : undefined;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${endpoint.url}${path}`,
      {
        method,
        agent: false,
        headers: {
          authorization: `Bearer ${endpoint.token}`,
          ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}),
        },
        ...(options.timeoutMs !== undefined ? { signal: AbortSignal.timeout(Math.ceil(options.timeoutMs)) } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }));
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(new Error('the control endpoint closed the connection before its answer ended'));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
