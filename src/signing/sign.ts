/**
 * Signing an HTTP request under the AdCP RFC 9421 profile. Deliberately
 * permissive about parameters: the signed-requests storyboard re-signs each
 * conformance vector with fresh timestamps, including the negative ones, so
 * the signer must be able to write a wrong tag, a missing `expires` or a
 * too-long window exactly as the vector asks.
 */
import { randomBytes } from 'node:crypto';
import { canonicalizeUrl } from './canonical-url.js';
import { computeContentDigest, type ContentDigestOptions } from './content-digest.js';
import { algorithmOfKey, importPrivateKey, signBytes, type AdcpJwk } from './keys.js';
import { fieldValue, type HttpMessage } from './message.js';
import { MAX_SIGNATURE_WINDOW_SECONDS } from './profiles.js';
import { buildSignatureBase } from './signature-base.js';
import { serializeSignature, serializeSignatureParams, type SignatureParams } from './signature-input.js';
import { encodeBase64Url } from './structured-fields.js';

export interface SignOptions {
  /** The signer's private JWK (`d` present). Its kty/crv choose the algorithm. */
  key: AdcpJwk;
  keyid: string;
  /** The `tag` parameter, e.g. `REQUEST_SIGNING.tag`. */
  tag: string;
  /** Covered components in order, e.g. `['@method', '@target-uri', '@authority', 'content-type', 'content-digest']`. */
  components: readonly string[];
  /**
   * The `alg` parameter written into Signature-Input. Defaults to the key's
   * algorithm; a different value still signs with the key, which only a
   * negative test wants.
   */
  alg?: string;
  /** Unix seconds; default `now`. `null` leaves the parameter out (negative vectors only). */
  created?: number | null;
  /** Unix seconds; default `created` + 300. `null` leaves the parameter out. */
  expires?: number | null;
  /** Default: 16 random bytes, base64url. `null` leaves the parameter out. */
  nonce?: string | null;
  /** Signature label; default `sig1`. */
  label?: string;
  /** Unix seconds for the default `created`; defaults to the clock. */
  now?: number;
  /** How to compute Content-Digest when `content-digest` is covered and the message has none. */
  contentDigest?: ContentDigestOptions;
}

/** The header fields to add to the request. */
interface SignedHeaders {
  'Signature-Input': string;
  Signature: string;
  /** Present when `content-digest` is covered and the message did not carry one: send it. */
  'Content-Digest'?: string;
}

export interface SignedRequest {
  headers: SignedHeaders;
  /** The exact bytes (as UTF-8) that were signed, for diagnostics. */
  signatureBase: string;
  params: SignatureParams;
}

/**
 * Signs `message`. When `content-digest` is covered and the message has no
 * Content-Digest header, one is computed from the body and returned with the
 * signature headers; a Content-Digest already on the message is signed as it
 * is. Throws `UrlCanonicalizationError` for a URL that cannot be signed
 * (host-less authority, zoned IPv6, …) and `ComponentError` when a covered
 * header is missing.
 */
export function signRequest(message: HttpMessage, options: SignOptions): SignedRequest {
  const alg = algorithmOfKey(options.key);
  if (alg === undefined)
    throw new TypeError(
      `the signing key is ${options.key.kty}/${options.key.crv}; AdCP signs with Ed25519 or ECDSA P-256`,
    );
  const privateKey = importPrivateKey(options.key);
  const label = options.label ?? 'sig1';
  if (!/^[a-z*][a-z0-9_\-.*]*$/.test(label))
    throw new TypeError(`"${label}" is not a valid signature label (an RFC 8941 key)`);

  const clock = options.now ?? Math.floor(Date.now() / 1000);
  const created = options.created === undefined ? clock : options.created;
  const expires = options.expires === undefined ? (created ?? clock) + MAX_SIGNATURE_WINDOW_SECONDS : options.expires;
  const nonce = options.nonce === undefined ? encodeBase64Url(randomBytes(16)) : options.nonce;
  const params: SignatureParams = {
    ...(created !== null && { created }),
    ...(expires !== null && { expires }),
    ...(nonce !== null && { nonce }),
    keyid: options.keyid,
    alg: options.alg ?? alg,
    tag: options.tag,
  };

  let contentDigest: string | undefined;
  let signed = message;
  if (options.components.includes('content-digest') && fieldValue(message.headers, 'content-digest') === undefined) {
    contentDigest = computeContentDigest(message.body, options.contentDigest);
    signed = { ...message, headers: { ...headerRecord(message.headers), 'content-digest': contentDigest } };
  }

  const signatureParams = serializeSignatureParams(options.components, params);
  // The signer converts an IDN host to its A-label; the request must go out with that host too (undici does).
  const signatureBase = buildSignatureBase(signed, options.components, signatureParams, canonicalizeUrl(message.url));
  const signature = signBytes(alg, privateKey, Buffer.from(signatureBase, 'utf8'));
  return {
    headers: {
      'Signature-Input': `${label}=${signatureParams}`,
      Signature: serializeSignature(label, signature),
      ...(contentDigest !== undefined && { 'Content-Digest': contentDigest }),
    },
    signatureBase,
    params,
  };
}

/** The message's headers as a plain record, so one more can be added without touching the caller's object. */
function headerRecord(headers: HttpMessage['headers']): Record<string, string | readonly string[] | undefined> {
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    const record: Record<string, string> = {};
    (headers as Headers).forEach((value, name) => {
      record[name] = value;
    });
    return record;
  }
  return { ...(headers as Record<string, string | readonly string[] | undefined>) };
}
