/**
 * Robustness: every storyboard of the @adcp/sdk corpus runs to completion
 * through the engine against our fixture agent (which implements only a few
 * tasks, so most steps fail — on the agent's answers, never on us).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { resolveCorpus } from '../../src/corpus.js';
import { openStoryboardRun } from '../../src/open-run.js';
import { listCorpus } from '../../src/storyboard/select.js';
import { loadStoryboardFile } from '../../src/storyboard/load.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

it('runs all corpus storyboards to the end, with no internal error and no literal placeholder on the wire', async () => {
  const corpus = resolveCorpus(undefined);
  let steps = 0;
  const internal: string[] = [];
  const leakedPlaceholders: string[] = [];
  for (const entry of listCorpus(corpus.root)) {
    const loaded = loadStoryboardFile(entry.file, { corpusRoot: corpus.root });
    if (!loaded.ok) throw new Error(`${entry.path} does not load`);
    const run = openStoryboardRun(
      loaded.storyboard,
      { agentUrl: agent.url, corpusRoot: corpus.root, timeoutMs: 5_000 },
      { env: {} },
    );
    for (const { result } of await run.runAll()) {
      steps++;
      if (result.error?.includes('internal error')) internal.push(`${entry.path} ${result.step_id}: ${result.error}`);
      // A request that reached the agent never carries an unresolved token.
      if (result.response && /\$context\.|\{\{/.test(JSON.stringify(result.request?.payload ?? null)))
        leakedPlaceholders.push(`${entry.path} ${result.step_id}`);
    }
    await run.close();
  }
  expect(steps).toBeGreaterThan(450);
  expect(internal).toEqual([]);
  expect(leakedPlaceholders).toEqual([]);
});
