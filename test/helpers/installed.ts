/**
 * The README's install, made once per test run and copied for each test that needs it: `npm init -y`, then the packed
 * tarball (packed.ts) installed beside the Vitest and Vite we develop on and @adcp/sdk, at the versions of our
 * devDependencies, from the npm cache our own `npm ci` filled. test/e2e/newcomer.test.ts and packed.test.ts (its
 * primary Vitest) each installed the same set on their own: ~15 CPU-s and 25–36 s each, on a suite that uses both
 * cores throughout.
 *
 * The install is made in the per-run directory (once-per-run.ts) and never run there; each caller gets a copy of its
 * own (`cp -a`: links kept, nothing shared) in a directory outside this repository, where nothing resolves from the
 * repository's node_modules — as a user's repository.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exec, oncePerRun, repoRoot } from './once-per-run.js';
import { packedTarball } from './packed.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

/**
 * `npm install --save-dev <specs>` in `project`: from the npm cache our own `npm ci` filled, the registry only for what
 * it lacks. Throws with npm's output when it fails.
 */
export function installDev(project: string, specs: string[]): void {
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--save-dev', ...specs], {
    cwd: project,
    stdio: 'pipe',
  });
}

/** The devDependencies the install adds (npm's own specs: the tarball as a `file:` path). */
export type InstalledPackageJson = { name: string; devDependencies: Record<string, string> } & Record<string, unknown>;

/** The install's directory, `my-agent` (its package.json, package-lock.json, node_modules): never write into it. */
function primaryInstall(): Promise<string> {
  return oncePerRun(
    'install-primary',
    async (dir) => {
      const tarball = await packedTarball();
      // Named as the newcomer's repository: `npm init -y` names the package after its folder.
      const project = join(dir, 'install-primary', 'my-agent');
      mkdirSync(project, { recursive: true });
      await exec('npm', ['init', '-y'], { cwd: project });
      installDev(project, [
        `vitest@${pkg.devDependencies.vitest}`,
        `vite@${pkg.devDependencies.vite}`,
        tarball,
        `@adcp/sdk@${pkg.devDependencies['@adcp/sdk']}`,
      ]);
      return project;
    },
    { timeoutMs: 360_000 },
  );
}

/**
 * A copy of the install at `project` (made anew, its parent must exist), its package.json given by `packageJson` (the
 * install's, as `npm init -y` and the install wrote it: a CommonJS package).
 */
export async function installedProject(
  project: string,
  packageJson: (installed: InstalledPackageJson) => Record<string, unknown> = (installed) => installed,
): Promise<void> {
  const install = await primaryInstall();
  execFileSync('cp', ['-a', install, project]);
  const installed = JSON.parse(readFileSync(join(install, 'package.json'), 'utf8')) as InstalledPackageJson;
  writeFileSync(join(project, 'package.json'), `${JSON.stringify(packageJson(installed), null, 2)}\n`);
}
