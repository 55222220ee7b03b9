/**
 * A pass-through HTTP proxy on 127.0.0.1 in front of an agent that counts the
 * JSON-RPC methods it forwards, per Authorization header: what the runner sent,
 * as the agent saw it (sessions opened, tools listed). Real sockets both ways.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** The agent URL to give the runner (same path as the target's). */
  url: string;
  /** `method` → Authorization header (or `none`) → count. */
  counts(method: string): Map<string, number>;
  /** The most requests of `method` that were in flight at once (sent on, their answer not yet ended). */
  maxInFlight(method: string): number;
  /** The `tools/call` tool names forwarded, in order. */
  toolCalls(): string[];
  /**
   * Each `tools/call` forwarded: its tool, and when it was sent on and its answer ended, counted in events at this
   * proxy (every send and every end is one tick: two calls overlap when each started before the other ended).
   */
  toolSpans(): { tool: string; scenario?: string; start: number; end: number }[];
  close(): Promise<void>;
}

/**
 * Holds the answers to calls of `tool` (sent on at once, answered late) until a call of `until` has been sent on, or
 * `maxMs` has passed: whether a runner makes the second call without waiting for the first's answer.
 */
export interface HoldAnswers {
  tool: string;
  until: string;
  maxMs: number;
}

export async function countingProxy(target: string, options: { hold?: HoldAnswers } = {}): Promise<CountingProxy> {
  const upstream = new URL(target);
  const { hold } = options;
  let released: () => void = () => {};
  const release = hold
    ? new Promise<void>((resolve) => {
        released = resolve;
        setTimeout(resolve, hold.maxMs).unref();
      })
    : Promise.resolve();
  const seen = new Map<string, Map<string, number>>();
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  const spans: { tool: string; scenario?: string; start: number; end: number }[] = [];
  let tick = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      /** The tool a `tools/call` calls: its answer is held when it is `hold.tool`. */
      let tool: string | undefined;
      try {
        const message = JSON.parse(body.toString('utf8')) as {
          method?: unknown;
          params?: { name?: unknown; arguments?: { scenario?: unknown } };
        };
        if (typeof message.method === 'string') {
          const method = message.method;
          if (method === 'tools/call' && typeof message.params?.name === 'string') {
            tool = message.params.name;
            const scenario = message.params.arguments?.scenario;
            const span = {
              tool: message.params.name,
              ...(typeof scenario === 'string' ? { scenario } : {}),
              start: tick++,
              end: Infinity,
            };
            spans.push(span);
            res.once('close', () => (span.end = tick++));
            if (span.tool === hold?.until) released();
          }
          inFlight.set(method, (inFlight.get(method) ?? 0) + 1);
          peak.set(method, Math.max(peak.get(method) ?? 0, inFlight.get(method)!));
          res.once('close', () => inFlight.set(method, inFlight.get(method)! - 1));
          const byAuth = seen.get(message.method) ?? new Map<string, number>();
          const auth = req.headers.authorization ?? 'none';
          byAuth.set(auth, (byAuth.get(auth) ?? 0) + 1);
          seen.set(message.method, byAuth);
        }
      } catch {
        // Not JSON (a GET, a DELETE): forwarded uncounted.
      }
      const held = hold !== undefined && tool === hold.tool;
      const forwarded = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          void (held ? release : Promise.resolve()).then(() => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          });
        },
      );
      forwarded.on('error', () => res.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}${upstream.search}`,
    counts: (method) => seen.get(method) ?? new Map(),
    maxInFlight: (method) => peak.get(method) ?? 0,
    toolCalls: () => spans.map((span) => span.tool),
    toolSpans: () => spans.map((span) => ({ ...span })),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
