/**
 * Diagnostics: how the loader says what is wrong, where, and what to do.
 * One line per problem, `file:line:col: [rule] message (hint)`, the shape
 * editors and terminals turn into clickable links.
 */
import type { Diagnostic, SourceLocation } from '../model/storyboard.js';

export type Severity = Diagnostic['severity'];

/** Collects diagnostics for one file. */
export class DiagnosticSink {
  readonly items: Diagnostic[] = [];

  constructor(readonly file: string) {}

  error(rule: string, at: SourceLocation, message: string, hint?: string): void {
    this.add('error', rule, at, message, hint);
  }

  warning(rule: string, at: SourceLocation, message: string, hint?: string): void {
    this.add('warning', rule, at, message, hint);
  }

  add(severity: Severity, rule: string, at: SourceLocation, message: string, hint?: string): void {
    const d: Diagnostic = { severity, rule, message, file: this.file, line: at.line, column: at.column };
    if (hint) d.hint = hint;
    this.items.push(d);
  }
}

/**
 * Errors first, then warnings; each group in file order. The first entry is
 * the primary problem (the one a one-line error message shows).
 */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const rank = (d: Diagnostic) => (d.severity === 'error' ? 0 : 1);
  return [...diagnostics].sort((a, b) => rank(a) - rank(b) || a.line - b.line || a.column - b.column);
}

export function formatDiagnostic(d: Diagnostic): string {
  const hint = d.hint ? ` (${d.hint})` : '';
  const prefix = d.severity === 'warning' ? 'warning: ' : '';
  return `${d.file}:${d.line}:${d.column}: ${prefix}[${d.rule}] ${d.message}${hint}`;
}

/**
 * Thrown when a storyboard or test kit cannot be used. The message is the
 * primary error on the first line, then the others (so a Vitest failure shows
 * everything to fix in one run); `diagnostics` keeps them structured.
 */
export class StoryboardLoadError extends Error {
  readonly diagnostics: Diagnostic[];

  constructor(diagnostics: readonly Diagnostic[]) {
    const sorted = sortDiagnostics(diagnostics);
    const errors = sorted.filter((d) => d.severity === 'error');
    super(describeErrors(errors.length > 0 ? errors : sorted));
    this.name = 'StoryboardLoadError';
    this.diagnostics = sorted;
  }
}

function describeErrors(errors: readonly Diagnostic[]): string {
  const [first, ...rest] = errors;
  if (!first) return 'storyboard could not be loaded';
  if (rest.length === 0) return formatDiagnostic(first);
  const more = `${rest.length} more error${rest.length === 1 ? '' : 's'}`;
  return [`${formatDiagnostic(first)} (+${more})`, ...rest.map((d) => `  ${formatDiagnostic(d)}`)].join('\n');
}
