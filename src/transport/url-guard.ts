/**
 * The SSRF guard for every URL the runner fetches that the agent (or a
 * storyboard) supplies — the authorization server named by RFC 9728 metadata,
 * the JSON-RPC endpoint an A2A agent card names, a redirect's Location — so a
 * hostile agent cannot turn the runner into a probe of the network it runs in
 * (security.yaml > probe_auth_server_metadata: "HTTPS only, no RFC 1918 /
 * loopback / link-local hosts, bounded response size and time").
 *
 * - The agent's own origin (the URL the user configured) is the user's choice:
 *   never vetted. Its origin exactly (`sameOrigin`): scheme, canonical host
 *   and port; a loopback alias of its host is another host.
 * - Anything else must be https, and its host must not be, or RESOLVE to, a
 *   loopback, private (RFC 1918), CGNAT, link-local (169.254.169.254
 *   included), unspecified, multicast or reserved address, in IPv4 or IPv6
 *   (ULA, link-local, IPv4-mapped / -compatible / -translated, NAT64 and 6to4
 *   forms of such an IPv4 address included).
 * - The name is resolved once, here, and the connection is pinned to the
 *   vetted address (an undici Agent whose connector dials that address, SNI
 *   and certificate checks still on the name): a DNS answer that changes
 *   between the check and the connection (rebinding) is never used.
 * - Redirects are followed only on the same host, at most 3 hops, each hop
 *   vetted again; bounded in time (resolution included) and size.
 * - `allowHttp` (local development: `--allow-http`, `agent.allowHttp`,
 *   ADCP_ALLOW_HTTP=1) lifts the https and address rules; redirects still stay
 *   on their host and everything stays bounded.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { undici, type Agent, type Dispatcher } from '../model/undici.js';
import { bare, nonPublicAddress } from '../model/addresses.js';
import { boundedFetch, NULL_BODY_STATUSES, type FetchLike, type ObservedHttp } from './http.js';

/** Name resolution: every address of a host name. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface UrlGuardOptions {
  /** The URL the user configured: its origin is never vetted. */
  agentUrl: string;
  /** Local development: plain http and private, loopback or link-local targets are allowed. @default false */
  allowHttp?: boolean;
  /** How host names are resolved. @default node:dns lookup, every address */
  lookup?: Resolver;
  /**
   * Where a vetted address is actually dialled. Only for tests, which route
   * every dial to a loopback listener that records connections — so a target
   * the guard wrongly let through would show up there. @default the address itself
   */
  dial?: (address: string) => string;
}

/** A URL the guard will not fetch; its message says why. */
export class UrlRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UrlRefusedError';
  }
}

const MAX_REDIRECTS = 3;

// ─── URLs ───────────────────────────────────────────────────────────────────

/**
 * The same agent: same scheme, same host and same port, after the URL
 * parser's canonicalisation (case, IPv4 spellings such as `127.1` or
 * `0x7f.0.0.1`, IPv6 compression, IDNA, a default port) — and nothing looser.
 * A loopback alias (`localhost`, 127.0.0.2, `[::1]` for an agent at
 * 127.0.0.1) is another host: another process may listen there, and an
 * agent-supplied URL allowed as "the same agent" is sent the operator's
 * credentials. Only http(s) URLs have an origin to share (an opaque origin,
 * `null`, is never the same as anything).
 */
export function sameOrigin(a: URL | string, b: URL | string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    const web = (u: URL) => u.protocol === 'https:' || u.protocol === 'http:';
    return web(x) && web(y) && x.protocol === y.protocol && x.hostname === y.hostname && x.port === y.port;
  } catch {
    return false;
  }
}

/**
 * Why a URL may not be fetched, judged on its text alone (scheme, a literal
 * address, a loopback name) — or undefined. Names that resolve to a refused
 * address are caught by `vetUrl`, which resolves them.
 */
