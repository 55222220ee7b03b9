/**
 * What a run keeps between runs in its cache directory (option `cacheDir`):
 * compiled corpus storyboards and compiled schema validators. The next run
 * reads them — a planted entry shows up in its test names — and gets the
 * verdicts a run without a cache gets; a storyboard of the user's own is
 * compiled every time. (`cacheDir: false`, E2E_CACHE_DIR=off, is the run the
 * cached ones are compared with.)
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DiskCache } from '../../src/cache/disk-cache.js';
import { repoRoot, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts');
const scratch = mkdtempSync(join(tmpdir(), 'adcp-run-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const run = (cacheDir: string) =>
  runVitest({
    config,
    env: {
      ADCP_AGENT_URL: inject('agentUrl'),
      E2E_CORPUS: 'capability_discovery',
      E2E_FILES: 'fixtures/storyboards/discovery.storyboard.yaml',
      E2E_CACHE_DIR: cacheDir,
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

    const second = await run(cacheDir);
    expect(verdicts(second)).toEqual(verdicts(first));

    // An entry changed through the cache (signed with this user's secret, as the run's own are) is what the next run
    // runs: the cache is read, not just written. One written beside it is not (test/e2e/hostile-cache.test.ts).
    const disk = new DiskCache(cacheDir, 'storyboards', '.json', []);
    const key = compiled[0]!.replace(/\.json$/, '');
    const cached = JSON.parse(disk.read(key)!);
    disk.write(
      key,
      JSON.stringify({ ...cached, code: cached.code.replace(/describe\("([^"]+)"/, 'describe("planted $1"') }),
    );
    const planted = await run(cacheDir);
    expect(planted.tests.filter((t) => t.fullName.startsWith('planted ')).length).toBeGreaterThan(0);
  });
});
