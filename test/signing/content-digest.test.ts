import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkContentDigest,
  computeContentDigest,
  parseContentDigest,
  StructuredFieldError,
} from '../../src/signing/index.js';
import { VECTOR_SETS } from './harness.js';

const BODY = '{"plan_id":"plan_001"}';
const sha256 = createHash('sha256').update(BODY).digest();

describe('computeContentDigest', () => {
  it.each(VECTOR_SETS.flatMap((set) => set.positive).filter((vector) => 'Content-Digest' in vector.request.headers))(
    'reproduces the Content-Digest of $kind positive $id',
    (vector) => {
      expect(computeContentDigest(vector.request.body)).toBe(vector.request.headers['Content-Digest']);
    },
  );

  it('writes sha-512 and base64url on request, and hashes bytes as given', () => {
    expect(computeContentDigest(BODY, { algorithm: 'sha-512' })).toBe(
      `sha-512=:${createHash('sha512').update(BODY).digest('base64')}:`,
    );
    expect(computeContentDigest(BODY, { encoding: 'base64url' })).toBe(`sha-256=:${sha256.toString('base64url')}:`);
    expect(computeContentDigest(Buffer.from(BODY))).toBe(computeContentDigest(BODY));
    expect(computeContentDigest(undefined)).toBe(computeContentDigest(''));
  });
});

describe('checkContentDigest', () => {
  it('accepts the body’s digest in either base64 alphabet, and ignores algorithms it does not know', () => {
    expect(checkContentDigest(`sha-256=:${sha256.toString('base64')}:`, BODY)).toEqual({
      ok: true,
      algorithms: ['sha-256'],
    });
    expect(checkContentDigest(`sha-256=:${sha256.toString('base64url')}:`, BODY)).toEqual({
      ok: true,
      algorithms: ['sha-256'],
    });
    expect(checkContentDigest(`md5=:AAAA:, ${computeContentDigest(BODY, { algorithm: 'sha-512' })}`, BODY)).toEqual({
      ok: true,
      algorithms: ['sha-512'],
    });
  });

  it('rejects another body, a wrong second algorithm, and a header with nothing it can check', () => {
    expect(checkContentDigest(computeContentDigest(BODY), `${BODY} `)).toMatchObject({
      ok: false,
      detail: expect.stringContaining('sha-256'),
    });
    expect(
      checkContentDigest(
        `${computeContentDigest(BODY)}, ${computeContentDigest('other', { algorithm: 'sha-512' })}`,
        BODY,
      ),
    ).toMatchObject({ ok: false, detail: expect.stringContaining('sha-512') });
    expect(checkContentDigest('md5=:AAAA:', BODY)).toMatchObject({ ok: false, detail: expect.stringContaining('md5') });
  });
});

describe('parseContentDigest', () => {
  it.each([
    [
      'a repeated algorithm (two values, which one was signed?)',
      `sha-256=:${sha256.toString('base64')}:, sha-256=:AAAA:`,
    ],
    ['mixed base64 alphabets in one value', 'sha-256=:A+B-AAAA:'],
    ['a value that is not a byte sequence', 'sha-256="abc"'],
    ['an unterminated byte sequence', 'sha-256=:AAAA'],
  ])('refuses %s', (_what, header) => {
    expect(() => parseContentDigest(header)).toThrow(StructuredFieldError);
  });

  it('reads every member', () => {
    expect([...parseContentDigest('sha-256=:AQID:, sha-512=:BAU_:').entries()]).toEqual([
      ['sha-256', new Uint8Array([1, 2, 3])],
      ['sha-512', new Uint8Array([4, 5, 63])],
    ]);
  });
});
