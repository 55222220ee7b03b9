/**
 * JSON parsing that refuses duplicate object keys — security.mdx, webhook
 * verifier checklist step 14 (`webhook_body_malformed`): two parsers can read
 * different values from `{"a":1,"a":2}`, and `JSON.parse` silently keeps the
 * last one. Also used for brand.json and JWKS documents, which are trust roots.
 */

export type StrictJson = { ok: true; value: unknown } | { ok: false; duplicateKey?: string; error: string };

export function parseStrictJson(text: string): StrictJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `not JSON: ${(error as Error).message}` };
  }
  const duplicate = firstDuplicateKey(text);
  if (duplicate !== undefined)
    return {
      ok: false,
      duplicateKey: duplicate,
      error: `duplicate object key ${JSON.stringify(sanitiseKey(duplicate))}`,
    };
  return { ok: true, value };
}

interface Frame {
  object: boolean;
  keys: Set<string>;
  expectKey: boolean;
}

/** The first key that repeats within one object, in a text already known to be valid JSON. */
function firstDuplicateKey(text: string): string | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') stack.push({ object: true, keys: new Set(), expectKey: true });
    else if (c === '[') stack.push({ object: false, keys: new Set(), expectKey: false });
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.object) top.expectKey = true;
    } else if (c === ':') {
      const top = stack[stack.length - 1];
      if (top) top.expectKey = false;
    } else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top?.object && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
      }
      i = j;
    }
  }
  return undefined;
}

/**
 * A key name safe to log (security.mdx step 14b): cut at the first
 * non-printable character, at most 32 bytes on a code-point boundary.
 */
function sanitiseKey(key: string): string {
  const printable = /^[\x20-\x7e\u00a0-\uffff]*/u.exec(key)![0];
  let out = '';
  for (const ch of printable) {
    if (Buffer.byteLength(out + ch) > 32) break;
    out += ch;
  }
  return out.length < key.length ? `${out}<sanitized:${Buffer.byteLength(key)}>` : out;
}
