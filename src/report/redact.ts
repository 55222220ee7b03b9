/**
 * The runner output contract's security rules (runner-output-contract.yaml >
 * security), applied to every record, message and file vitest-adcp writes:
 * payload redaction by key name, a response-header allowlist, and fencing of
 * agent-controlled strings in rendered output.
 */
import { randomBytes } from 'node:crypto';
import { setOwn } from '../engine/path.js';

/** The contract's minimum redaction floor (payload_redaction.pattern), case-insensitive, any depth. */
export const REDACTED_KEY_PATTERN =
  /^(authorization|credentials?|token|api[_-]?key|password|secret|client[_-]secret|refresh[_-]token|access[_-]token|bearer|session[_-]token|offering[_-]token|cookie|set[_-]cookie)$/i;

export const REDACTED = '[redacted]';

/** security.response_headers.allowlist: anything else is dropped, not redacted. */
export const RESPONSE_HEADER_ALLOWLIST: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'www-authenticate',
  'location',
  'retry-after',
  'x-request-id',
  'x-correlation-id',
]);

/**
 * Returns a deep copy of `value` with every secret-bearing key's value replaced
 * by "[redacted]". Strings that hold JSON (MCP `content[].text`, A2A text
 * parts) are redacted inside too: the same secrets travel there, serialised.
 */
export function redactPayload<T>(value: T, seen = new WeakSet<object>(), depth = 0): T {
  if (typeof value === 'string') return redactJsonString(value, depth) as T;
  if (value === null || typeof value !== 'object') return value;
  // Records cross process boundaries and get printed: an agent's 2,000-level nesting must not overflow a stack on the way.
  if (depth >= MAX_RECORD_DEPTH) return TOO_DEEP as T;
  if (seen.has(value as object)) return '[circular]' as T;
  seen.add(value as object);
  if (Array.isArray(value)) return value.map((item) => redactPayload(item, seen, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    setOwn(out, key, REDACTED_KEY_PATTERN.test(key) ? REDACTED : redactPayload(inner, seen, depth + 1));
  }
  return out as T;
}

/** How deep a recorded value may nest; deeper parts are replaced by {@link TOO_DEEP}. */
export const MAX_RECORD_DEPTH = 64;
export const TOO_DEEP = `[cut: nested deeper than ${MAX_RECORD_DEPTH} levels]`;

function redactJsonString(text: string, depth: number): string {
  const trimmed = text.trimStart();
  if (!(trimmed.startsWith('{') || trimmed.startsWith('['))) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const redacted = redactPayload(parsed, new WeakSet<object>(), depth);
  try {
    const before = JSON.stringify(parsed);
    const after = JSON.stringify(redacted);
    return before === after ? text : after;
  } catch {
    return TOO_DEEP; // nested past what V8 can serialise: nothing of it can be shown
  }
}

/** Keeps only allowlisted response headers (names lower-cased). */
export function filterResponseHeaders(headers: Iterable<[string, string]> | Record<string, string> | undefined): Record<string, string> | undefined {
  if (!headers) return undefined;
  const entries = Symbol.iterator in Object(headers) ? [...(headers as Iterable<[string, string]>)] : Object.entries(headers);
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (RESPONSE_HEADER_ALLOWLIST.has(lower)) out[lower] = value;
  }
  return out;
}

/**
 * Request headers, if ever recorded: secret-bearing names redacted, every other
 * header through the response allowlist (security.request_headers).
 */
export function redactRequestHeaders(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!headers) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (REDACTED_KEY_PATTERN.test(lower)) out[lower] = REDACTED;
    else if (RESPONSE_HEADER_ALLOWLIST.has(lower)) out[lower] = value;
  }
  return out;
}

/**
 * Replaces any literal occurrence of a known secret (the configured token, a
 * test-kit key) in free text — e.g. an error message an agent echoed back.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** `scrubSecrets` over every string of a JSON value: a scrubbed copy (the value itself when there are no secrets). */
export function scrubSecretsDeep<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  // A secret appears escaped once in the serialised record, and twice inside a
  // string that itself holds JSON (MCP `content[].text`): scrub both spellings.
  const once = secrets.map(escapeForJson);
  const twice = once.map(escapeForJson);
  return JSON.parse(scrubSecrets(JSON.stringify(value) ?? 'null', [...new Set([...twice, ...once])]));
}

function escapeForJson(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/**
 * Secrets written into an agent URL: the userinfo password and the values of
 * query parameters named like credentials (`?api_key=…`, `?token=…`).
 */
export function secretsInUrl(url: string | undefined): string[] {
  if (!url) return [];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const found: string[] = [];
  if (parsed.password) found.push(parsed.password, decodeURIComponent(parsed.password));
  for (const [name, value] of parsed.searchParams) if (REDACTED_KEY_PATTERN.test(name) && value) found.push(value, encodeURIComponent(value));
  return [...new Set(found)];
}

/**
 * Fences an agent-controlled string for rendered output (terminal, markdown,
 * summaries fed to an LLM) with a per-call nonce, so a hostile message cannot
 * pose as runner text or close the fence early (security.rendered_output_fencing).
 */
export function fence(untrusted: string, label = 'agent output'): string {
  untrusted = escapeControl(untrusted);
  const nonce = randomBytes(6).toString('hex');
  if (!untrusted.includes('\n') && untrusted.length <= 200) return `<<${label} ${nonce}>> ${untrusted} <<end ${nonce}>>`;
  return `<<${label} ${nonce}>>\n${untrusted}\n<<end ${nonce}>>`;
}

/**
 * C0/C1 control characters (but newline and tab), DEL and the Unicode
 * bidirectional overrides, written as visible `\u{…}` escapes: agent text
 * must never clear the screen, move the cursor, set the clipboard (OSC 52),
 * hide the summary (`ESC[8m`) or reorder what the user reads.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON for a report file with the same data, but no character in it that a terminal or viewer acts on: JSON.stringify
 * escapes C0 controls, but writes DEL, C1 controls (U+009B is a CSI to many terminals), bidi overrides and the line
 * separators raw — and `cat report.json` is a terminal. They can only occur inside strings, where `\uXXXX` means the same.
 */
export function stringifyInert(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? 'null').replace(INERT, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// eslint-disable-next-line no-control-regex
const INERT = /[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** `escapeControl` over every string of a value (keys included): for values a test framework prints raw, like a diff. */
export function escapeControlDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return escapeControl(value) as T;
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => escapeControlDeep(item, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) setOwn(out, escapeControl(key), escapeControlDeep(inner, depth + 1));
  return out as T;
}
