#!/usr/bin/env node
/**
 * What a user waits for: whole processes, as they would type them, against
 * the same agent, alternating, in one session — medians and the ratio to the
 * reference runner, and peak RSS of each run's processes.
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
 *   npm run bench:speed                                  (builds dist/ first; latency mode, 0 and 50 ms)
 *   node bench/speed.mjs --agents seller-guaranteed,signals-marketplace --latency 0,20,50,150 --rounds 3
 *   node bench/speed.mjs --latency off                   (the agent on 127.0.0.1 directly, no proxy: the old table)
 *
 * The SDK (bench/compare/sdk.mjs): without `--sdk`, this repository's devDependency @adcp/sdk (6.11.0, AdCP 3.0.6).
 * `--sdk <dir>` names a directory whose node_modules/@adcp/sdk is another one (/work/ref/sdk13: 13.0.0, AdCP
 * 3.1.15); then everything comes from it, as for compare-reference.mjs: its example agents (its agent set,
 * bench/compare/agents.mjs agentSet) and their mock upstreams, the reference (`npx adcp storyboard run`, run in that
 * directory, ADCP_SKIP_VERSION_CHECK=1), and the @adcp/sdk installed in the user's repositories — so that our
 * runner there picks, on its own, the corpus that SDK pins (the bin's first line, recorded, names it; a warning when
 * it is not the reference's). `--dist <dir>` installs another build (default dist/; copied once at start, so a
 * rebuild meanwhile changes nothing), `--out <dir>` puts the tables elsewhere (default bench/out). The tables and
 * the .json say which SDK and which corpora were measured.
 *
 *   npm run bench:speed:sdk13                            (= --sdk /work/ref/sdk13 --out bench/out/sdk13)
 *   node bench/speed.mjs --sdk /work/ref/sdk13 --agents seller-guaranteed --latency 0,50 --rounds 3
 *
 * Latency mode (`--latency <ms,ms,…>`, default 0,50): the runners reach the agent through a delaying proxy
 * (bench/compare/delay-proxy.mjs, in this process) that holds every HTTP request N ms before it forwards it and
 * passes the answer back as it streams (SSE included) — an agent across a network. For each latency, `--rounds`
 * rounds of reference / vitest / cli, alternating; medians and ours/reference; and before them `--cold-rounds`
 * (default: `--rounds`) cold runs of vitest and of cli, alternating, each after emptying node_modules/.vite in the user's
 * repository and the modules (and the storyboards they name) kept in this user's cache directory (our caches and
 * Vite's and Vitest's: a first run after `npm ci`), their median held against the reference's median and our warm one,
 * with their largest peak RSS; then, after each, the next CI job's run (README, "Keeping the
 * caches in CI"): the user's cache directories emptied again and every file of node_modules/ written anew (as `npm ci`
 * leaves them), the cache directory the first run made kept, the key from ADCP_CACHE_KEY (every run of ours has it).
 * Before the timed rounds (which so all run with warm caches):
 *   - the count pass: each storyboard the reference ran, run alone through the bin, by its YAML file
 *     (`npx vitest-adcp <url> --storyboards <file>`: that storyboard only, not the scenarios it requires — they are
 *     in the list themselves), every request held `--count-latency` ms (default 20). The proxy records the run's
 *     requests: everything a run of that storyboard needs (the plugin's preflight, the MCP handshakes, its steps;
 *     polls too, so a HITL storyboard's count can vary with timing), and from their intervals the chain — the most
 *     requests that ran one after another, each sent after the previous answer ended (requests in flight together,
 *     such as the MCP client's GET stream beside its next POST, count once; the held ms make them overlap). No run
 *     of that storyboard can take less than chain × latency. The longest chain over the storyboards is the critical
 *     path in requests; `npx vitest-adcp <url> --list` adds the chain of the capability selection the bin makes
 *     before it starts (the `vitest` entry point names its ids, it selects nothing);
 *   - the fixed start-up: the median wall time, at 0 ms, of a run of one trivial storyboard (the one with fewest
 *     requests in the count pass that requires no scenario), per entry point (`--storyboards <id>`, and a config
 *     with `compliance: { storyboards: [<id>] }`).
 * The critical-path limit at latency L is start-up + chain × L (vitest: the longest storyboard's chain; cli: that
 * plus the selection's), and the distance to it is our median wall ÷ that limit (1.00: every storyboard in flight at
 * once and nothing else slower than in a one-storyboard run). Each run's requests and chain are counted too (medians;
 * the chain of a whole run shows how many requests it had in flight at once: requests ÷ chain). The limit counts
 * requests only: a storyboard that waits (a retry_after, a timeout) is slower than its chain says, so the tables
 * also name the slowest storyboard alone in the count pass, a floor as well.
 *
 * The agent's windows (plugin/agent-gate.ts): a seeding window runs beside other seeding windows only, an alone window
 * by itself, and meanwhile no ordinary step runs — time the limit above does not count. Our runs print the run host's
 * `agent gate` line (NODE_DEBUG=vitest-adcp): how long the agent was held by seeding windows, alone and by ordinary steps,
 * with the number of windows; the tables give the medians, and the limit with those windows added (the windows are the
 * agent's per-caller state, plan/agent-windows.ts: no schedule overlaps them) and the distance to that.
 *
 * Peak RSS is each process's own high-water mark (VmHWM, written by
 * test/helpers/rss-probe.mjs): the largest process of a run — the figure to
 * hold against "300 MB per worker" — and the sum over all processes of a run
 * (a bound: each process's own peak, whenever it was; the reference's includes
 * the npm process of `npx`). The latency mode writes its tables to
 * <out>/speed-<date>.md (and every sample to speed-<date>.json) and prints
 * them. Not part of `npm test`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { agentSet } from './compare/agents.mjs';
import { startDelayProxy, summarize } from './compare/delay-proxy.mjs';
import { copyPackage, withAgent as withAgentIn, userRepo as userRepoIn } from './compare/example-agent.mjs';
import { childEnv } from './compare/ours.mjs';
import { corpusVersion, openSdk, referenceComplianceRoot } from './compare/sdk.mjs';

const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const work = join(root, '.vitest-adcp', 'speed');

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: 'seller-guaranteed,signals-marketplace' },
    rounds: { type: 'string', default: '3' },
    // First runs (and the next CI job's) per entry point and latency: medians of this many, alternating (default: --rounds).
    'cold-rounds': { type: 'string' },
    latency: { type: 'string', default: '0,50' },
    'count-latency': { type: 'string', default: '20' },
    // The SDK whose agents and reference runner are measured, and whose corpus our runs get (bench/compare/sdk.mjs).
    sdk: { type: 'string' },
    // The build to install in the user's repositories (default dist/), and where the tables go (default bench/out).
    dist: { type: 'string' },
    out: { type: 'string' },
  },
});
const fromCwd = (p) => (isAbsolute(p) ? p : join(process.cwd(), p));
const sdk = openSdk(values.sdk, root);
const { agents: AGENTS } = agentSet(sdk);
const builtDist = values.dist ? fromCwd(values.dist) : join(root, 'dist');
if (!existsSync(join(builtDist, 'cli.js'))) throw new Error(`${builtDist} is not built: run \`npm run build\``);
const outDir = values.out ? fromCwd(values.out) : join(root, 'bench', 'out');
/** The corpus the reference runs: the one its SDK pins. */
const referenceCorpus = corpusVersion(referenceComplianceRoot(sdk));
const rounds = Number(values.rounds);
/** undefined: `--latency off`, the agent reached directly (no proxy), the old table. */
const latencies = values.latency === 'off' ? undefined : values.latency.split(',').map((ms) => Number(ms.trim()));
if (latencies?.some((ms) => !Number.isFinite(ms) || ms < 0))
  throw new Error(`--latency takes milliseconds, comma-separated (or off): ${values.latency}`);
