/**
 * Size and complexity bounds on a storyboard file, checked as early and as cheaply as each can be (issue 20, case 5:
 * a 50 MB file took 2.7 GB in the main process, 10^5 anchors 210 s in the parser, 90 aliases of a 1 MB anchor a 90 MB
 * request, 10^4 steps a run that never finished):
 *
 *   1. bytes — from the file's size before it is read (`fileBytesOverBound`), or from the text before it is parsed;
 *   2. anchors (`&name`) and aliases (`*name`) — counted by the YAML lexer, linear and without building a document,
 *      before the parser (whose cost grows faster than the number of anchors);
 *   3. expanded size — after parsing, the JSON size of the data with every alias written out, counted with a walk that
 *      stops at the bound (so an alias bomb costs at most the bound);
 *   4. phases and steps per storyboard — after parsing, before the schema and the authoring rules.
 *
 * Each violation is one located `storyboard_bound` error naming the bound, its value and the option to raise it. The
 * defaults are above ten times the largest value in the compliance corpus (@adcp/sdk 3.0.6 and 3.0.6.previous: 51 KB,
 * no anchor or alias, 41 KB expanded, 9 phases, 31 steps).
 */
import { statSync } from 'node:fs';
import type { DiagnosticSink } from './diagnostics.js';
import type { SourceMap } from './source-map.js';
import { yaml } from './yaml-lib.js';
import type { SourceLocation } from '../model/storyboard.js';

export interface StoryboardBounds {
  /** Largest storyboard file, in bytes. @default 524288 (512 KiB) */
  maxBytes?: number;
  /** Most YAML anchors (`&name`) in one file. @default 100 */
  maxAnchors?: number;
  /** Most YAML aliases (`*name`) in one file. @default 100 */
  maxAliases?: number;
  /** Largest size of the storyboard's data with every alias written out, in bytes of JSON. @default 2097152 (2 MiB) */
  maxExpandedBytes?: number;
  /** Most phases in one storyboard. @default 100 */
  maxPhases?: number;
  /** Most steps in one storyboard, all phases together. @default 500 */
  maxSteps?: number;
}

export const DEFAULT_STORYBOARD_BOUNDS: Readonly<Required<StoryboardBounds>> = Object.freeze({
  maxBytes: 512 * 1024,
  maxAnchors: 100,
  maxAliases: 100,
  maxExpandedBytes: 2 * 1024 * 1024,
  maxPhases: 100,
  maxSteps: 500,
});

/** The bounds to apply: the defaults, with each bound given replaced. */
export function resolveBounds(bounds: StoryboardBounds | undefined): Required<StoryboardBounds> {
  const resolved = { ...DEFAULT_STORYBOARD_BOUNDS };
  for (const key of Object.keys(DEFAULT_STORYBOARD_BOUNDS) as (keyof StoryboardBounds)[]) {
    const value = bounds?.[key];
    if (value !== undefined) resolved[key] = value;
  }
  return resolved;
}

const START: SourceLocation = { line: 1, column: 1 };

function hint(bound: keyof StoryboardBounds): string {
  return `raise it with the option storyboardBounds: { ${bound}: … } of adcpStoryboards() (or of the Jest transformer) if the file is meant to be this big`;
}

function report(
  sink: DiagnosticSink,
  at: SourceLocation,
  bound: keyof StoryboardBounds,
  what: string,
  limit: number,
  unit = '',
): void {
  sink.error('storyboard_bound', at, `${what}, over the bound ${bound} = ${limit}${unit}`, hint(bound));
}

/** The file's size in bytes when it is over `maxBytes` (read from the file system, not the file); otherwise undefined. */
export function fileBytesOverBound(file: string, bounds: StoryboardBounds | undefined): number | undefined {
  const { maxBytes } = resolveBounds(bounds);
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return undefined; // Reading it says why (file_unreadable).
  }
  return size > maxBytes ? size : undefined;
}

/** A file of `bytes` over the byte bound: the error, at the file's start (nothing of it is read). */
export function reportBytes(sink: DiagnosticSink, bytes: number, bounds: StoryboardBounds | undefined): void {
  report(sink, START, 'maxBytes', `the storyboard file is ${bytes} bytes`, resolveBounds(bounds).maxBytes, ' bytes');
}

/**
 * Bounds that hold on the text, before it is parsed: its size, then its anchors and aliases (counted by the lexer, so
 * an `&` or `*` inside a quoted or block scalar is text, not an anchor). False when one is over (reported on `sink`).
 */
