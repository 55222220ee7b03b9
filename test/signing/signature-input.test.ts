import { describe, expect, it } from 'vitest';
import {
  parseSignature,
  parseSignatureInput,
  serializeSignatureParams,
  StructuredFieldError,
} from '../../src/signing/index.js';

const COMPONENTS = '("@method" "@target-uri" "@authority")';
const PARAMS = 'created=1;expires=2;nonce="n";keyid="k";alg="ed25519";tag="t"';

describe('parseSignatureInput', () => {
  it('reads the components, the six parameters and the re-serialized @signature-params of the chosen label', () => {
    const parsed = parseSignatureInput(`other=("@method");created=9, sig1=${COMPONENTS};${PARAMS};x=tok`);
    expect(parsed).toEqual({
      label: 'sig1',
      components: ['@method', '@target-uri', '@authority'],
      params: { created: 1, expires: 2, nonce: 'n', keyid: 'k', alg: 'ed25519', tag: 't' },
      signatureParams: `${COMPONENTS};${PARAMS};x=tok`,
    });
    expect(parseSignatureInput(`other=("@method");created=9, sig1=${COMPONENTS}`, 'other').params).toEqual({
      created: 9,
    });
  });

  it('re-serializes per RFC 8941, so optional whitespace does not change the signature base', () => {
    expect(parseSignatureInput(`sig1=( "@method"  "@path" );  created=1`).signatureParams).toBe(
      '("@method" "@path");created=1',
    );
  });

  it('keeps a parameterized component distinct from the plain name', () => {
    expect(parseSignatureInput('sig1=("content-digest";sf "@method")').components).toEqual([
      '"content-digest";sf',
      '@method',
    ]);
  });

  it.each([
    ['a label twice', `sig1=${COMPONENTS}, sig1=("@method")`],
    ['a parameter twice (two tags: which one did the signer mean?)', `sig1=${COMPONENTS};${PARAMS};tag="other"`],
    ['a component twice', 'sig1=("@method" "@method")'],
    ['a token where a string belongs', `sig1=${COMPONENTS};keyid=k`],
    ['a string where an integer belongs', `sig1=${COMPONENTS};created="1"`],
    ['a decimal where an integer belongs', `sig1=${COMPONENTS};created=1.0`],
    ['no sig1 label', `sig2=${COMPONENTS}`],
    ['a label that is not an inner list', 'sig1=this-is-not-valid'],
    ['a component that is not a string', 'sig1=(method)'],
    ['text that is no dictionary at all', 'this is not a dictionary'],
  ])('refuses %s', (_what, header) => {
    expect(() => parseSignatureInput(header)).toThrow(StructuredFieldError);
  });

  it('does not mistake a comma or semicolon inside a quoted string for structure', () => {
    expect(parseSignatureInput(`sig1=${COMPONENTS};nonce="a,b;c";tag="x, sig1=y"`).params).toEqual({
      nonce: 'a,b;c',
      tag: 'x, sig1=y',
    });
  });
});

describe('serializeSignatureParams', () => {
  it('writes parameters in the vectors’ order, whatever order they are given in, and leaves absent ones out', () => {
    expect(serializeSignatureParams(['@method'], { tag: 't', keyid: 'k', created: 1, nonce: 'n' })).toBe(
      '("@method");created=1;nonce="n";keyid="k";tag="t"',
    );
  });
});

describe('parseSignature', () => {
  it('reads base64url without padding and standard base64 to the same bytes', () => {
    expect(parseSignature('sig1=:-_8:')).toEqual(new Uint8Array([251, 255]));
    expect(parseSignature('sig1=:+/8=:')).toEqual(new Uint8Array([251, 255]));
    expect(parseSignature('sig2=:AA:, sig1=:AQ:')).toEqual(new Uint8Array([1]));
  });

  it.each([
    ['mixed alphabets', 'sig1=:A+B-CD:'],
    ['no value for the label', 'sig2=:AA:'],
    ['a value that is not a byte sequence', 'sig1="AA"'],
    ['the label twice', 'sig1=:AA:, sig1=:AQ:'],
    ['an impossible base64 length', 'sig1=:A:'],
  ])('refuses %s', (_what, header) => {
    expect(() => parseSignature(header)).toThrow(StructuredFieldError);
  });
});
