/**
 * The operator-supplied webhook signer JWKS (`webhooks.signerJwks`, `--webhook-signer-jwks`,
 * ADCP_RUNNER_WEBHOOK_SIGNER_JWKS): for local development, where the agent on localhost publishes no brand.json and
 * the spec's key discovery (signer-keys.ts) can only answer "key unknown".
 *
 * When it is set the receiver verifies webhook signatures against these keys *instead of* the spec's discovery — not
 * as a fallback. The spec knows one key source (security.mdx > Webhook callbacks > JWKS discovery; webhook-emission.yaml:
 * "`keyid` resolves via the agent's brand.json `agents[]` jwks_uri"), so a verdict under any other source is not a
 * verdict under the spec. With one source per run, every signature verdict of the run says which source it had; a
 * fallback would mix the two in one run and let a passing verdict hide that discovery failed.
 *
 * The location is a file path (relative to the project root) or a URL: https, or plain http to a loopback host (or
 * anywhere under `allowHttp`, the run's local-development switch: config.ts's rule for the agent URL). The operator
 * chose it, so it is not the SSRF guard's business (that guards URLs the *agent* supplies); it is bounded like every
 * fetch and read here: 64 KiB, the run's timeout capped at 10 s, no redirect followed.
 *
 * A JWKS file may be the developer's own signing key set, private members included: only the public members of each
 * key are kept (PUBLIC_MEMBERS), and no message quotes the document — a JSON error says where, never what.
 */
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { ConfigurationError } from '../model/errors.js';
import type { AdcpJwk } from '../signing/keys.js';
import { boundedFetch, describeError } from '../transport/http.js';
import { isLoopbackHost } from '../model/addresses.js';
import { parseStrictJson } from './strict-json.js';

export const SIGNER_JWKS_ENV = 'ADCP_RUNNER_WEBHOOK_SIGNER_JWKS';
const MAX_JWKS_BYTES = 64 * 1024;
const MAX_FETCH_MS = 10_000;
/** The members of a JWK that are not secret: key type and public material, and what the key says of its use. */
const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use', 'key_ops', 'adcp_use'] as const;
const FIX = `set webhooks.signerJwks (--webhook-signer-jwks, ${SIGNER_JWKS_ENV}) to a JWKS JSON file ({"keys": [...]}) or to an https URL that serves one (plain http only to a loopback host)`;

/** The keys a run verifies webhook signatures with, and where they came from. */
export interface OperatorJwks {
  /** The location as the operator gave it (a URL, or the file's absolute path). */
  location: string;
  /** Public members only. */
  keys: AdcpJwk[];
}

export interface SignerJwksOptions {
  timeoutMs: number;
  /** The run's local-development switch: plain http to any host. */
  allowHttp?: boolean;
  /** What a relative file path is relative to. @default process.cwd() */
  baseDir?: string;
}

/** Whether the location is a URL (else a file path). A Windows drive letter (`C:\`) is a path. */
function isJwksUrl(location: string): boolean {
  return /^[a-z][a-z0-9+.-]+:\/\//i.test(location);
}

