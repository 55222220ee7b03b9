#!/usr/bin/env node
/**
 * The whole @adcp/sdk corpus (84 storyboards, ~500 steps) through the engine
 * against the bundled fixture agent, then through the reference runner of
 * @adcp/sdk against a fresh fixture agent, in one process: wall time, step
 * verdict counts, check kinds we do not implement yet, and internal errors
 * (must be 0: a bug of ours costs one step, never the run).
 *
 *   npm run bench:corpus             (builds dist/ first)
 */
import { performance } from 'node:perf_hooks';
import { adcp, corpus, runOurs, runReference, startFixtureAgent } from './lib.mjs';

const entries = adcp.listCorpus(corpus.root);

async function runAll(runner, url) {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  const unsupported = {};
  const internal = [];
  for (const entry of entries) {
    let steps;
    try {
      steps = await runner(entry.file, url);
    } catch {
      counts.failed++; // the reference runner can throw on a whole storyboard
      continue;
    }
    for (const { status, result } of steps) {
      counts[status]++;
      if (result?.error?.includes('internal error')) internal.push(`${entry.path} ${result.step_id}`);
      for (const v of result?.validations ?? [])
        if (!v.passed && v.error?.startsWith('check "')) unsupported[v.check] = (unsupported[v.check] ?? 0) + 1;
    }
  }
  return { counts, unsupported, internal };
}

async function measure(runner) {
  const agent = await startFixtureAgent();
  try {
    const started = performance.now();
    const outcome = await runAll(runner, agent.url);
    return { ...outcome, ms: performance.now() - started };
  } finally {
    await agent.close();
  }
}

const heapBefore = process.memoryUsage().heapUsed;
const ours = await measure(runOurs);
const heapAfter = process.memoryUsage().heapUsed;
const theirs = await measure(runReference);

console.log(`corpus: ${corpus.version}, ${entries.length} storyboards`);
console.log(
  `vitest-adcp engine: ${ours.ms.toFixed(0)} ms, steps ${JSON.stringify(ours.counts)}, heap +${((heapAfter - heapBefore) / 1048576).toFixed(1)} MiB, rss ${(process.memoryUsage().rss / 1048576).toFixed(0)} MiB`,
);
console.log(
  `reference runner:   ${theirs.ms.toFixed(0)} ms, steps ${JSON.stringify(theirs.counts)} (it skips storyboards/steps the agent does not claim, so it grades fewer)`,
);
console.log(`time ratio (ours / reference): ${(ours.ms / theirs.ms).toFixed(2)}`);
console.log(`check kinds not implemented yet, failing validations: ${JSON.stringify(ours.unsupported)}`);
console.log(
  `internal errors: ${ours.internal.length}${ours.internal.length ? ` (${ours.internal.slice(0, 5).join(', ')})` : ''}`,
);
