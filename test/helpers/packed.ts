/**
 * The package as `npm pack` ships it, packed once per test run (once-per-run.ts) and shared by every test that installs
 * it (test/e2e/packed.test.ts, newcomer.test.ts, jest-client.test.ts, test/matrix/packages.matrix.ts).
 *
 * Packed from a staging copy, never from the repo itself: `npm pack`'s `prepack` (`npm run build`) starts with
 * `rm -rf dist`, and packs running side by side in the repo would rebuild the same dist/ under each other. The copy holds
 * what the package ships (`files` of package.json but dist, which the build makes, and package.json and the README
 * npm always ships) and what the build reads (tsconfig*.json, scripts/); plain `npm pack` in it runs the same
 * `prepack` build there (tsc finds its types and scripts/build-cjs.mjs its typescript in the repo's node_modules, up
 * the tree), so the tarball is what `npm pack` in the repo ships — built without tsc's type check
 * (`VITEST_ADCP_BUILD_NO_CHECK`, scripts/build.mjs), which `npm test` runs on the same sources beside the suite: the same
 * files, but for the order tsc prints a union in. Callers install it; they never write where it is.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exec, oncePerRun, repoRoot } from './once-per-run.js';

/** The absolute path of the packed tarball (`vitest-adcp-<version>.tgz`). */
export function packedTarball(): Promise<string> {
  return oncePerRun('pack', pack, { timeoutMs: 300_000 });
}

async function pack(dir: string): Promise<string> {
  const stage = join(dir, 'pack-stage');
  const out = join(dir, 'pack');
  mkdirSync(stage);
  mkdirSync(out);
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { files?: string[] };
  const names = new Set(['package.json', 'scripts', ...(pkg.files ?? []).filter((f) => f !== 'dist')]);
  for (const name of readdirSync(repoRoot)) {
    if (/^(README|LICEN[CS]E|NOTICE)(\.|$)/i.test(name) || /^tsconfig.*\.json$/.test(name) || name === '.npmignore')
      names.add(name);
  }
  for (const name of names) {
    if (existsSync(join(repoRoot, name))) cpSync(join(repoRoot, name), join(stage, name), { recursive: true });
  }
  // `prepack` builds without tsc's type check (scripts/build.mjs): `npm test` checks the same sources beside the suite.
  await exec('npm', ['pack', '--pack-destination', out, '--silent'], {
    cwd: stage,
    env: { ...process.env, VITEST_ADCP_BUILD_NO_CHECK: '1' },
  });
  const tarball = readdirSync(out).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack in ${stage} wrote no tarball into ${out}`);
  return join(out, tarball);
}
