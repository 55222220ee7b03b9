/**
 * `node <script> ...args` started from the package root, for the scripts that run others (build.mjs, test.mjs).
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Starts `node <script> ...args` in the package root. `done`: its exit code (128 + the signal's number when a signal
 * ended it; 1, said on stderr, when it could not start).
 * @param {string} script
 * @param {string[]} args
 * @param {import('node:child_process').StdioOptions} stdio
 */
export function nodeChild(script, args, stdio) {
  const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio });
  const done = new Promise((resolve) => {
    child.on('error', (error) => {
      process.stderr.write(`could not start ${script}: ${error.message}\n`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? 128 + (constants.signals[signal] ?? 0)));
  });
  return { child, done };
}
