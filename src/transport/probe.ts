/**
 * The runner's own HTTP probes — steps whose `task` is not a tool of the
 * agent but a discovery document the runner fetches (universal/security.yaml):
 *   protected_resource_metadata  RFC 9728 metadata of the agent's endpoint,
 *                                at the origin + /.well-known/oauth-protected-resource + the endpoint path
 *   oauth_auth_server_metadata   RFC 8414 metadata of the first authorization
 *                                server that metadata names
 * Each is one GET under the SSRF guard (url-guard.ts), bounded in time and
 * size, redirects followed on the same host only. The agent's own origin is
 * the user's choice and always allowed; a URL the agent hands us (the
 * authorization server) must be https and neither be nor resolve to a
 * loopback, private or link-local address, unless it is on the agent's own
 * origin — a hostile agent must not turn the runner into a probe of the
 * network it runs in.
 */
import type { Exchange } from '../model/exchange.js';
import { filterResponseHeaders } from '../model/redact.js';
import { describeError } from './http.js';
import { guardedGet, literalRefusal, UrlRefusedError, type UrlGuardOptions } from './url-guard.js';

export const PROBE_TASKS = new Set(['protected_resource_metadata', 'oauth_auth_server_metadata']);

export interface ProbeOptions {
  agentUrl: string;
  timeoutMs: number;
  maxResponseBytes: number;
  /** The guard's options besides the agent URL: allowHttp (local development), and the tests' lookup / dial. */
  guard?: Omit<UrlGuardOptions, 'agentUrl'>;
}

/** RFC 9728 §3.1: the well-known segment is inserted between the origin and the resource's path. */
export function protectedResourceMetadataUrl(agentUrl: string): string {
  const url = new URL(agentUrl);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}/.well-known/oauth-protected-resource${path}`;
}

/** RFC 8414 §3.1: the same insertion for an issuer with a path. */
export function authorizationServerMetadataUrl(issuer: string): string {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}/.well-known/oauth-authorization-server${path}`;
}

/**
 * Why a URL the agent supplied may not be fetched, judged on its text (scheme,
 * literal address, loopback name), or undefined when it may. `guardedGet`
 * also refuses names that resolve to such addresses.
 */
export function refuseAgentSuppliedUrl(target: string, agentUrl: string, allowHttp = false): string | undefined {
  return literalRefusal(target, { agentUrl, allowHttp });
}

export async function probe(task: string, url: string, options: ProbeOptions): Promise<Exchange> {
  const request = { transport: 'http' as const, operation: task, payload: {}, url };
  const started = performance.now();
  try {
    const answer = await guardedGet(
      url,
      { ...options.guard, agentUrl: options.agentUrl },
      { timeoutMs: options.timeoutMs, maxResponseBytes: options.maxResponseBytes },
    );
    const text = answer.text;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the checks see the text
    }
    const duration_ms = Math.round(performance.now() - started);
    const record = {
      transport: 'http' as const,
      payload: body,
      status: answer.status,
      headers: filterResponseHeaders(answer.headers),
      duration_ms,
    };
    const ok = answer.status >= 200 && answer.status < 300;
    const hops = answer.redirects.length > 0 ? ` (after following ${answer.redirects.join(' → ')})` : '';
    return {
      request,
      response: record,
      extraction: ok
        ? { path: 'none', note: `HTTP probe: checks read the parsed JSON body${hops}` }
        : { path: 'error', note: `HTTP probe answered ${answer.status}${hops}` },
      data: body,
    };
  } catch (error) {
    if (error instanceof UrlRefusedError) {
      return {
        request,
        extraction: { path: 'none', note: 'not sent: refused by the SSRF guard' },
        data: undefined,
        transportError: `the runner will not fetch ${url}: ${error.message}`,
      };
    }
    return {
      request,
      extraction: { path: 'none', note: 'HTTP probe failed' },
      data: undefined,
      transportError: `GET ${url} failed: ${describeError(error)}`,
    };
  }
}
