import type { Exchange } from '../checks/types.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../config.js';
import { createTransport } from '../transport/create.js';

export interface ProbeOptions {
  /** A protected, read-only task to call. @default 'list_creatives' (the security storyboard's default probe_task) */
  task?: string;
  /** Arguments of the call. @default {} */
  payload?: Record<string, unknown>;
  /** @default 10000 */
  timeoutMs?: number;
  /** How to reach the agent (for a2a the URL is where its agent card is). @default 'mcp' */
  protocol?: 'mcp' | 'a2a';
}

/** Calls a task with no credentials over the same transport the storyboards use. */
export async function probeUnauthenticated(url: unknown, options: ProbeOptions = {}): Promise<{ task: string; exchange: Exchange }> {
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
    throw new TypeError(`expected the agent's URL (a http(s) string), received ${typeof url === 'string' ? JSON.stringify(url) : typeof url}`);
  }
  const task = options.task ?? 'list_creatives';
  const transport = createTransport(options.protocol ?? 'mcp', { url, maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES });
  try {
    const exchange = await transport.call(task, options.payload ?? {}, { credentials: { kind: 'none' }, timeoutMs: options.timeoutMs ?? 10_000 });
    return { task, exchange };
  } finally {
    await transport.close();
  }
}

/** "HTTP 200", "no HTTP answer (…)" — what the agent did, in a few words. */
export function describeAnswer(exchange: Exchange): string {
  if (exchange.response?.status !== undefined) return `HTTP ${exchange.response.status}`;
  return `no HTTP answer (${exchange.transportError ?? 'unknown transport error'})`;
}
