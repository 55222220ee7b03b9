import { describe, expect, it } from 'vitest';
import {
  checkContentDigest,
  parseSignatureInput,
  REQUEST_SIGNING,
  signRequest,
  verifySignedMessage,
  WEBHOOK_SIGNING,
  type HttpMessage,
  type SigningProfile,
  type TestKey,
} from '../../src/signing/index.js';
import { VECTOR_SETS } from './harness.js';

const NOW = 1_800_000_000;
const key = (kid: string): TestKey =>
  VECTOR_SETS.flatMap((set) => set.keys).find((candidate) => candidate.kid === kid)!;
const COMPONENTS = ['@method', '@target-uri', '@authority', 'content-type', 'content-digest'];
const message: HttpMessage = {
  method: 'post',
  url: 'https://Buyer.Example:443/adcp/webhook/./step/op%7e1?b=2&a=1',
  headers: { 'Content-Type': 'application/json' },
  body: '{"task_id":"t1","status":"completed"}',
};

describe('signRequest → verifySignedMessage round trip', () => {
  it.each([
    { profile: 'request', kid: 'test-ed25519-2026' },
    { profile: 'request', kid: 'test-es256-2026' },
    { profile: 'webhook', kid: 'test-ed25519-webhook-2026' },
    { profile: 'webhook', kid: 'test-es256-webhook-2026' },
  ])('$profile signature with $kid verifies, and a one-byte body change does not', async ({ profile: name, kid }) => {
    const profile: SigningProfile = name === 'request' ? REQUEST_SIGNING : WEBHOOK_SIGNING;
    const signing = key(kid);
    const signed = signRequest(message, {
      key: signing.privateJwk,
      keyid: kid,
      tag: profile.tag,
      components: COMPONENTS,
      now: NOW,
    });
    const sent = { ...message, headers: { ...message.headers, ...signed.headers } };
    const options = { profile, jwks: [signing.publicJwk], now: NOW + 10, contentDigest: 'required' as const };
    expect(await verifySignedMessage(sent, options)).toMatchObject({ ok: true, signed: true, keyid: kid });
    expect(
      await verifySignedMessage({ ...sent, body: sent.body!.toString().replace('t1', 't2') }, options),
    ).toMatchObject({ ok: false, code: profile.codes.digest_mismatch });
  });
});

describe('signRequest', () => {
  const signing = key('test-ed25519-2026');
  const base = {
    key: signing.privateJwk,
    keyid: signing.kid,
    tag: REQUEST_SIGNING.tag,
    components: COMPONENTS,
    now: NOW,
  };

  it('defaults created to now, expires to created + 300, a fresh 16-byte nonce, alg from the key, label sig1', () => {
    const first = signRequest(message, base);
    const second = signRequest(message, base);
    expect(first.params).toMatchObject({
      created: NOW,
      expires: NOW + 300,
      keyid: signing.kid,
      alg: 'ed25519',
      tag: REQUEST_SIGNING.tag,
    });
    expect(first.params.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(second.params.nonce).not.toBe(first.params.nonce);
    expect(first.headers['Signature-Input']).toMatch(
      /^sig1=\("@method" "@target-uri" "@authority" "content-type" "content-digest"\);created=1800000000;expires=1800000300;nonce="[^"]+";keyid="test-ed25519-2026";alg="ed25519";tag="adcp\/request-signing\/v1"$/,
    );
    expect(first.headers.Signature).toMatch(/^sig1=:[A-Za-z0-9_-]{86}:$/);
  });

  it('signs the canonical URL, and the base lists components in the order given', () => {
    const signed = signRequest(message, {
      ...base,
      components: ['@authority', '@method', '@target-uri', '@path', '@query', 'content-type'],
    });
    expect(signed.signatureBase.split('\n').slice(0, 6)).toEqual([
      '"@authority": buyer.example',
      '"@method": POST',
      '"@target-uri": https://buyer.example/adcp/webhook/step/op~1?b=2&a=1',
      '"@path": /adcp/webhook/step/op~1',
      '"@query": ?b=2&a=1',
      '"content-type": application/json',
    ]);
  });

  it('adds a Content-Digest (standard base64 by default, base64url on request) only when content-digest is covered and absent', () => {
    const signed = signRequest(message, base);
    expect(signed.headers['Content-Digest']).toMatch(/^sha-256=:[A-Za-z0-9+/]{43}=:$/);
    expect(checkContentDigest(signed.headers['Content-Digest']!, message.body)).toMatchObject({ ok: true });
    expect(signed.signatureBase).toContain(`"content-digest": ${signed.headers['Content-Digest']}`);
    expect(
      signRequest(message, { ...base, contentDigest: { encoding: 'base64url', algorithm: 'sha-512' } }).headers[
        'Content-Digest'
      ],
    ).toMatch(/^sha-512=:[A-Za-z0-9_-]{86}:$/);
    expect(signRequest(message, { ...base, components: ['@method'] }).headers['Content-Digest']).toBeUndefined();
    const withDigest = { ...message, headers: { ...message.headers, 'content-digest': 'sha-256=:AAAA:' } };
    const kept = signRequest(withDigest, base);
    expect(kept.headers['Content-Digest']).toBeUndefined();
    expect(kept.signatureBase).toContain('"content-digest": sha-256=:AAAA:');
  });

  it('writes exactly the parameters a negative vector needs: null leaves one out, alg and label can be anything', () => {
    const signed = signRequest(message, { ...base, expires: null, nonce: null, alg: 'rsa-pss-sha512', label: 'relay' });
    expect(signed.headers['Signature-Input']).toBe(
      'relay=("@method" "@target-uri" "@authority" "content-type" "content-digest");created=1800000000;keyid="test-ed25519-2026";alg="rsa-pss-sha512";tag="adcp/request-signing/v1"',
    );
    expect(signed.headers.Signature.startsWith('relay=:')).toBe(true);
    expect(parseSignatureInput(signed.headers['Signature-Input'], 'relay').params).toEqual({
      created: NOW,
      keyid: signing.kid,
      alg: 'rsa-pss-sha512',
      tag: REQUEST_SIGNING.tag,
    });
    expect(signRequest(message, { ...base, created: null }).params).toMatchObject({ expires: NOW + 300 });
  });

  it('accepts a fetch Headers object', () => {
    const signed = signRequest({ ...message, headers: new Headers({ 'Content-Type': 'application/json' }) }, base);
    expect(signed.signatureBase).toContain('"content-type": application/json\n"content-digest": sha-256=:');
  });

  it('refuses a key without its private part, a key of another type, a bad label and a missing covered header', () => {
    expect(() => signRequest(message, { ...base, key: signing.publicJwk })).toThrow(/no private part/);
    expect(() => signRequest(message, { ...base, key: { kty: 'RSA', n: 'x', e: 'AQAB', d: 'x' } })).toThrow(
      /Ed25519 or ECDSA P-256/,
    );
    expect(() => signRequest(message, { ...base, label: 'Sig1' })).toThrow(/not a valid signature label/);
    expect(() => signRequest(message, { ...base, components: ['@method', 'x-missing'] })).toThrow(/x-missing/);
  });
});
