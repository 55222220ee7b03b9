#!/usr/bin/env node
/**
 * Running storyboards, ours against the reference runner of @adcp/sdk, in one
 * process, against the bundled fixture agent on 127.0.0.1: wall time per
 * storyboard run (median of N) and the ratio, plus whether the two runners
 * agree on each step's verdict across the agent's misbehaviours.
 *
 *   npm run bench:run                (builds dist/ first)
 *   node bench/run.mjs --rounds 20
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '10' } } });
const rounds = Number(values.rounds);
const root = new URL('..', import.meta.url).pathname;
const dist = (p) => import(join(root, 'dist', p));
const [{ StoryboardRun }, { McpTransport }, { loadStoryboardFile }, { schemaRegistryFor }, { resolveCorpus }, { loadTestKit }] = await Promise.all([
  dist('engine/run.js'),
  dist('transport/mcp.js'),
  dist('storyboard/load.js'),
  dist('schemas/registry.js'),
  dist('corpus.js'),
  dist('storyboard/test-kit.js'),
]);
const reference = await import('@adcp/sdk/testing');
const { startFixtureAgent } = await import(join(root, 'fixtures', 'agent', 'server.mjs'));

const corpus = resolveCorpus(undefined, root);
const schemas = schemaRegistryFor(corpus.schemasDir);
const kitFile = join(corpus.root, 'test-kits', 'acme-outdoor.yaml');
const kit = loadTestKit(kitFile);
const storyboards = {
  capability_discovery: join(corpus.root, 'universal', 'capability-discovery.yaml'),
  fixture_discovery: join(root, 'fixtures', 'storyboards', 'discovery.storyboard.yaml'),
};

async function ours(file, url) {
  const loaded = loadStoryboardFile(file, { corpusRoot: corpus.root });
  const run = new StoryboardRun(loaded.storyboard, {
    transport: () => new McpTransport({ url, maxResponseBytes: 10 << 20 }),
    schemas,
    testKit: file.includes('fixtures') ? loadTestKit(join(root, 'fixtures', 'test-kits', 'fixture-brand.yaml')) : kit,
    timeoutMs: 10_000,
  });
  const outcomes = await run.runAll();
  await run.close();
  return Object.fromEntries(outcomes.map((o) => [`${o.result.phase_id}.${o.result.step_id}`, o.status === 'passed']));
}

async function theirs(file, url) {
  const kitData = parse(readFileSync(file.includes('fixtures') ? join(root, 'fixtures', 'test-kits', 'fixture-brand.yaml') : kitFile, 'utf8'));
  const result = await reference.runStoryboard(url, reference.loadStoryboardFile(file), { allow_http: true, test_kit: kitData, auth: { type: 'bearer', token: kitData.auth.api_key } });
  const steps = {};
  for (const phase of result.phases) for (const step of phase.steps) steps[`${phase.phase_id}.${step.step_id}`] = step.passed;
  return steps;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const agent = await startFixtureAgent();
const silence = console.log;
try {
  console.log(`rounds: ${rounds}; agent ${agent.url}\n`);
  console.log('storyboard'.padEnd(24), 'vitest-adcp ms'.padStart(15), 'reference ms'.padStart(13), 'ratio'.padStart(7));
  for (const [name, file] of Object.entries(storyboards)) {
    const a = [];
    const b = [];
    await ours(file, agent.url); // warm: schema compile, connections
    await theirs(file, agent.url);
    for (let i = 0; i < rounds; i++) {
      let t = performance.now();
      await ours(file, agent.url);
      a.push(performance.now() - t);
      t = performance.now();
      await theirs(file, agent.url);
      b.push(performance.now() - t);
    }
    console.log(name.padEnd(24), median(a).toFixed(1).padStart(15), median(b).toFixed(1).padStart(13), (median(a) / median(b)).toFixed(2).padStart(7));
  }

  console.log('\nverdict agreement (step passed?) per behaviour:');
  const behaviours = [undefined, 'wrong_value', 'drop_context', 'schema_invalid', 'text_only', 'error_response', 'error_text_only', 'error_jsonrpc'];
  let agree = 0;
  let total = 0;
  const disagreements = [];
  for (const [name, file] of Object.entries(storyboards)) {
    for (const behaviour of behaviours) {
      const url = behaviour ? agent.urlFor([behaviour]) : agent.url;
      const [x, y] = await Promise.all([ours(file, url), theirs(file, url)]);
      for (const key of Object.keys(x)) {
        total++;
        if (x[key] === y[key]) agree++;
        else disagreements.push(`${name} @ ${behaviour ?? 'conformant'}: ${key} — vitest-adcp ${x[key] ? 'pass' : 'fail'}, reference ${y[key] ? 'pass' : 'fail'}`);
      }
    }
  }
  console.log(`  ${agree}/${total} step verdicts agree`);
  for (const d of disagreements) console.log(`  differs: ${d}`);
} finally {
  console.log = silence;
  await agent.close();
}
