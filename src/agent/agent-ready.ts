/**
 * Whether an agent answers at its URL the way the run will talk to it: MCP `initialize` (a JSON-RPC POST, as the MCP
 * client opens a session), or the A2A agent card. An open port is not an answer — a framework listens long before its
 * routes are mounted, and a port may be someone else's — and neither is a 404 or a 502 from a proxy in front of an
 * agent still starting.
 *
 * An answer is ready when it is a success, or a 401/403: an agent that wants credentials is up, and the agent
 * preflight (agent-preflight.ts) then says whether the run's own credential is the one it wants.
 */
import { ownVersion } from '../model/package-version.js';
import { boundedFetch, describeError, isTimeoutError } from '../transport/http.js';

/** Readiness reads no body (statuses and a session header only): a small bound for whatever the agent sends. */
const MAX_READINESS_BYTES = 64 * 1024;

export interface ReadinessTarget {
  url: string;
  protocol: 'mcp' | 'a2a';
  authToken?: string;
}

/** One look at the agent: ready, or what was seen instead (for the timeout's message). */
export type Readiness = { ready: true } | { ready: false; seen: string };

/** The MCP protocol version the readiness `initialize` offers; any version the agent answers with is an answer. */
const MCP_PROTOCOL_VERSION = '2025-06-18';

export async function agentReadiness(target: ReadinessTarget, timeoutMs: number): Promise<Readiness> {
  const headers: Record<string, string> = target.authToken ? { authorization: `Bearer ${target.authToken}` } : {};
  try {
    if (target.protocol === 'a2a') return await agentCard(target.url, headers, timeoutMs);
    return await mcpInitialize(target.url, headers, timeoutMs);
  } catch (error) {
    return { ready: false, seen: reasonOf(error) };
  }
}

async function mcpInitialize(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Readiness> {
  const fetch = boundedFetch({ timeoutMs, maxResponseBytes: MAX_READINESS_BYTES });
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: MCP_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'vitest-adcp-readiness', version: ownVersion() },
      },
    }),
  });
  await response.body?.cancel().catch(() => {});
  const session = response.headers.get('mcp-session-id');
  // A stateful agent opened a session for this look: closed again, as a client leaving would (its answer is not ours).
  if (session)
    void fetch(url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': session } })
      .then((r) => r.body?.cancel())
      .catch(() => {});
  return judged(response.status, 'initialize');
}

async function agentCard(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Readiness> {
  const { agentCardUrls } = await import('../transport/a2a-card.js');
  let last: Readiness = { ready: false, seen: 'no agent card' };
  const fetch = boundedFetch({ timeoutMs, maxResponseBytes: MAX_READINESS_BYTES });
  for (const cardUrl of agentCardUrls(url)) {
    const response = await fetch(cardUrl, { headers, redirect: 'manual' });
    await response.body?.cancel().catch(() => {});
    last = judged(response.status, 'the agent card');
    if (last.ready) return last;
  }
  return last;
}

function judged(status: number, what: string): Readiness {
  if ((status >= 200 && status < 300) || status === 401 || status === 403) return { ready: true };
  return { ready: false, seen: `${what} answered HTTP ${status}` };
}

/** What a look that got no answer saw: no answer in time, or the error's code where it has one (`ECONNREFUSED`). */
function reasonOf(error: unknown): string {
  if (isTimeoutError(error)) return 'no answer in time';
  const failed = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = failed?.code ?? failed?.cause?.code;
  return typeof code === 'string' && code ? code : describeError(error);
}
