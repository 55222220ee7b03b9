/**
 * The runner's own HTTP probes — steps whose `task` is not a tool of the
 * agent but a discovery document the runner fetches (universal/security.yaml):
 *   protected_resource_metadata  RFC 9728 metadata of the agent's endpoint,
 *                                at the origin + /.well-known/oauth-protected-resource + the endpoint path
 *   oauth_auth_server_metadata   RFC 8414 metadata of the first authorization
 *                                server that metadata names
 * Each is one GET, bounded in time and size, redirects not followed. The
 * agent's own origin is the user's choice and always allowed; a URL the agent
 * hands us (the authorization server) must be https and not loopback, private
 * or link-local, unless it is on the agent's own origin — a hostile agent must
 * not turn the runner into a probe of the network it runs in.
 */
import type { Exchange } from '../checks/types.js';
import { filterResponseHeaders } from '../report/redact.js';
import { boundedFetch, describeError } from './http.js';

export const PROBE_TASKS = new Set(['protected_resource_metadata', 'oauth_auth_server_metadata']);

export interface ProbeOptions {
  agentUrl: string;
  timeoutMs: number;
  maxResponseBytes: number;
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

/** Why a URL the agent supplied may not be fetched, or undefined when it may. */
export function refuseAgentSuppliedUrl(target: string, agentUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return `"${target}" is not a URL`;
  }
  if (url.origin === new URL(agentUrl).origin) return undefined;
  if (url.protocol !== 'https:') return `${url.origin} is not https`;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  if (/^(127\.|10\.|192\.168\.|169\.254\.|0\.)/.test(host) || /^172\.(1[6-9]|2\d|3[01])\./.test(host)) return `${host} is a loopback, private or link-local address`;
  if (host === '::1' || /^f[cd]/.test(host) || /^fe80:/.test(host)) return `${host} is a loopback, private or link-local address`;
  return undefined;
}

export async function probe(task: string, url: string, options: ProbeOptions): Promise<Exchange> {
  const request = { transport: 'http' as const, operation: task, payload: {}, url };
  const started = performance.now();
  try {
    const response = await boundedFetch({ timeoutMs: options.timeoutMs, maxResponseBytes: options.maxResponseBytes })(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      redirect: 'manual',
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the checks see the text
    }
    const duration_ms = Math.round(performance.now() - started);
    const record = { transport: 'http' as const, payload: body, status: response.status, headers: filterResponseHeaders([...response.headers]), duration_ms };
    const ok = response.status >= 200 && response.status < 300;
    return {
      request,
      response: record,
      extraction: ok ? { path: 'none', note: 'HTTP probe: checks read the parsed JSON body' } : { path: 'error', note: `HTTP probe answered ${response.status}` },
      data: body,
    };
  } catch (error) {
    return { request, extraction: { path: 'none', note: 'HTTP probe failed' }, data: undefined, transportError: `GET ${url} failed: ${describeError(error)}` };
  }
}
