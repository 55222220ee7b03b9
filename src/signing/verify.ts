/**
 * The AdCP RFC 9421 verifier checklist (security.mdx "Verifier checklist
 * (requests)" and its webhook twin), steps 0-13, short-circuiting on the first
 * failure with the profile's stable error code. Step 14 (duplicate JSON keys
 * in the body) is an application-layer check left to the caller.
 *
 * Order matters beyond the code it yields: revocation (9) and the per-keyid
 * cap (9a) run before the cryptographic check (10) so a revoked or abusive
 * signer cannot make us do Ed25519/ECDSA work, and the replay entry (13) is
 * written only after the signature verified, so forged traffic cannot fill
 * the cache.
 */
import type { KeyObject } from 'node:crypto';
import { canonicalizeUrl, UrlCanonicalizationError, type CanonicalUrl } from './canonical-url.js';
import { checkContentDigest, parseContentDigest } from './content-digest.js';
import {
  importPublicKey,
  isAllowedAlgorithm,
  keyPurposeProblem,
  verifyBytes,
  type AdcpJwk,
  type SignatureAlgorithm,
} from './keys.js';
import { fieldLines, fieldValue, type HttpMessage } from './message.js';
import {
  CLOCK_SKEW_SECONDS,
  MAX_SIGNATURE_WINDOW_SECONDS,
  type SignatureErrorCode,
  type SignatureFailure,
  type SigningProfile,
} from './profiles.js';
import type { ReplayCache } from './replay-cache.js';
import { buildSignatureBase, DERIVED_COMPONENTS, isSupportedComponent } from './signature-base.js';
import {
  parseSignature,
  parseSignatureInput,
  type ParsedSignatureInput,
  type SignatureParams,
} from './signature-input.js';
import { StructuredFieldError } from './structured-fields.js';

/** Where verification keys come from: a JWKS, its key list, or a lookup by keyid (which may fetch, and refetch once on a miss). */
export type JwksSource =
  | readonly AdcpJwk[]
  | { readonly keys: readonly AdcpJwk[] }
  | ((keyid: string) => AdcpJwk | undefined | Promise<AdcpJwk | undefined>);

/** The verifier's view of the signer's revocation list (checklist step 9). */
interface RevocationCheck {
  isRevoked(keyid: string): boolean | Promise<boolean>;
  /** True when the list has not been refreshed within `next_update` + grace: every signature is then refused. */
  isStale?(): boolean | Promise<boolean>;
}

export interface VerifyOptions<Code extends SignatureErrorCode> {
  /** `REQUEST_SIGNING` or `WEBHOOK_SIGNING`: tag, key purpose, required components, error codes. */
  profile: SigningProfile<Code>;
  jwks: JwksSource;
  /** Unix seconds; defaults to the clock. */
  now?: number;
  /** The verifier's `covers_content_digest` policy (requests); default `either`. Webhooks require it through their profile. */
  contentDigest?: 'required' | 'forbidden' | 'either';
  /**
   * Whether a message without any signature headers is refused (default
   * true). For requests, compute it with `isSignatureRequired`; an unsigned
   * request that is not required yields `{ ok: true, signed: false }`.
   */
  signatureRequired?: boolean;
  /** The one label to verify; others are ignored (the profile's "one signature per request"). Default `sig1`. */
  label?: string;
  revocation?: RevocationCheck;
  /** Without one, replays are not detected (steps 9a, 12, 13 are skipped). */
  replayCache?: ReplayCache;
}

/** A verified signature. */
interface VerifiedSignature {
  ok: true;
  signed: true;
  keyid: string;
  label: string;
  components: string[];
  params: Required<SignatureParams>;
}

/** A rejection: `code` is what goes into `WWW-Authenticate: Signature error="<code>"`. */
interface VerificationFailure<Code extends SignatureErrorCode = SignatureErrorCode> {
  ok: false;
  code: Code;
  failure: SignatureFailure;
  /** Checklist step that failed (informational; 0 is the unsigned pre-check, "9a" the per-keyid cap). */
  step: number | '9a';
  detail: string;
}

export type VerifyResult<Code extends SignatureErrorCode = SignatureErrorCode> =
  VerifiedSignature | { ok: true; signed: false } | VerificationFailure<Code>;

const REQUIRED_PARAMS = ['created', 'expires', 'nonce', 'keyid', 'alg', 'tag'] as const;
/** Fields RFC 9110 defines as single-valued that a signature may cover; a comma-joined second value makes their meaning ambiguous. */
const SINGLE_VALUED_FIELDS = new Set(['content-type']);

