/**
 * The AdCP URL canonicalization algorithm (docs: reference/url-canonicalization,
 * cited by the RFC 9421 profile for `@target-uri` and `@authority`), checked
 * case by case against `test-vectors/request-signing/canonicalization.json`.
 *
 * The URL is parsed here by RFC 3986 rules, not with WHATWG `new URL()`:
 * WHATWG repairs input the profile wants rejected (`https:///p` becomes
 * `https://p/`), resolves `%2E%2E` as a dot segment, and re-encodes
 * characters, any of which makes our signature base differ from a peer's.
 */
import { isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';

/** Why a URL cannot be canonicalized. */
export type UrlRejectReason =
  /** The host has raw non-ASCII characters (an IDN U-label) and the caller asked to reject rather than convert. */
  | 'non_ascii_host'
  /** Anything else: empty or host-less authority, bare or zoned IPv6, bad port, characters a URI cannot hold. */
  | 'malformed';

export class UrlCanonicalizationError extends Error {
  constructor(
    readonly reason: UrlRejectReason,
    message: string,
  ) {
    super(message);
    this.name = 'UrlCanonicalizationError';
  }
}

/** The canonical pieces of a request URL, from which the derived components are read. */
export interface CanonicalUrl {
  /** Lower-cased scheme: `https` or `http`. */
  scheme: string;
  /** `host[:port]`: lower-cased (A-label) host, IPv6 brackets kept, default port dropped. The `@authority` value. */
  authority: string;
  /** Path after remove_dot_segments and percent-encoding normalization; `/` when empty. */
  path: string;
  /** Query without its `?`, byte-preserved apart from percent-encoding normalization; `undefined` when the URL has no `?`. */
  query: string | undefined;
  /** scheme://authority path [?query], fragment dropped. The `@target-uri` value. */
  targetUri: string;
}

export interface CanonicalizeOptions {
  /**
   * What to do with a raw non-ASCII host. `to-ascii` (default, the signer's
   * side) converts it with UTS-46 nontransitional processing; `reject` (the
   * verifier's side: a U-label on the wire is a canonicalization differential
   * waiting to happen, request-signing negative vector 026) refuses it.
   */
  unicodeHost?: 'to-ascii' | 'reject';
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443' };
/** RFC 3986 Appendix B, anchored. */
const URI_PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#.*)?$/s;
/** pchar minus pct-encoded, plus "/"; the query also allows "?". */
const PATH_CHARS = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;
const QUERY_CHARS = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*$/;
/** reg-name: unreserved / sub-delims / pct-encoded. */
const REG_NAME = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

function malformed(message: string): never {
  throw new UrlCanonicalizationError('malformed', message);
}

/**
 * Canonicalizes an absolute http(s) URL per the eight AdCP steps: lower-case
 * scheme; lower-case host (IDN → A-label, IPv6 brackets kept, zone ids
 * rejected); strip userinfo (reject host-less authorities); strip default
 * port; remove_dot_segments keeping `//`; normalize percent-encoding
 * (upper-case hex, decode unreserved); keep the query byte for byte; drop the
 * fragment. Throws {@link UrlCanonicalizationError}.
 */
export function canonicalizeUrl(rawUrl: string, options: CanonicalizeOptions = {}): CanonicalUrl {
  const parts = URI_PARTS.exec(rawUrl);
  const [, rawScheme, rawAuthority, rawPath = '', rawQuery] = parts ?? [];
  // Step 1: scheme.
  const scheme = rawScheme?.toLowerCase();
  if (scheme === undefined || DEFAULT_PORTS[scheme] === undefined)
    malformed(`"${rawUrl}" is not an absolute http(s) URL`);
  // Steps 2-4: authority.
  if (rawAuthority === undefined || rawAuthority === '') malformed(`"${rawUrl}" has an empty authority`);
  const authority = canonicalAuthority(rawAuthority, scheme, options);
  // Steps 5-6: path.
  if (!PATH_CHARS.test(rawPath)) malformed(`the path of "${rawUrl}" has characters a URI cannot carry unencoded`);
  const path = normalizePercentEncoding(removeDotSegments(rawPath)) || '/';
  // Steps 6-7: query, byte for byte apart from percent-encoding normalization.
  if (rawQuery !== undefined && !QUERY_CHARS.test(rawQuery))
    malformed(`the query of "${rawUrl}" has characters a URI cannot carry unencoded`);
  const query = rawQuery === undefined ? undefined : normalizePercentEncoding(rawQuery);
  // Step 8: the fragment was never captured.
  return {
    scheme,
    authority,
    path,
    query,
    targetUri: `${scheme}://${authority}${path}${query === undefined ? '' : `?${query}`}`,
  };
}

/** `host[:port]` per steps 2-4, from the raw authority (userinfo included). */
function canonicalAuthority(rawAuthority: string, scheme: string, options: CanonicalizeOptions): string {
  const hostPort = rawAuthority.slice(rawAuthority.lastIndexOf('@') + 1);
  let host: string;
  let port: string;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) malformed('the IPv6 literal has no closing bracket');
    const literal = hostPort.slice(1, close);
    // A zone id (RFC 6874, `%25eth0`) names an interface on the sender's own node; it means nothing to the verifier.
    if (literal.includes('%')) malformed('an IPv6 zone identifier cannot appear in a signed URL');
    if (!isIPv6(literal)) malformed(`"[${literal}]" is not an IPv6 address`);
    host = `[${literal.toLowerCase()}]`;
    const rest = hostPort.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) malformed(`unexpected "${rest}" after the IPv6 literal`);
    port = rest.slice(1);
  } else {
    const colons = hostPort.split(':').length - 1;
    // Parsers disagree on whether `fe80::1` is a host or a host and a port; refuse rather than guess.
    if (colons > 1) malformed(`"${hostPort}" looks like an IPv6 address without brackets`);
    const colon = hostPort.indexOf(':');
    const rawHost = colon < 0 ? hostPort : hostPort.slice(0, colon);
    port = colon < 0 ? '' : hostPort.slice(colon + 1);
    if (rawHost === '') malformed('the authority has no host');
    host = canonicalHost(rawHost, options);
  }
  if (!/^\d*$/.test(port)) malformed(`"${port}" is not a port number`);
  return port === '' || port === DEFAULT_PORTS[scheme] ? host : `${host}:${port}`;
}

