/**
 * The RFC 9110 §11.6.1 WWW-Authenticate parser (transport/www-authenticate.ts):
 * several challenges, token68, auth-params with token or quoted-string values,
 * escapes, case-insensitive names, empty list elements, and where a malformed
 * header stops following the grammar.
 */
import { describe, expect, it } from 'vitest';
import { formatChallenge, parseWwwAuthenticate } from '../../src/transport/www-authenticate.js';

describe('parseWwwAuthenticate', () => {
  it('reads several challenges with auth-params, quoted strings holding commas and escaped quotes', () => {
    expect(
      parseWwwAuthenticate(
        'Bearer realm="a, b", error="invalid_token", error_description="say \\"hi\\"", Basic realm="x", charset="UTF-8"',
      ),
    ).toEqual({
      challenges: [
        { scheme: 'Bearer', params: { realm: 'a, b', error: 'invalid_token', error_description: 'say "hi"' } },
        { scheme: 'Basic', params: { realm: 'x', charset: 'UTF-8' } },
      ],
    });
  });

  it('reads token68 (with = padding), bare schemes, token values, BWS around "=" and lower-cases param names', () => {
    expect(
      parseWwwAuthenticate('Negotiate YWxhZGRpbjpvcGVuc2VzYW1l==, Newauth, Custom REALM = tok , Other abc='),
    ).toEqual({
      challenges: [
        { scheme: 'Negotiate', params: {}, token68: 'YWxhZGRpbjpvcGVuc2VzYW1l==' },
        { scheme: 'Newauth', params: {} },
        { scheme: 'Custom', params: { realm: 'tok' } },
        { scheme: 'Other', params: {}, token68: 'abc=' },
      ],
    });
  });

  it('treats several header lines and empty list elements as one list', () => {
    expect(parseWwwAuthenticate([', Bearer realm="r",, ', 'Basic']).challenges.map((c) => c.scheme)).toEqual([
      'Bearer',
      'Basic',
    ]);
  });

  it.each([
    [
      'an unterminated quoted string',
      'Bearer realm="abc',
      /unterminated quoted string for auth-param "realm" at character 14/,
    ],
    [
      'a missing comma between params',
      'Bearer realm="a" error="x"',
      /expected "," after an auth-param at character 18/,
    ],
    ['a repeated param', 'Bearer realm="a", Realm="b"', /auth-param "Realm" repeated in the Bearer challenge/],
    ['a scheme glued to a quote', 'Bearer"x"', /expected a space after the auth scheme "Bearer"/],
  ])('says where %s breaks the grammar, keeping the challenges before it', (_what, header, error) => {
    const parsed = parseWwwAuthenticate(header);
    expect(parsed.error).toMatch(error);
    expect(parsed.challenges[0]?.scheme).toBe('Bearer');
  });

  it('formats a challenge back, re-escaping quotes', () => {
    expect(formatChallenge({ scheme: 'Bearer', params: { realm: 'a"b' } })).toBe('Bearer realm="a\\"b"');
    expect(formatChallenge({ scheme: 'Basic', params: {}, token68: 'abc==' })).toBe('Basic abc==');
  });
});
