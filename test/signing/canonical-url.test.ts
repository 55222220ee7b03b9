import { describe, expect, it } from 'vitest';
import {
  canonicalizeUrl,
  REQUEST_SIGNING,
  signRequest,
  UrlCanonicalizationError,
  verifySignedMessage,
  type CanonicalizationCase,
} from '../../src/signing/index.js';
import { removeDotSegments } from '../../src/signing/canonical-url.js';
import { VECTOR_SETS } from './harness.js';

const requestSet = VECTOR_SETS.find((set) => set.kind === 'request-signing')!;
type Accept = CanonicalizationCase & { expected: { targetUri: string; authority: string } };
type Reject = CanonicalizationCase & { expected: { reject: true; reason: string; errorCode: string } };
const accepted = requestSet.canonicalization.filter((c): c is Accept => !('reject' in c.expected));
const rejected = requestSet.canonicalization.filter((c): c is Reject => 'reject' in c.expected);

describe('canonicalization.json', () => {
  it('has both kinds of case', () => {
    expect(accepted.length).toBeGreaterThan(0);
    expect(rejected.length).toBeGreaterThan(0);
  });

  it.each(accepted)('$name ($rule)', ({ inputUrl, expected }) => {
    const url = canonicalizeUrl(inputUrl);
    expect(url.targetUri).toBe(expected.targetUri);
    expect(url.authority).toBe(expected.authority);
  });

  describe('reject cases: the signer refuses to sign, the verifier answers the case’s code', () => {
    const positive = requestSet.positive.find((vector) => vector.id.startsWith('001'))!;
    const key = requestSet.keys.find((candidate) => candidate.kid === 'test-ed25519-2026')!;

    it.each(rejected)('$name ($rule)', async ({ inputUrl, expected }) => {
      expect(() => canonicalizeUrl(inputUrl)).toThrow(UrlCanonicalizationError);
      const message = { ...positive.request, url: inputUrl };
      expect(() =>
        signRequest(message, {
          key: key.privateJwk,
          keyid: key.kid,
          tag: REQUEST_SIGNING.tag,
          components: ['@method', '@target-uri', '@authority', 'content-type'],
        }),
      ).toThrow(UrlCanonicalizationError);
      // The positive vector's signature headers parse, so the URL is the first thing wrong.
      const result = await verifySignedMessage(message, {
        profile: REQUEST_SIGNING,
        jwks: positive.jwks,
        now: positive.referenceNow,
      });
      expect(result).toMatchObject({ ok: false, code: expected.errorCode });
    });
  });
});

describe('canonicalizeUrl beyond the published cases', () => {
  it.each([
    [
      '%2E%2E is not a dot segment (dot segments are removed before percent-decoding, step 5 then 6)',
      'https://h/a/%2E%2E/b',
      'https://h/a/../b',
    ],
    ['a leading ../ is dropped', 'https://h/../a', 'https://h/a'],
    ['a trailing /.. pops the last segment and keeps the slash', 'https://h/a/b/..', 'https://h/a/'],
    ['an empty port is dropped', 'https://h:/p', 'https://h/p'],
    ['443 is not the default port of http, so it stays', 'http://h:443/p', 'http://h:443/p'],
    [
      'query percent-encoding is normalized but the query is not re-encoded',
      'https://h/p?q=%7e%2f+x',
      'https://h/p?q=~%2F+x',
    ],
    ['the fragment goes, the empty query stays', 'https://h/p?#f', 'https://h/p?'],
    ['userinfo with an @ in it is stripped', 'https://a@b:c@h/p', 'https://h/p'],
  ])('%s', (_rule, input, targetUri) => {
    expect(canonicalizeUrl(input).targetUri).toBe(targetUri);
  });

  it.each([
    ['a relative URL', '/adcp/create_media_buy'],
    ['a non-http scheme', 'ftp://h/p'],
    ['a port that is not a number', 'https://h:44x/p'],
    ['a raw space in the path', 'https://h/a b'],
    ['a raw non-ASCII character in the path', 'https://h/caf\u00e9'],
    ['a stray % in the query', 'https://h/p?x=%zz'],
    ['text after an IPv6 literal', 'https://[::1]x/p'],
    ['a bracketed host that is not IPv6', 'https://[example.com]/p'],
    ['a host with a character a reg-name cannot hold', 'https://ex"ample.com/p'],
  ])('rejects %s', (_what, input) => {
    expect(() => canonicalizeUrl(input)).toThrow(expect.objectContaining({ reason: 'malformed' }));
  });

  it('converts a U-label host for a signer and refuses it for a verifier', () => {
    expect(canonicalizeUrl('https://b\u00fccher.example/p').authority).toBe('xn--bcher-kva.example');
    expect(() => canonicalizeUrl('https://b\u00fccher.example/p', { unicodeHost: 'reject' })).toThrow(
      expect.objectContaining({ reason: 'non_ascii_host' }),
    );
  });

  it('exposes scheme, path and query separately', () => {
    expect(canonicalizeUrl('HTTPS://H/a/./b?x=1#f')).toEqual({
      scheme: 'https',
      authority: 'h',
      path: '/a/b',
      query: 'x=1',
      targetUri: 'https://h/a/b?x=1',
    });
    expect(canonicalizeUrl('https://h').query).toBeUndefined();
  });

  it('removes dot segments per RFC 3986 §5.2.4 examples', () => {
    expect(removeDotSegments('/a/b/c/./../../g')).toBe('/a/g');
    expect(removeDotSegments('mid/content=5/../6')).toBe('mid/6');
    expect(removeDotSegments('/..')).toBe('/');
    expect(removeDotSegments('.')).toBe('');
    expect(removeDotSegments('./a')).toBe('a');
  });
});