class Rejection extends Error {
  constructor(
    readonly failure: SignatureFailure,
    readonly step: number | '9a',
    readonly detail: string,
  ) {
    super(detail);
  }
}

function reject(failure: SignatureFailure, step: number | '9a', detail: string): never {
  throw new Rejection(failure, step, detail);
}

/**
 * Verifies the `label` signature on `message` under `options.profile`.
 * `message.body` must be the raw bytes as received (not re-serialized JSON),
 * or a covered Content-Digest cannot match. A bad message never throws: every
 * problem is a {@link VerificationFailure} carrying the profile's code. Only
 * an error thrown by a callback (JWKS lookup, revocation, replay cache)
 * propagates, since the verifier cannot know which code it deserves.
 */
export async function verifySignedMessage<Code extends SignatureErrorCode>(
  message: HttpMessage,
  options: VerifyOptions<Code>,
): Promise<VerifyResult<Code>> {
  try {
    return await runChecklist(message, options);
  } catch (error) {
    if (!(error instanceof Rejection)) throw error;
    return {
      ok: false,
      code: options.profile.codes[error.failure],
      failure: error.failure,
      step: error.step,
      detail: error.detail,
    };
  }
}

async function runChecklist<Code extends SignatureErrorCode>(
  message: HttpMessage,
  options: VerifyOptions<Code>,
): Promise<VerifyResult<Code>> {
  const { profile } = options;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const label = options.label ?? 'sig1';

  const headers = signatureHeaders(message, options);
  if (!headers) return { ok: true, signed: false };

  // Step 1: parse the headers, and refuse message parts that cannot go into a signature base unambiguously.
  const { input, signature } = parseHeaders(headers.input, headers.signature, label);
  const url = canonicalRequestUrl(message);
  checkCoveredFieldsAreUnambiguous(message, input.components);

  const params = checkParams(input, label);

  // Steps 3-5: tag, algorithm, validity window.
  if (params.tag !== profile.tag) reject('tag_invalid', 3, `the tag is "${params.tag}", not "${profile.tag}"`);
  if (!isAllowedAlgorithm(params.alg))
    reject('alg_not_allowed', 4, `alg "${params.alg}" is not ed25519 or ecdsa-p256-sha256`);
  checkWindow(params.created, params.expires, now);

  // Step 6: covered components.
  checkComponents(message, input.components, options);

  const publicKey = await signerKey(params.keyid, params.alg, options);
  await checkKeyStanding(params.keyid, now, options);

  // Step 10: the signature itself.
  const base = buildSignatureBase(message, input.components, input.signatureParams, url);
  if (!verifyBytes(params.alg, publicKey, Buffer.from(base, 'utf8'), signature)) {
    reject('invalid', 10, 'the signature does not verify over the signature base');
  }

  // Step 11: the body is the one the covered Content-Digest describes.
  if (input.components.includes('content-digest')) {
    const digest = checkContentDigest(fieldValue(message.headers, 'content-digest')!, message.body);
    if (!digest.ok) reject('digest_mismatch', 11, digest.detail);
  }

  await checkReplay(params, now, options);
  return { ok: true, signed: true, keyid: params.keyid, label, components: input.components, params };
}

/**
 * Pre-check: the Signature-Input and Signature headers, or undefined when the message is unsigned (refused unless
 * signatures are optional). Half a signature is malformed: a proxy that strips Signature-Input must not downgrade us
 * to "unsigned".
 */
function signatureHeaders(
  message: HttpMessage,
  options: VerifyOptions<SignatureErrorCode>,
): { input: string; signature: string } | undefined {
  const inputHeader = fieldValue(message.headers, 'signature-input');
  const signatureHeader = fieldValue(message.headers, 'signature');
  if (inputHeader === undefined && signatureHeader === undefined) {
    if (options.signatureRequired ?? true)
      reject('required', 0, 'the message carries no Signature-Input or Signature header');
    return undefined;
  }
  if (inputHeader === undefined || signatureHeader === undefined) {
    reject(
      'header_malformed',
      1,
      `${inputHeader === undefined ? 'Signature' : 'Signature-Input'} is present without its pair`,
    );
  }
  return { input: inputHeader, signature: signatureHeader };
}