export function checkTextBounds(source: string, sink: DiagnosticSink, bounds: StoryboardBounds | undefined): boolean {
  const limits = resolveBounds(bounds);
  const bytes = Buffer.byteLength(source, 'utf8');
  if (bytes > limits.maxBytes) {
    reportBytes(sink, bytes, bounds);
    return false;
  }
  // Every anchor is written with an `&` and every alias with a `*`: a text with no more of those characters than the
  // bounds allow cannot be over them, and is not lexed twice (the parse lexes it again: a tenth of a compile).
  if (
    occurrences(source, '&', limits.maxAnchors) <= limits.maxAnchors &&
    occurrences(source, '*', limits.maxAliases) <= limits.maxAliases
  )
    return true;
  let anchors = 0;
  let aliases = 0;
  let offset = 0;
  for (const token of new (yaml().Lexer)().lex(source)) {
    const first = token.charCodeAt(0);
    if (first === 0x26 /* & */ && ++anchors > limits.maxAnchors) {
      report(
        sink,
        textLocation(source, offset),
        'maxAnchors',
        `the storyboard has more than ${limits.maxAnchors} YAML anchors (&name): anchor ${anchors} is here`,
        limits.maxAnchors,
      );
      return false;
    }
    if (first === 0x2a /* * */ && ++aliases > limits.maxAliases) {
      report(
        sink,
        textLocation(source, offset),
        'maxAliases',
        `the storyboard has more than ${limits.maxAliases} YAML aliases (*name): alias ${aliases} is here`,
        limits.maxAliases,
      );
      return false;
    }
    // The lexer's own markers (document start, scalar, flow error end) are not text of the file.
    if (!(token.length === 1 && (token === '\x02' || token === '\x1f' || token === '\x18'))) offset += token.length;
  }
  return true;
}

/** How many times `char` occurs in `text`, counted up to one past `limit`. */
function occurrences(text: string, char: string, limit: number): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1 && count <= limit; at = text.indexOf(char, at + 1)) count++;
  return count;
}

/**
 * Bounds that hold on the parsed data, before the schema and the authoring rules: phases, steps, then the expanded
 * size (aliases written out). False when one is over (reported on `sink`).
 */
export function checkDataBounds(
  data: unknown,
  map: SourceMap,
  sink: DiagnosticSink,
  bounds: StoryboardBounds | undefined,
  firstAlias: () => SourceLocation,
): boolean {
  const limits = resolveBounds(bounds);
  const phases = isObject(data) && Array.isArray(data.phases) ? (data.phases as unknown[]) : [];
  if (phases.length > limits.maxPhases) {
    report(
      sink,
      map.valueLocation(['phases', limits.maxPhases]),
      'maxPhases',
      `the storyboard has ${phases.length} phases`,
      limits.maxPhases,
    );
    return false;
  }
  let steps = 0;
  for (let p = 0; p < phases.length; p++) {
    const phase = phases[p];
    const count = isObject(phase) && Array.isArray(phase.steps) ? phase.steps.length : 0;
    if (steps + count > limits.maxSteps) {
      const total = phases.reduce<number>(
        (n, ph) => n + (isObject(ph) && Array.isArray(ph.steps) ? ph.steps.length : 0),
        0,
      );
      report(
        sink,
        map.valueLocation(['phases', p, 'steps', limits.maxSteps - steps]),
        'maxSteps',
        `the storyboard has ${total} steps`,
        limits.maxSteps,
      );
      return false;
    }
    steps += count;
  }
  if (jsonSizeOver(data, limits.maxExpandedBytes)) {
    report(
      sink,
      firstAlias(),
      'maxExpandedBytes',
      `the storyboard's data with its aliases written out is more than ${limits.maxExpandedBytes} bytes`,
      limits.maxExpandedBytes,
      ' bytes',
    );
    return false;
  }
  return true;
}

/** 1-based line and column of `offset` in `source` (only computed for the one error reported). */
function textLocation(source: string, offset: number): SourceLocation {
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf('\n'); i !== -1 && i < offset; i = source.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether `JSON.stringify(value)` would be longer than `limit` (about: string escapes are not counted), found without
 * writing it: a walk that counts each value every time it is reached — an alias repeats its anchor's data — and stops
 * as soon as the count is over, so it visits at most `limit` values whatever the aliases would expand to. Iterative:
 * nesting depth does not matter.
 */
export function jsonSizeOver(value: unknown, limit: number): boolean {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string') size += current.length + 2;
    else if (Array.isArray(current)) {
      size += 1 + Math.max(1, current.length);
      for (let i = current.length - 1; i >= 0; i--) stack.push(current[i]);
    } else if (current !== null && typeof current === 'object') {
      const keys = Object.keys(current);
      size += 1 + Math.max(1, keys.length);
      for (const key of keys) {
        size += key.length + 3;
        stack.push((current as Record<string, unknown>)[key]);
      }
    } else size += String(current).length;
    if (size > limit) return true;
  }
  return false;
}