/** Why a location cannot be used, from its text alone (no I/O), or undefined. One line, with the fix. */
export function signerJwksLocationProblem(location: string, allowHttp = false): string | undefined {
  if (location.trim() === '') return jwksProblem('is empty', 'location');
  if (!isJwksUrl(location)) return undefined;
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return jwksProblem('is not a valid URL', 'URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return jwksProblem('is not an http(s) URL', `${url.protocol}//…`);
  if (url.protocol === 'http:' && !allowHttp && !isLoopbackHost(url.hostname))
    return jwksProblem('is plain http to a host that is not loopback (keys fetched in cleartext)', shownUrl(location));
  return undefined;
}

const loaded = new Map<string, Promise<OperatorJwks>>();

/**
 * The operator's JWKS, loaded once per process and location (the run-start check and every storyboard run share it).
 * Rejects with a one-line ConfigurationError naming the fix; a failed load is tried again next time (watch mode).
 */
export function signerJwksFor(location: string, options: SignerJwksOptions): Promise<OperatorJwks> {
  const key = JSON.stringify([location, options.allowHttp === true, options.baseDir ?? process.cwd()]);
  let keys = loaded.get(key);
  if (!keys) {
    keys = loadSignerJwks(location, options);
    loaded.set(key, keys);
    keys.catch(() => loaded.delete(key));
  }
  return keys;
}

/** Reads (a file) or fetches (a URL) the JWKS, once; its public keys, or a one-line ConfigurationError. */
export async function loadSignerJwks(location: string, options: SignerJwksOptions): Promise<OperatorJwks> {
  const problem = signerJwksLocationProblem(location, options.allowHttp);
  if (problem) throw new ConfigurationError(problem);
  const shown = isJwksUrl(location) ? shownUrl(location) : resolve(options.baseDir ?? process.cwd(), location);
  const text = isJwksUrl(location) ? await fetchJwks(location, shown, options.timeoutMs) : await readJwks(shown);
  if (typeof text !== 'string') throw new ConfigurationError(text.problem);
  const keys = publicKeysOf(text, shown);
  if ('problem' in keys) throw new ConfigurationError(keys.problem);
  return { location: shown, keys: keys.keys };
}

/** A URL as records show it: no userinfo, query or fragment (a token could sit there). */
function shownUrl(location: string): string {
  const url = new URL(location);
  return `${url.origin}${url.pathname}`;
}

/** The one line of a JWKS that cannot be used: which, why, and the fix. */
function jwksProblem(problem: string, location: string): string {
  return `the webhook signer JWKS ${location} ${problem}: ${FIX}`;
}

/** The file's text, bounded before it is read. */
async function readJwks(path: string): Promise<string | { problem: string }> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return { problem: jwksProblem('is not a file', path) };
    if (info.size > MAX_JWKS_BYTES)
      return { problem: jwksProblem(`is ${info.size} bytes, over the ${MAX_JWKS_BYTES}-byte bound`, path) };
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: jwksProblem(`cannot be read (${code ?? describeError(error)})`, path) };
  }
}

/** One bounded GET, no redirect followed (the operator gives the final URL); the body of a 200. */
async function fetchJwks(url: string, shown: string, timeoutMs: number): Promise<string | { problem: string }> {
  try {
    const fetch = boundedFetch({ timeoutMs: Math.min(timeoutMs, MAX_FETCH_MS), maxResponseBytes: MAX_JWKS_BYTES });
    const response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual' });
    const text = await response.text();
    return response.status === 200 ? text : { problem: jwksProblem(`answered HTTP ${response.status} to GET`, shown) };
  } catch (error) {
    return { problem: jwksProblem(`could not be fetched (${describeError(error)})`, shown) };
  }
}

/** The document's usable keys, public members only: every JWK object with a string `kid` and no symmetric secret. */
function publicKeysOf(text: string, shown: string): { keys: AdcpJwk[] } | { problem: string } {
  const parsed = parseStrictJson(text);
  // Never the parser's message: it quotes the document, which may hold a private key.
  if (!parsed.ok && parsed.duplicateKey !== undefined) return { problem: jwksProblem(`has a ${parsed.error}`, shown) };
  if (!parsed.ok) return { problem: jwksProblem('is not JSON', shown) };
  const keys = (parsed.value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) return { problem: jwksProblem('is not a JWKS (no "keys" array)', shown) };
  const usable = keys.filter(isUsableJwk).map(publicMembers);
  if (usable.length === 0) return { problem: jwksProblem('holds no key with a "kid" and public key material', shown) };
  return { keys: usable };
}

function isUsableJwk(key: unknown): key is Record<string, unknown> {
  if (!key || typeof key !== 'object' || Array.isArray(key)) return false;
  const jwk = key as Record<string, unknown>;
  return typeof jwk.kid === 'string' && typeof jwk.kty === 'string' && jwk.kty !== 'oct';
}

function publicMembers(jwk: Record<string, unknown>): AdcpJwk {
  const out: Record<string, unknown> = {};
  for (const member of PUBLIC_MEMBERS) if (jwk[member] !== undefined) out[member] = jwk[member];
  return out as AdcpJwk;
}

/** An absolute file path for a location given relative to `baseDir`; a URL unchanged. */
export function absoluteJwksLocation(location: string, baseDir: string): string {
  return isJwksUrl(location) || isAbsolute(location) ? location : resolve(baseDir, location);
}
