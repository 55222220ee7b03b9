import { describe, expect, it } from 'vitest';
import { signatureChallenge, signatureErrorCode } from '../../src/signing/index.js';

describe('WWW-Authenticate', () => {
  it('writes the bare Signature challenge the profile asks for', () => {
    expect(signatureChallenge('webhook_signature_invalid')).toBe('Signature error="webhook_signature_invalid"');
  });

  it.each([
    ['the profile’s own form', 'Signature error="request_signature_replayed"', 'request_signature_replayed'],
    [
      'another challenge first, with a comma in its quoted realm',
      'Bearer realm="a, b", Signature error="request_signature_invalid"',
      'request_signature_invalid',
    ],
    [
      'extra parameters around error, any case',
      'signature realm="x", ERROR=request_signature_tag_invalid, foo="bar"',
      'request_signature_tag_invalid',
    ],
    ['a token68 challenge before it', 'Basic YWxhZGRpbjpvcGVuc2VzYW1l==, Signature error="x"', 'x'],
    ['several header lines', ['Bearer', 'Signature error="y"'], 'y'],
    ['an escaped quote in the value', 'Signature error="a\\"b"', 'a"b'],
  ])('reads the error code from %s', (_what, header, code) => {
    expect(signatureErrorCode(header)).toBe(code);
  });

  it.each([
    ['no header', undefined],
    ['only a Bearer challenge', 'Bearer error="invalid_token"'],
    ['a Signature challenge without error', 'Signature realm="x"'],
    ['error in another challenge after a Signature one', 'Signature realm="x", Bearer error="invalid_token"'],
  ])('finds nothing in %s', (_what, header) => {
    expect(signatureErrorCode(header)).toBeUndefined();
  });
});
