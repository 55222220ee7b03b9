/**
 * Every request-signing and webhook-signing conformance vector, against our
 * verifier and our signer. One test per vector file (and per tampering of a
 * positive vector), generated from the folders so a new vector needs no code.
 */
import { describe, expect, it } from 'vitest';
import {
  buildSignatureBase,
  canonicalizeUrl,
  parseSignature,
  parseSignatureInput,
  signRequest,
  type HttpMessage,
  type SigningVector,
  type SigningVectorSet,
} from '../../src/signing/index.js';
import { flipByte, profileOf, VECTOR_SETS, verifyVector, withHeaders } from './harness.js';

const header = (vector: SigningVector, name: string) =>
  vector.request.headers[Object.keys(vector.request.headers).find((key) => key.toLowerCase() === name)!]!;

/** The vector's request as a signer holds it before signing: no signature headers. */
function unsigned(vector: SigningVector): HttpMessage {
  return withHeaders(vector.request, { 'Signature-Input': undefined, Signature: undefined });
}

/** Re-signs the vector's request with its own keypair, components and parameters. */
function resign(set: SigningVectorSet, vector: SigningVector) {
  const declared = parseSignatureInput(header(vector, 'signature-input'));
  const key = set.keys.find((candidate) => candidate.kid === declared.params.keyid)!;
  const { created, expires, nonce, alg, tag } = declared.params;
  return signRequest(unsigned(vector), {
    key: key.privateJwk,
    keyid: key.kid,
    components: declared.components,
    created,
    expires,
    nonce,
    alg,
    tag: tag!,
  });
}

describe.each(VECTOR_SETS)('$kind vectors', (set) => {
  it('are all there: keys, positive and negative vectors', () => {
    expect(set.keys.length).toBeGreaterThan(0);
    expect(set.positive.length).toBeGreaterThan(0);
    expect(set.negative.length).toBeGreaterThan(0);
  });

  describe('positive: our verifier accepts', () => {
    it.each(set.positive)('$id — $name', async (vector) => {
      const result = await verifyVector(vector);
      expect(result).toMatchObject({
        ok: true,
        signed: true,
        label: 'sig1',
        keyid: parseSignatureInput(header(vector, 'signature-input')).params.keyid,
      });
    });
  });

  describe('positive: our signature base is the vector’s, byte for byte', () => {
    it.each(set.positive.filter((vector) => vector.expectedSignatureBase !== undefined))('$id', (vector) => {
      const declared = parseSignatureInput(header(vector, 'signature-input'));
      expect(buildSignatureBase(vector.request, declared.components, declared.signatureParams)).toBe(
        vector.expectedSignatureBase,
      );
    });
  });

  describe('positive: our signer reproduces the vector’s headers', () => {
    it.each(set.positive)('$id', async (vector) => {
      const signed = resign(set, vector);
      const declared = parseSignatureInput(header(vector, 'signature-input'));
      expect(signed.headers['Signature-Input']).toBe(`sig1=${declared.signatureParams}`);
      expect(header(vector, 'signature-input').startsWith(signed.headers['Signature-Input'])).toBe(true);
      if (vector.expectedSignatureBase !== undefined) expect(signed.signatureBase).toBe(vector.expectedSignatureBase);
      // Ed25519 is deterministic: the very bytes. ECDSA uses a random k: our signature must verify instead.
      if (declared.params.alg === 'ed25519')
        expect(parseSignature(signed.headers.Signature)).toEqual(parseSignature(header(vector, 'signature')));
      const result = await verifyVector(vector, { message: withHeaders(vector.request, { ...signed.headers }) });
      expect(result).toMatchObject({ ok: true, signed: true });
    });
  });

  describe('positive: tampering with a covered part turns the vector into a rejection', () => {
    const { codes } = profileOf({ kind: set.kind });
    const tamperings = set.positive.flatMap((vector) => {
      const declared = parseSignatureInput(header(vector, 'signature-input'));
      // The first character of the path (`/adcp/…` → `/xdcp/…`), which every vector's URL has as a plain letter.
      const pathStart = vector.request.url.indexOf('/', vector.request.url.indexOf('//') + 2) + 1;
      const cases: { id: string; what: string; message: HttpMessage; code: string }[] = [
        { id: vector.id, what: 'method', message: { ...vector.request, method: 'PUT' }, code: codes.invalid },
        {
          id: vector.id,
          what: 'one byte of the path',
          message: { ...vector.request, url: flipByte(vector.request.url, pathStart) },
          code: codes.invalid,
        },
        {
          id: vector.id,
          what: 'one byte of content-type',
          message: withHeaders(vector.request, { 'Content-Type': flipByte(header(vector, 'content-type'), 0) }),
          code: codes.invalid,
        },
        {
          id: vector.id,
          what: 'one byte of the signature',
          message: withHeaders(vector.request, {
            Signature: header(vector, 'signature').replace(
              /^sig1=:(.)/,
              (_m, first: string) => `sig1=:${first === 'A' ? 'B' : 'A'}`,
            ),
          }),
          code: codes.invalid,
        },
      ];
      if (declared.components.includes('content-digest')) {
        cases.push({
          id: vector.id,
          what: 'one byte of the body',
          message: { ...vector.request, body: flipByte(vector.request.body, 2) },
          code: codes.digest_mismatch,
        });
      }
      return cases;
    });

    it.each(tamperings)('$id, $what → $code', async ({ id, message, code }) => {
      const vector = set.positive.find((candidate) => candidate.id === id)!;
      expect(await verifyVector(vector, { message })).toMatchObject({ ok: false, code });
    });
  });

  describe('negative: our verifier rejects with exactly the vector’s code', () => {
    it.each(set.negative)('$id — $name', async (vector) => {
      const expected = vector.expectedOutcome.success ? undefined : vector.expectedOutcome.errorCode;
      const result = await verifyVector(vector);
      expect(result.ok ? 'accepted' : result.code, result.ok ? '' : result.detail).toBe(expected);
    });
  });

  describe('negative: where the vector gives its signature base, ours matches', () => {
    // Some webhook vectors give the base of the signature before it was broken
    // (012 still lists expires): compare only where the header declares all six parameters.
    const comparable = set.negative.filter((vector) => {
      if (vector.expectedSignatureBase === undefined) return false;
      try {
        return Object.keys(parseSignatureInput(header(vector, 'signature-input')).params).length === 6;
      } catch {
        return false;
      }
    });
    it.each(comparable)('$id', (vector) => {
      const declared = parseSignatureInput(header(vector, 'signature-input'));
      const url = canonicalizeUrl(vector.request.url, { unicodeHost: 'reject' });
      expect(buildSignatureBase(vector.request, declared.components, declared.signatureParams, url)).toBe(
        vector.expectedSignatureBase,
      );
    });
  });

  describe('negative: the preloaded verifier state is what makes a stateful vector fail', () => {
    it.each(set.negative.filter((vector) => vector.harnessState !== undefined))('$id', async (vector) => {
      const expected = vector.expectedOutcome.success ? undefined : vector.expectedOutcome.errorCode;
      const result = await verifyVector(vector, { withState: false });
      expect(result.ok ? 'accepted' : result.code).not.toBe(expected);
    });
  });
});
