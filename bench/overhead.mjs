#!/usr/bin/env node
/**
 * The engine's own cost per step — time that is not the agent's — and the
 * compiler's per file (issue 8: "the engine's own overhead below 1 ms per
 * step"). The fixture agent runs in a child process, so this process's CPU
 * time (process.cpuUsage: user + system) is the runner's alone: substitution,
 * the MCP client, JSON parsing, schema validation, grading, redaction of the
 * record. CPU time, not wall time, so a busy machine does not inflate it
 * (wall time per step is printed beside it, for reference).
 *
 *   npm run build && node bench/overhead.mjs [--rounds 5] [--skip-compile]
 *
 * Cold = the first round in a fresh process (ajv compiles the schemas a step
 * uses, the MCP session opens); warm = the median of the later rounds.
 * Not part of `npm test`.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { adcp, corpus, median, root } from './lib.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, 'skip-compile': { type: 'boolean', default: false } },
});
const rounds = Math.max(2, Number(values.rounds));

/** Storyboards that run end to end against the fixture agent: the fixture's own and capability_discovery. */
const files = [
  join(corpus.root, 'universal', 'capability-discovery.yaml'),
  ...readdirSync(join(root, 'fixtures', 'storyboards'))
    .filter((f) => f.endsWith('.storyboard.yaml'))
    .map((f) => join(root, 'fixtures', 'storyboards', f)),
];

const agent = spawn(process.execPath, [join(root, 'fixtures', 'agent', 'cli.mjs'), '--port', '0'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((resolve, reject) => {
  let out = '';
  agent.stdout.on('data', (chunk) => {
    out += chunk;
    const m = /fixture agent: (\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
  agent.once('exit', (code) => reject(new Error(`fixture agent exited (${code})`)));
});

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Loaded once, as the compiler does at transform time: what a step costs starts at the run. */
const storyboards = files
  .map((file) => adcp.loadStoryboardFile(file, { corpusRoot: corpus.root }))
  .filter((l) => l.ok)
  .map((l) => l.storyboard);

/** One round: every storyboard, a fresh run each; CPU and wall time of the whole, steps that reached the agent. */
async function round() {
  let steps = 0;
  const cpu0 = cpuMs();
  const wall0 = performance.now();
  for (const storyboard of storyboards) {
    // shareSessions: as the Vitest adapter opens its runs (one MCP session per worker, not per storyboard).
    const run = adcp.openStoryboardRun(
      storyboard,
      { agentUrl: url, corpusRoot: corpus.root, timeoutMs: 10_000, authToken: 'demo-bench', allowHttp: true },
      { env: {}, shareSessions: true },
    );
    try {
      const outcomes = await run.runAll();
      steps += outcomes.filter((o) => o.status !== 'skipped').length;
    } finally {
      await run.close();
    }
  }
  return { steps, cpu: cpuMs() - cpu0, wall: performance.now() - wall0 };
}

/**
 * One storyboard of 50 get_adcp_capabilities steps (two checks each, the context echo): the marginal cost of a step,
 * with the per-run costs (MCP session, tool list, close) spread over 50 instead of 4–5.
 */
const LONG_STEPS = 50;
const longYaml = [
  'id: overhead_long',
  'title: Fifty steps',
  'track: core',
  'phases:',
  '  - id: calls',
  '    title: Calls',
  '    steps:',
  ...Array.from({ length: LONG_STEPS }, (_, i) => [
    `      - id: caps_${i}`,
    '        title: Capabilities',
    '        task: get_adcp_capabilities',
    `        sample_request: { context: { correlation_id: "c${i}" } }`,
    '        validations:',
    '          - { check: field_present, path: adcp }',
    `          - { check: field_value, path: context.correlation_id, value: "c${i}" }`,
  ]).flat(),
].join('\n');
const longLoaded = adcp.loadStoryboard(longYaml, join(root, 'bench', 'overhead-long.storyboard.yaml'), {
  corpusRoot: corpus.root,
});
if (!longLoaded.ok)
  throw new Error(`the 50-step storyboard does not load: ${longLoaded.diagnostics.map((d) => d.message).join('; ')}`);

async function longRound() {
  const cpu0 = cpuMs();
  const wall0 = performance.now();
  const run = adcp.openStoryboardRun(
    longLoaded.storyboard,
    { agentUrl: url, corpusRoot: corpus.root, timeoutMs: 10_000, authToken: 'demo-bench', allowHttp: true },
    { env: {} },
  );
  try {
    const outcomes = await run.runAll();
    if (outcomes.some((o) => o.status !== 'passed'))
      throw new Error('the 50-step storyboard did not pass on the fixture agent');
  } finally {
    await run.close();
  }
  return { steps: LONG_STEPS, cpu: cpuMs() - cpu0, wall: performance.now() - wall0 };
}

try {
  const results = [];
  for (let i = 0; i < rounds; i++) results.push(await round());
  const [cold, ...warm] = results;
  const perStep = (r) => ({ cpu: r.cpu / r.steps, wall: r.wall / r.steps });
  const warmCpu = median(warm.map((r) => perStep(r).cpu));
  const warmWall = median(warm.map((r) => perStep(r).wall));

  // The compiler: every corpus storyboard file, CPU per file (warm: the loader's caches filled by a first pass).
  const corpusFiles = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (
        entry.name.endsWith('.yaml') &&
        !/test-kits|storyboard-schema|runner-output-contract/.test(join(dir, entry.name))
      )
        corpusFiles.push(join(dir, entry.name));
    }
  };
  for (const sub of ['universal', 'protocols', 'specialisms']) walk(join(corpus.root, sub));
  const sources = corpusFiles.map((file) => [file, readFileSync(file, 'utf8')]);
  const compileAll = () => {
    const c0 = cpuMs();
    for (const [file, source] of sources)
      adcp.compileStoryboard(source, file, { runtime: 'vitest-adcp/runtime', corpusRoot: corpus.root });
    return (cpuMs() - c0) / sources.length;
  };
  const compileCold = values['skip-compile'] ? NaN : compileAll();
  const compileWarm = values['skip-compile'] ? NaN : median([compileAll(), compileAll(), compileAll()]);

  console.log(
    `fixture agent ${url}; ${files.length} storyboards, ${cold.steps} graded steps per round, ${rounds} rounds\n`,
  );
  console.log('| | CPU ms per step (the runner) | wall ms per step |');
  console.log('|---|--:|--:|');
  console.log(`| cold (first round) | ${perStep(cold).cpu.toFixed(2)} | ${perStep(cold).wall.toFixed(2)} |`);
  console.log(`| warm (median of ${warm.length}) | ${warmCpu.toFixed(2)} | ${warmWall.toFixed(2)} |`);
  const long = [];
  for (let i = 0; i < rounds; i++) long.push(await longRound());
  console.log(
    `| one run of ${LONG_STEPS} steps (median of ${rounds}) | ${median(long.map((r) => perStep(r).cpu)).toFixed(2)} | ${median(long.map((r) => perStep(r).wall)).toFixed(2)} |`,
  );
  console.log(
    `\ncompile (loader + compiler), ${sources.length} corpus files: ${compileCold.toFixed(2)} ms CPU per file cold, ${compileWarm.toFixed(2)} ms warm`,
  );
} finally {
  await adcp.closeSharedSessions();
  agent.kill();
}
