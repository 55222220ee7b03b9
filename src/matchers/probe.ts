import type { Exchange } from '../model/exchange.js';
import { createAdcpClient } from '../client/client.js';

export interface ProbeOptions {
  /** A protected, read-only task to call. @default 'list_creatives' (the security storyboard's default probe_task) */
  task?: string;
  /** Arguments of the call. @default {} */
  payload?: Record<string, unknown>;
  /** @default 10000 */
  timeoutMs?: number;
  /** How to reach the agent (for a2a the URL is where its agent card is). @default 'mcp' */
  protocol?: 'mcp' | 'a2a';
  /** Local development only: a plain-http agent that is not loopback (as `createAdcpClient`'s allowHttp). @default false */
  allowHttp?: boolean;
}

/** Calls a task with no credentials through `createAdcpClient` — the transports and URL guard the storyboards use. */
export async function probeUnauthenticated(
  url: string,
  options: ProbeOptions = {},
): Promise<{ task: string; exchange: Exchange }> {
  const task = options.task ?? 'list_creatives';
  const client = createAdcpClient({
    url,
    protocol: options.protocol ?? 'mcp',
    timeoutMs: options.timeoutMs ?? 10_000,
    ...(options.allowHttp ? { allowHttp: true } : {}),
  });
  try {
    return { task, exchange: await client.call(task, options.payload ?? {}, { auth: 'none' }) };
  } finally {
    await client.close();
  }
}