/** Step 2: every profile parameter present; the nonce carries its 128 bits. */
function checkParams(input: ParsedSignatureInput, label: string): Required<SignatureParams> {
  const missing = REQUIRED_PARAMS.filter((name) => input.params[name] === undefined);
  if (missing.length > 0) reject('params_incomplete', 2, `Signature-Input "${label}" lacks ${missing.join(', ')}`);
  const params = input.params as Required<SignatureParams>;
  if (!/^[A-Za-z0-9_-]+$/.test(params.nonce) || Buffer.from(params.nonce, 'base64url').length < 16) {
    reject('header_malformed', 2, 'the nonce must be unpadded base64url of at least 16 bytes');
  }
  return params;
}

/** Steps 7-8: the key, and that it is meant for this purpose and algorithm. */
async function signerKey(
  keyid: string,
  alg: SignatureAlgorithm,
  options: VerifyOptions<SignatureErrorCode>,
): Promise<KeyObject> {
  const jwk = await resolveKey(options.jwks, keyid);
  const purposeProblem = keyPurposeProblem(jwk, alg, options.profile.adcpUse);
  if (purposeProblem !== undefined)
    reject('key_purpose_invalid', 8, `the JWK "${keyid}" cannot verify this signature: ${purposeProblem}`);
  try {
    return importPublicKey(jwk);
  } catch (error) {
    reject('key_purpose_invalid', 8, `the JWK "${keyid}" is not a usable key: ${(error as Error).message}`);
  }
}

/** Steps 9-9a, before any crypto: the key is not revoked, the revocation list is fresh, the replay cache has room. */
async function checkKeyStanding(keyid: string, now: number, options: VerifyOptions<SignatureErrorCode>): Promise<void> {
  if (await options.revocation?.isRevoked(keyid)) reject('key_revoked', 9, `the key "${keyid}" is revoked`);
  if (await options.revocation?.isStale?.())
    reject('revocation_stale', 9, 'the revocation list has not been refreshed within its grace period');
  if (await options.replayCache?.isCapReached(keyid, now)) {
    reject('rate_abuse', '9a', `the replay cache holds its cap of entries for key "${keyid}"`);
  }
}

/** Steps 12-13: replay, then remember for the window plus skew. */
async function checkReplay(
  params: Required<SignatureParams>,
  now: number,
  options: VerifyOptions<SignatureErrorCode>,
): Promise<void> {
  if (!options.replayCache) return;
  if (await options.replayCache.has(params.keyid, params.nonce, now))
    reject('replayed', 12, `the nonce "${params.nonce}" was already used with key "${params.keyid}"`);
  await options.replayCache.insert(params.keyid, params.nonce, params.expires + CLOCK_SKEW_SECONDS);
}

function parseHeaders(
  inputHeader: string,
  signatureHeader: string,
  label: string,
): { input: ParsedSignatureInput; signature: Uint8Array } {
  try {
    return { input: parseSignatureInput(inputHeader, label), signature: parseSignature(signatureHeader, label) };
  } catch (error) {
    if (error instanceof StructuredFieldError) reject('header_malformed', 1, error.message);
    throw error;
  }
}

/**
 * The received URL, canonical. A raw U-label host is a malformed request
 * (vector 026 grades it `header_malformed`); other unusable authorities are
 * `target_uri_malformed` (canonicalization.json). When the message carries a
 * Host header it must name the same authority as the URL: otherwise a
 * request signed for one virtual host could be replayed to another.
 */
function canonicalRequestUrl(message: HttpMessage): CanonicalUrl {
  let url: CanonicalUrl;
  try {
    url = canonicalizeUrl(message.url, { unicodeHost: 'reject' });
  } catch (error) {
    if (!(error instanceof UrlCanonicalizationError)) throw error;
    reject(error.reason === 'non_ascii_host' ? 'header_malformed' : 'target_uri_malformed', 1, error.message);
  }
  const host = fieldLines(message.headers, 'host');
  if (host !== undefined) {
    let hostAuthority: string | undefined;
    try {
      hostAuthority =
        host.length === 1
          ? canonicalizeUrl(`${url.scheme}://${host[0]}/`, { unicodeHost: 'reject' }).authority
          : undefined;
    } catch {
      hostAuthority = undefined;
    }
    if (hostAuthority !== url.authority)
      reject(
        'target_uri_malformed',
        1,
        `the Host header "${host.join(', ')}" does not match the URL authority "${url.authority}"`,
      );
  }
  return url;
}

