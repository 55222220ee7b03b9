#!/usr/bin/env node
/**
 * What a user waits for: whole processes, as they would type them, against
 * the same agent, alternating, in one session — medians and the ratio to the
 * reference runner, and peak RSS of the largest process of each run.
 *
 *   reference   npx adcp storyboard run <url> --json          (its capability-selected storyboards)
 *   vitest      npx vitest run   with a config that has only adcpStoryboards({ compliance: { storyboards } })
 *   cli         npx vitest-adcp <url>                          (capability-selected, like the reference)
 *
 * Both run the package as a user has it: installed under node_modules of a
 * repository of its own (userRepo), with Vitest's default config loader.
 *
 * `vitest` runs the ids the reference ran, so both grade the same storyboards;
 * every other setting is Vitest's default. The agents are the SDK's example
 * agents (bench/compare/agents.mjs), started once per agent with their mock
 * upstream on 127.0.0.1.
 *
 *   npm run bench:speed                                  (builds dist/ first)
 *   node bench/speed.mjs --agents seller-guaranteed,signals-marketplace --rounds 3
 *
 * Peak RSS is each process's own high-water mark (VmHWM, written by
 * test/helpers/rss-probe.mjs), the largest one reported — the figure to hold
 * against "300 MB per worker". Not part of `npm test`.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AGENTS } from './compare/agents.mjs';
import { childEnv } from './compare/ours.mjs';
import { answersHttp, freePort, startProcess, stopProcess, waitUntilReady } from './compare/processes.mjs';

const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const sdkRoot = join(root, 'node_modules', '@adcp', 'sdk');
const preload = join(root, 'bench', 'compare', 'listen-local.mjs');
const work = join(root, '.vitest-adcp', 'speed');

const { values } = parseArgs({ options: { agents: { type: 'string', default: 'seller-guaranteed,signals-marketplace' }, rounds: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);
const rssProbe = join(root, 'test', 'helpers', 'rss-probe.mjs');

/**
 * Runs `command args`; wall ms, peak RSS (MB) of its largest process, exit code, stdout. Each Node process of the run
 * writes its own high-water mark (VmHWM) through test/helpers/rss-probe.mjs (NODE_OPTIONS reaches Vitest's workers):
 * GNU time's %M cannot say this, because Linux carries ru_maxrss across fork, so a worker inherits its parent's figure.
 */
function timed(command, args, { cwd, env }) {
  return new Promise((resolve) => {
    const probes = join(work, `rss-${process.hrtime.bigint()}`);
    mkdirSync(probes, { recursive: true });
    const probeEnv = { ...env, RSS_PROBE_DIR: probes, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --import=${rssProbe}`.trim() };
    const started = performance.now();
    const child = spawn(command, args, { cwd, env: probeEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => {
      const ms = performance.now() - started;
      const peaks = readdirSync(probes).filter((f) => /^\d+\.json$/.test(f)).map((f) => JSON.parse(readFileSync(join(probes, f), 'utf8')).peakKiB);
      rmSync(probes, { recursive: true, force: true });
      resolve({ ms, rssMb: Math.max(0, ...peaks) / 1024, code, stdout, stderr });
    });
  });
}

async function withAgent(spec, fn) {
  const ports = { agent: await freePort(), mock: spec.mock ? await freePort() : undefined };
  const env = { ...process.env, NODE_ENV: 'development', ...(spec.env?.(ports) ?? {}), ADCP_BENCH_PORT_MAP: JSON.stringify(spec.fixedPort ? { [spec.fixedPort]: ports.agent } : {}) };
  let mock;
  let agent;
  try {
    if (spec.mock) {
      mock = startProcess(`mock ${spec.mock}`, process.execPath, ['--import', preload, join(sdkRoot, 'bin', 'adcp.js'), 'mock-server', spec.mock, '--port', String(ports.mock)], { cwd: root, env, logFile: join(work, `${spec.name}-mock.log`) });
      await waitUntilReady(mock, answersHttp(`http://127.0.0.1:${ports.mock}/_debug/traffic`), { timeoutMs: 90_000 });
    }
    agent = startProcess(spec.name, join(root, 'node_modules', '.bin', 'tsx'), ['--import', preload, join(sdkRoot, 'examples', spec.example)], { cwd: root, env, logFile: join(work, `${spec.name}-agent.log`) });
    const url = `http://127.0.0.1:${ports.agent}/mcp`;
    await waitUntilReady(agent, answersHttp(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(spec.auth ? { authorization: `Bearer ${spec.auth}` } : {}) }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: {} }) }), { timeoutMs: 90_000 });
    return await fn(url);
  } finally {
    await stopProcess(agent);
    await stopProcess(mock);
  }
}

