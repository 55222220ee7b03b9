/**
 * Patterns whose only wildcard is `*` (a controller's `endpoint_pattern`, Vitest's `--project` filters), and literal
 * text (a folder path), as RegExp sources.
 */

/** `text` as a RegExp source that matches exactly it. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `pattern` as an unanchored RegExp source: each `*` becomes `any`, everything else is literal. */
export function wildcardSource(pattern: string, any: string): string {
  return pattern.split('*').map(escapeRegExp).join(any);
}