function canonicalHost(rawHost: string, options: CanonicalizeOptions): string {
  if (/^[\x00-\x7f]*$/.test(rawHost)) {
    if (!REG_NAME.test(rawHost)) malformed(`"${rawHost}" is not a valid host`);
    return rawHost.toLowerCase();
  }
  if (options.unicodeHost === 'reject') {
    throw new UrlCanonicalizationError(
      'non_ascii_host',
      `the host "${rawHost}" is not ASCII; it must be sent as an A-label (punycode)`,
    );
  }
  // node:url's domainToASCII is UTS-46 nontransitional, the mode the spec pins for TypeScript.
  const ascii = domainToASCII(rawHost);
  if (ascii === '') malformed(`"${rawHost}" is not a valid internationalized host name`);
  return ascii;
}

/** RFC 3986 §5.2.4, on the still percent-encoded path: `%2F` is not a separator and `//` survives. */
export function removeDotSegments(path: string): string {
  let input = path;
  let output = '';
  const dropLastSegment = () => {
    output = output.slice(0, Math.max(0, output.lastIndexOf('/')));
  };
  while (input.length > 0) {
    if (input.startsWith('../')) input = input.slice(3);
    else if (input.startsWith('./') || input.startsWith('/./')) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.startsWith('/../')) {
      input = input.slice(3);
      dropLastSegment();
    } else if (input === '/..') {
      input = '/';
      dropLastSegment();
    } else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', input.startsWith('/') ? 1 : 0);
      const segment = next < 0 ? input : input.slice(0, next);
      output += segment;
      input = input.slice(segment.length);
    }
  }
  return output;
}

/** Step 6: upper-case every `%xx` and decode the ones that encode an unreserved character (RFC 3986 §6.2.2.1-2). */
function normalizePercentEncoding(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_match, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}
