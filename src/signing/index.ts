/**
 * RFC 9421 HTTP Message Signatures under the AdCP profiles: signing requests
 * for the `signed_requests` storyboard, verifying webhooks an agent sends to
 * our receiver, and the conformance vectors both are tested against.
 */
export { canonicalizeUrl, UrlCanonicalizationError } from './canonical-url.js';
export { checkContentDigest, computeContentDigest, parseContentDigest } from './content-digest.js';
export type { AdcpJwk } from './keys.js';
export type { HttpMessage } from './message.js';
export { REQUEST_SIGNING, WEBHOOK_SIGNING, type SigningProfile, type WebhookSignatureErrorCode } from './profiles.js';
export { MemoryReplayCache } from './replay-cache.js';
export { signRequest, type SignOptions } from './sign.js';
export { buildSignatureBase } from './signature-base.js';
export { parseSignature, parseSignatureInput, serializeSignatureParams } from './signature-input.js';
export { isSignatureRequired } from './signature-required.js';
export { StructuredFieldError } from './structured-fields.js';
export {
  loadSigningVectors,
  type CanonicalizationCase,
  type SigningVector,
  type SigningVectorSet,
  type TestKey,
} from './vectors.js';
export { verifySignedMessage, type JwksSource, type VerifyOptions, type VerifyResult } from './verify.js';
export { signatureChallenge, signatureErrorCode } from './www-authenticate.js';
