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
import { join } from 'node:path';
import { nodeChild as node, root } from './node-child.mjs';

const bin = (pkg, file) => join(root, 'node_modules', pkg, file);

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
