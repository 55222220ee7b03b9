/**
 * White-box harness for the conformance vectors: builds the verifier a vector
 * describes (profile, capability, JWKS, clock, preloaded state) and runs it.
 */
import {
  isSignatureRequired,
  loadSigningVectors,
  MemoryReplayCache,
  REQUEST_SIGNING,
  verifySignedMessage,
  WEBHOOK_SIGNING,
  type HttpMessage,
  type SigningVector,
  type SigningVectorSet,
  type VerifyOptions,
  type VerifyResult,
} from '../../src/signing/index.js';

/** Both vector folders of the newest installed corpus, so a new corpus or vector file is picked up as is. */
export const VECTOR_SETS: SigningVectorSet[] = [
  loadSigningVectors('request-signing'),
  loadSigningVectors('webhook-signing'),
];

export const profileOf = (vector: Pick<SigningVector, 'kind'>) =>
  vector.kind === 'request-signing' ? REQUEST_SIGNING : WEBHOOK_SIGNING;

/** The AdCP operation a vector's URL invokes: its last path segment (`/adcp/create_media_buy`). */
export function operationOf(url: string): string {
  return new URL(url).pathname.split('/').at(-1) ?? '';
}

/**
 * Verifies `message` (default: the vector's request) as the vector's verifier
 * would, with its harness state preloaded unless `withState` is false.
 */
export function verifyVector(
  vector: SigningVector,
  options: { message?: HttpMessage; withState?: boolean; overrides?: Partial<VerifyOptions<never>> } = {},
): Promise<VerifyResult> {
  const message = options.message ?? vector.request;
  const state = options.withState === false ? undefined : vector.harnessState;
  // A cap of 1 filled with one placeholder entry is "the per-keyid cap is hit", per the vector README.
  const replayCache = new MemoryReplayCache({ perKeyidCap: state?.capReachedFor ? 1 : 1000 });
  if (state?.capReachedFor)
    replayCache.insert(state.capReachedFor, 'placeholder-entry-at-cap', vector.referenceNow + 360);
  for (const entry of state?.replayEntries ?? [])
    replayCache.insert(entry.keyid, entry.nonce, vector.referenceNow + (entry.ttlSeconds ?? 360));
  const capability = vector.verifierCapability;
  return verifySignedMessage(message, {
    profile: profileOf(vector),
    jwks: vector.jwks,
    now: vector.referenceNow,
    contentDigest: capability?.coversContentDigest,
    signatureRequired:
      vector.kind === 'webhook-signing' ||
      isSignatureRequired({
        operation: operationOf(message.url),
        requiredFor: capability?.requiredFor ?? [],
        body: message.body,
      }),
    revocation: {
      isRevoked: (keyid) => state?.revokedKids.includes(keyid) ?? false,
      isStale: () => state?.revocationStaleSeconds !== undefined,
    },
    replayCache,
    ...options.overrides,
  });
}

/** The vector's request with some headers replaced (`undefined` removes one), matched case-insensitively. */
export function withHeaders(message: HttpMessage, changes: Record<string, string | undefined>): HttpMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers as Record<string, string>)) {
    if (!Object.keys(changes).some((changed) => changed.toLowerCase() === name.toLowerCase())) headers[name] = value;
  }
  for (const [name, value] of Object.entries(changes)) if (value !== undefined) headers[name] = value;
  return { ...message, headers };
}

/** `text` with the byte at `index` replaced by a different printable ASCII character. */
export function flipByte(text: string, index: number): string {
  const replacement = text[index] === 'x' ? 'y' : 'x';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}
