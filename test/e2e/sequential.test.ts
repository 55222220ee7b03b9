/**
 * `sequential: true` (`npx vitest-adcp --sequential`): storyboard files run one at a time, in the reference runner's
 * order — here the order the ids are named in — observed where it matters, at the agent: its call log. The three
 * storyboards each call a tool the others do not, and are named smallest file first, the reverse of Vitest's own
 * order (its results cache off: larger files first), so the run fails without the plugin's sequencer, and
 * interleaves without its single worker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { repoRoot, runVitest } from '../helpers/run-vitest.js';

const config = `${repoRoot}/test/e2e/sequential.config.ts`;

/** Each storyboard by the one tool only it calls; named in ascending file size (10.6, 11.7, 19.9 kB). */
const storyboards = [
  ['pagination_integrity_creative_formats', 'list_creative_formats'],
  ['pagination_integrity', 'list_creatives'],
  ['error_compliance', 'get_products'],
] as const;

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

/** The storyboards in the order the agent heard from them, consecutive calls of one storyboard as one entry. */
function orderAtAgent(): string[] {
  const byTool = new Map<string, string>(storyboards.map(([id, tool]) => [tool, id]));
  const order: string[] = [];
  for (const call of agent.calls) {
    const id = byTool.get(call.tool);
    if (id && order.at(-1) !== id) order.push(id);
  }
  return order;
}

describe('sequential: true', () => {
  it('runs the storyboards one at a time, in the selection order, in one worker of the non-isolated project', async () => {
    agent.resetCalls();
    const run = await runVitest({
      config,
      env: { ADCP_AGENT_URL: agent.url, E2E_CORPUS: storyboards.map(([id]) => id).join(',') },
    });
    expect(run.moduleErrors, run.stdout + run.stderr).toEqual([]);
    expect(
      new Set(run.tests.map((t) => t.meta?.adcp?.id ?? t.module)).size,
      run.stdout + run.stderr,
    ).toBeGreaterThanOrEqual(3);
    expect(orderAtAgent(), `calls: ${agent.calls.map((c) => c.tool).join(' ')}`).toEqual(storyboards.map(([id]) => id));
    const projects = [...new Set(run.tests.map((t) => JSON.stringify(t.project)))].map((p) => JSON.parse(p));
    expect(projects).toEqual([expect.objectContaining({ name: 'vitest-adcp', isolate: false, maxWorkers: 1 })]);
  });

  // Not sequential: the run host runs the files ahead of their tests, the longest first; the workers take them in the
  // order the run before ended them in (workers.ts finishFirst), and on a first run — a cache directory of its own: the
  // other tests' runs of these corpus files keep their end times in the shared one — smallest first, roughly the order
  // their outcomes are ready in. Vitest's own order here (its results cache off) is larger first: the run fails without
  // the plugin's sequencer.
  it('without it, the workers take the storyboard files smallest first on a first run', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'sequential-cache-'));
    const run = await runVitest({
      config,
      args: ['--maxWorkers=1'],
      env: {
        ADCP_AGENT_URL: agent.url,
        E2E_CORPUS: storyboards.map(([id]) => id).join(','),
        E2E_SEQUENTIAL: '0',
        E2E_CACHE_DIR: cacheDir,
      },
    }).finally(() => rmSync(cacheDir, { recursive: true, force: true }));
    expect(run.moduleErrors, run.stdout + run.stderr).toEqual([]);
    const idOf = (module: string) => run.tests.find((t) => t.module === module)?.meta?.adcp?.storyboard?.id;
    expect(run.moduleStarts.map(idOf), run.stdout + run.stderr).toEqual(storyboards.map(([id]) => id));
  });
});
