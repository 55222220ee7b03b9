/**
 * Where the receiver finds the keys an agent signs its webhooks with
 * (security.mdx > Webhook callbacks > "JWKS discovery", AdCP 3.0.x):
 *
 *   1. agent URL A → GET /.well-known/brand.json at A's origin (one redirect
 *      at most: `authoritative_location`, or a `house` redirect, then stop);
 *   2. the `agents[]` entry whose `url` matches A (compared after URL
 *      canonicalization, as brand.json's `brand_agent_entry.url` requires;
 *      security.mdx says byte-for-byte — a byte-equal URL matches either way);
 *   3. that entry's `jwks_uri`, or /.well-known/jwks.json at A's origin;
 *   4. the `keyid` in that JWKS; on a miss, refetch the JWKS once.
 *
 * Every fetch is one bounded GET without redirects, through the SSRF guard
 * (transport/url-guard.ts): a URL the agent's documents supply must be https
 * and resolve to public addresses only — the connection pinned to the address
 * vetted, so a rebinding name cannot swap it — unless it is on the agent's own
 * origin (the operator chose that origin) or the run allows local development
 * (`allowHttp`). Documents are parsed strictly (no duplicate keys: they are
 * trust roots).
 */
import { canonicalizeUrl } from '../signing/canonical-url.js';
import type { AdcpJwk } from '../signing/keys.js';
import { describeError } from '../transport/http.js';
import { guardedFetch, literalRefusal, type UrlGuardOptions } from '../transport/url-guard.js';
import { parseStrictJson } from './strict-json.js';

const MAX_BRAND_JSON_BYTES = 256 * 1024;
const MAX_JWKS_BYTES = 64 * 1024;

export interface SignerKeysOptions {
  timeoutMs: number;
  /** The run's SSRF guard settings (`allowHttp`; tests' lookup / dial). The agent URL is the constructor's. */
  guard?: Omit<UrlGuardOptions, 'agentUrl'>;
}

/** Where the keys came from, or why there are none — for the step record. */
export interface KeySource {
  brandJsonUrl: string;
  jwksUri?: string;
  /** Set when discovery failed: no key can be resolved. */
  problem?: string;
  /**
   * Which document failed, in the codes of webhook-emission.yaml's `fetch_brand_jwks` (AdCP 3.1): brand.json could not
   * be fetched, was not JSON (or redirected badly), named no jwks_uri for the agent — or the JWKS itself failed.
   */
  failure?: 'brand_json_unreachable' | 'brand_json_malformed' | 'agents_jwks_uri_missing' | 'jwks_unreachable';
}

export class SignerKeys {
  private discovery?: Promise<{ source: KeySource; keys?: AdcpJwk[] }>;
  private refetched = false;

  constructor(
    private readonly agentUrl: string,
    private readonly options: SignerKeysOptions,
  ) {}

  /** The agent's webhook-signing JWK for `keyid`, or undefined (discovery failed, or no such key after one refetch). */
  async lookup(keyid: string): Promise<AdcpJwk | undefined> {
    this.discovery ??= this.discover();
    const { source, keys: discovered } = await this.discovery;
    let keys = discovered;
    let found = keys?.find((k) => k.kid === keyid);
    if (!found && keys && source.jwksUri && !this.refetched) {
      // security.mdx step 4: "On kid miss, refetch once" (mid-run key rotation).
      this.refetched = true;
      const again = await this.fetchJwks(source.jwksUri);
      if ('keys' in again) {
        keys = again.keys;
        this.discovery = Promise.resolve({ source, keys });
        found = keys.find((k) => k.kid === keyid);
      }
    }
    return found;
  }

  /** What discovery found: where, and the keys of the JWKS (none when it failed). */
  async discovered(): Promise<{ source: KeySource; keys?: AdcpJwk[] }> {
    this.discovery ??= this.discover();
    return this.discovery;
  }

  /** Where keys are looked up (after the first lookup). */
  async source(): Promise<KeySource> {
    this.discovery ??= this.discover();
    return (await this.discovery).source;
  }

