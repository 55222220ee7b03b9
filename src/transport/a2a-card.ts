/**
 * A2A agent discovery: where the agent card is (under the given URL, then at the origin root), what it says (the
 * JSON-RPC endpoint, the skills, the AdCP A2A profile), and the SSRF guard on an endpoint it names off the agent's
 * origin. a2a.ts sends the calls.
 */
import type { Dispatcher } from 'undici';
import { isLoopbackHost } from '../model/addresses.js';
import { boundedFetch, describeError, type ObservedHttp } from './http.js';
import { pinnedDispatcher, sameOrigin, UrlRefusedError, vetUrl, type UrlGuardOptions } from './url-guard.js';

/** The AdCP A2A profile extension (a2a-profile-extension.mdx): `{ skill, input }` instead of `{ skill, parameters }`. */
export const ADCP_A2A_EXTENSION = 'https://adcontextprotocol.org/extensions/adcp/v3';

/** What discovery learned: where to send calls, and the tools. */
export interface Discovered {
  endpoint: string;
  cardUrl?: string;
  /** Skill ids of the card, or why there is no list. */
  skills: { tools: string[] } | { error: string };
  invocation: 'parameters' | 'input';
  /** Set when calls must not be sent (the card names an endpoint we refuse). */
  refused?: string;
  /** An endpoint off the agent's origin: connections pinned to its vetted address. */
  dispatcher?: Dispatcher;
}

const MAX_SKILLS = 1000;

/** Where an agent card may be, in order: under the given URL, then at the origin root; A2A 0.3's name first. */
export function agentCardUrls(agentUrl: string): string[] {
  const url = new URL(agentUrl);
  if (/\/\.well-known\/agent(-card)?\.json$/i.test(url.pathname)) return [url.href];
  const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  const urls = [
    `${base}/.well-known/agent-card.json`,
    `${base}/.well-known/agent.json`,
    `${url.origin}/.well-known/agent-card.json`,
    `${url.origin}/.well-known/agent.json`,
  ];
  return [...new Set(urls)];
}

export async function discoverAgent(
  agentUrl: string,
  timeoutMs: number,
  maxResponseBytes: number,
  signal: AbortSignal,
  guard: UrlGuardOptions,
): Promise<Discovered> {
  const tried: string[] = [];
  for (const cardUrl of agentCardUrls(agentUrl)) {
    let observed: ObservedHttp | undefined;
    const fetch = boundedFetch({ timeoutMs, maxResponseBytes, onResponse: (o) => (observed = o) });
    // A connection failure or timeout is not "no card here": it ends discovery (thrown to the caller).
    const response = await fetch(cardUrl, {
      method: 'GET',
      headers: { accept: 'application/json' },
      signal,
      redirect: 'manual',
    });
    const text = await response.text();
    if (observed!.status !== 200) {
      tried.push(`${cardUrl} (HTTP ${observed!.status})`);
      continue;
    }
    let card: unknown;
    try {
      card = JSON.parse(text);
    } catch {
      tried.push(`${cardUrl} (not JSON)`);
      continue;
    }
    if (!card || typeof card !== 'object' || Array.isArray(card)) {
      tried.push(`${cardUrl} (not a JSON object)`);
      continue;
    }
    return guardEndpoint(fromCard(card, cardUrl, agentUrl), agentUrl, guard, timeoutMs);
  }
  // No card: the URL itself is taken as the JSON-RPC endpoint; missing tools cannot be told apart.
  return {
    endpoint: agentUrl,
    skills: { error: `no A2A agent card at ${tried.join(', ')}` },
    invocation: 'parameters',
  };
}

/** What discovery reads of an agent card, as the agent sent it: any of it may be missing or of another type. */
interface AgentCard {
  url?: unknown;
  preferredTransport?: unknown;
  skills?: unknown;
  additionalInterfaces?: unknown;
  supportedInterfaces?: unknown;
  capabilities?: { extensions?: unknown };
}

/** One of a card's interfaces, as the agent sent it. */
type CardInterface = { url?: unknown; transport?: unknown; protocolBinding?: unknown } | null | undefined;

