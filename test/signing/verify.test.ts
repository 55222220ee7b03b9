/** Verifier behaviour the conformance vectors do not pin down. */
import { describe, expect, it } from 'vitest';
import {
  MemoryReplayCache,
  REQUEST_SIGNING,
  signRequest,
  verifySignedMessage,
  WEBHOOK_SIGNING,
  type AdcpJwk,
  type HttpMessage,
  type SignOptions,
  type VerifyOptions,
} from '../../src/signing/index.js';
import { VECTOR_SETS, withHeaders } from './harness.js';

const NOW = 1_800_000_000;
const keys = VECTOR_SETS.find((set) => set.kind === 'request-signing')!.keys;
const signing = keys.find((key) => key.kid === 'test-ed25519-2026')!;
const es256 = keys.find((key) => key.kid === 'test-es256-2026')!;
const message: HttpMessage = {
  method: 'POST',
  url: 'https://seller.example.com/adcp/create_media_buy',
  headers: { 'Content-Type': 'application/json' },
  body: '{"plan_id":"plan_001"}',
};
const COMPONENTS = ['@method', '@target-uri', '@authority', 'content-type'];

function signed(overrides: Partial<SignOptions> = {}, base: HttpMessage = message): HttpMessage {
  const { headers } = signRequest(base, {
    key: signing.privateJwk,
    keyid: signing.kid,
    tag: REQUEST_SIGNING.tag,
    components: COMPONENTS,
    now: NOW,
    ...overrides,
  });
  return withHeaders(base, { ...headers });
}

function verify(target: HttpMessage, overrides: Partial<VerifyOptions<never>> = {}) {
  return verifySignedMessage(target, { profile: REQUEST_SIGNING, jwks: [signing.publicJwk], now: NOW, ...overrides });
}

