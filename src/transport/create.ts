/**
 * The transport for a run's protocol: `mcp` (Streamable HTTP) or `a2a`
 * (JSON-RPC, agent card discovery). Everything above this line — the engine,
 * the checks, the reports — is the same for both.
 */
import { A2aTransport } from './a2a.js';
import { McpTransport, type McpSessionPool } from './mcp.js';
import type { AgentTransport } from './types.js';
import type { UrlGuardOptions } from './url-guard.js';

export type Protocol = 'mcp' | 'a2a';

export function createTransport(
  protocol: Protocol,
  options: {
    url: string;
    maxResponseBytes: number;
    urlGuard?: Omit<UrlGuardOptions, 'agentUrl'>;
    mcpSessions?: McpSessionPool;
  },
): AgentTransport {
  return protocol === 'a2a'
    ? new A2aTransport(options)
    : new McpTransport({ ...options, sessions: options.mcpSessions });
}
