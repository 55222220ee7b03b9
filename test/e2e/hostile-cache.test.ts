/**
 * Issue 20, case 4: the cache directory is writable by someone else (a restored CI cache, a shared checkout), and the
 * corpus may be one the user edits. Real `vitest run`s with the plugin and a cache directory:
 * - a planted validator (right name, code that accepts every answer and leaves a mark) is never run: the
 *   `response_schema` failure stays a failure and the exit status stays 1; a planted compiled storyboard is not run
 *   either;
 * - an edited, added or removed request-signing vector of a corpus given by path changes the plan of the next run;
 * - a run outside any package keeps its cache in the OS per-user cache directory, not `<cwd>/node_modules/.vite`.
 * Each run gets its own XDG_CACHE_HOME, so the per-user secret is this test's.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { resolveCorpus } from '../../src/corpus.js';
import { packageRoot } from '../../src/cache/location.js';
import { repoRoot, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts');
const scratch = mkdtempSync(join(tmpdir(), 'adcp-hostile-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const xdg = join(scratch, 'xdg');
const list = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => !f.endsWith('.tmp')) : []);
const failedChecks = (r: VitestRun) =>
  r.tests
    .filter((t) => t.state === 'failed')
    .map((t) => t.name)
    .sort();

describe('a hostile cache directory', () => {
  it('a planted validator or compiled storyboard is never run: the response_schema failure stays, exit 1', async () => {
    const cacheDir = join(scratch, 'planted');
    const run = () =>
      runVitest({
        config,
        env: {
          XDG_CACHE_HOME: xdg,
          ADCP_AGENT_URL: `${inject('agentOrigin')}/x/schema_invalid/mcp`,
          // Its steps fail on response_schema only (adcp.major_versions: "3"): with every answer valid, the run passes.
          E2E_CORPUS: 'capability_discovery',
          E2E_CACHE_DIR: cacheDir,
        },
      });
    const first = await run();
    expect(first.exitCode, first.stderr).toBe(1);
    const failing = failedChecks(first);
    expect(failing.length).toBeGreaterThan(0);
    expect(
      first.tests
        .filter((t) => t.state === 'failed')
        .every((t) => t.errors.some((e) => /response_schema/.test(e.message))),
      first.stdout,
    ).toBe(true);
    const validators = list(join(cacheDir, 'validators'));
    const storyboards = list(join(cacheDir, 'storyboards'));
    expect(validators.length).toBeGreaterThan(0);
    expect(storyboards).toHaveLength(1);

    // Every entry replaced, under its own name, by code that accepts everything and leaves a mark when it runs.
    const marker = join(scratch, 'planted-code-ran');
    const accept = `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'validator'); module.exports = function validate() { validate.errors = null; return true; }; module.exports.default = module.exports;`;
    for (const name of validators) writeFileSync(join(cacheDir, 'validators', name), accept);
    const entry = join(cacheDir, 'storyboards', storyboards[0]!);
    const compiled = JSON.parse(readFileSync(entry, 'utf8').replace(/^vitest-adcp-mac[^\n]*\n/, ''));
    writeFileSync(
      entry,
      JSON.stringify({
        ...compiled,
        code: `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, 'storyboard');\n${String(compiled.code).replace(/describe\("([^"]+)"/, 'describe("planted $1"')}`,
      }),
    );

    const planted = await run();
    expect(existsSync(marker), existsSync(marker) ? readFileSync(marker, 'utf8') : '').toBe(false);
    expect(planted.exitCode, planted.stderr).toBe(1);
    expect(failedChecks(planted)).toEqual(failing);
    expect(planted.tests.some((t) => t.fullName.startsWith('planted '))).toBe(false);
    // The run wrote its own entries again, which the next run reads.
    expect(readFileSync(join(cacheDir, 'validators', validators[0]!), 'utf8')).not.toBe(accept);
  });

  it("an edited, added or removed request-signing vector changes the next run's plan", async () => {
    const corpus = join(scratch, 'corpus');
    cpSync(resolveCorpus(undefined, repoRoot).root, corpus, { recursive: true });
    const cacheDir = join(scratch, 'vectors');
    const run = () =>
      runVitest({
        config,
        // Planned, not run: the test names are the plan.
        args: ['--testNamePattern', '^nothing matches this$'],
        env: {
          XDG_CACHE_HOME: xdg,
          ADCP_AGENT_URL: inject('agentUrl'),
          ADCP_COMPLIANCE: corpus,
          E2E_CORPUS: 'signed_requests',
          E2E_CACHE_DIR: cacheDir,
        },
      });
    const plan = (r: VitestRun) =>
      r.tests
        .filter((t) => /^(positive|negative)-/.test(t.meta?.adcp?.id ?? '') || /^\d{3}-/.test(t.name))
        .map((t) => t.name)
        .sort();
    const positive = join(corpus, 'test-vectors', 'request-signing', 'positive');
    const before = plan(await run());
    expect(before.length).toBeGreaterThan(2);
    expect(list(join(cacheDir, 'storyboards')).length).toBeGreaterThan(0);
    expect(plan(await run())).toEqual(before);

    const [first, second] = list(positive).sort();
    // Edited: the first vector's name.
    const edited = JSON.parse(readFileSync(join(positive, first!), 'utf8'));
    edited.name = 'renamed by this test';
    writeFileSync(join(positive, first!), JSON.stringify(edited));
    // Added: a copy of it under a new id. Removed: the second.
    writeFileSync(
      join(positive, '999-added-by-this-test.json'),
      JSON.stringify({ ...edited, name: 'added by this test' }),
    );
    rmSync(join(positive, second!));

    const after = plan(await run());
    expect(after).not.toEqual(before);
    expect(after.some((t) => t.includes('renamed by this test'))).toBe(true);
    expect(after.some((t) => t.startsWith('999-added-by-this-test'))).toBe(true);
    expect(after.some((t) => t.startsWith(second!.replace(/\.json$/, '')))).toBe(false);
    expect(after).toHaveLength(before.length);
  });

  it.skipIf(packageRoot(tmpdir()) !== undefined)(
    'outside any package, the run keeps its cache in the OS per-user cache directory, not <cwd>/node_modules/.vite',
    async () => {
      const project = join(scratch, 'no-package');
      mkdirSync(project, { recursive: true });
      const home = join(scratch, 'xdg-outside');
      writeFileSync(
        join(project, 'vitest.config.mjs'),
        `import { adcpStoryboards } from ${JSON.stringify(join(repoRoot, 'test', 'e2e', 'plugin-under-test.ts'))};\nexport default { plugins: [adcpStoryboards({ compliance: { storyboards: ['capability_discovery'] } })], test: { include: [], passWithNoTests: true } };\n`,
      );
      const corpus = resolveCorpus(undefined, repoRoot).root;
      const r = await runVitest({
        config: join(project, 'vitest.config.mjs'),
        cwd: project,
        args: ['--root', project],
        env: { XDG_CACHE_HOME: home, ADCP_AGENT_URL: inject('agentUrl'), ADCP_COMPLIANCE: corpus },
      });
      // The run itself (its verdicts depend on schemas a directory without @adcp/sdk does not have) is not the point.
      expect(r.tests.length, r.stdout + r.stderr).toBeGreaterThan(0);
      expect(existsSync(join(project, 'node_modules', '.vite', 'vitest-adcp'))).toBe(false);
      // Nor Vitest's module cache, which the storyboard project turns on only inside a package (its metadata would go
      // to <cwd>/node_modules), nor Vitest's results (Vite's cache directory is the user's there): no node_modules.
      expect(existsSync(join(project, 'node_modules', '.experimental-vitest-cache'))).toBe(false);
      expect(existsSync(join(project, 'node_modules'))).toBe(false);
      expect(list(join(home, 'vitest-adcp', 'vite', 'vitest')).length).toBeGreaterThan(0);
      expect(list(join(home, 'vitest-adcp', 'cache', 'storyboards')).length).toBeGreaterThan(0);
    },
  );
});
