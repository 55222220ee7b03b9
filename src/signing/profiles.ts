/**
 * The two AdCP RFC 9421 profiles. The spec runs one verifier checklist for
 * both and substitutes the tag, the key purpose and the error-code prefix;
 * a profile is that substitution table.
 */

/** Stable codes a request verifier returns in `WWW-Authenticate: Signature error="<code>"` (transport error taxonomy). */
export type RequestSignatureErrorCode =
  | 'request_signature_required'
  | 'request_signature_header_malformed'
  | 'request_signature_params_incomplete'
  | 'request_signature_tag_invalid'
  | 'request_signature_alg_not_allowed'
  | 'request_signature_window_invalid'
  | 'request_signature_components_incomplete'
  | 'request_signature_components_unexpected'
  | 'request_target_uri_malformed'
  | 'request_signature_key_unknown'
  | 'request_signature_key_purpose_invalid'
  | 'request_signature_key_revoked'
  | 'request_signature_revocation_stale'
  | 'request_signature_rate_abuse'
  | 'request_signature_invalid'
  | 'request_signature_digest_mismatch'
  | 'request_signature_replayed';

/** Stable codes a webhook receiver returns (webhook error taxonomy). */
export type WebhookSignatureErrorCode =
  | 'webhook_signature_header_malformed'
  | 'webhook_signature_params_incomplete'
  | 'webhook_signature_tag_invalid'
  | 'webhook_signature_alg_not_allowed'
  | 'webhook_signature_window_invalid'
  | 'webhook_signature_components_incomplete'
  | 'webhook_target_uri_malformed'
  | 'webhook_signature_key_unknown'
  | 'webhook_signature_key_purpose_invalid'
  | 'webhook_signature_key_revoked'
  | 'webhook_signature_revocation_stale'
  | 'webhook_signature_rate_abuse'
  | 'webhook_signature_invalid'
  | 'webhook_signature_digest_mismatch'
  | 'webhook_signature_replayed';

export type SignatureErrorCode = RequestSignatureErrorCode | WebhookSignatureErrorCode;

/** What went wrong, independent of profile; a profile maps each to its code. */
export type SignatureFailure =
  | 'required'
  | 'header_malformed'
  | 'params_incomplete'
  | 'tag_invalid'
  | 'alg_not_allowed'
  | 'window_invalid'
  | 'components_incomplete'
  | 'components_unexpected'
  | 'target_uri_malformed'
  | 'key_unknown'
  | 'key_purpose_invalid'
  | 'key_revoked'
  | 'revocation_stale'
  | 'rate_abuse'
  | 'invalid'
  | 'digest_mismatch'
  | 'replayed';

export interface SigningProfile<Code extends SignatureErrorCode = SignatureErrorCode> {
  /** The `tag` signature parameter, matched byte for byte. */
  tag: string;
  /** The `adcp_use` a verifying JWK must declare. */
  adcpUse: string;
  /** Components every signature must cover. */
  requiredComponents: readonly string[];
  /** The code for each failure. */
  codes: Readonly<Record<SignatureFailure, Code>>;
}

/** Signed requests (transport layer): the agent verifies what a buyer, or our runner, signs. */
export const REQUEST_SIGNING: SigningProfile<RequestSignatureErrorCode> = {
  tag: 'adcp/request-signing/v1',
  adcpUse: 'request-signing',
  // content-type joins when the request has a body; content-digest follows the verifier's covers_content_digest policy.
  requiredComponents: ['@method', '@target-uri', '@authority'],
  codes: {
    required: 'request_signature_required',
    header_malformed: 'request_signature_header_malformed',
    params_incomplete: 'request_signature_params_incomplete',
    tag_invalid: 'request_signature_tag_invalid',
    alg_not_allowed: 'request_signature_alg_not_allowed',
    window_invalid: 'request_signature_window_invalid',
    components_incomplete: 'request_signature_components_incomplete',
    components_unexpected: 'request_signature_components_unexpected',
    target_uri_malformed: 'request_target_uri_malformed',
    key_unknown: 'request_signature_key_unknown',
    key_purpose_invalid: 'request_signature_key_purpose_invalid',
    key_revoked: 'request_signature_key_revoked',
    revocation_stale: 'request_signature_revocation_stale',
    rate_abuse: 'request_signature_rate_abuse',
    invalid: 'request_signature_invalid',
    digest_mismatch: 'request_signature_digest_mismatch',
    replayed: 'request_signature_replayed',
  },
};

/** Signed webhooks: the agent signs, our receiver verifies. */
export const WEBHOOK_SIGNING: SigningProfile<WebhookSignatureErrorCode> = {
  tag: 'adcp/webhook-signing/v1',
  adcpUse: 'webhook-signing',
  // The body is the event, so content-digest is always required: no policy branch on webhooks.
  requiredComponents: ['@method', '@target-uri', '@authority', 'content-type', 'content-digest'],
  codes: {
    // The webhook taxonomy has no "required" code: a webhook without its
    // signature headers fails the bound-pair rule, which is header_malformed.
    required: 'webhook_signature_header_malformed',
    header_malformed: 'webhook_signature_header_malformed',
    params_incomplete: 'webhook_signature_params_incomplete',
    tag_invalid: 'webhook_signature_tag_invalid',
    alg_not_allowed: 'webhook_signature_alg_not_allowed',
    window_invalid: 'webhook_signature_window_invalid',
    components_incomplete: 'webhook_signature_components_incomplete',
    // Nor a components_unexpected code: a component the receiver cannot derive makes the Signature-Input unusable.
    components_unexpected: 'webhook_signature_header_malformed',
    target_uri_malformed: 'webhook_target_uri_malformed',
    key_unknown: 'webhook_signature_key_unknown',
    key_purpose_invalid: 'webhook_signature_key_purpose_invalid',
    key_revoked: 'webhook_signature_key_revoked',
    revocation_stale: 'webhook_signature_revocation_stale',
    rate_abuse: 'webhook_signature_rate_abuse',
    invalid: 'webhook_signature_invalid',
    digest_mismatch: 'webhook_signature_digest_mismatch',
    replayed: 'webhook_signature_replayed',
  },
};

/** Longest validity window (`expires − created`) a verifier accepts, seconds. */
export const MAX_SIGNATURE_WINDOW_SECONDS = 300;
/** Clock skew tolerated on `created` and `expires`, seconds. */
export const CLOCK_SKEW_SECONDS = 60;
