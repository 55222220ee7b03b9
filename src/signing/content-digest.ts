/**
 * RFC 9530 `Content-Digest`: binds the body bytes to a signature that covers
 * the header. Compute on the signer side, parse and compare on the verifier
 * side.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { bodyBytes, type HttpMessage } from './message.js';
import { encodeBase64Url, parseBinaryDictionary, StructuredFieldError } from './structured-fields.js';

/** Digest algorithms we compute and check (RFC 9530 §5 "active" algorithms). */
type DigestAlgorithm = 'sha-256' | 'sha-512';

const HASHES: Readonly<Record<DigestAlgorithm, string>> = { 'sha-256': 'sha256', 'sha-512': 'sha512' };

export interface ContentDigestOptions {
  algorithm?: DigestAlgorithm;
  /**
   * How the digest bytes are written. `base64` (default) is RFC 9530/8941's
   * standard base64 and what every published AdCP vector carries;
   * `base64url` is the AdCP profile's stated override (unpadded), which
   * strict RFC 8941 parsers on the other side may not read.
   */
  encoding?: 'base64' | 'base64url';
}

/** The `Content-Digest` header value for `body`, e.g. `sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:`. */
export function computeContentDigest(body: HttpMessage['body'], options: ContentDigestOptions = {}): string {
  const algorithm = options.algorithm ?? 'sha-256';
  const digest = createHash(HASHES[algorithm]).update(bodyBytes(body)).digest();
  const encoded = options.encoding === 'base64url' ? encodeBase64Url(digest) : digest.toString('base64');
  return `${algorithm}=:${encoded}:`;
}

/**
 * The digests a `Content-Digest` header declares, by algorithm name. Throws
 * {@link StructuredFieldError} when the header is not a Dictionary of byte
 * sequences, names an algorithm twice (two values for one algorithm is a
 * parser differential: which one did the signer mean?), or mixes base64
 * alphabets.
 */
export function parseContentDigest(header: string): Map<string, Uint8Array> {
  const digests = new Map<string, Uint8Array>();
  for (const [name, member] of parseBinaryDictionary(header).dictionary) {
    const value = member[0];
    if (!(value instanceof ArrayBuffer))
      throw new StructuredFieldError(`the Content-Digest member "${name}" is not a byte sequence`);
    digests.set(name, new Uint8Array(value));
  }
  return digests;
}

export type ContentDigestCheck = { ok: true; algorithms: DigestAlgorithm[] } | { ok: false; detail: string };

/**
 * Compares the header's digests with `body`. Every algorithm we know must
 * match, and at least one must be present; unknown algorithms are ignored
 * (RFC 9530 §2 lets a sender list several). Throws {@link StructuredFieldError}
 * on a malformed header, like {@link parseContentDigest}.
 */
export function checkContentDigest(header: string, body: HttpMessage['body']): ContentDigestCheck {
  const declared = parseContentDigest(header);
  const checked: DigestAlgorithm[] = [];
  for (const algorithm of Object.keys(HASHES) as DigestAlgorithm[]) {
    const expected = declared.get(algorithm);
    if (expected === undefined) continue;
    const actual = createHash(HASHES[algorithm]).update(bodyBytes(body)).digest();
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
      return { ok: false, detail: `the ${algorithm} digest in Content-Digest does not match the body` };
    }
    checked.push(algorithm);
  }
  if (checked.length === 0) {
    return {
      ok: false,
      detail: `Content-Digest declares no algorithm this verifier checks (${[...declared.keys()].join(', ') || 'none'}; supported: ${Object.keys(HASHES).join(', ')})`,
    };
  }
  return { ok: true, algorithms: checked };
}
