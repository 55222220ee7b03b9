/**
 * The unit lane (`npm run test:unit`, vitest.unit.config.ts) stays in-process: a test file that starts a process or
 * builds — by name: child_process, a child vitest/jest/node run, npm pack, the shared build — must be in its `notUnit`
 * list. And `npm test` (vitest.config.ts) still runs every test file the unit lane runs, and more.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import unit, { notTests, notUnit, unitProject } from '../vitest.unit.config.js';
import all from '../vitest.config.js';

const repoRoot = join(import.meta.dirname, '..');
/** What starts a process or builds: Node's child_process API, and the helpers built on it. */
const SPAWNS =
  /(?<![.\w$])(spawn|spawnSync|exec|execSync|execFile|execFileSync|fork|runVitest|runNode|runJest|buildBin|packedTarball|unpackedPackage|builtDist|builtModule|copyBuiltDist)\s*\(|from '[^']*helpers\/(packed|built|unpacked)\.js'/;

function testFiles(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' || path === 'test/e2e/project' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const excluded = (file: string) => notUnit.some((path) => (path.endsWith('/') ? file.startsWith(path) : file === path));

describe('test lanes', () => {
  it('leaves out of the unit lane every test file that starts a process or builds', () => {
    const spawning = testFiles('test').filter((file) => SPAWNS.test(readFileSync(join(repoRoot, file), 'utf8')));
    expect(spawning.length).toBeGreaterThan(0);
    expect(spawning.filter((file) => !excluded(file))).toEqual([]);
  });

  it('names only files and folders that exist', () => {
    expect(notUnit.filter((path) => !existsSync(join(repoRoot, path)))).toEqual([]);
  });

  it('npm test (vitest.config.ts) runs every file: the unit lane as the unit lane runs it, and every file it leaves out', () => {
    expect(all.test?.include).toBeUndefined();
    const projects = all.test?.projects as { test: Record<string, unknown> }[];
    expect(projects.map((project) => project.test.name)).toEqual(['unit', 'e2e']);
    const [unitInSuite, e2e] = projects.map((project) => project.test);
    expect(unitInSuite).toEqual({ name: 'unit', ...unitProject });
    expect(unit.test).toMatchObject(unitProject);
    // Every file the unit lane leaves out is in the e2e project: each folder's test files, each file named.
    expect(e2e!.include).toEqual(notUnit.map((path) => (path.endsWith('/') ? `${path}**/*.test.ts` : path)));
    expect(e2e!.exclude).toEqual(notTests);
  });
});
