/**
 * The verifier's pre-check for requests that arrive without a signature:
 * must this one have been signed?
 */
import { bodyBytes, type HttpMessage } from './message.js';

export interface SignatureRequirement {
  /** The AdCP operation the request invokes (`create_media_buy`), if known. */
  operation?: string;
  /** The verifier's advertised `request_signing.required_for`. */
  requiredFor?: readonly string[];
  /** The request body, inspected for `push_notification_config.authentication`. */
  body?: HttpMessage['body'];
}

/** Recursion bound for the body walk: AdCP payloads nest a handful of levels, and a hostile body must not exhaust the stack. */
const MAX_DEPTH = 100;

/**
 * True when an unsigned request must be rejected with
 * `request_signature_required`: its operation is in `required_for`, or its
 * body registers webhook credentials (`push_notification_config.authentication`),
 * which a signing-capable seller must only accept signed so an on-path party
 * cannot inject or strip them (security.mdx, webhook downgrade resistance;
 * request-signing negative vector 027).
 */
export function isSignatureRequired({ operation, requiredFor = [], body }: SignatureRequirement): boolean {
  if (operation !== undefined && requiredFor.includes(operation)) return true;
  const bytes = bodyBytes(body);
  if (bytes.length === 0) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return false; // not JSON: nothing to register webhooks with
  }
  return carriesWebhookAuthentication(parsed, MAX_DEPTH);
}

function carriesWebhookAuthentication(value: unknown, depth: number): boolean {
  if (depth === 0 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((item) => carriesWebhookAuthentication(item, depth - 1));
  const record = value as Record<string, unknown>;
  const config = record.push_notification_config;
  if (config !== null && typeof config === 'object' && !Array.isArray(config)) {
    const authentication = (config as Record<string, unknown>).authentication;
    if (authentication !== null && typeof authentication === 'object' && Object.keys(authentication).length > 0)
      return true;
  }
  return Object.values(record).some((inner) => carriesWebhookAuthentication(inner, depth - 1));
}
