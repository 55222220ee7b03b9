/**
 * `StoryboardRun.takeTurns` (src/engine/run.ts): a runner that shares the agent between runs (the run host) is asked
 * before each step, by the step's index in `planned()`, and told after it — the step's call (and only it) between the
 * two, and the step after waits for its turn. Against the fixture agent, counted at a proxy.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { openStoryboardRun } from '../../src/open-run.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { countingProxy, type CountingProxy } from '../helpers/counting-proxy.js';
import { phasedStoryboard } from '../helpers/inline-run.js';

let proxy: CountingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

describe('StoryboardRun.takeTurns', () => {
  it('asks before each step, tells after it, and the step calls the agent in between', async () => {
    const loaded = loadStoryboard(
      phasedStoryboard([
        { id: 'p', steps: [{ id: 'a', task: 'get_adcp_capabilities' }] },
        {
          id: 'q',
          steps: [
            { id: 'b', task: 'list_creative_formats' },
            { id: 'c', task: 'get_adcp_capabilities' },
          ],
        },
      ]),
      '/virtual/step-turns.storyboard.yaml',
    );
    if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
    proxy = await countingProxy(`${inject('agentOrigin')}/mcp`);
    const run = openStoryboardRun(loaded.storyboard, { agentUrl: proxy.url, timeoutMs: 10_000 }, { env: {} });
    expect(run.planned().map((s) => `${s.phase.id}/${s.step.id}`)).toEqual(['p/a', 'q/b', 'q/c']);
    const log: string[] = [];
    let release: (() => void) | undefined;
    run.takeTurns({
      before: async (index) => {
        log.push(`before ${index} (${proxy!.toolCalls().length} calls)`);
        // The second step waits until this test gives it its turn.
        if (index === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      after: (index) => log.push(`after ${index} (${proxy!.toolCalls().length} calls)`),
    });
    const all = run.runAll();
    while (!release) await new Promise((resolve) => setTimeout(resolve, 10));
    // Waiting for its turn: the second step has not called the agent.
    expect(proxy.toolCalls()).toEqual(['get_adcp_capabilities']);
    release();
    await all;
    await run.close();
    expect(log).toEqual([
      'before 0 (0 calls)',
      'after 0 (1 calls)',
      'before 1 (1 calls)',
      'after 1 (2 calls)',
      'before 2 (2 calls)',
      'after 2 (3 calls)',
    ]);
  });
});
