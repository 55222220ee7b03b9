/**
 * The one place a verifier's error code travels on the wire: a 401's
 * `WWW-Authenticate: Signature error="<code>"` (security.mdx, transport error
 * taxonomy). Writing it for our webhook receiver, reading it from an agent's
 * answer to a signed-requests vector.
 */
import { parseWwwAuthenticate } from '../transport/www-authenticate.js';

/** The challenge a verifier sends with a 401: no realm, no other parameters, as the profile requires. */
export function signatureChallenge(code: string): string {
  return `Signature error="${code}"`;
}

/**
 * The `error` parameter of the `Signature` challenge in a `WWW-Authenticate`
 * value (or values), or `undefined` when there is none. Other challenges
 * (`Bearer realm=…`) and other parameters are tolerated, as RFC 9110 asks;
 * challenges after a syntax error are not read.
 */
export function signatureErrorCode(header: string | readonly string[] | null | undefined): string | undefined {
  if (header === null || header === undefined) return undefined;
  return parseWwwAuthenticate(header).challenges.find(
    (c) => c.scheme.toLowerCase() === 'signature' && c.params.error !== undefined,
  )?.params.error;
}