/**
 * A user's repository: the package installed under node_modules/vitest-adcp (package.json, dist/, schema/, as `npm
 * pack` ships them) and every other dependency linked from this repository's node_modules. Where the package sits
 * matters: Vitest runs node_modules packages natively but passes any other file (an absolute dist/ path, say) through
 * Vite's module runner in each worker, which is slower and not what users run.
 */
function userRepo(name) {
  const dir = join(work, name);
  const modules = join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  // Not this repository's caches (.vite, .cache): each bench repository starts with its own, as a fresh install does.
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry !== '.vite' && entry !== '.cache' && entry !== '.package-lock.json') symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
  }
  mkdirSync(join(modules, 'vitest-adcp'));
  for (const part of ['package.json', 'dist', 'schema']) cpSync(join(root, part), join(modules, 'vitest-adcp', part), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `bench-${name}`, private: true, type: 'module' }));
  return dir;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function benchAgent(spec) {
  return withAgent(spec, async (url) => {
    const env = childEnv({ ADCP_AGENT_URL: url, ...(spec.auth ? { ADCP_AUTH_TOKEN: spec.auth } : {}) });
    const reference = () => timed('npx', ['--no', 'adcp', 'storyboard', 'run', url, '--json', '--allow-http', ...(spec.auth ? ['--auth', spec.auth] : [])], { cwd: root, env });
    // The storyboards the reference chose, for the `vitest` entry point.
    const first = await reference();
    const ids = JSON.parse(first.stdout).storyboards_executed ?? [];
    if (ids.length === 0) throw new Error(`the reference ran no storyboards against ${spec.name}: ${first.stderr.slice(-500)}`);
    const dir = userRepo(spec.name);
    writeFileSync(
      join(dir, 'vitest.config.mjs'),
      `import { defineConfig } from 'vitest/config';\nimport { adcpStoryboards } from 'vitest-adcp';\nexport default defineConfig({ plugins: [adcpStoryboards({ compliance: { storyboards: ${JSON.stringify(ids)} } })] });\n`,
    );
    const vitest = () => timed(process.execPath, [join(dir, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], { cwd: dir, env });
    const cli = () => timed(process.execPath, [join(dir, 'node_modules', 'vitest-adcp', 'dist', 'cli.js'), url], { cwd: dir, env });
    const samples = { reference: [], vitest: [], cli: [] };
    for (let round = 0; round < rounds; round++) {
      for (const [name, run] of Object.entries({ reference, vitest, cli })) {
        const r = await run();
        samples[name].push(r);
        const steps = [/Test Files\s+(.*)$/m, /Tests\s+(.*)$/m].map((re) => re.exec(r.stdout + r.stderr)?.[1] ?? '').join(' · ');
        console.error(`  ${spec.name} round ${round + 1} ${name.padEnd(9)} ${(r.ms / 1000).toFixed(1)} s, ${r.rssMb.toFixed(0)} MB, exit ${r.code} ${steps}`);
      }
    }
    // The first round runs with empty caches (compiled storyboards, validators, selection): a fresh install's first run.
    const row = (name) => ({ s: median(samples[name].map((r) => r.ms)) / 1000, first: samples[name][0].ms / 1000, rss: Math.max(...samples[name].map((r) => r.rssMb)) });
    return { agent: spec.name, storyboards: ids.length, reference: row('reference'), vitest: row('vitest'), cli: row('cli') };
  });
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const results = [];
for (const name of values.agents.split(',')) {
  const spec = AGENTS.find((a) => a.name === name);
  if (!spec) throw new Error(`unknown agent ${name}`);
  results.push(await benchAgent(spec));
}
console.log(`\n| agent | storyboards | reference | \`npx vitest run\` (ratio) | \`npx vitest-adcp <url>\` (ratio) | first run, cold caches: vitest / cli | peak RSS ref / vitest / cli |`);
console.log('|---|--:|--:|--:|--:|--:|--:|');
for (const r of results) {
  console.log(
    `| ${r.agent} | ${r.storyboards} | ${r.reference.s.toFixed(2)} s | ${r.vitest.s.toFixed(2)} s (${(r.vitest.s / r.reference.s).toFixed(2)}) | ${r.cli.s.toFixed(2)} s (${(r.cli.s / r.reference.s).toFixed(2)}) | ${r.vitest.first.toFixed(2)} / ${r.cli.first.toFixed(2)} s | ${r.reference.rss.toFixed(0)} / ${r.vitest.rss.toFixed(0)} / ${r.cli.rss.toFixed(0)} MB |`,
  );
}
console.log(`\nmedians of ${rounds} alternating rounds; ${new Date().toISOString()}`);