/** The delay of the count pass: what tells requests one after another from requests in flight together. */
const countLatency = Number(values['count-latency']);
if (!(countLatency > 0)) throw new Error(`--count-latency takes milliseconds above 0: ${values['count-latency']}`);
if (!(rounds >= 1)) throw new Error(`--rounds takes a positive number: ${values.rounds}`);
const coldRounds = values['cold-rounds'] === undefined ? rounds : Number(values['cold-rounds']);
if (!(coldRounds >= 1)) throw new Error(`--cold-rounds takes a positive number: ${values['cold-rounds']}`);
const rssProbe = join(root, 'test', 'helpers', 'rss-probe.mjs');

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
/** The build every agent's user repository installs: a copy, made at start, that a rebuild meanwhile does not reach. */
const dist = copyPackage(builtDist, join(work, 'package'));
/** The example agent with its mock upstream, and a user's repository (bench/compare/example-agent.mjs), under `work`. */
const withAgent = (spec, fn) => withAgentIn(spec, fn, { work, sdk });
const userRepo = (name) => userRepoIn(work, name, { sdk, dist });

/**
 * Runs `command args`; wall ms, peak RSS (MB) of its largest process and summed over its processes, exit code, stdout. Each Node process of the run
 * writes its own high-water mark (VmHWM) through test/helpers/rss-probe.mjs (NODE_OPTIONS reaches Vitest's workers):
 * GNU time's %M cannot say this, because Linux carries ru_maxrss across fork, so a worker inherits its parent's figure.
 */
/**
 * The same work on both sides: @adcp/sdk 13.0.0's runner does not host parallel_dispatch_runner (it skips those steps
 * not_applicable, "not configured on this runner"), and idempotency's concurrent step waits an agent's retry_after
 * (the SDK 13 sellers answer IDEMPOTENCY_IN_FLIGHT with 30 s) where we host it. Ours runs without it here too.
 */
