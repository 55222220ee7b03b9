/**
 * Component values and the RFC 9421 §2.5 signature base: one line per covered
 * component in `Signature-Input` order, `"name": value`, then the
 * `"@signature-params"` line; lines joined by a bare LF, no trailing newline.
 */
import { canonicalizeUrl, type CanonicalUrl } from './canonical-url.js';
import { fieldValue, type HttpMessage } from './message.js';

/** Derived components (RFC 9421 §2.2) we can compute for a request. `@query-param` and `@status` are not among them. */
export const DERIVED_COMPONENTS: ReadonlySet<string> = new Set([
  '@method',
  '@target-uri',
  '@authority',
  '@scheme',
  '@request-target',
  '@path',
  '@query',
]);

/** An HTTP field name as RFC 9421 requires it in a component identifier: a lower-case token. */
const FIELD_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;

class ComponentError extends Error {
  constructor(
    /** `unsupported`: not a component this profile derives; `absent`: the message lacks the field; `malformed`: the field value cannot go into a base. */
    readonly kind: 'unsupported' | 'absent' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'ComponentError';
  }
}

/** True for a derived component we compute or a plain (parameterless, lower-case) header field name. */
export function isSupportedComponent(component: string): boolean {
  return DERIVED_COMPONENTS.has(component) || FIELD_NAME.test(component);
}

/**
 * The value of one covered component. Derived components come from the
 * canonical URL (so `@target-uri` is already port-stripped, dot-segment-free,
 * and so on); header fields are trimmed and their lines joined with ", ".
 * Throws {@link ComponentError}.
 */
function componentValue(component: string, message: HttpMessage, url: CanonicalUrl): string {
  switch (component) {
    case '@method':
      return message.method.toUpperCase();
    case '@target-uri':
      return url.targetUri;
    case '@authority':
      return url.authority;
    case '@scheme':
      return url.scheme;
    case '@request-target':
      return url.query === undefined ? url.path : `${url.path}?${url.query}`;
    case '@path':
      return url.path;
    case '@query':
      // RFC 9421 §2.2.7: with no query the value is a lone "?".
      return `?${url.query ?? ''}`;
  }
  if (!isSupportedComponent(component))
    throw new ComponentError('unsupported', `"${component}" is not a component this verifier can derive`);
  const value = fieldValue(message.headers, component);
  if (value === undefined)
    throw new ComponentError('absent', `the covered header "${component}" is not in the message`);
  // A line break in a value would forge extra lines of the base.
  if (/[\r\n]/.test(value)) throw new ComponentError('malformed', `the header "${component}" contains a line break`);
  return value;
}

/**
 * The signature base for `components` covered with `signatureParams` (the
 * serialized inner list, see `serializeSignatureParams`). `url` defaults to
 * the message URL canonicalized the signer's way (IDN hosts converted).
 * Throws {@link ComponentError}, or `UrlCanonicalizationError` for an
 * unusable URL.
 */
export function buildSignatureBase(
  message: HttpMessage,
  components: readonly string[],
  signatureParams: string,
  url: CanonicalUrl = canonicalizeUrl(message.url),
): string {
  const lines = components.map((component) => `"${component}": ${componentValue(component, message, url)}`);
  lines.push(`"@signature-params": ${signatureParams}`);
  return lines.join('\n');
}
