#!/usr/bin/env node
/**
 * Running storyboards, ours against the reference runner of @adcp/sdk, in one
 * process, against the bundled fixture agent on 127.0.0.1: wall time per
 * storyboard run (median of N) and the ratio, plus whether the two runners
 * agree on each step's verdict across the agent's misbehaviours.
 *
 *   npm run bench:run                (builds dist/ first)
 *   node bench/run.mjs --rounds 20
 *   node bench/run.mjs --protocol a2a   (the fixture agent's A2A endpoints, both runners over A2A)
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  corpus,
  median,
  root,
  runOurs as runOursOn,
  runReference as runReferenceOn,
  startFixtureAgent,
} from './lib.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '10' }, protocol: { type: 'string', default: 'mcp' } },
});
const protocol = values.protocol === 'a2a' ? 'a2a' : 'mcp';
const rounds = Number(values.rounds);
const storyboards = {
  capability_discovery: join(corpus.root, 'universal', 'capability-discovery.yaml'),
  fixture_discovery: join(root, 'fixtures', 'storyboards', 'discovery.storyboard.yaml'),
};

async function timed(fn) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const started = await startFixtureAgent();
/** The agent, its URLs on the chosen protocol. */
const agent =
  protocol === 'a2a'
    ? { url: started.a2aUrl, urlFor: (b) => started.a2aUrlFor(b), close: () => started.close() }
    : started;
const runOurs = (file, url) => runOursOn(file, url, protocol);
const runReference = (file, url) => runReferenceOn(file, url, protocol);
try {
  console.log(`rounds: ${rounds}; agent ${agent.url} (${protocol})\n`);
  console.log('storyboard'.padEnd(24), 'vitest-adcp ms'.padStart(15), 'reference ms'.padStart(13), 'ratio'.padStart(7));
  for (const [name, file] of Object.entries(storyboards)) {
    // Warm: schema compiles, connections.
    await runOurs(file, agent.url);
    await runReference(file, agent.url);
    const ours = [];
    const theirs = [];
    for (let i = 0; i < rounds; i++) {
      ours.push(await timed(() => runOurs(file, agent.url)));
      theirs.push(await timed(() => runReference(file, agent.url)));
    }
    console.log(
      name.padEnd(24),
      median(ours).toFixed(1).padStart(15),
      median(theirs).toFixed(1).padStart(13),
      (median(ours) / median(theirs)).toFixed(2).padStart(7),
    );
  }

  console.log('\nverdict agreement (step passed?) per behaviour:');
  const behaviours = [
    undefined,
    'wrong_value',
    'drop_context',
    'schema_invalid',
    'text_only',
    'error_response',
    'error_text_only',
    'error_jsonrpc',
  ];
  let agree = 0;
  let total = 0;
  const disagreements = [];
  for (const [name, file] of Object.entries(storyboards)) {
    for (const behaviour of behaviours) {
      const url = behaviour ? agent.urlFor([behaviour]) : agent.url;
      const ours = await runOurs(file, url);
      const theirs = new Map((await runReference(file, url)).map((s) => [s.key, s.status === 'passed']));
      for (const step of ours) {
        const passed = step.status === 'passed';
        total++;
        if (passed === theirs.get(step.key)) agree++;
        else
          disagreements.push(
            `${name} @ ${behaviour ?? 'conformant'}: ${step.key} — vitest-adcp ${passed ? 'pass' : 'fail'}, reference ${theirs.get(step.key) ? 'pass' : 'fail'}`,
          );
      }
    }
  }
  console.log(`  ${agree}/${total} step verdicts agree`);
  for (const d of disagreements) console.log(`  differs: ${d}`);
} finally {
  await agent.close();
}