  private async discover(): Promise<{ source: KeySource; keys?: AdcpJwk[] }> {
    const origin = new URL(this.agentUrl).origin;
    let brandJsonUrl = `${origin}/.well-known/brand.json`;
    let brand = await this.fetchJson(brandJsonUrl, MAX_BRAND_JSON_BYTES);
    if ('problem' in brand) return { source: { brandJsonUrl, problem: brand.problem, failure: brand.failure } };
    const redirect = redirectOf(brand.value);
    if (redirect) {
      const refused = this.refusal(redirect);
      if (refused)
        return {
          source: {
            brandJsonUrl,
            problem: `brand.json redirects to ${redirect}, which the runner does not fetch: ${refused}`,
            failure: 'brand_json_unreachable',
          },
        };
      brandJsonUrl = redirect;
      brand = await this.fetchJson(brandJsonUrl, MAX_BRAND_JSON_BYTES);
      if ('problem' in brand) return { source: { brandJsonUrl, problem: brand.problem, failure: brand.failure } };
      if (redirectOf(brand.value))
        return {
          source: {
            brandJsonUrl,
            problem: 'brand.json redirects more than once (discovery follows one redirect and stops)',
            failure: 'brand_json_malformed',
          },
        };
    }
    const entries = agentEntries(brand.value).filter((entry) => sameAgentUrl(entry.url, this.agentUrl));
    if (entries.length === 0)
      return {
        source: {
          brandJsonUrl,
          problem: `no agents[] entry of ${brandJsonUrl} has url ${this.agentUrl}`,
          failure: 'agents_jwks_uri_missing',
        },
      };
    if (entries.length > 1)
      return {
        source: {
          brandJsonUrl,
          problem: `${entries.length} agents[] entries of ${brandJsonUrl} have url ${this.agentUrl}`,
          failure: 'brand_json_malformed',
        },
      };
    const declared = entries[0]!.jwks_uri;
    const jwksUri = typeof declared === 'string' ? declared : `${origin}/.well-known/jwks.json`;
    const refused = this.refusal(jwksUri);
    if (refused)
      return {
        source: {
          brandJsonUrl,
          jwksUri,
          problem: `the runner does not fetch the jwks_uri ${jwksUri}: ${refused}`,
          failure: 'jwks_unreachable',
        },
      };
    const jwks = await this.fetchJwks(jwksUri);
    if ('problem' in jwks)
      return { source: { brandJsonUrl, jwksUri, problem: jwks.problem, failure: 'jwks_unreachable' } };
    return { source: { brandJsonUrl, jwksUri }, keys: jwks.keys };
  }

  /** Why an agent-supplied URL is not fetched, on its text alone (the fetch itself vets what it resolves to). */
  private refusal(url: string): string | undefined {
    return literalRefusal(url, { agentUrl: this.agentUrl, allowHttp: this.options.guard?.allowHttp });
  }

  private async fetchJwks(url: string): Promise<{ keys: AdcpJwk[] } | { problem: string }> {
    const jwks = await this.fetchJson(url, MAX_JWKS_BYTES);
    if ('problem' in jwks) return jwks;
    const keys = (jwks.value as { keys?: unknown })?.keys;
    if (!Array.isArray(keys)) return { problem: `${url} is not a JWKS (no "keys" array)` };
    return { keys: keys.filter((k): k is AdcpJwk => k !== null && typeof k === 'object' && !Array.isArray(k)) };
  }

  private async fetchJson(
    url: string,
    maxBytes: number,
  ): Promise<{ value: unknown } | { problem: string; failure: 'brand_json_unreachable' | 'brand_json_malformed' }> {
    let text: string;
    let status: number;
    try {
      // Bounded in time and size, no redirect followed (one is the answer), every address vetted: guardedFetch.
      const fetch = guardedFetch(
        { ...this.options.guard, agentUrl: this.agentUrl },
        { timeoutMs: this.options.timeoutMs, maxResponseBytes: maxBytes, followRedirects: false },
      );
      const response = await fetch(url, { headers: { accept: 'application/json' } });
      status = response.status;
      text = await response.text();
    } catch (error) {
      return { problem: `GET ${url} failed: ${describeError(error)}`, failure: 'brand_json_unreachable' };
    }
    if (status !== 200) return { problem: `GET ${url} answered HTTP ${status}`, failure: 'brand_json_unreachable' };
    const parsed = parseStrictJson(text);
    if (!parsed.ok) return { problem: `${url}: ${parsed.error}`, failure: 'brand_json_malformed' };
    return { value: parsed.value };
  }
}

/** The one redirect brand.json discovery follows: `authoritative_location`, or the house domain's brand.json. */
function redirectOf(doc: unknown): string | undefined {
  const d = doc as { authoritative_location?: unknown; house?: unknown } | null;
  if (!d || typeof d !== 'object') return undefined;
  if (typeof d.authoritative_location === 'string') return d.authoritative_location;
  if (typeof d.house === 'string' && /^[a-z0-9.-]+$/i.test(d.house)) return `https://${d.house}/.well-known/brand.json`;
  return undefined;
}

/** Every `agents[]` entry of a brand.json: top level, the house's, and each brand's. */
function agentEntries(doc: unknown): { url?: unknown; jwks_uri?: unknown }[] {
  const d = doc as { agents?: unknown; house?: { agents?: unknown }; brands?: unknown } | null;
  if (!d || typeof d !== 'object') return [];
  const lists = [
    d.agents,
    typeof d.house === 'object' && d.house ? d.house.agents : undefined,
    ...(Array.isArray(d.brands) ? d.brands.map((b: { agents?: unknown } | null) => b?.agents) : []),
  ];
  return lists.flatMap((list) => (Array.isArray(list) ? list.filter((e) => e && typeof e === 'object') : []));
}

function sameAgentUrl(declared: unknown, agentUrl: string): boolean {
  if (typeof declared !== 'string') return false;
  if (declared === agentUrl) return true;
  try {
    return canonicalizeUrl(declared).targetUri === canonicalizeUrl(agentUrl).targetUri;
  } catch {
    return false;
  }
}
