/**
 * The package's build (`npm run build`, and so `npm pack`'s `prepack`), in one place for everyone who builds it: the
 * ES build by tsc (tsconfig.build.json), beside it the CommonJS build of the client and the Jest matchers
 * (scripts/build-cjs.mjs, which reads src/ itself and so needs nothing of the ES build), then the storyboard schema's
 * validator compiled ahead (scripts/build-storyboard-validator.mjs, which imports the ES build), and the bin made
 * executable.
 *
 *   node scripts/build.mjs [--out <dir>] [--no-declarations]
 *
 * `--out`: the ES build's directory (dist/ by default; emptied first); the validator's compile reads `schema/` beside
 * it, so a directory elsewhere needs a `schema/` (or a link to it) beside it first. `--no-declarations`: no .d.ts (the
 * tests' shared build, test/helpers/built.ts, whose modules nothing type-checks against).
 *
 * `VITEST_ADCP_BUILD_NO_CHECK=1`: tsc emits without type checking (`--noCheck`): the same JavaScript and the same
 * declarations but for the order tsc prints a union in. The test suite's packs set it (test/helpers/packed.ts), since
 * `npm test` type-checks the same sources beside the suite (scripts/test.mjs); every other build checks.
 */
import { chmodSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { nodeChild, root } from './node-child.mjs';

const { values } = parseArgs({
  options: { out: { type: 'string' }, 'no-declarations': { type: 'boolean', default: false } },
});
const out = values.out ? resolve(values.out) : join(root, 'dist');
const check = process.env.VITEST_ADCP_BUILD_NO_CHECK !== '1';
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** Runs `node <args>` in the package root, its output passed through; rejects naming the step when it fails. */
async function node(step, [script, ...args]) {
  const code = await nodeChild(script, args, 'inherit').done;
  if (code !== 0) throw new Error(`build: ${step} failed (exit code ${code})`);
}

try {
  rmSync(out, { recursive: true, force: true });
  await Promise.all([
    node('tsc', [
      tsc,
      '-p',
      'tsconfig.build.json',
      '--outDir',
      out,
      ...(check ? [] : ['--noCheck']),
      ...(values['no-declarations'] ? ['--declaration', 'false'] : []),
    ]),
    node('the CommonJS build', [join(root, 'scripts', 'build-cjs.mjs'), join(out, 'cjs')]),
  ]);
  await node("the storyboard schema's validator", [join(root, 'scripts', 'build-storyboard-validator.mjs'), out]);
  chmodSync(join(out, 'cli.js'), 0o755);
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