const LIKE_FOR_LIKE = sdk.major >= 13 ? { ADCP_PARALLEL_DISPATCH: '0' } : {};

function timed(command, args, { cwd, env }) {
  return new Promise((resolve) => {
    const probes = join(work, `rss-${process.hrtime.bigint()}`);
    mkdirSync(probes, { recursive: true });
    const probeEnv = {
      ...env,
      RSS_PROBE_DIR: probes,
      NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --import=${rssProbe}`.trim(),
    };
    const started = performance.now();
    const child = spawn(command, args, { cwd, env: probeEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => {
      const ms = performance.now() - started;
      const peaks = readdirSync(probes)
        .filter((f) => /^\d+\.json$/.test(f))
        .map((f) => JSON.parse(readFileSync(join(probes, f), 'utf8')).peakKiB);
      rmSync(probes, { recursive: true, force: true });
      resolve({
        ms,
        rssMb: Math.max(0, ...peaks) / 1024,
        rssSumMb: peaks.reduce((a, b) => a + b, 0) / 1024,
        processes: peaks.length,
        code,
        stdout,
        stderr,
      });
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Per entry point, its first (or kept-cache) runs in one figure: the median time, the largest peak RSS of them (the
 * figure to hold against the bound), and every sample.
 */
function coldSummary(runs) {
  return Object.fromEntries(
    Object.entries(runs).map(([name, list]) => [
      name,
      {
        ms: median(list.map((x) => x.ms)),
        rssMb: Math.max(...list.map((x) => x.rssMb)),
        code: [...new Set(list.map((x) => x.code))].join(','),
        samples: list,
      },
    ]),
  );
}

/**
 * The reference as a user of the SDK types it, `npx adcp storyboard run <url> --json --allow-http`, in the SDK's
 * directory (its node_modules/.bin/adcp). ADCP_SKIP_VERSION_CHECK: 13.x asks the npm registry for its latest
 * version otherwise, a request no run of ours makes.
 */
function runReference(url, spec, env) {
  const args = ['--no', 'adcp', 'storyboard', 'run', url, '--json', '--allow-http'];
  if (spec.auth) args.push('--auth', spec.auth);
  return timed('npx', args, { cwd: sdk.dir, env: { ...env, ADCP_SKIP_VERSION_CHECK: '1' } });
}

/** The internals of the package installed in `dir` (its dist/internal.js: what the benches drive). */
function installedInternal(dir) {
  return import(pathToFileURL(join(dir, 'node_modules', 'vitest-adcp', 'dist', 'internal.js')).href);
}

/**
 * Every file under `nodeModules` but Vite's cache directory, its times set to now: what `npm ci` leaves. Links are not
 * followed: the dependencies linked from this repository's node_modules (userRepo) are left alone, the package
 * (copied) is rewritten — the corpus and schemas of the linked @adcp/sdk are keyed by their content anyway.
 */
function rewriteInstalled(nodeModules) {
  const now = new Date();
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) {
        if (full !== join(nodeModules, '.vite')) walk(full);
      } else if (entry.isFile()) utimesSync(full, now, now);
    }
  };
  walk(nodeModules);
}

/** What the package keeps in this user's cache directory: the transformed modules and the storyboards they name. */
async function userCacheDirs(dir) {
  const { storyboardModulesDir, storedStoryboardsDir } = await installedInternal(dir);
  return [storyboardModulesDir?.(), storedStoryboardsDir?.()].filter(Boolean);
}

/**
 * The corpus our runs in `dir` get, by the installed package's own resolution (the @adcp/sdk installed there pins
 * it), as `{ root, version, choice }`.
 */
async function ourCorpus(dir) {
  const { resolveCorpus } = await installedInternal(dir);
  const found = resolveCorpus(undefined, dir);
  return { root: found.root, version: found.version ?? corpusVersion(found.root), choice: found.choice };
}

/**
 * The first line the bin printed (on stderr, before Vitest's output: `vitest-adcp: AdCP 3.1.15 compliance corpus (…)`),
 * and a warning when it names another corpus than the reference's: then the two would not run the same storyboards.
 */
function firstLine(r) {
  const line = (r.stderr.split('\n').find((l) => l.trim()) ?? '').trim();
  if (referenceCorpus && !line.includes(`AdCP ${referenceCorpus} compliance corpus`))
    console.error(
      `  warning: the bin's first line does not name the reference's corpus, AdCP ${referenceCorpus}: ${line}`,
    );
  return line;
}

async function benchAgent(spec) {
  return withAgent(spec, async (url) => {
    const env = childEnv({
      ADCP_AGENT_URL: url,
      ...(spec.auth ? { ADCP_AUTH_TOKEN: spec.auth } : {}),
      ...LIKE_FOR_LIKE,
    });
    const reference = () => runReference(url, spec, env);
    // The storyboards the reference chose, for the `vitest` entry point.
    const first = await reference();
    const ids = JSON.parse(first.stdout).storyboards_executed ?? [];
    if (ids.length === 0)
      throw new Error(`the reference ran no storyboards against ${spec.name}: ${first.stderr.slice(-500)}`);
    const dir = userRepo(spec.name);
    writeFileSync(
      join(dir, 'vitest.config.mjs'),
      `import { defineConfig } from 'vitest/config';\nimport { adcpStoryboards } from 'vitest-adcp';\nexport default defineConfig({ plugins: [adcpStoryboards({ compliance: { storyboards: ${JSON.stringify(ids)} } })] });\n`,
    );
    const vitest = () =>
      timed(process.execPath, [join(dir, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], { cwd: dir, env });
    const cli = () =>
      timed(process.execPath, [join(dir, 'node_modules', 'vitest-adcp', 'dist', 'cli.js'), url], { cwd: dir, env });
    const corpus = await ourCorpus(dir);
    const samples = { reference: [], vitest: [], cli: [] };
    for (let round = 0; round < rounds; round++) {
      for (const [name, run] of Object.entries({ reference, vitest, cli })) {
        const r = await run();
        samples[name].push(r);
        if (name === 'cli' && round === 0) corpus.firstLine = firstLine(r);
        const steps = [/Test Files\s+(.*)$/m, /Tests\s+(.*)$/m]
          .map((re) => re.exec(r.stdout + r.stderr)?.[1] ?? '')
          .join(' · ');
        console.error(
          `  ${spec.name} round ${round + 1} ${name.padEnd(9)} ${(r.ms / 1000).toFixed(1)} s, ${r.rssMb.toFixed(0)} MB, exit ${r.code} ${steps}`,
        );
      }
    }
    // The first round runs with empty caches (compiled storyboards, validators, selection): a fresh install's first run.
    const row = (name) => ({
      s: median(samples[name].map((r) => r.ms)) / 1000,
      first: samples[name][0].ms / 1000,
      rss: Math.max(...samples[name].map((r) => r.rssMb)),
    });
    return {
      agent: spec.name,
      storyboards: ids.length,
      corpus,
      reference: row('reference'),
      vitest: row('vitest'),
      cli: row('cli'),
    };
  });
}

/**
 * The longest chain of a run's requests that ran one after another (each started after the previous one's answer
 * ended): the most intervals that do not overlap, greedily by earliest end. Requests in flight together (the MCP
 * client's GET stream beside its next POST, two workers) count once.
 */
function serialDepth(records) {
  let depth = 0;
  let lastEnd = -Infinity;
  for (const r of [...records].sort((a, b) => (a.end || Infinity) - (b.end || Infinity))) {
    if (r.start >= lastEnd) {
      depth++;
      lastEnd = r.end || Infinity;
    }
  }
  return depth;
}

/** What a run graded, to see at a glance that the proxy changed nothing: step verdicts (reference), Vitest's Tests line (ours). */
function outcome(name, r) {
  if (name === 'reference') {
    try {
      const json = JSON.parse(r.stdout.slice(r.stdout.indexOf('{')));
      const n = { passed: 0, failed: 0, skipped: 0 };
      for (const track of json.tracks ?? [])
        for (const sc of track.scenarios ?? [])
          for (const st of sc.steps ?? []) n[st.skipped ? 'skipped' : st.passed ? 'passed' : 'failed']++;
      return `${n.failed} failed, ${n.passed} passed, ${n.skipped} skipped`;
    } catch {
      return 'no JSON';
    }
  }
  return (/Tests\s+(.*)$/m.exec(r.stdout + r.stderr)?.[1] ?? '?')
    .replace(/\s*\(\d+\)\s*$/, '')
    .replace(/\s+\|\s+/g, ', ');
}

/**
 * Latency mode, one agent: the agent behind the delaying proxy; the count pass and the start-up runs at 0 ms, then
 * for each latency `rounds` alternating rounds of the three entry points (see the header comment).
 */
async function benchAgentLatency(spec) {
  return withAgent(spec, async (directUrl) => {
    const direct = new URL(directUrl);
    const proxy = await startDelayProxy({ target: direct.origin });
    try {
      const url = `${proxy.origin}${direct.pathname}`;
      const env = childEnv({
        ADCP_AGENT_URL: url,
        ...(spec.auth ? { ADCP_AUTH_TOKEN: spec.auth } : {}),
        ...LIKE_FOR_LIKE,
        // A CI job's secret, for the kept-cache runs below (a run signs and reads its entries with it alike).
        ADCP_CACHE_KEY: 'bench-speed-ci-job-secret-0123456789abcdef',
      });
      /** A run through the proxy, with the proxy's records of it. */
      const counted = async (run) => {
        proxy.take();
        const r = await run();
        await new Promise((resolve) => setTimeout(resolve, 20)); // a request the process sent as it exited
        const records = proxy.take();
        return { ...r, requests: records.length, chain: serialDepth(records), traffic: summarize(records) };
      };
      const log = (what, r) =>
        console.error(
          `  ${spec.name} ${what.padEnd(34)} ${(r.ms / 1000).toFixed(2)} s, ${r.requests} requests (chain ${r.chain}), ${r.rssMb.toFixed(0)} MB max / ${r.rssSumMb.toFixed(0)} MB in ${r.processes} processes, exit ${r.code}`,
        );

      proxy.setDelay(0);
      const reference = () => counted(() => runReference(url, spec, env));
      const first = await reference();
      log('reference (selection)', first);
      const ids = JSON.parse(first.stdout).storyboards_executed ?? [];
      if (ids.length === 0)
        throw new Error(`the reference ran no storyboards against ${spec.name}: ${first.stderr.slice(-500)}`);
      const dir = userRepo(spec.name);
      const config = (name, storyboards) =>
        writeFileSync(
          join(dir, name),
          `import { defineConfig } from 'vitest/config';\nimport { adcpStoryboards } from 'vitest-adcp';\nexport default defineConfig({ plugins: [adcpStoryboards({ compliance: { storyboards: ${JSON.stringify(storyboards)} } })] });\n`,
        );
      config('vitest.config.mjs', ids);
      const vitestBin = join(dir, 'node_modules', 'vitest', 'vitest.mjs');
      const cliBin = join(dir, 'node_modules', 'vitest-adcp', 'dist', 'cli.js');
      // Ours say what the agent's windows cost each run (NODE_DEBUG=vitest-adcp: the run host's `agent gate` line).
      const ourEnv = { ...env, NODE_DEBUG: 'vitest-adcp' };
      const vitest = () => counted(() => timed(process.execPath, [vitestBin, 'run'], { cwd: dir, env: ourEnv }));
      const cli = (...args) =>
        counted(() => timed(process.execPath, [cliBin, url, ...args], { cwd: dir, env: ourEnv }));

      // The count pass: each storyboard alone, by its file (the installed package's own corpus resolution and listing),
      // with every request held countLatency ms, so that requests in flight together overlap by that much at least.
      proxy.setDelay(countLatency);
      const ours = await ourCorpus(dir);
      const { listCorpus } = await installedInternal(dir);
      const corpus = listCorpus(ours.root);
      const perStoryboard = [];
      for (const id of ids) {
        const entry = corpus.find((e) => e.id === id);
        if (!entry) throw new Error(`${id}: not in the installed corpus`);
        const r = await cli('--storyboards', entry.file);
        log(`count ${id}`, r);
        perStoryboard.push({
          id,
          requires: entry.requires ?? [],
          requests: r.requests,
          chain: r.chain,
          ms: r.ms,
          code: r.code,
          byKind: r.traffic.byKind,
        });
      }
      const selection = await cli('--list');
      log('cli --list (selection)', selection);
      const longest = perStoryboard.reduce((a, b) =>
        b.chain > a.chain || (b.chain === a.chain && b.requests > a.requests) ? b : a,
      );
      const trivial = (
        perStoryboard.some((s) => s.requires.length === 0)
          ? perStoryboard.filter((s) => s.requires.length === 0)
          : perStoryboard
      ).reduce((a, b) => (b.requests < a.requests ? b : a));

      // Fixed start-up: one trivial storyboard at 0 ms, each entry point.
      proxy.setDelay(0);
      config('vitest.one.config.mjs', [trivial.id]);
      const startup = { vitest: [], cli: [] };
      for (let round = 0; round < rounds; round++) {
        const v = await counted(() =>
          timed(process.execPath, [vitestBin, 'run', '--config', 'vitest.one.config.mjs'], { cwd: dir, env }),
        );
        log(`start-up vitest (${trivial.id})`, v);
        const c = await cli('--storyboards', trivial.id);
        log(`start-up cli (${trivial.id})`, c);
        startup.vitest.push(v.ms);
        startup.cli.push(c.ms);
      }

      const byLatency = [];
      for (const latency of latencies) {
        proxy.setDelay(latency);
        const samples = { reference: [], vitest: [], cli: [] };
        // A first run after `npm ci`, as CI starts: our caches (compiled storyboards and validators, the capability
        // selection) and Vite's and Vitest's own, all under node_modules/.vite in the user's repository, and the
        // transformed storyboard modules Vitest keeps in this user's cache directory (src/plugin/module-cache.ts) and
        // the storyboards they name (src/cache/stored-storyboards.ts), emptied before each cold run (`--cold-rounds` of
        // each entry point, alternating; beside the warm rounds: the cold median vs the warm median).
        const coldRuns = { vitest: [], cli: [] };
        const keptRuns = { vitest: [], cli: [] };
        const userDirs = await userCacheDirs(dir);
        for (let round = 0; round < coldRounds; round++) {
          const nth = coldRounds > 1 ? ` (${round + 1})` : '';
          for (const [name, run] of Object.entries({ vitest, cli: () => cli() })) {
            rmSync(join(dir, 'node_modules', '.vite'), { recursive: true, force: true });
            for (const userDir of userDirs) rmSync(userDir, { recursive: true, force: true });
            const r = await run();
            coldRuns[name].push({ ms: r.ms, rssMb: r.rssMb, requests: r.requests, chain: r.chain, code: r.code });
            log(`${latency} ms cold ${name}${nth}`, r);
            // The next CI job: a fresh runner (no user cache directories), `npm ci` (every installed file written
            // anew), the job's cache directory kept (node_modules/.vite, restored after the install).
            for (const userDir of userDirs) rmSync(userDir, { recursive: true, force: true });
            rewriteInstalled(join(dir, 'node_modules'));
            const k = await run();
            keptRuns[name].push({ ms: k.ms, rssMb: k.rssMb, code: k.code });
            log(`${latency} ms kept-cache ${name}${nth}`, k);
          }
        }
        const cold = coldSummary(coldRuns);
        const kept = coldSummary(keptRuns);
        // Both entry points run in the same repository: the cli's cold run emptied what the vitest one had just made.
        // One uncounted vitest run makes them again, so that every timed round runs with warm caches (before this,
        // the first round of `npx vitest run` was a half-cold one, and its peak RSS the table's worst round).
        log(`${latency} ms warm-up vitest (not counted)`, await vitest());
        for (let round = 0; round < rounds; round++) {
          for (const [name, run] of Object.entries({ reference, vitest, cli: () => cli() })) {
            const r = await run();
            if (name === 'cli' && !ours.firstLine) ours.firstLine = firstLine(r);
            samples[name].push({
              ms: r.ms,
              rssMb: r.rssMb,
              rssSumMb: r.rssSumMb,
              processes: r.processes,
              requests: r.requests,
              chain: r.chain,
              sessions: r.traffic.sessions,
              failedRequests: r.traffic.failed,
              code: r.code,
              outcome: outcome(name, r),
              ...(name === 'reference' ? {} : { gate: gateUsage(r.stderr) }),
            });
            log(`${latency} ms round ${round + 1} ${name}`, r);
          }
        }
        byLatency.push({ latency, samples, cold, kept });
      }
      return {
        agent: spec.name,
        storyboards: ids.length,
        corpus: ours,
        ids,
        perStoryboard,
        countLatency,
        selectionRequests: selection.chain,
        longest: { id: longest.id, requests: longest.requests, chain: longest.chain },
        trivial: { id: trivial.id, requests: trivial.requests },
        startup: { vitest: median(startup.vitest) / 1000, cli: median(startup.cli) / 1000 },
        byLatency,
      };
    } finally {
      await proxy.close();
    }
  });
}

const f2 = (x) => x.toFixed(2);
const mb = (x) => x.toFixed(0);

/**
 * The run host's last `agent gate` line (plugin/run-host.ts, NODE_DEBUG=vitest-adcp): how long the agent was held per
 * mode and the turns each gave — while seeding windows or an alone window hold it, no other step runs.
 */
function gateUsage(stderr) {
  const lines = [...stderr.matchAll(/^VITEST-ADCP \d+: agent gate (\{.*\})$/gm)];
  return lines.length > 0 ? JSON.parse(lines.at(-1)[1]) : undefined;
}

/** The gate lines of a runner's samples (those that printed one). */
function gatesOf(samples) {
  return samples.map((x) => x.gate).filter(Boolean);
}

/** Medians over a runner's samples of the agent's time held by seeding windows and alone, with their window counts. */
function gateCell(samples) {
  const gates = gatesOf(samples);
  if (gates.length === 0) return '?';
  const m = (mode, key) => median(gates.map((g) => g[mode][key]));
  return `${f2(m('seed', 'ms') / 1000)} s (${m('seed', 'turns')}) / ${f2(m('alone', 'ms') / 1000)} s (${m('alone', 'turns')}) / ${f2(m('shared', 'ms') / 1000)} s`;
}

/** The median over a runner's samples of the agent's time held by seeding windows and alone, in seconds (0 unknown). */
function windowSeconds(samples) {
  const gates = gatesOf(samples);
  return gates.length === 0 ? 0 : median(gates.map((g) => g.seed.ms + g.alone.ms)) / 1000;
}

/** What was measured: the SDK (its reference runner and example agents), and the corpus each runner ran. */
function measured(results) {
  const ours = [...new Set(results.map((r) => `AdCP ${r.corpus.version} (${r.corpus.choice})`))].join(', ');
  return {
    sdk: { version: sdk.version, root: sdk.root },
    corpus: { reference: referenceCorpus, ours: [...new Set(results.map((r) => r.corpus.version))] },
    dist: builtDist,
    text: `@adcp/sdk ${sdk.version} (${sdk.root}: the reference runner and the example agents); corpus: reference AdCP ${referenceCorpus ?? '?'}, vitest-adcp ${ours}; dist ${builtDist}.`,
  };
}

/** The median wall time of one runner's samples, in seconds. */
const medianSeconds = (samples, name) => median(samples[name].map((x) => x.ms)) / 1000;

/** The latency mode's markdown: per agent, a time table, a memory table and the critical path. */
function latencyMarkdown(results, startedAt) {
  const lines = [];
  lines.push(`# bench:speed, latency mode — ${startedAt}`, '');
  lines.push(measured(results).text, '');
  lines.push(
    `Medians of ${rounds} alternating round(s) (reference, \`npx vitest run\`, \`npx vitest-adcp <url>\`) per latency; every HTTP request held that long by the delaying proxy. ` +
      `${availableParallelism()} cores, Node ${process.version}. Critical-path limit = start-up + chain × latency (see bench/speed.mjs); distance = wall ÷ limit; a run's chain: the most of its requests that ran one after another.`,
    '',
  );
  for (const r of results) {
    const vLimitRequests = r.longest.chain;
    const cLimitRequests = r.longest.chain + r.selectionRequests;
    lines.push(`## ${r.agent} (${r.storyboards} storyboards)`, '');
    lines.push(`The bin's first line: \`${r.corpus.firstLine ?? '?'}\``, '');
    lines.push(
      '| latency | reference | `npx vitest run` (ratio) | `npx vitest-adcp <url>` (ratio) | critical-path limit vitest / cli | distance vitest / cli | requests per run (chain) ref / vitest / cli |',
    );
    lines.push('|--:|--:|--:|--:|--:|--:|--:|');
    const limitAt = (latency) => ({
      vitest: r.startup.vitest + (vLimitRequests * latency) / 1000,
      cli: r.startup.cli + (cLimitRequests * latency) / 1000,
    });
    for (const { latency, samples } of r.byLatency) {
      const s = (name) => medianSeconds(samples, name);
      const q = (name) =>
        `${median(samples[name].map((x) => x.requests))} (${median(samples[name].map((x) => x.chain))})`;
      const limit = limitAt(latency);
      lines.push(
        `| ${latency} ms | ${f2(s('reference'))} s | ${f2(s('vitest'))} s (${f2(s('vitest') / s('reference'))}) | ${f2(s('cli'))} s (${f2(s('cli') / s('reference'))}) | ${f2(limit.vitest)} / ${f2(limit.cli)} s | ${f2(s('vitest') / limit.vitest)} / ${f2(s('cli') / limit.cli)} | ${q('reference')} / ${q('vitest')} / ${q('cli')} |`,
      );
    }
    lines.push('');
    lines.push(
      `| latency | first run, caches emptied (median of ${coldRounds}): \`npx vitest run\` (÷ reference, ÷ warm) | \`npx vitest-adcp <url>\` (÷ reference, ÷ warm) | peak RSS cold vitest / cli | the next CI job, cache directory kept (median of ${coldRounds}): vitest / cli (÷ reference, ÷ warm) |`,
    );
    lines.push('|--:|--:|--:|--:|--:|');
    for (const { latency, samples, cold, kept } of r.byLatency) {
      const s = (name) => medianSeconds(samples, name);
      /** A run's seconds, ÷ the reference's median, ÷ the entry point's warm median. */
      const cell = (run, name) => {
        const t = run?.[name] ? run[name].ms / 1000 : NaN;
        return `${f2(t)} s (${f2(t / s('reference'))}, ${f2(t / s(name))})`;
      };
      lines.push(
        `| ${latency} ms | ${cell(cold, 'vitest')} | ${cell(cold, 'cli')} | ${mb(cold.vitest.rssMb)} / ${mb(cold.cli.rssMb)} MB | ${cell(kept, 'vitest')} / ${cell(kept, 'cli')} |`,
      );
    }
    lines.push('');
    lines.push(
      "| latency | peak RSS, largest process ref / vitest / cli | peak RSS summed over a run's processes ref / vitest / cli | processes ref / vitest / cli | exit codes ref / vitest / cli | graded, last round: ref (steps) / vitest / cli (tests) |",
    );
    lines.push('|--:|--:|--:|--:|--:|---|');
    for (const { latency, samples } of r.byLatency) {
      const worst = (name, key) => Math.max(...samples[name].map((x) => x[key]));
      const codes = (name) => [...new Set(samples[name].map((x) => x.code))].join(',');
      lines.push(
        `| ${latency} ms | ${mb(worst('reference', 'rssMb'))} / ${mb(worst('vitest', 'rssMb'))} / ${mb(worst('cli', 'rssMb'))} MB | ${mb(worst('reference', 'rssSumMb'))} / ${mb(worst('vitest', 'rssSumMb'))} / ${mb(worst('cli', 'rssSumMb'))} MB | ${worst('reference', 'processes')} / ${worst('vitest', 'processes')} / ${worst('cli', 'processes')} | ${codes('reference')} / ${codes('vitest')} / ${codes('cli')} | ${['reference', 'vitest', 'cli'].map((name) => samples[name].at(-1).outcome).join(' / ')} |`,
      );
    }
    lines.push('');
    lines.push(
      '| latency | the agent held by seeding windows (windows) / alone (windows) / by ordinary steps: `npx vitest run` | `npx vitest-adcp <url>` | the limit with those windows vitest / cli | distance to it vitest / cli |',
    );
    lines.push('|--:|--:|--:|--:|--:|');
    for (const { latency, samples } of r.byLatency) {
      // The windows one after another, nothing else at the agent meanwhile, added to the limit (which counts neither):
      // what the run could take at best with the agent's per-caller windows as they were (plan/agent-windows.ts).
      const limit = limitAt(latency);
      const windowed = (name) => limit[name] + windowSeconds(samples[name]);
      const distance = (name) => f2(medianSeconds(samples, name) / windowed(name));
      lines.push(
        `| ${latency} ms | ${gateCell(samples.vitest)} | ${gateCell(samples.cli)} | ${f2(windowed('vitest'))} / ${f2(windowed('cli'))} s | ${distance('vitest')} / ${distance('cli')} |`,
      );
    }
    lines.push('');
    const top = [...r.perStoryboard].sort((a, b) => b.chain - a.chain || b.requests - a.requests).slice(0, 5);
    const slowest = r.perStoryboard.reduce((a, b) => (b.ms > a.ms ? b : a));
    lines.push(
      `Critical path: each storyboard run alone through the bin with every request held ${r.countLatency} ms, \`${r.longest.id}\` has the longest chain of requests one after another, ${r.longest.chain} (of ${r.longest.requests} requests); the bin's capability selection (\`--list\`) ${r.selectionRequests} more (cli limit only). ` +
        `Start-up (one trivial storyboard, \`${r.trivial.id}\`, ${r.trivial.requests} requests, at 0 ms, median): vitest ${f2(r.startup.vitest)} s, cli ${f2(r.startup.cli)} s. ` +
        `Longest chains alone (chain/requests): ${top.map((t) => `${t.id} ${t.chain}/${t.requests}`).join(', ')}; all ${r.storyboards} storyboards alone: ${r.perStoryboard.reduce((a, b) => a + b.requests, 0)} requests. ` +
        `Slowest alone: \`${slowest.id}\`, ${f2(slowest.ms / 1000)} s at ${r.countLatency} ms (a wait the chains do not count bounds a run from below too). ` +
        `Largest process and sum: the worst round.`,
      '',
    );
  }
  return lines.join('\n');
}

const startedAt = new Date().toISOString();
const results = [];
console.error(
  `@adcp/sdk ${sdk.version} (${sdk.root}); reference corpus AdCP ${referenceCorpus ?? '?'}; dist ${builtDist}`,
);
for (const name of values.agents.split(',')) {
  const spec = AGENTS.find((a) => a.name === name);
  if (!spec)
    throw new Error(
      `unknown agent ${name} for @adcp/sdk ${sdk.version}; known: ${AGENTS.map((a) => a.name).join(', ')}`,
    );
  results.push(latencies ? await benchAgentLatency(spec) : await benchAgent(spec));
}
if (latencies) {
  const markdown = latencyMarkdown(results, startedAt);
  mkdirSync(outDir, { recursive: true });
  const stamp = startedAt.slice(0, 16).replace(/:/g, '');
  writeFileSync(join(outDir, `speed-${stamp}.md`), `${markdown}\n`);
  const { text: _, ...versions } = measured(results);
  writeFileSync(
    join(outDir, `speed-${stamp}.json`),
    `${JSON.stringify({ startedAt, rounds, latencies, ...versions, results }, null, 2)}\n`,
  );
  console.log(`\n${markdown}\nwritten to ${join(outDir, `speed-${stamp}.md`)} (samples: speed-${stamp}.json)`);
} else {
  console.log(
    `\n| agent | storyboards | reference | \`npx vitest run\` (ratio) | \`npx vitest-adcp <url>\` (ratio) | first run, cold caches: vitest / cli | peak RSS ref / vitest / cli |`,
  );
  console.log('|---|--:|--:|--:|--:|--:|--:|');
  for (const r of results) {
    console.log(
      `| ${r.agent} | ${r.storyboards} | ${r.reference.s.toFixed(2)} s | ${r.vitest.s.toFixed(2)} s (${(r.vitest.s / r.reference.s).toFixed(2)}) | ${r.cli.s.toFixed(2)} s (${(r.cli.s / r.reference.s).toFixed(2)}) | ${r.vitest.first.toFixed(2)} / ${r.cli.first.toFixed(2)} s | ${r.reference.rss.toFixed(0)} / ${r.vitest.rss.toFixed(0)} / ${r.cli.rss.toFixed(0)} MB |`,
    );
  }
  console.log(`\nmedians of ${rounds} alternating rounds; ${measured(results).text} ${new Date().toISOString()}`);
}
