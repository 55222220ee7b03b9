/** `--auth-file`: the bearer token read from a file, or from stdin, instead of from the process list. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from './usage-error.js';

/** The most a token file (or stdin) may hold: a bearer token is a line, not a file. */
const MAX_AUTH_FILE_BYTES = 64 * 1024;

/**
 * `--auth-file <path>` (`-`: stdin): the token as its one line, so it never sits in the process list as `--auth`
 * does. Surrounding whitespace and the final newline are not part of it.
 */
export function readAuthFile(path: string, cwd: string): string {
  let text: string;
  try {
    // fd 0 for `-`: stdin read whole (a pipe, a here-string, a redirected file).
    const bytes = readFileSync(path === '-' ? 0 : resolve(cwd, path));
    if (bytes.byteLength > MAX_AUTH_FILE_BYTES)
      throw new UsageError(
        `--auth-file ${path}: over ${MAX_AUTH_FILE_BYTES} bytes; it must hold the bearer token alone, on one line`,
      );
    text = bytes.toString('utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `--auth-file ${path}: cannot read it (${code ?? (error instanceof Error ? error.message : String(error))}); give a file holding the bearer token, or - to read it from stdin`,
    );
  }
  const token = text.trim();
  if (token === '') throw new UsageError(`--auth-file ${path} is empty: it must hold the bearer token, on one line`);
  if (/[\r\n]/.test(token))
    throw new UsageError(
      `--auth-file ${path} has more than one line: it must hold the bearer token alone, on one line`,
    );
  return token;
}
