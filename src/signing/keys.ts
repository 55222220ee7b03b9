/**
 * The two AdCP signature algorithms over Node's `crypto`, and the JWK checks a
 * verifier makes before trusting a key (checklist step 8).
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** RFC 9421 algorithm names the AdCP profile allows in `Signature-Input`'s `alg`. */
export type SignatureAlgorithm = 'ed25519' | 'ecdsa-p256-sha256';

/** A JWK as AdCP publishes it: JOSE members plus the `adcp_use` purpose discriminator. */
export interface AdcpJwk {
  kty: string;
  kid?: string;
  crv?: string;
  alg?: string;
  use?: string;
  key_ops?: readonly string[];
  /** `request-signing`, `webhook-signing`, `governance-signing`, … */
  adcp_use?: string;
  x?: string;
  y?: string;
  /** The private scalar; only on a signer's own key, never in a published JWKS. */
  d?: string;
  [member: string]: unknown;
}

/** Per algorithm: the JOSE `alg` a matching JWK declares and the key type/curve it must have (RFC 8037, RFC 7518). */
const ALGORITHMS: Readonly<Record<SignatureAlgorithm, { jose: string; kty: string; crv: string }>> = {
  ed25519: { jose: 'EdDSA', kty: 'OKP', crv: 'Ed25519' },
  'ecdsa-p256-sha256': { jose: 'ES256', kty: 'EC', crv: 'P-256' },
};

export function isAllowedAlgorithm(alg: string): alg is SignatureAlgorithm {
  return Object.hasOwn(ALGORITHMS, alg);
}

/** The algorithm a key's type and curve imply, or `undefined` for a key the profile cannot use. */
export function algorithmOfKey(jwk: Pick<AdcpJwk, 'kty' | 'crv'>): SignatureAlgorithm | undefined {
  return (Object.keys(ALGORITHMS) as SignatureAlgorithm[]).find(
    (alg) => ALGORITHMS[alg].kty === jwk.kty && ALGORITHMS[alg].crv === jwk.crv,
  );
}

/**
 * Why `jwk` may not verify a signature made with `alg` for purpose `adcpUse`,
 * or `undefined` when it may. Checks the declared purpose (`use`, `key_ops`,
 * `adcp_use`: cross-purpose reuse is what lets a governance key forge a
 * request) and that the JWK's `alg`, `kty` and `crv` agree with each other and
 * with the signature's `alg` (an EdDSA JWK on a P-256 curve is not a key, it
 * is a downgrade attempt).
 */
export function keyPurposeProblem(jwk: AdcpJwk, alg: SignatureAlgorithm, adcpUse: string): string | undefined {
  if (jwk.use !== 'sig') return `its "use" is ${JSON.stringify(jwk.use)}, not "sig"`;
  if (!Array.isArray(jwk.key_ops) || !jwk.key_ops.includes('verify'))
    return `its "key_ops" ${JSON.stringify(jwk.key_ops)} lack "verify"`;
  if (jwk.adcp_use !== adcpUse) return `its "adcp_use" is ${JSON.stringify(jwk.adcp_use)}, not "${adcpUse}"`;
  const expected = ALGORITHMS[alg];
  if (jwk.alg !== expected.jose)
    return `its "alg" is ${JSON.stringify(jwk.alg)}, but the signature's alg "${alg}" needs "${expected.jose}"`;
  if (jwk.kty !== expected.kty || jwk.crv !== expected.crv) {
    return `its kty/crv ${jwk.kty}/${jwk.crv} do not fit alg ${jwk.alg} (needs ${expected.kty}/${expected.crv})`;
  }
  return undefined;
}

/** Only the key material: Node rejects or misreads some JOSE members, and a verifier must never read `d`. */
function keyMaterial(jwk: AdcpJwk, withPrivate: boolean): Record<string, string> {
  const material: Record<string, string> = {};
  for (const member of ['kty', 'crv', 'x', 'y', ...(withPrivate ? ['d'] : [])]) {
    const value = jwk[member];
    if (typeof value === 'string') material[member] = value;
  }
  return material;
}

/** A public key from a JWK. Throws when the key material is not a valid key. */
export function importPublicKey(jwk: AdcpJwk): KeyObject {
  return createPublicKey({ key: keyMaterial(jwk, false), format: 'jwk' });
}

/** A private key from a JWK carrying `d`. Throws when the key material is not a valid private key. */
export function importPrivateKey(jwk: AdcpJwk): KeyObject {
  if (typeof jwk.d !== 'string')
    throw new TypeError(`the signing key${jwk.kid ? ` "${jwk.kid}"` : ''} has no private part ("d")`);
  return createPrivateKey({ key: keyMaterial(jwk, true), format: 'jwk' });
}

/**
 * Signs `data`. ECDSA signatures use the IEEE P1363 `r‖s` encoding RFC 9421
 * §3.3.4 requires, not Node's default DER.
 */
export function signBytes(alg: SignatureAlgorithm, key: KeyObject, data: Uint8Array): Uint8Array {
  return alg === 'ed25519' ? sign(null, data, key) : sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' });
}

/** Verifies `signature` over `data`; a signature of the wrong shape is simply invalid. */
export function verifyBytes(alg: SignatureAlgorithm, key: KeyObject, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    return alg === 'ed25519'
      ? verify(null, data, key, signature)
      : verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
  } catch {
    return false;
  }
}