describe('verifySignedMessage', () => {
  it('lets an unsigned request through as unsigned only when signing is not required', async () => {
    expect(await verify(message, { signatureRequired: false })).toEqual({ ok: true, signed: false });
    expect(await verify(message)).toMatchObject({ ok: false, code: 'request_signature_required', step: 0 });
    expect(await verifySignedMessage(message, { profile: WEBHOOK_SIGNING, jwks: [] })).toMatchObject({
      ok: false,
      code: 'webhook_signature_header_malformed',
    });
  });

  it('returns what it verified', async () => {
    expect(await verify(signed({ nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }))).toEqual({
      ok: true,
      signed: true,
      keyid: signing.kid,
      label: 'sig1',
      components: COMPONENTS,
      params: {
        created: NOW,
        expires: NOW + 300,
        nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
        keyid: signing.kid,
        alg: 'ed25519',
        tag: REQUEST_SIGNING.tag,
      },
    });
  });

  it.each([
    ['created more than 60 s ahead', { created: NOW + 61, expires: NOW + 200 }, 'request_signature_window_invalid'],
    ['expired more than 60 s ago', { created: NOW - 400, expires: NOW - 61 }, 'request_signature_window_invalid'],
    ['a nonce under 16 bytes', { nonce: 'AAAAAAAAAAAAAAAAAAAA' }, 'request_signature_header_malformed'],
    ['a padded nonce', { nonce: 'AAAAAAAAAAAAAAAAAAAAAA==' }, 'request_signature_header_malformed'],
    [
      'a body without content-type covered',
      { components: ['@method', '@target-uri', '@authority'] },
      'request_signature_components_incomplete',
    ],
    ['the wrong label', { label: 'sig2' }, 'request_signature_header_malformed'],
  ])('rejects %s', async (_what, overrides, code) => {
    expect(await verify(signed(overrides as Partial<SignOptions>))).toMatchObject({ ok: false, code });
  });

  it.each([
    ['a derived component the profile does not compute', '"@status"'],
    ['a component with parameters', '"content-type";sf'],
  ])(
    'rejects %s as components_unexpected (webhooks: header_malformed), before any crypto',
    async (_what, component) => {
      const target = signed();
      const input = (target.headers as Record<string, string>)['Signature-Input']!.replace(
        '"content-type"',
        `"content-type" ${component}`,
      );
      expect(await verify(withHeaders(target, { 'Signature-Input': input }))).toMatchObject({
        ok: false,
        code: 'request_signature_components_unexpected',
      });
      const asWebhook = withHeaders(target, {
        'Signature-Input': input.replace(REQUEST_SIGNING.tag, WEBHOOK_SIGNING.tag),
      });
      expect(await verifySignedMessage(asWebhook, { profile: WEBHOOK_SIGNING, jwks: [], now: NOW })).toMatchObject({
        ok: false,
        code: 'webhook_signature_header_malformed',
        step: 6,
      });
    },
  );

  it('accepts the edges of the window: created 60 s ahead, expired 60 s ago', async () => {
    expect(await verify(signed({ created: NOW + 60, expires: NOW + 100 }))).toMatchObject({ ok: true });
    expect(await verify(signed({ created: NOW - 300, expires: NOW - 60 }))).toMatchObject({ ok: true });
  });

  it('rejects a covered header the message does not carry', async () => {
    const withExtra = { ...message, headers: { ...message.headers, 'x-extra': '1' } };
    const headers = signed({ components: [...COMPONENTS, 'x-extra'] }, withExtra).headers as Record<string, string>;
    expect(await verify(withHeaders(withExtra, { ...headers, 'x-extra': undefined }))).toMatchObject({
      ok: false,
      code: 'request_signature_components_incomplete',
    });
    expect(await verify(withHeaders(withExtra, headers))).toMatchObject({ ok: true });
  });

  it('checks a Host header against the URL authority (cross-vhost replay)', async () => {
    expect(await verify(withHeaders(signed(), { Host: 'SELLER.example.com:443' }))).toMatchObject({ ok: true });
    expect(await verify(withHeaders(signed(), { Host: 'other.example.com' }))).toMatchObject({
      ok: false,
      code: 'request_target_uri_malformed',
    });
    expect(await verify(withHeaders(signed(), { Host: 'b\u00fccher.example' }))).toMatchObject({
      ok: false,
      code: 'request_target_uri_malformed',
    });
  });

  it('reads keys from a JWKS object or a lookup, and refuses an ambiguous or mismatched kid', async () => {
    expect(await verify(signed(), { jwks: { keys: [signing.publicJwk] } })).toMatchObject({ ok: true });
    expect(
      await verify(signed(), { jwks: async (kid) => (kid === signing.kid ? signing.publicJwk : undefined) }),
    ).toMatchObject({ ok: true });
    expect(await verify(signed(), { jwks: () => ({ ...signing.publicJwk, kid: 'other' }) })).toMatchObject({
      ok: false,
      code: 'request_signature_key_unknown',
    });
    expect(await verify(signed(), { jwks: [signing.publicJwk, signing.publicJwk] })).toMatchObject({
      ok: false,
      code: 'request_signature_key_unknown',
    });
  });

  it.each<[string, Partial<AdcpJwk>]>([
    ['no alg', { alg: undefined }],
    ['an alg for the other algorithm', { alg: 'ES256' }],
    ['use other than sig', { use: 'enc' }],
    ['no adcp_use', { adcp_use: undefined }],
    ['key material that is not a key', { x: 'AAAA' }],
    // Valid P-256 material under an EdDSA declaration: importable, so only the kty/crv check stops it reaching crypto.
    ['an EC P-256 key declaring EdDSA', { kty: 'EC', crv: 'P-256', x: es256.publicJwk.x, y: es256.publicJwk.y }],
  ])('refuses a JWK with %s as key_purpose_invalid', async (_what, change) => {
    expect(await verify(signed(), { jwks: [{ ...signing.publicJwk, ...change }] })).toMatchObject({
      ok: false,
      code: 'request_signature_key_purpose_invalid',
    });
  });

  it('remembers an accepted nonce until expires + 60 s, and only after the signature verified', async () => {
    const replayCache = new MemoryReplayCache();
    const once = signed();
    expect(await verify(withHeaders(once, { 'Content-Type': 'text/plain' }), { replayCache })).toMatchObject({
      ok: false,
      code: 'request_signature_invalid',
    });
    expect(await verify(once, { replayCache })).toMatchObject({ ok: true });
    expect(await verify(once, { replayCache })).toMatchObject({
      ok: false,
      code: 'request_signature_replayed',
      step: 12,
    });
    const nonce = 'BBBBBBBBBBBBBBBBBBBBBB';
    expect(await verify(signed({ nonce }), { replayCache })).toMatchObject({ ok: true });
    // expires is NOW + 300; the entry lives 60 s more.
    expect(replayCache.has(signing.kid, nonce, NOW + 359)).toBe(true);
    expect(replayCache.has(signing.kid, nonce, NOW + 360)).toBe(false);
  });

  it('refuses new signatures from a keyid whose cache is at its cap, before any crypto', async () => {
    const replayCache = new MemoryReplayCache({ perKeyidCap: 2 });
    expect(await verify(signed(), { replayCache })).toMatchObject({ ok: true });
    expect(await verify(signed(), { replayCache })).toMatchObject({ ok: true });
    const broken = withHeaders(signed(), { Signature: 'sig1=:AAAA:' });
    expect(await verify(broken, { replayCache })).toMatchObject({
      ok: false,
      code: 'request_signature_rate_abuse',
      step: '9a',
    });
  });

  it('checks revocation before staleness, both before crypto', async () => {
    const broken = withHeaders(signed(), { Signature: 'sig1=:AAAA:' });
    expect(await verify(broken, { revocation: { isRevoked: () => true, isStale: () => true } })).toMatchObject({
      code: 'request_signature_key_revoked',
    });
    expect(
      await verify(broken, { revocation: { isRevoked: async () => false, isStale: async () => true } }),
    ).toMatchObject({ code: 'request_signature_revocation_stale' });
    expect(await verify(broken, { revocation: { isRevoked: () => false } })).toMatchObject({
      code: 'request_signature_invalid',
    });
  });

  it('treats a second Content-Type field line like a comma-joined one, but allows a comma inside a quoted parameter', async () => {
    const twoLines = withHeaders(signed(), { 'Content-Type': ['application/json', 'text/plain'] as unknown as string });
    expect(await verify(twoLines)).toMatchObject({ ok: false, code: 'request_signature_header_malformed' });
    const quoted = { ...message, headers: { 'Content-Type': 'multipart/form-data; boundary="a,b"' } };
    expect(await verify(signed({}, quoted))).toMatchObject({ ok: true });
  });

  it('applies the content-digest policy', async () => {
    const covering = signed({ components: [...COMPONENTS, 'content-digest'] });
    expect(await verify(covering, { contentDigest: 'required' })).toMatchObject({ ok: true });
    expect(await verify(covering, { contentDigest: 'forbidden' })).toMatchObject({
      ok: false,
      code: 'request_signature_components_unexpected',
    });
    expect(await verify(signed(), { contentDigest: 'required' })).toMatchObject({
      ok: false,
      code: 'request_signature_components_incomplete',
    });
    expect(await verify(signed(), { contentDigest: 'forbidden' })).toMatchObject({ ok: true });
  });
});
