/**
 * One enrichment, as the user reads it: the field (dot/bracket path, as the
 * storyboards' own `path:` fields are written), the value sent, and why. Every
 * change the runner makes to an authored request becomes one of these, as a
 * step warning (terminal, JUnit, the contract report): nothing is added or
 * replaced silently (issue 19 > "Shown, never silent").
 */
import { redactPayload } from '../../model/redact.js';

export interface Enrichment {
  /** Where in the request, e.g. `packages[0].bid_price`. */
  path: string;
  value: unknown;
  /** The authored value it replaced; absent when the field was added. */
  replaced?: unknown;
  reason: string;
}

/**
 * `packages[0].bid_price = 7.5 added: <reason>` / `start_time = "…" replaced "…": <reason>`. Values go through the
 * record's key-based redaction first: a warning must not quote what the recorded request redacts.
 */
export function describeEnrichment(e: Enrichment): string {
  // A fill the builder could not make: nothing was sent for it, so there is no value to quote.
  if (e.value === undefined) return `${e.path} not added: ${e.reason}`;
  const value = JSON.stringify(redactPayload(e.value)) ?? String(e.value);
  const how =
    'replaced' in e && e.replaced !== undefined ? `replaced ${JSON.stringify(redactPayload(e.replaced))}` : 'added';
  return `${e.path} = ${clip(value)} ${how}: ${e.reason}`;
}

/** A path segment appended to a dot/bracket path. */
export function pathJoin(at: string, key: string | number): string {
  if (typeof key === 'number') return `${at}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? (at ? `${at}.${key}` : key) : `${at}[${JSON.stringify(key)}]`;
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
