/**
 * Watch mode: saving a storyboard YAML re-runs that file only; saving the test
 * kit a storyboard names (`prerequisites.test_kit`) re-runs the storyboards
 * that use it, with the edited kit; a file over the byte bound, trimmed under it, runs its steps (and fails again when
 * it grows back). A real `vitest --watch` in a child process, over three storyboards in a scratch folder inside the
 * project (so the watcher sees them).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, inject, it } from 'vitest';
import { builtDist } from '../helpers/built.js';
import { repoRoot } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `watch-${process.pid}`);
const capture = join(scratch, 'capture.json');
const storyboard = (id: string, title: string, kit?: string) =>
  [
    `id: ${id}`,
    `title: ${title}`,
    ...(kit ? ['prerequisites:', `  test_kit: "${kit}"`] : []),
    'phases:',
    '  - id: p',
    '    title: Phase',
    // With a kit: the phase runs only when the kit has an api_key, so the kit's content shows in the verdict.
    ...(kit ? ['    skip_if: "!test_kit.auth.api_key"'] : []),
    '    steps:',
    '      - id: caps',
    '        title: Capabilities',
    '        task: get_adcp_capabilities',
    '        validations:',
    '          - check: field_present',
    '            path: adcp',
    '',
  ].join('\n');
/** Over the default byte bound (512 KiB) by a comment: its module is the load failure, the file never read. */
const oversize = (text: string) => text + `# ${'x'.repeat(98)}\n`.repeat(6_000);
const testKit = (auth: string) => ['id: watch_kit', 'name: Watch kit', `auth: ${auth}`, ''].join('\n');

let child: ReturnType<typeof spawn> | undefined;
afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

async function nextCapture(
  timeoutMs = 60_000,
): Promise<{ tests: { module: string; fullName: string; state: string }[] }> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (existsSync(capture)) {
      try {
        const data = JSON.parse(readFileSync(capture, 'utf8'));
        rmSync(capture);
        return data;
      } catch {
        // Being written: try again.
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('vitest did not report a run in time');
}

it('re-runs only the storyboard file that was saved, and the storyboards of a saved test kit', async () => {
  mkdirSync(scratch, { recursive: true });
  const a = join(scratch, 'a.storyboard.yaml');
  const b = join(scratch, 'b.storyboard.yaml');
  const c = join(scratch, 'c.storyboard.yaml');
  const kit = join(scratch, 'kit.yaml');
  writeFileSync(kit, testKit('{}'));
  writeFileSync(a, storyboard('watch_a', 'Watch A'));
  writeFileSync(b, storyboard('watch_b', 'Watch B', './kit.yaml'));
  writeFileSync(c, oversize(storyboard('watch_c', 'Watch C')));
  const env: Record<string, string | undefined> = {
    ...process.env,
    VITEST_ADCP_CAPTURE: capture,
    ADCP_AGENT_URL: inject('agentUrl'),
    E2E_STORYBOARDS: `${scratch}/*.storyboard.yaml`,
    // The plugin the config loads (test/e2e/plugin-under-test.ts).
    E2E_PLUGIN_BUILD: await builtDist(),
    NO_COLOR: '1',
  };
  for (const key of Object.keys(env)) if (key.startsWith('VITEST') && key !== 'VITEST_ADCP_CAPTURE') delete env[key];
  child = spawn(
    process.execPath,
    [
      join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'),
      '--watch',
      '--config',
      join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts'),
      `--reporter=${join(repoRoot, 'test', 'helpers', 'capture-reporter.ts')}`,
    ],
    {
      cwd: repoRoot,
      env: env as NodeJS.ProcessEnv,
      stdio: ['pipe', 'ignore', 'ignore'],
    },
  );

  const first = await nextCapture();
  expect(first.tests.map((t) => [t.module, t.state]).sort()).toEqual([
    [a, 'passed'],
    [b, 'skipped'],
    [c, 'failed'],
  ]);
  expect(first.tests.find((t) => t.module === c)?.fullName).toBe(
    'c.storyboard.yaml > loads without errors (storyboard_bound)',
  );

  // Trimmed under the bound, the file runs its step: the module of its first load (plugin/oversize-entry.ts) does not
  // outlive the edit. Grown back, it fails again.
  writeFileSync(c, storyboard('watch_c', 'Watch C'));
  expect((await nextCapture()).tests.map((t) => [t.module, t.fullName, t.state])).toEqual([
    [c, 'Watch C (watch_c) > Phase (p) > Capabilities (caps)', 'passed'],
  ]);
  writeFileSync(c, oversize(storyboard('watch_c', 'Watch C')));
  expect((await nextCapture()).tests.map((t) => [t.module, t.fullName, t.state])).toEqual([
    [c, 'c.storyboard.yaml > loads without errors (storyboard_bound)', 'failed'],
  ]);

  writeFileSync(a, storyboard('watch_a', 'Watch A, edited'));
  const second = await nextCapture();
  expect(second.tests.map((t) => [t.module, t.fullName, t.state])).toEqual([
    [a, 'Watch A, edited (watch_a) > Phase (p) > Capabilities (caps)', 'passed'],
  ]);

  // The kit now has an api_key: b re-runs with it (the phase is no longer skipped); a does not re-run.
  writeFileSync(kit, testKit('{ api_key: "demo-watch-kit-v1" }'));
  const third = await nextCapture();
  expect(third.tests.map((t) => [t.module, t.fullName, t.state])).toEqual([
    [b, 'Watch B (watch_b) > Phase (p) > Capabilities (caps)', 'passed'],
  ]);
});
