/**
 * RFC 8941 Structured Field parsing with the AdCP profile's stricter rules
 * layered on top of the `structured-headers` library, which does the grammar:
 *
 * - duplicate dictionary keys and duplicate parameters are rejected, where
 *   RFC 8941 §3.2 lets a parser keep the last one (a proxy could otherwise
 *   smuggle a second, weaker `sig1` or `tag` past a verifier that reads the
 *   first — request-signing negative vector 021);
 * - byte sequences (`Signature`, `Content-Digest`) are base64url without
 *   padding in AdCP, not RFC 8941's standard base64; standard base64 is still
 *   read for interop, and a token that mixes both alphabets is rejected
 *   (webhook-signing negative vector 021).
 *
 * The raw-text scans below only run on input the library has already
 * accepted (or, for the alphabet rewrite, only touch byte-sequence bodies),
 * so they can rely on the grammar: outside a quoted string, a comma always
 * separates dictionary members and a semicolon always starts a parameter.
 */
import { ParseError, parseDictionary, type Dictionary } from 'structured-headers';

/** A header value that is not a well-formed Structured Field under the AdCP profile. */
export class StructuredFieldError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StructuredFieldError';
  }
}

/** A dictionary together with the raw text of each member, for the checks the library cannot make. */
export interface ParsedDictionary {
  dictionary: Dictionary;
  /** The source text of each member (`key=value;params`), by key. */
  rawMembers: Map<string, string>;
}

/**
 * Splits `input` at every `separator` outside a quoted string. Quoted strings
 * (and display strings, which are quoted too) are the only places the two
 * separators can appear inside a valid structured field.
 */
function splitOutsideQuotes(input: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') {
      quoted = true;
    } else if (ch === separator) {
      parts.push(input.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(input.slice(start));
  return parts;
}

const KEY_AT_START = /^\s*([a-z*][a-z0-9_\-.*]*)/;

/**
 * Parses an RFC 8941 Dictionary, rejecting it when a key appears more than
 * once (RFC 8941 would keep the last; the AdCP profile treats it as malformed).
 */
export function parseStrictDictionary(value: string): ParsedDictionary {
  let dictionary: Dictionary;
  try {
    dictionary = parseDictionary(value);
  } catch (error) {
    if (error instanceof ParseError) throw new StructuredFieldError(error.message);
    throw error;
  }
  const rawMembers = new Map<string, string>();
  for (const member of splitOutsideQuotes(value, ',')) {
    const key = KEY_AT_START.exec(member)?.[1];
    if (key === undefined) continue; // cannot happen on input the library accepted
    if (rawMembers.has(key)) throw new StructuredFieldError(`the dictionary has the key "${key}" more than once`);
    rawMembers.set(key, member.trim());
  }
  return { dictionary, rawMembers };
}

/**
 * The parameters written after an inner list, in order, as raw
 * `[name, valueText]` pairs (`valueText` is `undefined` for a bare boolean
 * parameter). `member` is the raw text of one dictionary member whose value
 * is an inner list, e.g. `sig1=("@method");created=1;keyid="k"`.
 */
export function rawInnerListParameters(member: string): [string, string | undefined][] {
  // Skip to the end of the inner list; its `)` is the first one outside a quoted string.
  let quoted = false;
  let end = -1;
  for (let i = 0; i < member.length && end < 0; i++) {
    const ch = member[i];
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === ')') end = i;
  }
  if (end < 0) return [];
  return splitOutsideQuotes(member.slice(end + 1), ';')
    .slice(1)
    .map((parameter) => {
      const eq = parameter.indexOf('=');
      return eq < 0 ? [parameter.trim(), undefined] : [parameter.slice(0, eq).trim(), parameter.slice(eq + 1).trim()];
    });
}

/**
 * Rejects the parameter list when a name repeats (RFC 8941 §3.1.2 would keep
 * the last; the AdCP profile requires, e.g., `tag` exactly once).
 */
export function assertUniqueParameters(parameters: readonly [string, string | undefined][]): void {
  const seen = new Set<string>();
  for (const [name] of parameters) {
    if (seen.has(name)) throw new StructuredFieldError(`the parameter "${name}" appears more than once`);
    seen.add(name);
  }
}

/**
 * Rewrites every byte sequence (`:…:`) in `value` from base64url to standard
 * base64 so the RFC 8941 parser accepts it, rejecting a byte sequence that
 * mixes the two alphabets: `A+B-` decodes to different bytes depending on
 * which alphabet a verifier assumes, which lets an attacker stage a digest or
 * signature that one verifier accepts and another rejects.
 */
function toStandardBase64ByteSequences(value: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (quoted) {
      out += ch;
      if (ch === '\\' && i + 1 < value.length) out += value[++i];
      else if (ch === '"') quoted = false;
      continue;
    }
    if (ch === '"') quoted = true;
    // A byte sequence starts a bare item: right after "=" (member or parameter
    // value) or, inside an inner list, after "(" or a space. A ":" anywhere
    // else belongs to a token such as `a:b`.
    const startsBareItem = i > 0 && /[=( \t]/.test(value[i - 1]!);
    if (ch !== ':' || !startsBareItem) {
      out += ch;
      continue;
    }
    const close = value.indexOf(':', i + 1);
    if (close < 0) return out + value.slice(i); // unterminated: the parser reports it
    const body = value.slice(i + 1, close);
    if (/[-_]/.test(body) && /[+/=]/.test(body)) {
      throw new StructuredFieldError('a byte sequence mixes the base64url and standard base64 alphabets');
    }
    out += `:${body.replace(/-/g, '+').replace(/_/g, '/')}:`;
    i = close;
  }
  return out;
}

/**
 * Parses a Dictionary whose members are byte sequences (`Signature`,
 * `Content-Digest`) under the AdCP encoding rules: base64url without padding,
 * standard base64 accepted for interop, mixed alphabets and duplicate keys
 * rejected.
 */
export function parseBinaryDictionary(value: string): ParsedDictionary {
  return parseStrictDictionary(toStandardBase64ByteSequences(value));
}

/** Encodes bytes as base64url without padding, the AdCP encoding of `Signature` (and optionally `Content-Digest`) values. */
export function encodeBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}
