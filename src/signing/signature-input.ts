/**
 * The `Signature-Input` and `Signature` header fields (RFC 9421 §4): reading
 * one labelled signature out of them, and writing them.
 */
import {
  serializeInnerList,
  serializeItem,
  type BareItem,
  type InnerList,
  type Item,
  type Parameters,
} from 'structured-headers';
import {
  assertUniqueParameters,
  encodeBase64Url,
  parseBinaryDictionary,
  parseStrictDictionary,
  rawInnerListParameters,
  StructuredFieldError,
} from './structured-fields.js';

/** The signature parameters the AdCP profile defines (all six are required when verifying). */
export interface SignatureParams {
  /** Unix seconds. */
  created?: number;
  /** Unix seconds. */
  expires?: number;
  /** base64url, unpadded, at least 16 bytes of entropy. */
  nonce?: string;
  keyid?: string;
  /** RFC 9421 name: `ed25519` or `ecdsa-p256-sha256`. */
  alg?: string;
  /** `adcp/request-signing/v1` or `adcp/webhook-signing/v1`. */
  tag?: string;
}

/** One labelled signature's declaration, as read from `Signature-Input`. */
export interface ParsedSignatureInput {
  label: string;
  /**
   * Covered component identifiers, in order, e.g. `@method`, `content-type`.
   * A component written with parameters keeps them, serialized
   * (`"content-digest";sf`), so it never matches a plain name by accident.
   */
  components: string[];
  params: SignatureParams;
  /** The `@signature-params` value: the inner list re-serialized per RFC 9421 §2.3. */
  signatureParams: string;
}

/** The order our signer writes parameters in, which is also the order of every AdCP vector. */
const PARAM_ORDER = ['created', 'expires', 'nonce', 'keyid', 'alg', 'tag'] as const;
const INTEGER_PARAMS = new Set(['created', 'expires']);
const STRING_PARAMS = new Set(['nonce', 'keyid', 'alg', 'tag']);

/**
 * Reads the signature `label` from a `Signature-Input` value. Throws
 * {@link StructuredFieldError} when the field is not a valid Dictionary, has a
 * label twice, lacks `label`, the member is not an inner list of strings,
 * repeats a component or a parameter, or gives a known parameter the wrong
 * type (`keyid=foo` is a token, not the string RFC 9421 §2.3 requires).
 * Missing parameters are not an error here: the verifier reports them with
 * their own code.
 */
export function parseSignatureInput(header: string, label = 'sig1'): ParsedSignatureInput {
  const { dictionary, rawMembers } = parseStrictDictionary(header);
  const member = dictionary.get(label);
  if (member === undefined) {
    throw new StructuredFieldError(
      `Signature-Input has no "${label}" signature (it has: ${[...dictionary.keys()].join(', ') || 'none'})`,
    );
  }
  if (!Array.isArray(member[0]))
    throw new StructuredFieldError(`Signature-Input "${label}" is not a parenthesized list of components`);
  const innerList = member as InnerList;
  const components = innerList[0].map(([value, parameters]) => {
    if (typeof value !== 'string')
      throw new StructuredFieldError(`Signature-Input "${label}" lists a component that is not a quoted string`);
    return parameters.size === 0 ? value : serializeItem([value, parameters]);
  });
  const repeated = components.find((component, index) => components.indexOf(component) !== index);
  if (repeated !== undefined) throw new StructuredFieldError(`Signature-Input "${label}" covers "${repeated}" twice`);
  const rawParams = rawInnerListParameters(rawMembers.get(label) ?? '');
  assertUniqueParameters(rawParams);
  return {
    label,
    components,
    params: readParams(label, innerList[1], rawParams),
    signatureParams: serializeInnerList(innerList),
  };
}

function readParams(label: string, parameters: Parameters, raw: [string, string | undefined][]): SignatureParams {
  const params: Record<string, string | number> = {};
  for (const [name, value] of parameters) {
    if (INTEGER_PARAMS.has(name)) {
      // The library reads `1.0` as the number 1; only the raw text tells a decimal from an integer.
      const text = raw.find(([rawName]) => rawName === name)?.[1];
      if (typeof value !== 'number' || text === undefined || !/^-?\d+$/.test(text)) {
        throw new StructuredFieldError(`Signature-Input "${label}": "${name}" must be an integer`);
      }
      params[name] = value;
    } else if (STRING_PARAMS.has(name)) {
      if (typeof value !== 'string')
        throw new StructuredFieldError(`Signature-Input "${label}": "${name}" must be a quoted string`);
      params[name] = value;
    }
  }
  return params as SignatureParams;
}

/**
 * The `@signature-params` value (and `Signature-Input` member value) for
 * `components` and `params`: `("@method" …);created=…;…;tag="…"`, parameters
 * in the fixed order created, expires, nonce, keyid, alg, tag, absent ones
 * left out.
 */
export function serializeSignatureParams(components: readonly string[], params: SignatureParams): string {
  const items: Item[] = components.map((component) => [component, new Map()]);
  const parameters: Parameters = new Map();
  for (const name of PARAM_ORDER) {
    const value = params[name];
    if (value !== undefined) parameters.set(name, value satisfies BareItem);
  }
  return serializeInnerList([items, parameters]);
}

/** The `Signature` header value: `label=:base64url:` (AdCP writes the bytes base64url, unpadded). */
export function serializeSignature(label: string, signature: Uint8Array): string {
  return `${label}=:${encodeBase64Url(signature)}:`;
}

/**
 * The signature bytes of `label` in a `Signature` value. Throws
 * {@link StructuredFieldError} when the field is malformed, repeats a label,
 * mixes base64 alphabets, lacks `label`, or its value is not a byte sequence.
 */
export function parseSignature(header: string, label = 'sig1'): Uint8Array {
  const member = parseBinaryDictionary(header).dictionary.get(label);
  if (member === undefined) throw new StructuredFieldError(`Signature has no "${label}" value`);
  if (!(member[0] instanceof ArrayBuffer))
    throw new StructuredFieldError(`Signature "${label}" is not a byte sequence`);
  return new Uint8Array(member[0]);
}
