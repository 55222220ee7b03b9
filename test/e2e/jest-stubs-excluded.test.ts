/**
 * A repository that runs both frameworks: the Jest preset writes its corpus stubs (`*.storyboard.yaml` files that
 * only Jest's transformer can read) to `<rootDir>/.adcp-corpus/` (jest/preset.cts). The plugin's default include
 * (`**\/*.storyboard.yaml`) would find them — Vitest's globbing enters dot-folders — and fail each as a broken
 * storyboard, so the storyboard project excludes the folder.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { repoRoot, runNode } from '../helpers/run-vitest.js';

const stubs = join(repoRoot, 'test', 'e2e', 'project', '.adcp-corpus');
afterAll(() => rmSync(stubs, { recursive: true, force: true }));

it("lists no file of the Jest preset's .adcp-corpus folder, and the storyboards beside it", async () => {
  mkdirSync(join(stubs, 'universal'), { recursive: true });
  // What a stub looks like to a YAML loader: not a storyboard.
  writeFileSync(
    join(stubs, 'universal', 'capability-discovery.storyboard.yaml'),
    '# vitest-adcp corpus storyboard: universal/capability-discovery.yaml\n',
  );
  const run = await runNode(
    [
      join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'),
      'list',
      '--filesOnly',
      '--config',
      join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts'),
    ],
    {
      env: {
        ADCP_AGENT_URL: undefined,
        E2E_STORYBOARDS: 'test/e2e/project/**/*.storyboard.yaml,fixtures/storyboards/discovery.storyboard.yaml',
      },
    },
  );
  expect(run.exitCode, run.stderr).toBe(0);
  const files = run.stdout.split('\n').filter(Boolean);
  expect(
    files.some((f) => f.endsWith('fixtures/storyboards/discovery.storyboard.yaml')),
    run.stdout,
  ).toBe(true);
  expect(files.filter((f) => f.includes('.adcp-corpus'))).toEqual([]);
});
