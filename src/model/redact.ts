/**
 * The runner output contract's security rules (runner-output-contract.yaml >
 * security), applied to every record, message and file vitest-adcp writes:
 * payload redaction by key name, a response-header allowlist, and fencing of
 * agent-controlled strings in rendered output.
 */
import { randomBytes } from 'node:crypto';
import { setOwn } from './path.js';

/** The contract's minimum redaction floor (payload_redaction.pattern), case-insensitive, any depth. */
export const REDACTED_KEY_PATTERN =
  /^(authorization|credentials?|token|api[_-]?key|password|secret|client[_-]secret|refresh[_-]token|access[_-]token|bearer|session[_-]token|offering[_-]token|cookie|set[_-]cookie)$/i;

export const REDACTED = '[redacted]';

/** security.response_headers.allowlist: anything else is dropped, not redacted. */
const RESPONSE_HEADER_ALLOWLIST: ReadonlySet<string> = new Set([
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
const MAX_RECORD_DEPTH = 64;
const TOO_DEEP = `[cut: nested deeper than ${MAX_RECORD_DEPTH} levels]`;

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
export function filterResponseHeaders(
  headers: Iterable<[string, string]> | Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (!headers) return undefined;
  const entries =
    Symbol.iterator in Object(headers) ? [...(headers as Iterable<[string, string]>)] : Object.entries(headers);
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
 * Every spelling of a secret that an output can carry: the value itself, JSON-escaped once and twice (a string in a
 * record; a string inside JSON text, as MCP `content[].text`), URL-encoded (both `encodeURIComponent` and form
 * encoding), and `\u`-escaped throughout (JSON text may spell any character so; JSON text with only some escaped is
 * parsed and scrubbed by {@link scrubSecretsDeep}). Longest first, so a longer spelling is replaced whole.
 */
export function secretForms(secrets: readonly string[]): string[] {
  // Every record, message and warning of a step is scrubbed with the run's same secret list: spell it out once.
  const key = secrets.join('\0');
  if (lastForms?.key === key) return lastForms.forms;
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < 4) continue;
    const once = escapeForJson(secret);
    const uLower = secret.split('').map(unicodeEscape).join('');
    for (const form of [
      secret,
      once,
      escapeForJson(once),
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
      uLower,
      uLower.toUpperCase().replace(/\\U/g, '\\u'),
    ]) {
      if (form.length >= 4) forms.add(form);
    }
    for (const form of [...forms]) if (form.startsWith('\\u')) forms.add(escapeForJson(form));
  }
  const sorted = [...forms].sort((a, b) => b.length - a.length);
  lastForms = { key, forms: sorted };
  return sorted;
}
let lastForms: { key: string; forms: string[] } | undefined;

/**
 * Replaces any occurrence of a known secret (the configured token, a test-kit key, the Basic header we built) in free
 * text — e.g. an error message an agent echoed back —, in every spelling {@link secretForms} knows.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  return scrubForms(text, secretForms(secrets));
}

function scrubForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
  return out;
}

/**
 * `scrubSecrets` over every string of a JSON value, keys included: a scrubbed copy (the value itself when there are no
 * secrets). A string that holds JSON (MCP `content[].text`, an A2A text part) is also parsed and scrubbed inside, and
 * written again when that found a secret: JSON may spell any character as `\uXXXX`, which no list of spellings covers.
 */
export function scrubSecretsDeep<T>(value: T, secrets: readonly string[]): T {
  const forms = secretForms(secrets);
  if (forms.length === 0) return value;
  return scrubValue(value, forms, 0) as T;
}

function scrubValue(value: unknown, forms: readonly string[], depth: number): unknown {
  if (typeof value === 'string') return scrubString(value, forms, depth);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_SCRUB_DEPTH) {
    // Deeper than any record is kept (records are cut at MAX_RECORD_DEPTH): scrub its serialised spelling instead.
    try {
      return JSON.parse(
        scrubForms(
          JSON.stringify(value) ?? 'null',
          forms.flatMap((f) => [escapeForJson(f), f]),
        ),
      );
    } catch {
      return TOO_DEEP;
    }
  }
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, forms, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>))
    setOwn(out, scrubForms(key, forms), scrubValue(inner, forms, depth + 1));
  return out;
}

const MAX_SCRUB_DEPTH = 256;

function scrubString(text: string, forms: readonly string[], depth: number): string {
  const scrubbed = scrubForms(text, forms);
  const trimmed = scrubbed.trimStart();
  // Without a `\u` or `\/` escape, every spelling of a secret in JSON text is one of secretForms' (escaped once, twice).
  if (
    !(trimmed.startsWith('{') || trimmed.startsWith('[') || trimmed.startsWith('"')) ||
    !/\\[u/]/.test(scrubbed) ||
    depth > MAX_SCRUB_DEPTH
  )
    return scrubbed;
  let parsed: unknown;
  try {
    parsed = JSON.parse(scrubbed);
  } catch {
    return scrubbed;
  }
  const inner = scrubValue(parsed, forms, depth + 1);
  try {
    const after = JSON.stringify(inner);
    return after === JSON.stringify(parsed) ? scrubbed : after;
  } catch {
    return TOO_DEEP;
  }
}

