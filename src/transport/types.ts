import type { Exchange } from '../model/exchange.js';

/** Credentials for one call, after the step's `auth:` and the run's defaults are resolved. */
export type Credentials =
  { kind: 'none' } | { kind: 'bearer'; token: string } | { kind: 'basic'; username: string; password: string };

export interface CallOptions {
  credentials: Credentials;
  /** Bounds the whole call (connect + request + response). */
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * A2A: a follow-up send in an existing conversation — the `contextId` the message carries, which the server MUST
   * echo (A2A 0.3 §7.1). Sent only when a step asks for continuity (a2a_context_continuity); MCP ignores it.
   */
  a2aContextId?: string;
}

/** A way to reach the agent under test. One instance per storyboard run. */
export interface AgentTransport {
  readonly kind: 'mcp' | 'a2a';
  readonly url: string;
  /** Calls a task. Never throws for agent misbehaviour: failures come back in the Exchange. */
  call(task: string, payload: unknown, options: CallOptions): Promise<Exchange>;
  /**
   * The tools the agent advertises (MCP `tools/list`), or a reason it could
   * not be learned. The engine grades `missing_tool` from this list.
   */
  listTools(options: CallOptions): Promise<{ tools: string[] } | { error: string }>;
  close(): Promise<void>;
}

export function authorizationHeader(credentials: Credentials): string | undefined {
  switch (credentials.kind) {
    case 'bearer':
      return `Bearer ${credentials.token}`;
    case 'basic':
      return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    default:
      return undefined;
  }
}
