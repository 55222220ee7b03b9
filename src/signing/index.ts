/**
 * RFC 9421 HTTP Message Signatures under the AdCP profiles: signing requests
 * for the `signed_requests` storyboard, verifying webhooks an agent sends to
 * our receiver, and the conformance vectors both are tested against.
 */
export {
  canonicalizeUrl,
  UrlCanonicalizationError,
  type CanonicalUrl,
  type CanonicalizeOptions,
  type UrlRejectReason,
} from './canonical-url.js';
export {
  checkContentDigest,
  computeContentDigest,
  parseContentDigest,
  type ContentDigestCheck,
  type ContentDigestOptions,
  type DigestAlgorithm,
} from './content-digest.js';
export { algorithmOfKey, isAllowedAlgorithm, type AdcpJwk, type SignatureAlgorithm } from './keys.js';
export type { HeaderInput, HttpMessage } from './message.js';
export {
  CLOCK_SKEW_SECONDS,
  MAX_SIGNATURE_WINDOW_SECONDS,
  REQUEST_SIGNING,
  WEBHOOK_SIGNING,
  type RequestSignatureErrorCode,
  type SignatureErrorCode,
  type SignatureFailure,
  type SigningProfile,
  type WebhookSignatureErrorCode,
} from './profiles.js';
export { MemoryReplayCache, type MemoryReplayCacheOptions, type ReplayCache } from './replay-cache.js';
export { signRequest, type SignedHeaders, type SignedRequest, type SignOptions } from './sign.js';
export { buildSignatureBase, ComponentError, componentValue, DERIVED_COMPONENTS } from './signature-base.js';
export {
  parseSignature,
  parseSignatureInput,
  serializeSignatureParams,
  type ParsedSignatureInput,
  type SignatureParams,
} from './signature-input.js';
export { isSignatureRequired, type SignatureRequirement } from './signature-required.js';
export { StructuredFieldError } from './structured-fields.js';
export {
  loadSigningVectors,
  signingVectorsDir,
  VectorFormatError,
  type CanonicalizationCase,
  type ExpectedOutcome,
  type LoadVectorsOptions,
  type SigningVector,
  type SigningVectorSet,
  type TestKey,
  type VectorHarnessState,
  type VectorKind,
  type VectorRequest,
} from './vectors.js';
export {
  verifySignedMessage,
  type JwksSource,
  type RevocationCheck,
  type VerificationFailure,
  type VerifiedSignature,
  type VerifyOptions,
  type VerifyResult,
} from './verify.js';
export { signatureChallenge, signatureErrorCode } from './www-authenticate.js';
