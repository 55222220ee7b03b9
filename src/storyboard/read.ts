/**
 * Every read of a storyboard file goes through here, so that no path reads a file before its size is checked against
 * the byte bound (issue 31, item 6: `--storyboards big.storyboard.yaml` read and parsed a 43 MB file whole to learn its
 * id, and the process peaked at 1.6 GB before the loader refused it).
 *
 * Two kinds of read:
 *
 * - `readStoryboardFile`: the whole text, to load or compile it — or, for a file over `maxBytes`, nothing read and the
 *   located `storyboard_bound` error that fails only that file (`file_unreadable` for a file that cannot be read);
 * - `readStoryboardHead`: the text to look at without loading (is it a storyboard, its id, track, phases) — the whole
 *   file, or of a file over the default byte bound only its first that many bytes: what a glance needs is at the top,
 *   and the load of such a file says it is too big.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { DEFAULT_STORYBOARD_BOUNDS, fileBytesOverBound, reportBytes, type StoryboardBounds } from './bounds.js';
import { DiagnosticSink } from './diagnostics.js';
import type { Diagnostic } from '../model/storyboard.js';

export type StoryboardFileText =
  | { ok: true; text: string }
  /** `oversize`: the file's size when it is over the byte bound (then nothing of it was read). */
  | { ok: false; diagnostics: Diagnostic[]; oversize?: number };

/** A storyboard file's text, read only after its size is checked against `bounds.maxBytes`; else why it is not read. */
export function readStoryboardFile(file: string, bounds: StoryboardBounds | undefined): StoryboardFileText {
  const oversize = fileBytesOverBound(file, bounds);
  if (oversize !== undefined) {
    const sink = new DiagnosticSink(file);
    reportBytes(sink, oversize, bounds);
    return { ok: false, diagnostics: sink.items, oversize };
  }
  try {
    return { ok: true, text: readFileSync(file, 'utf8') };
  } catch (error) {
    const sink = new DiagnosticSink(file);
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    sink.error(
      'file_unreadable',
      { line: 1, column: 1 },
      `cannot read storyboard file (${reason})`,
      'check the path and permissions',
    );
    return { ok: false, diagnostics: sink.items };
  }
}

/**
 * The text to glance at: the whole file (`whole: true`), or of a file over the default byte bound its first that many
 * bytes (`whole: false`: never parse it, it is cut anywhere). Throws when the file cannot be read.
 */
export function readStoryboardHead(file: string): { text: string; whole: boolean } {
  if (fileBytesOverBound(file, undefined) === undefined) return { text: readFileSync(file, 'utf8'), whole: true };
  const buffer = Buffer.alloc(DEFAULT_STORYBOARD_BOUNDS.maxBytes);
  const fd = openSync(file, 'r');
  try {
    return { text: buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0)), whole: false };
  } finally {
    closeSync(fd);
  }
}
