/**
 * What a run keeps between runs in its cache directory (option `cacheDir`):
 * compiled corpus storyboards and compiled schema validators. The next run
 * reads them — a planted entry shows up in its test names — and gets the
 * verdicts a run without a cache gets; a storyboard of the user's own is
 * compiled every time; Vitest's module cache keeps what Vite made of the corpus
 * storyboard's module, and the next run reads it. (`cacheDir: false`,
 * E2E_CACHE_DIR=off, is the run the cached ones are compared with.)
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { cacheSecret, DiskCache } from '../../src/cache/disk-cache.js';
import { buildBin, repoRoot, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts');
const scratch = mkdtempSync(join(tmpdir(), 'adcp-run-cache-'));
const userCache = join(scratch, 'user-cache');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const run = (cacheDir: string, env: Record<string, string> = {}) =>
  runVitest({
    config,
    env: {
      ADCP_AGENT_URL: inject('agentUrl'),
      E2E_CORPUS: 'capability_discovery',
      E2E_FILES: 'fixtures/storyboards/discovery.storyboard.yaml',
      E2E_CACHE_DIR: cacheDir,
      // This user's cache directory of the OS, where Vitest's module cache and the cache's secret are.
      XDG_CACHE_HOME: userCache,
      ...env,
    },
  });
const verdicts = (r: VitestRun) => r.tests.map((t) => `${t.name} ${t.state}`).sort();
const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

describe('the cache directory', () => {
  it("holds the compiled corpus storyboard (not the user's) and the validators, which the next run reads", async () => {
    const cacheDir = join(scratch, 'cache');
    const first = await run(cacheDir);
    expect(first.exitCode, first.stderr).toBe(0);
    const uncached = await run('off');
    expect(verdicts(first)).toEqual(verdicts(uncached));
    // One corpus file compiled (capability_discovery); the user's storyboard is compiled each run.
    const compiled = list(join(cacheDir, 'storyboards'));
    expect(compiled).toHaveLength(1);
    expect(list(join(cacheDir, 'validators')).length).toBeGreaterThan(0);

    // Vitest's module cache (src/plugin/module-cache.ts): the corpus storyboard's module as Vite transformed it, kept
    // under our key in this user's cache directory — never in cacheDir, which others may write —; the user's storyboard
    // is not kept. The next run reads it (Vitest's documented debug channel says so) and runs the same tests, at the
    // same YAML lines.
    expect(list(join(userCache, 'vitest-adcp', 'modules'))).toHaveLength(1);
    expect(list(join(cacheDir, 'modules'))).toEqual([]);
    const second = await run(cacheDir, { DEBUG: 'vitest:cache:fs,vitest:cache:memory' });
    expect(verdicts(second)).toEqual(verdicts(first));
    expect(second.stderr).toMatch(/\[read\] \S*capability-discovery\.yaml is cached in \S*[/\\]modules[/\\]/);
    expect(second.stderr).toMatch(/discovery\.storyboard\.yaml was bailed out by a custom generator/);
    const located = (r: VitestRun) => r.tests.map((t) => `${t.fullName} ${t.location?.line}:${t.location?.column}`);
    expect(located(second).sort()).toEqual(located(first).sort());
    // The storyboard each test module names (src/cache/stored-storyboards.ts), kept beside the modules, the user's too.
    // Removed, the next run stores it again while Vitest serves the corpus module from its cache (no transform): the
    // same tests, the same verdicts. (Whichever way a module comes: test/plugin/module-cache.test.ts.)
    const store = join(userCache, 'vitest-adcp', 'storyboards');
    expect(list(store)).toHaveLength(2);
    rmSync(store, { recursive: true });
    const restored = await run(cacheDir, { DEBUG: 'vitest:cache:fs' });
    expect(restored.stderr).toMatch(/\[read\] \S*capability-discovery\.yaml is cached in/);
    expect(verdicts(restored)).toEqual(verdicts(first));
    expect(list(store)).toHaveLength(2);
    // A failed step of the cached module points into the YAML as an uncached one does (Vitest maps its stack through
    // the map it keeps with the module): an agent that alters every echoed value fails both discovery steps.
    const altered = { ADCP_AGENT_URL: inject('agentUrl').replace(/\/mcp$/, '/x/wrong_value/mcp') };
    const frames = (r: VitestRun) =>
      r.tests
        .filter((t) => t.module.endsWith('capability-discovery.yaml'))
        .map((t) => `${t.name} ${t.state} ${(t.errors[0]?.stacks ?? []).map((f) => `${f.file}:${f.line}:${f.column}`)}`)
        .sort();
    const failedCached = frames(await run(cacheDir, altered));
    expect(failedCached.filter((t) => / failed .*capability-discovery\.yaml:\d+:\d+/.test(t))).toHaveLength(2);
    expect(failedCached).toEqual(frames(await run('off', altered)));

    // An entry changed through the cache (signed with this user's secret, as the run's own are) is what the next run
    // runs: the cache is read, not just written. One written beside it is not (test/e2e/hostile-cache.test.ts).
    const disk = new DiskCache(cacheDir, 'storyboards', '.json', [], cacheSecret(join(userCache, 'vitest-adcp')));
    const key = compiled[0]!.replace(/\.json$/, '');
    const cached = JSON.parse(disk.read(key)!);
    disk.write(
      key,
      JSON.stringify({ ...cached, code: cached.code.replace(/describe\("([^"]+)"/, 'describe("planted $1"') }),
    );
    const planted = await run(cacheDir);
    expect(planted.tests.filter((t) => t.fullName.startsWith('planted ')).length).toBeGreaterThan(0);
  });

  it('kept by a CI job (after `npm ci`, the key from ADCP_CACHE_KEY) serves the next job on a fresh runner', async () => {
    // The package as installed; `npm ci` on the next job writes every file of it anew, at the same path. (At the depth
    // of the shared build, under the repo: its imports resolve the repo's node_modules, test/helpers/built.ts.)
    const installed = join(repoRoot, '.vitest-adcp', `ci-cache-${process.pid}`);
    onTestFinished(() => rmSync(installed, { recursive: true, force: true }));
    // The build as `npm run build` makes it, with schema/ beside it (buildBin): written anew on each call.
    const install = () => buildBin(installed);
    const cacheDir = join(scratch, 'ci', 'kept');
    const job = (runner: string) =>
      run(cacheDir, {
        E2E_PLUGIN_BUILD: join(installed, 'dist'),
        // A fresh runner: no key file, no module cache, no stored storyboards.
        XDG_CACHE_HOME: join(scratch, 'ci', runner),
        ADCP_CACHE_KEY: 'ci-job-secret-0123456789abcdef-0123456789abcdef',
      });
    /**
     * Each entry by name, inode and time: an entry computed again is written aside and renamed over the old one. Not
     * V8's code caches of the validators (`.v8`), which a validator's first load from the cache makes.
     */
    const entries = () =>
      ['storyboards', 'validators'].flatMap((kind) =>
        list(join(cacheDir, kind))
          .filter((name) => !name.endsWith('.v8'))
          .map((name) => {
            const { ino, mtimeMs } = statSync(join(cacheDir, kind, name));
            return `${kind}/${name} ${ino} ${mtimeMs}`;
          }),
      );
    await install();
    const first = await job('runner-1');
    expect(first.exitCode, first.stderr).toBe(0);
    const kept = entries();
    expect(kept.filter((e) => e.startsWith('storyboards/'))).toHaveLength(1);
    expect(kept.filter((e) => e.startsWith('validators/')).length).toBeGreaterThan(0);

    await install();
    const next = await job('runner-2');
    expect(verdicts(next)).toEqual(verdicts(first));
    // Read, none made again: this package's code is the same code (cache/disk-cache.ts `treeFingerprint`), the key the
    // same key. (Without the key, test/cache/ci-cache.test.ts: nothing served.)
    expect(entries()).toEqual(kept);
    // Each validator read from the cache got V8's code cache beside it, for the job after.
    const codeCaches = list(join(cacheDir, 'validators')).filter((name) => name.endsWith('.v8'));
    expect(codeCaches).toHaveLength(kept.filter((e) => e.startsWith('validators/')).length);
  });
});