export function literalRefusal(
  target: string,
  options: Pick<UrlGuardOptions, 'agentUrl' | 'allowHttp'>,
): string | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return `"${target.slice(0, 200)}" is not a URL`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${url.protocol} is not http(s)`;
  if (sameOrigin(url, options.agentUrl) || options.allowHttp) return undefined;
  if (url.protocol !== 'https:')
    return `${url.origin} is not https (plain http is allowed for local development only: --allow-http, agent.allowHttp, ADCP_ALLOW_HTTP=1)`;
  const host = bare(url.hostname);
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  const what = nonPublicAddress(host);
  return what ? `${host} is ${what}` : undefined;
}

/** A URL that may be fetched, and — off the agent's origin — the addresses its connection is pinned to. */
export interface VettedUrl {
  url: URL;
  /** Absent on the agent's own origin (not vetted, the shared pool is used). */
  pinned?: { hostname: string; addresses: { address: string; family: number }[] };
}

const systemLookup: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Vets a URL: the literal rules, then the host name's resolution — every
 * address it resolves to must be public. Throws UrlRefusedError (or the
 * resolution's own error); resolution is bounded by `timeoutMs`.
 */
export async function vetUrl(target: string, options: UrlGuardOptions, timeoutMs: number): Promise<VettedUrl> {
  const refusal = literalRefusal(target, options);
  if (refusal) throw new UrlRefusedError(refusal);
  const url = new URL(target);
  if (sameOrigin(url, options.agentUrl)) return { url };
  const hostname = bare(url.hostname);
  const family = isIP(hostname);
  if (family !== 0) return { url, pinned: { hostname, addresses: [{ address: hostname, family }] } };
  const resolved = await withTimeout((options.lookup ?? systemLookup)(hostname), timeoutMs, `resolving ${hostname}`);
  if (resolved.length === 0) throw new Error(`${hostname} resolves to no address`);
  if (!options.allowHttp) {
    for (const { address } of resolved) {
      const what = nonPublicAddress(address);
      if (what) throw new UrlRefusedError(`${hostname} resolves to ${address}, ${what}`);
    }
  }
  // IPv4 first: a host without IPv6 connectivity still reaches a dual-stack name.
  const addresses = [...resolved].sort((a, b) => a.family - b.family);
  return { url, pinned: { hostname, addresses } };
}

function withTimeout<T>(promise: Promise<T>, ms: number, doing: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms ${doing}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * An undici dispatcher whose every connection goes to the vetted address of
 * one host name, whatever DNS says later. Requests for any other host are
 * refused. Close it when done.
 */
export function pinnedDispatcher(pinned: NonNullable<VettedUrl['pinned']>, dial?: (address: string) => string): Agent {
  const connector = undici().buildConnector({ timeout: 10_000 });
  const target = pinned.addresses[0]!.address;
  return new (undici().Agent)({
    keepAliveTimeout: 1_000,
    connect: (options, callback) => {
      if (bare(options.hostname) !== pinned.hostname) {
        callback(new UrlRefusedError(`${options.hostname} is not the vetted host ${pinned.hostname}`), null);
        return;
      }
      // The name stays in `host`, so SNI and the certificate check are on the name; only the dialled address is pinned.
      connector({ ...options, hostname: dial ? dial(target) : target }, callback);
    },
  });
}

/** The answer to a guarded GET: status, headers and the (bounded) body text, of the last hop. */
export interface GuardedAnswer {
  url: string;
  status: number;
  headers: [string, string][];
  text: string;
  /** The redirects followed (same host only), in order. */
  redirects: string[];
}

export interface GuardedFetchOptions {
  timeoutMs: number;
  maxResponseBytes: number;
  headers?: Record<string, string>;
  /** Follow same-host redirects (at most MAX_REDIRECTS). `false`: a redirect is the answer. @default true */
  followRedirects?: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * One GET under the guard: each hop vetted (and pinned when off the agent's
 * origin), redirects followed on the same host only, at most MAX_REDIRECTS;
 * the whole exchange within `timeoutMs`. Throws UrlRefusedError for a target
 * it will not fetch — before any connection to it is opened.
 */
export async function guardedGet(
  target: string,
  guard: UrlGuardOptions,
  options: GuardedFetchOptions,
): Promise<GuardedAnswer> {
  const started = performance.now();
  const left = () => Math.max(1, Math.round(options.timeoutMs - (performance.now() - started)));
  const redirects: string[] = [];
  let current = target;
  for (;;) {
    const vetted = await vetUrl(current, guard, left());
    const dispatcher: Dispatcher | undefined = vetted.pinned ? pinnedDispatcher(vetted.pinned, guard.dial) : undefined;
    try {
      let observed: ObservedHttp | undefined;
      const fetch = boundedFetch({
        timeoutMs: left(),
        maxResponseBytes: options.maxResponseBytes,
        onResponse: (o) => (observed = o),
        ...(dispatcher ? { dispatcher } : {}),
      });
      const response = await fetch(vetted.url.href, {
        method: 'GET',
        headers: { accept: 'application/json', ...options.headers },
        redirect: 'manual',
      });
      const location = response.headers.get('location');
      if (REDIRECTS.has(response.status) && location && options.followRedirects !== false) {
        await response.body?.cancel().catch(() => {});
        const next = new URL(location, vetted.url);
        if (bare(next.hostname) !== bare(vetted.url.hostname)) {
          throw new UrlRefusedError(
            `${vetted.url.href} redirects to ${next.origin}, another host (redirects are followed on the same host only)`,
          );
        }
        if (redirects.length >= MAX_REDIRECTS)
          throw new UrlRefusedError(`more than ${MAX_REDIRECTS} redirects from ${target}`);
        redirects.push(next.href);
        current = next.href;
        continue;
      }
      const text = await response.text();
      return {
        url: vetted.url.href,
        status: response.status,
        headers: observed?.headers ?? [...response.headers],
        text,
        redirects,
      };
    } finally {
      await dispatcher?.close().catch(() => {});
    }
  }
}

/**
 * `guardedGet` as a fetch function (GET only), for code that takes one — e.g.
 * a JWKS or brand.json lookup on URLs the agent supplies. The answer's body is
 * already read (bounded) when the Response is returned.
 */
export function guardedFetch(
  guard: UrlGuardOptions,
  bounds: { timeoutMs: number; maxResponseBytes: number; followRedirects?: boolean },
): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'GET') throw new TypeError(`the guarded fetch sends GET only, not ${method}`);
    const headers = Object.fromEntries(new Headers(init?.headers as ConstructorParameters<typeof Headers>[0]));
    const answer = await guardedGet(String(url), guard, { ...bounds, headers });
    const bodiless = NULL_BODY_STATUSES.has(answer.status);
    return new Response(bodiless ? null : answer.text, { status: answer.status, headers: answer.headers });
  };
}

/**
 * Redirects of the agent's own endpoint (an MCP POST): followed only when they
 * stay on the agent's origin and keep the method and body (307 / 308, at most
 * MAX_REDIRECTS); a redirect to any other origin is refused — the Location is
 * agent-supplied, and fetch would otherwise follow it anywhere. Other
 * same-origin redirects (301 / 302 / 303) are returned as the answer.
 */
export function agentOriginRedirects(fetch: FetchLike, agentUrl: string): FetchLike {
  return async (url, init) => {
    let current = String(url);
    for (let hops = 0; ; hops++) {
      const response = await fetch(current, { ...init, redirect: 'manual' });
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || !location) return response;
      const next = new URL(location, current);
      if (!sameOrigin(next, agentUrl)) {
        await response.body?.cancel().catch(() => {});
        throw new UrlRefusedError(
          `the agent redirected ${current} to ${next.origin}, another origin (the runner follows redirects on the agent's own origin only)`,
        );
      }
      if (response.status !== 307 && response.status !== 308) return response;
      await response.body?.cancel().catch(() => {});
      if (hops >= MAX_REDIRECTS) throw new UrlRefusedError(`more than ${MAX_REDIRECTS} redirects from ${String(url)}`);
      current = next.href;
    }
  };
}