function fromCard(card: AgentCard, cardUrl: string, agentUrl: string): Discovered {
  const invocation = declaresAdcpProfile(card) ? 'input' : 'parameters';
  const skills: Discovered['skills'] = Array.isArray(card.skills)
    ? {
        tools: (card.skills as ({ id?: unknown; name?: unknown } | null | undefined)[])
          .slice(0, MAX_SKILLS)
          .map((s) => (typeof s?.id === 'string' && s.id ? s.id : typeof s?.name === 'string' ? s.name : undefined))
          .filter((s): s is string => typeof s === 'string' && s.length > 0 && s.length <= 256),
      }
    : { error: `the agent card at ${cardUrl} has no skills list` };
  const named = jsonRpcUrlOf(card);
  if (!named) return { endpoint: agentUrl, cardUrl, skills, invocation };
  let endpoint: string;
  try {
    endpoint = new URL(named, cardUrl).href;
  } catch {
    return {
      endpoint: agentUrl,
      cardUrl,
      skills,
      invocation,
      refused: `the agent card at ${cardUrl} names an endpoint that is not a URL (${JSON.stringify(named).slice(0, 200)})`,
    };
  }
  return { endpoint, cardUrl, skills, invocation };
}

/**
 * An endpoint the card names off the agent's origin goes through the SSRF
 * guard (url-guard.ts): vetted — its name resolved — and, when allowed, every
 * call pinned to the vetted address. "The agent's origin" is exact
 * (`sameOrigin`: scheme, canonical host, port): a card at 127.0.0.1 naming
 * 127.0.0.2, `[::1]` or `localhost` on the same port names another host,
 * which can be another process, and is vetted like any other.
 */
async function guardEndpoint(
  discovered: Discovered,
  agentUrl: string,
  guard: UrlGuardOptions,
  timeoutMs: number,
): Promise<Discovered> {
  const { endpoint, cardUrl } = discovered;
  if (discovered.refused || sameOrigin(endpoint, agentUrl)) return discovered;
  try {
    const vetted = await vetUrl(endpoint, guard, timeoutMs);
    return vetted.pinned ? { ...discovered, dispatcher: pinnedDispatcher(vetted.pinned, guard.dial) } : discovered;
  } catch (error) {
    let refusal = error instanceof UrlRefusedError ? error.message : `it could not be vetted: ${describeError(error)}`;
    if (loopbackAlias(endpoint, agentUrl))
      refusal = `${refusal}; ${new URL(endpoint).host} is not the agent's host ${new URL(agentUrl).host}, and a loopback alias can be another process`;
    return {
      ...discovered,
      endpoint: agentUrl,
      refused: `the agent card at ${cardUrl} names its JSON-RPC endpoint ${endpoint}, which the runner does not call (${refusal}); test that endpoint's agent directly, or fix the card's url`,
    };
  }
}

/** The card's JSON-RPC endpoint: `url` (A2A 0.3, preferredTransport JSONRPC or absent), else an interface that says JSONRPC. */
function jsonRpcUrlOf(card: AgentCard): string | undefined {
  const preferred = typeof card.preferredTransport === 'string' ? card.preferredTransport.toUpperCase() : undefined;
  if (typeof card.url === 'string' && (!preferred || preferred === 'JSONRPC')) return card.url;
  const interfaces: CardInterface[] = [
    ...(Array.isArray(card.additionalInterfaces) ? card.additionalInterfaces : []),
    ...(Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []),
  ];
  const jsonRpc = interfaces.find(
    (i) => typeof i?.url === 'string' && String(i.transport ?? i.protocolBinding ?? '').toUpperCase() === 'JSONRPC',
  );
  if (jsonRpc) return jsonRpc.url as string;
  return typeof card.url === 'string' ? card.url : undefined;
}

function declaresAdcpProfile(card: AgentCard): boolean {
  const extensions = card?.capabilities?.extensions;
  return (
    Array.isArray(extensions) &&
    extensions.some(
      (e: { uri?: unknown } | null | undefined) =>
        typeof e?.uri === 'string' && e.uri.replace(/\/+$/, '') === ADCP_A2A_EXTENSION,
    )
  );
}

/** Both on loopback, not the same origin: named in the refusal, since "it is all this machine" is the natural mistake. */
function loopbackAlias(endpoint: string, agentUrl: string): boolean {
  try {
    return isLoopbackHost(new URL(endpoint).hostname) && isLoopbackHost(new URL(agentUrl).hostname);
  } catch {
    return false;
  }
}
