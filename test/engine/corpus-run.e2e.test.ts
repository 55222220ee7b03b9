/**
 * Robustness: every storyboard of the @adcp/sdk corpus runs to completion
 * through the engine against our fixture agent (which implements only a few
 * tasks, so most steps fail — on the agent's answers, never on us).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { resolveCorpus } from '../../src/corpus.js';
import { StoryboardRun } from '../../src/engine/run.js';
import { listCorpus } from '../../src/plugin/select.js';
import { schemaRegistryFor } from '../../src/schemas/registry.js';
import { loadStoryboardFile } from '../../src/storyboard/load.js';
import { loadTestKit, resolveTestKitPath } from '../../src/storyboard/test-kit.js';
import { McpTransport } from '../../src/transport/mcp.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

it('runs all corpus storyboards to the end, with no internal error and no literal placeholder on the wire', async () => {
  const corpus = resolveCorpus(undefined);
  const schemas = schemaRegistryFor(corpus.schemasDir!);
  let steps = 0;
  const internal: string[] = [];
  const leakedPlaceholders: string[] = [];
  for (const entry of listCorpus(corpus.root)) {
    const loaded = loadStoryboardFile(entry.file, { corpusRoot: corpus.root });
    if (!loaded.ok) throw new Error(`${entry.path} does not load`);
    const kitRef = loaded.storyboard.prerequisites?.test_kit;
    const testKit = kitRef ? loadTestKit(resolveTestKitPath(kitRef, { storyboardFile: entry.file, corpusRoot: corpus.root })) : undefined;
    const run = new StoryboardRun(loaded.storyboard, { transport: () => new McpTransport({ url: agent.url, maxResponseBytes: 10 << 20 }), schemas, testKit, timeoutMs: 5_000 });
    for (const { result } of await run.runAll()) {
      steps++;
      if (result.error?.includes('internal error')) internal.push(`${entry.path} ${result.step_id}: ${result.error}`);
      // A request that reached the agent never carries an unresolved token.
      if (result.response && /\$context\.|\{\{/.test(JSON.stringify(result.request?.payload ?? null))) leakedPlaceholders.push(`${entry.path} ${result.step_id}`);
    }
    await run.close();
  }
  expect(steps).toBeGreaterThan(450);
  expect(internal).toEqual([]);
  expect(leakedPlaceholders).toEqual([]);
});
