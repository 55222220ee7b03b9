/**
 * The packed package (packed.ts) unpacked once per test run into `<run dir>/unpacked/node_modules/vitest-adcp`, without
 * an npm install: what `npm pack` ships, laid out as an installed package. Its dependencies resolve from this
 * repository's node_modules, up the tree (the run dir is under the repo's .vitest-adcp/). For tests that read or
 * type-check the shipped files and resolve through package.json `exports` (test/types/): link it into a project of
 * your own as node_modules/vitest-adcp, and never write into it.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exec, oncePerRun } from './once-per-run.js';
import { packedTarball } from './packed.js';

/** The absolute path of the unpacked package (its package.json, dist/, schema/, …). */
export function unpackedPackage(): Promise<string> {
  return oncePerRun(
    'unpack',
    async (dir) => {
      const tarball = await packedTarball();
      const modules = join(dir, 'unpacked', 'node_modules');
      mkdirSync(modules, { recursive: true });
      await exec('tar', ['-xzf', tarball, '-C', modules], { cwd: modules });
      // npm pack puts everything under package/.
      await exec('mv', [join(modules, 'package'), join(modules, 'vitest-adcp')], { cwd: modules });
      return join(modules, 'vitest-adcp');
    },
    { timeoutMs: 360_000 },
  );
}

/**
 * A user's project at `user` (made anew) with the unpacked package linked in as node_modules/vitest-adcp. A package of
 * its own, so that `vitest-adcp` is not this repository's self-reference; vitest, jest and the package's dependencies
 * resolve from the repository's node_modules, up the tree.
 */
export async function userProjectWithPackage(scratch: string, user: string): Promise<void> {
  const unpacked = await unpackedPackage();
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(join(user, 'node_modules'), { recursive: true });
  symlinkSync(unpacked, join(user, 'node_modules', 'vitest-adcp'));
  writeFileSync(join(user, 'package.json'), JSON.stringify({ name: 'my-agent', private: true, type: 'module' }));
}
