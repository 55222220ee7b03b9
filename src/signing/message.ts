/**
 * The HTTP message the signer and verifier work on, and case-insensitive
 * access to its header fields the way RFC 9421 §2.1 reads them.
 */

/**
 * Header fields as callers hold them: a plain record (a name may map to
 * several field lines) or a fetch `Headers` object. Names are
 * case-insensitive; two record keys that differ only in case are two field
 * lines of one field.
 */
export type HeaderInput = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** One HTTP request as it is (or will be) on the wire. */
export interface HttpMessage {
  method: string;
  /** The absolute request URL, as sent (or as received, rebuilt from scheme + Host + request target). */
  url: string;
  headers: HeaderInput;
  /** The exact body bytes; a string is taken as UTF-8. Absent or empty for no body. */
  body?: string | Uint8Array;
}

function isHeaders(headers: HeaderInput): headers is Headers {
  return typeof (headers as Headers).get === 'function' && typeof (headers as Headers).forEach === 'function';
}

/**
 * The field lines of header `name`, each trimmed, in order; `undefined` when
 * the field is absent. A `Headers` object has already merged its lines into
 * one comma-joined value, which is what it returns here as a single line.
 */
export function fieldLines(headers: HeaderInput, name: string): string[] | undefined {
  const lower = name.toLowerCase();
  if (isHeaders(headers)) {
    const value = headers.get(lower);
    return value === null ? undefined : [value.trim()];
  }
  const lines: string[] = [];
  let found = false;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== lower || value === undefined) continue;
    found = true;
    for (const line of typeof value === 'string' ? [value] : value) lines.push(line.trim());
  }
  return found ? lines : undefined;
}

/**
 * The field's value as RFC 9421 §2.1 puts it into a signature base: every
 * field line trimmed, joined with ", ". `undefined` when the field is absent.
 */
export function fieldValue(headers: HeaderInput, name: string): string | undefined {
  return fieldLines(headers, name)?.join(', ');
}

/** The body as bytes; a missing body is zero bytes. */
export function bodyBytes(body: HttpMessage['body']): Uint8Array {
  if (body === undefined) return new Uint8Array(0);
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}