/** Step 1: a covered single-valued field sent twice, or a covered Content-Digest that is not one clean dictionary. */
function checkCoveredFieldsAreUnambiguous(message: HttpMessage, components: readonly string[]): void {
  for (const name of components) {
    if (!SINGLE_VALUED_FIELDS.has(name)) continue;
    const lines = fieldLines(message.headers, name);
    if (lines !== undefined && (lines.length > 1 || hasTopLevelComma(lines[0]!))) {
      reject('header_malformed', 1, `the covered header "${name}" has more than one value`);
    }
  }
  const digest = components.includes('content-digest') ? fieldValue(message.headers, 'content-digest') : undefined;
  if (digest !== undefined) {
    try {
      parseContentDigest(digest);
    } catch (error) {
      if (error instanceof StructuredFieldError) reject('header_malformed', 1, `Content-Digest: ${error.message}`);
      throw error;
    }
  }
}

/** A comma outside a quoted string: a media type has none, so it separates two values. */
function hasTopLevelComma(value: string): boolean {
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    if (quoted && value[i] === '\\') i++;
    else if (value[i] === '"') quoted = !quoted;
    else if (!quoted && value[i] === ',') return true;
  }
  return false;
}

/** Step 5: expires after created, at most 300 s apart, and now inside the window give or take 60 s. */
function checkWindow(created: number, expires: number, now: number): void {
  if (expires <= created) reject('window_invalid', 5, `expires (${expires}) is not after created (${created})`);
  if (expires - created > MAX_SIGNATURE_WINDOW_SECONDS) {
    reject(
      'window_invalid',
      5,
      `the window is ${expires - created} s; at most ${MAX_SIGNATURE_WINDOW_SECONDS} s is allowed`,
    );
  }
  if (created > now + CLOCK_SKEW_SECONDS)
    reject('window_invalid', 5, `created (${created}) is more than ${CLOCK_SKEW_SECONDS} s in the future (now ${now})`);
  if (expires < now - CLOCK_SKEW_SECONDS)
    reject('window_invalid', 5, `the signature expired at ${expires} (now ${now})`);
}

/** Step 6. */
function checkComponents(
  message: HttpMessage,
  components: readonly string[],
  options: VerifyOptions<SignatureErrorCode>,
): void {
  const unsupported = components.find((component) => !isSupportedComponent(component));
  if (unsupported !== undefined)
    reject('components_unexpected', 6, `the signature covers "${unsupported}", which this profile does not derive`);
  const required = [...options.profile.requiredComponents];
  // A body only means something with its media type.
  if (message.body !== undefined && message.body.length > 0) required.push('content-type');
  if (options.contentDigest === 'required') required.push('content-digest');
  const missing = required.find((component) => !components.includes(component));
  if (missing !== undefined) reject('components_incomplete', 6, `the signature does not cover "${missing}"`);
  if (options.contentDigest === 'forbidden' && components.includes('content-digest')) {
    reject('components_unexpected', 6, 'the signature covers content-digest, which this verifier forbids');
  }
  const absent = components.find(
    (component) => !DERIVED_COMPONENTS.has(component) && fieldValue(message.headers, component) === undefined,
  );
  if (absent !== undefined) reject('components_incomplete', 6, `the covered header "${absent}" is not in the message`);
}

/** Step 7. */
async function resolveKey(jwks: JwksSource, keyid: string): Promise<AdcpJwk> {
  if (typeof jwks === 'function') {
    const jwk = await jwks(keyid);
    if (jwk === undefined) reject('key_unknown', 7, `no key "${keyid}" in the signer's JWKS`);
    if (jwk.kid !== keyid) reject('key_unknown', 7, `the JWKS lookup for "${keyid}" returned key "${jwk.kid}"`);
    return jwk;
  }
  // Not `'keys' in jwks`: every array has a keys() method.
  const keys: readonly AdcpJwk[] = Array.isArray(jwks) ? jwks : (jwks as { readonly keys: readonly AdcpJwk[] }).keys;
  const matches = keys.filter((jwk) => jwk.kid === keyid);
  if (matches.length === 0) reject('key_unknown', 7, `no key "${keyid}" in the signer's JWKS`);
  // Two keys under one kid: either could be the one meant, so neither is trusted.
  if (matches.length > 1) reject('key_unknown', 7, `the signer's JWKS has ${matches.length} keys with kid "${keyid}"`);
  return matches[0]!;
}