function escapeForJson(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** `Basic base64(username:password)`, as transport/types.ts sends it: the base64 and the whole header value. */
export function basicAuthForms(username: string, password: string): string[] {
  const encoded = Buffer.from(`${username}:${password}`).toString('base64');
  return [`Basic ${encoded}`, encoded];
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
  for (const [name, value] of parsed.searchParams)
    if (REDACTED_KEY_PATTERN.test(name) && value) found.push(value, encodeURIComponent(value));
  return [...new Set(found)];
}

/**
 * Fences an agent-controlled string for rendered output (terminal, markdown,
 * summaries fed to an LLM) with a per-call nonce, so a hostile message cannot
 * pose as runner text or close the fence early (security.rendered_output_fencing).
 */
export function fence(untrusted: string, label = 'agent output'): string {
  untrusted = sanitizeOutput(untrusted);
  const nonce = randomBytes(6).toString('hex');
  if (!untrusted.includes('\n') && untrusted.length <= 200)
    return `<<${label} ${nonce}>> ${untrusted} <<end ${nonce}>>`;
  return `<<${label} ${nonce}>>\n${untrusted}\n<<end ${nonce}>>`;
}

/**
 * The output sanitiser: every line vitest-adcp prints or writes (terminal messages, failure text, warnings and
 * annotations, test titles, cached messages, the markdown and HTML reports) goes through it.
 *
 * - C0/C1 control characters (but newline and tab), DEL and the Unicode bidirectional overrides are written as visible
 *   `\u{…}` escapes: agent text must never clear the screen, move the cursor, set the clipboard (OSC 52), hide the
 *   summary (`ESC[8m`) or reorder what the user reads.
 * - A line that a CI log parser would read as a command is neutralised: `::` at the start of any line (after leading
 *   whitespace; GitHub Actions' `::error …::`, `::add-mask::`, `::stop-commands::`) is written `\u{3a}:`, and `##[`
 *   (GitHub's and Azure's older form) and `##vso[` (Azure Pipelines), anywhere in a line, `\u{23}#[` and
 *   `\u{23}#vso[` — the same `\u{…}` notation as control characters, readable, and no command to any parser.
 *
 * Idempotent: its output contains nothing it would change again.
 */
export function sanitizeOutput(text: string): string {
  return neutraliseCommands(text.replace(CONTROL, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`));
}

/** {@link sanitizeOutput} for text that must stay on one line (a test title): newline and tab escaped too. */
export function sanitizeLine(text: string): string {
  return sanitizeOutput(text).replace(/[\n\t]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/**
 * Only the CI-command half of {@link sanitizeOutput}, for text that carries our own styling (Vitest's coloured diff):
 * `::` at a line start (after whitespace and colour codes) and `##[` / `##vso[` anywhere.
 */
export function neutraliseCommands(text: string): string {
  return text.replace(COMMAND_LINE_START, '$1\\u{3a}:').replace(LEGACY_COMMAND, '\\u{23}#');
}

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// A line start (the text's start counts: a fragment may be printed at the start of a line), then whitespace or SGR
// colour codes (the runner's parser skips leading whitespace), then `::`.
const COMMAND_LINE_START = /((?:^|[\n\r\u0085\u2028\u2029])(?:[^\S\n\r\u2028\u2029]|\u001b\[[0-9;]*m)*)::/g;
const LEGACY_COMMAND = /##(?=\[|vso\[)/gi;

/**
 * JSON for a report file with the same data, but no character in it that a terminal or viewer acts on: JSON.stringify
 * escapes C0 controls, but writes DEL, C1 controls (U+009B is a CSI to many terminals), bidi overrides and the line
 * separators raw — and `cat report.json` is a terminal. They can only occur inside strings, where `\uXXXX` means the same.
 */
export function stringifyInert(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? 'null').replace(INERT, unicodeEscape);
}

/** One UTF-16 code unit as the `\uXXXX` escape (lower-case hex) JSON and JavaScript string literals read back as it. */
export function unicodeEscape(unit: string): string {
  return `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

const INERT = /[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** `sanitizeOutput` over every string of a value (keys included): for values a test framework prints raw, like a diff. */
export function escapeControlDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return sanitizeOutput(value) as T;
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => escapeControlDeep(item, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>))
    setOwn(out, sanitizeOutput(key), escapeControlDeep(inner, depth + 1));
  return out as T;
}
