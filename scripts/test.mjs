#!/usr/bin/env node
/**
 * `npm test`: the type check (`npm run typecheck`: `tsc -p tsconfig.test.json`) and the whole suite (`vitest run`, given
 * this script's arguments, as `npm test -- <vitest flags>` passes them), side by side.
 *
 * Why side by side: tsc is one thread for ~13 s, and run before the suite it left the second core idle that long; the
 * suite keeps both cores busy, so tsc beside it costs the run its CPU time shared over two cores instead (issue 32,
 * docs/benchmarks.md). What stays as it was: `npm test` fails when either fails. tsc's findings are held back until the
 * suite has ended, so that they are not mixed into Vitest's output, then printed whole, with one line naming the check.
 *
 * The exit code: Vitest's when it is not 0, else tsc's. Ctrl-C (SIGINT) and SIGTERM reach both children, and the
 * script then exits as they do.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (pkg, file) => join(root, 'node_modules', pkg, file);

/** Runs `node <script> ...args` from the repo's root; resolves with its exit code (128 + signal number if killed). */
function node(script, args, stdio) {
  const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio });
  const done = new Promise((resolve) => {
    child.on('error', (error) => {
      process.stderr.write(`npm test: could not start ${script}: ${error.message}\n`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? 128 + (constants.signals[signal] ?? 0)));
  });
  return { child, done };
}

const typecheck = node(bin('typescript', 'bin/tsc'), ['-p', 'tsconfig.test.json'], ['ignore', 'pipe', 'pipe']);
const typecheckOutput = [];
typecheck.child.stdout?.on('data', (chunk) => typecheckOutput.push(chunk));
typecheck.child.stderr?.on('data', (chunk) => typecheckOutput.push(chunk));
const suite = node(bin('vitest', 'vitest.mjs'), ['run', ...process.argv.slice(2)], 'inherit');

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const { child } of [typecheck, suite]) if (child.exitCode === null) child.kill(signal);
  });
}

const suiteCode = await suite.done;
const typecheckCode = await typecheck.done;
if (typecheckCode !== 0) {
  process.stderr.write(Buffer.concat(typecheckOutput));
  process.stderr.write(
    `\nnpm test: the type check (npm run typecheck: tsc -p tsconfig.test.json) failed, exit ${typecheckCode}\n`,
  );
}
process.exitCode = suiteCode !== 0 ? suiteCode : typecheckCode;
