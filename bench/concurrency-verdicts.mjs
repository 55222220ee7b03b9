#!/usr/bin/env node
/**
 * Do storyboards in flight together grade an agent as one after another does? Per SDK example agent
 * (bench/compare/agents.mjs), the bin as a user runs it (`npx vitest-adcp <url> --report <file>`, the package installed
 * in a repository of its own: bench/compare/example-agent.mjs) twice:
 *
 *   sequential   --concurrency 1        one storyboard after another, in the run's order
 *   concurrent   (no flag, or --concurrency N given here)   the package default: up to 32 at once
 *
 * each against a FRESH agent and mock upstream (the example agents keep state across runs: a second run against the
 * same agent can grade differently from the first), and compares the two contract reports step by step: the key is
 * storyboard id › phase id › step id, the verdict its status (passed / failed / skipped / not_run) and skip reason.
 * A storyboard reported without steps (skipped whole) is compared by its own status. Per agent: steps compared,
 * identical, differing, and each differing step with both verdicts and the failing check or error (short).
 * `--rounds N` repeats the pair; with 2 or more, each side is also compared with its own first round (the noise of
 * a run against a fresh agent, to hold the differences against).
 *
 *   npm run bench:verdicts                                  (builds dist/ first)
 *   npm run bench:verdicts -- --agents seller-guaranteed,signals-marketplace --concurrency 4 --rounds 2
 *
 * Flags: --agents a,b (default seller-guaranteed,signals-marketplace,creative-template,error-compliant),
 * --concurrency N (the concurrent side; default: the package default, no flag), --rounds N (default 1), --latency ms
 * (default 0), --timeout-minutes M (one run of the bin; default 10, and 30 for error-compliant, which answers
 * RATE_LIMITED above 50 tool calls a minute across all callers: the runner waits and resends).
 * Every run reaches its agent through a proxy (bench/compare/delay-proxy.mjs) that counts the most tool calls in flight
 * at once — 1 on the sequential side; more shows that the concurrent side did run storyboards together — and holds
 * each request --latency ms: an agent across a network, where storyboards overlap longer.
 * The proxy also counts the agent's rate-limited answers (a tools/call answered HTTP 429 or with RATE_LIMITED in its
 * body), and each run's steps graded on a rate-limited answer (a step whose response, error or validations mention
 * RATE_LIMITED) are counted from its report: that must be 0, since the runner waits and resends a rate-limited call
 * (src/transport/rate-limit.ts) rather than grade it.
 *
 * `--shared-agent`: the rate-limit path, reproducibly. Per agent, ONE instance (and mock upstream), started once, and
 * three runs of the bin against it back to back:
 *
 *   warm-up      (no flag, or --concurrency N)   spends the agent's rate budget
 *   concurrent   (no flag, or --concurrency N)   starts with the budget spent
 *   sequential   --concurrency 1                 likewise
 *
 * compared step by step (as above) warm-up vs concurrent and warm-up vs sequential; per run the wall time, the
 * rate-limited answers and the steps graded on one. The agent keeps its state from run to run here, so a difference
 * may be the state's as well as the rate limit's.
 *
 *   npm run bench:verdicts -- --agents error-compliant --shared-agent
 *
 * error-compliant limits all callers together to 50 tool calls a minute: the warm-up spends them, and the two runs
 * after it wait the limit out (about a minute each). Not with --rounds above 1.
 *
 * `--sdk <dir>` (as bench/speed.mjs): the example agents of another @adcp/sdk, whose pinned corpus our runs then get —
 * `--sdk /work/ref/sdk13` (13.0.0, AdCP 3.1.15; `npm run bench:verdicts:sdk13`). `--dist <dir>`: another build to
 * install (default dist/, copied at start, so a rebuild while the bench runs does not reach it).
 *
 * Writes bench/out/verdicts-<date>.md (the tables) and .json (every step's verdicts) and prints the markdown. The
 * reports and the bin's output stay under .vitest-adcp/verdicts/. Not part of `npm test`.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { agentSet } from './compare/agents.mjs';
import { startDelayProxy } from './compare/delay-proxy.mjs';
import { copyPackage, userRepo, withAgent } from './compare/example-agent.mjs';
import { childEnv } from './compare/ours.mjs';
import { runToEnd, tail } from './compare/processes.mjs';
import { openSdk } from './compare/sdk.mjs';

const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const work = join(root, '.vitest-adcp', 'verdicts');

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: 'seller-guaranteed,signals-marketplace,creative-template,error-compliant' },
    concurrency: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    'timeout-minutes': { type: 'string' },
    latency: { type: 'string', default: '0' },
    'shared-agent': { type: 'boolean', default: false },
    // As bench/speed.mjs: the SDK whose example agents are run, and whose corpus our runs get (default: the
    // devDependency, 6.11.0 / AdCP 3.0.6; /work/ref/sdk13: 13.0.0 / 3.1.15); the build installed (default dist/).
    sdk: { type: 'string' },
    dist: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(
    'node bench/concurrency-verdicts.mjs [--agents a,b] [--concurrency N] [--rounds N] [--latency ms] [--timeout-minutes M] [--shared-agent] [--sdk dir] [--dist dir]\n' +
      'Sequential (--concurrency 1) and concurrent runs of the bin, each against a fresh example agent; their step verdicts compared.\n' +
      '--shared-agent: one agent for a warm-up, a concurrent and a sequential run back to back (the rate-limit path).',
  );
  process.exit(0);
}
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds takes a whole number of 1 or more: ${values.rounds}`);
const sharedAgent = values['shared-agent'];
if (sharedAgent && rounds > 1)
  throw new Error('--shared-agent runs one warm-up, one concurrent and one sequential run: no --rounds');
const concurrency = values.concurrency;
if (concurrency !== undefined && !/^[1-9]\d*$/.test(concurrency))
  throw new Error(`--concurrency takes a whole number of 1 or more: ${concurrency}`);
const latency = Number(values.latency);
if (!(latency >= 0)) throw new Error(`--latency takes milliseconds, 0 or more: ${values.latency}`);
const timeoutMinutes = values['timeout-minutes'] === undefined ? undefined : Number(values['timeout-minutes']);
if (timeoutMinutes !== undefined && !(timeoutMinutes > 0))
  throw new Error(`--timeout-minutes takes minutes above 0: ${values['timeout-minutes']}`);
const sdk = openSdk(values.sdk, root);
const { agents: AGENTS } = agentSet(sdk);
const specs = values.agents.split(',').map((name) => {
  const spec = AGENTS.find((a) => a.name === name.trim());
  if (!spec) throw new Error(`unknown agent ${name}; known: ${AGENTS.map((a) => a.name).join(', ')}`);
  if (spec.protocol === 'a2a' || spec.signing)
    throw new Error(`${spec.name}: A2A and signing agents need the compare bench's preloads, not started here`);
  return spec;
});

/** The two sides: the flags each gives the bin. */
const SIDES = {
  sequential: ['--concurrency', '1'],
  concurrent: concurrency === undefined ? [] : ['--concurrency', concurrency],
};
const concurrentLabel = concurrency === undefined ? 'default concurrency (no flag)' : `--concurrency ${concurrency}`;

/**
 * The most tool calls in flight at once (each from its arrival at the proxy to the end of its answer): what shows that
 * the concurrent side did run storyboards together (one at a time: 1; polls and the MCP GET stream are not tool calls).
 */
function toolCallsInFlight(records) {
  const events = records
    .filter((r) => r.rpc === 'tools/call')
    .flatMap((r) => [
      [r.start, 1],
      [r.end || Infinity, -1],
    ])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, change] of events) most = Math.max(most, (now += change));
  return most;
}

/** Tool calls the agent refused for its rate: answered HTTP 429 or with RATE_LIMITED in the body (delay-proxy.mjs). */
const rateLimitedAnswers = (records) => records.filter((r) => r.rpc?.includes('tools/call') && r.rateLimited).length;

/**
 * A report's steps graded on a rate-limited answer: those whose response, error or validations mention RATE_LIMITED
 * (the runner resends a rate-limited call until it is answered otherwise or its bound is spent; then the step is
 * graded on the refusal). Their keys.
 */
function gradedOnRateLimit(report) {
  const keys = [];
  for (const sb of report.storyboards)
    for (const step of sb.steps)
      if (JSON.stringify([step.response, step.error, step.validations]).includes('RATE_LIMITED'))
        keys.push(`${sb.storyboard_id} › ${step.phase_id} › ${step.step_id}`);
  return keys;
}

/**
 * One run of the bin (`flags` added) against `url` (the proxy's), read back: its contract report and how it went. The
 * proxy's records of the run are `take()`n after it.
 */
async function runBin(spec, dir, { side, round, name, url, flags, proxy }) {
  const reportFile = join(work, `${name}.json`);
  const logFile = join(work, `${name}.log`);
  const timeoutMs = (timeoutMinutes ?? (spec.name === 'error-compliant' ? 30 : 10)) * 60_000;
  const args = [join(dir, 'node_modules', 'vitest-adcp', 'dist', 'cli.js'), url, '--report', reportFile];
  const env = childEnv(spec.auth ? { ADCP_AUTH_TOKEN: spec.auth } : {});
  proxy.take(); // not the records of what came before (the agent's readiness check goes direct)
  const run = await runToEnd(name, process.execPath, [...args, ...flags], { cwd: dir, env, logFile, timeoutMs });
  const records = proxy.take();
  const inFlight = toolCallsInFlight(records);
  const toolCalls = records.filter((r) => r.rpc?.includes('tools/call')).length;
  const rateLimited = rateLimitedAnswers(records);
  let report;
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8'));
  } catch {
    throw new Error(
      `${name}: no report at ${reportFile} (exit ${run.code}${run.timedOut ? ', timed out' : ''}):\n${tail(logFile)}`,
    );
  }
  const graded = gradedOnRateLimit(report);
  console.error(
    `  ${spec.name} round ${round} ${side.padEnd(10)} ${(run.ms / 1000).toFixed(1)} s, exit ${run.code}${run.timedOut ? ' (timed out)' : ''}, ${inFlight} tool calls in flight at most, ` +
      `${toolCalls} tool calls, ${rateLimited} rate-limited answers, ${graded.length} steps graded on one, ` +
      `${report.summary.steps_passed} passed, ${report.summary.steps_failed} failed, ${report.summary.steps_skipped} skipped, ${report.summary.steps_not_run} not run`,
  );
  return {
    side,
    round,
    code: run.code,
    timedOut: run.timedOut,
    ms: run.ms,
    inFlight,
    toolCalls,
    rateLimited,
    gradedOnRateLimit: graded,
    summary: report.summary,
    report,
  };
}

/** `fn(proxiedUrl, proxy)` with the agent of `spec` started (withAgent) behind a delay proxy; both stopped after. */
function withProxiedAgent(spec, fn) {
  return withAgent(
    spec,
    async (directUrl) => {
      const direct = new URL(directUrl);
      const proxy = await startDelayProxy({ target: direct.origin, delayMs: latency });
      try {
        return await fn(`${proxy.origin}${direct.pathname}`, proxy);
      } finally {
        await proxy.close();
      }
    },
    { work, sdk },
  );
}

/**
 * One run of the bin against a fresh agent, through a proxy (bench/compare/delay-proxy.mjs) that holds each request
 * `--latency` ms (default 0: nothing) and counts the tool calls in flight; the contract report and how the run went.
 */
function runSide(spec, dir, side, round) {
  return withProxiedAgent(spec, (url, proxy) =>
    runBin(spec, dir, { side, round, name: `${spec.name}-${side}-${round}`, url, flags: SIDES[side], proxy }),
  );
}

/** --shared-agent: the warm-up, concurrent and sequential runs, back to back against one agent. */
const SHARED_RUNS = [
  ['warm-up', SIDES.concurrent],
  ['concurrent', SIDES.concurrent],
  ['sequential', SIDES.sequential],
];
function runShared(spec, dir) {
  return withProxiedAgent(spec, async (url, proxy) => {
    const runs = [];
    for (const [side, flags] of SHARED_RUNS)
      runs.push(await runBin(spec, dir, { side, round: 1, name: `${spec.name}-shared-${side}`, url, flags, proxy }));
    return runs;
  });
}

const oneLine = (text, max = 240) => {
  const line = String(text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** What a failed step failed on: its error, or each failed validation's check and description (and actual, short). */
function why(step) {
  if (step.error) return oneLine(step.error);
  const failed = (step.validations ?? []).filter((v) => !v.passed);
  if (failed.length === 0) return '';
  return oneLine(
    failed
      .map((v) => {
        const actual = v.actual === undefined ? '' : ` (actual ${oneLine(JSON.stringify(v.actual), 80)})`;
        return `${v.check}: ${v.error ?? v.description}${v.json_pointer ? ` at ${v.json_pointer}` : ''}${actual}`;
      })
      .join('; '),
  );
}

/** A report's verdicts by key, in report order: storyboard › phase › step (a storyboard without steps: its own). */
function verdicts(report) {
  // The agent's origin (its port differs from run to run) out of the texts, so that the same reason reads the same.
  const origin = new URL(report.run.agent_url).origin;
  const byKey = new Map();
  const put = (key, verdict) => {
    let unique = key;
    for (let n = 2; byKey.has(unique); n++) unique = `${key} #${n}`;
    byKey.set(unique, { ...verdict, detail: verdict.detail.replaceAll(origin, '<agent>') });
  };
  for (const sb of report.storyboards) {
    if (sb.steps.length === 0) {
      put(sb.storyboard_id, { status: sb.status, skip: sb.skip?.reason, detail: sb.skip?.detail ?? '' });
      continue;
    }
    for (const step of sb.steps) {
      const status = step.not_run ? 'not_run' : step.skip ? 'skipped' : step.passed ? 'passed' : 'failed';
      put(`${sb.storyboard_id} › ${step.phase_id} › ${step.step_id}`, {
        status,
        skip: step.skip?.reason,
        detail:
          status === 'failed'
            ? why(step)
            : status === 'skipped'
              ? oneLine(step.skip.detail, 160)
              : status === 'not_run'
                ? oneLine(step.not_run.detail, 160)
                : '',
      });
    }
  }
  return byKey;
}

const verdictText = (v) => (v ? `${v.status}${v.skip ? ` (${v.skip})` : ''}` : 'absent');

/**
 * Step by step: the union of both reports' keys (a's order first); those whose status or skip reason differ, and,
 * apart, those with the same verdict but another reason (failure or skip text), which a verdict can hide.
 */
function compare(a, b) {
  const va = verdicts(a.report);
  const vb = verdicts(b.report);
  const keys = [...va.keys(), ...[...vb.keys()].filter((k) => !va.has(k))];
  const pair = (key) => ({ key, a: va.get(key) ?? null, b: vb.get(key) ?? null });
  const differing = keys.filter((k) => verdictText(va.get(k)) !== verdictText(vb.get(k))).map(pair);
  const otherText = keys
    .filter((k) => verdictText(va.get(k)) === verdictText(vb.get(k)) && va.get(k).detail !== vb.get(k).detail)
    .map(pair);
  return {
    left: a.label,
    right: b.label,
    compared: keys.length,
    identical: keys.length - differing.length,
    differing,
    otherText,
  };
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const dir = userRepo(work, 'repo', {
  sdk,
  dist: copyPackage(values.dist ? resolve(values.dist) : join(root, 'dist'), join(work, 'package')),
});
const startedAt = new Date().toISOString();
const results = [];
for (const spec of specs) {
  const runs = [];
  const of = (side, round) => runs.find((r) => r.side === side && r.round === round);
  const comparisons = [];
  if (sharedAgent) {
    runs.push(...(await runShared(spec, dir)));
    for (const run of runs) run.label = run.side;
    for (const side of ['concurrent', 'sequential'])
      comparisons.push({ what: `one agent: warm-up vs ${side}`, ...compare(of('warm-up', 1), of(side, 1)) });
  } else {
    for (let round = 1; round <= rounds; round++)
      for (const side of Object.keys(SIDES)) runs.push(await runSide(spec, dir, side, round));
    for (const run of runs) run.label = `${run.side} ${run.round}`;
    for (let round = 1; round <= rounds; round++)
      comparisons.push({
        what: `round ${round}: sequential vs concurrent`,
        ...compare(of('sequential', round), of('concurrent', round)),
      });
    for (let round = 2; round <= rounds; round++)
      for (const side of Object.keys(SIDES))
        comparisons.push({ what: `${side}: round 1 vs round ${round}`, ...compare(of(side, 1), of(side, round)) });
  }
  results.push({
    agent: spec.name,
    example: spec.example,
    runs: runs.map(({ report, label: _label, ...run }) => ({ ...run, verdicts: Object.fromEntries(verdicts(report)) })),
    comparisons,
  });
}

const s1 = (ms) => (ms / 1000).toFixed(1);
const cell = (text) => String(text).replace(/\|/g, '\\|');
const lines = [`# bench:verdicts — ${startedAt}`, ''];
lines.push(
  (sharedAgent
    ? `--shared-agent: per agent ONE example agent and mock upstream, started once, and three runs of \`npx vitest-adcp <url> --report <file>\` against it back to back: warm-up = ${concurrentLabel} (spends the agent's rate budget), then concurrent = ${concurrentLabel}, then sequential = \`--concurrency 1\`; each compared with the warm-up. `
    : `Each run of \`npx vitest-adcp <url> --report <file>\` against a fresh example agent and mock upstream: sequential = \`--concurrency 1\`, concurrent = ${concurrentLabel}. ` +
      `${rounds} round(s); `) +
    `Every request held ${latency} ms by the proxy; ${availableParallelism()} cores, Node ${process.version}. A step's verdict: status and skip reason; key: storyboard › phase › step.`,
  '',
);
lines.push(
  '| agent | comparison | steps compared | identical | differing | same verdict, other reason text | runs (wall, exit: passed/failed/skipped/not run, most tool calls in flight at once, tool calls, RATE_LIMITED/429 answers, steps graded on one) |',
);
lines.push('|---|---|--:|--:|--:|--:|---|');
for (const r of results) {
  const runText = r.runs
    .map(
      (x) =>
        `${sharedAgent ? x.side : `${x.side} ${x.round}`}: ${s1(x.ms)} s, exit ${x.code}${x.timedOut ? ' timed out' : ''}: ${x.summary.steps_passed}/${x.summary.steps_failed}/${x.summary.steps_skipped}/${x.summary.steps_not_run}, ` +
        `${x.inFlight} in flight, ${x.toolCalls} tool calls, ${x.rateLimited} rate-limited, ${x.gradedOnRateLimit.length} graded on one`,
    )
    .join('; ');
  r.comparisons.forEach((c, i) =>
    lines.push(
      `| ${i === 0 ? r.agent : ''} | ${c.what} | ${c.compared} | ${c.identical} | ${c.differing.length} | ${c.otherText.length} | ${i === 0 ? runText : ''} |`,
    ),
  );
}
lines.push('');
if (sharedAgent) {
  lines.push(
    '| agent | run | wall | exit | passed/failed/skipped/not run | most tool calls in flight | tool calls | RATE_LIMITED / 429 answers | steps graded on a rate-limited answer |',
    '|---|---|--:|--:|---|--:|--:|--:|--:|',
  );
  for (const r of results)
    r.runs.forEach((x, i) =>
      lines.push(
        `| ${i === 0 ? r.agent : ''} | ${x.side} | ${s1(x.ms)} s | ${x.code}${x.timedOut ? ' timed out' : ''} | ${x.summary.steps_passed}/${x.summary.steps_failed}/${x.summary.steps_skipped}/${x.summary.steps_not_run} | ${x.inFlight} | ${x.toolCalls} | ${x.rateLimited} | ${x.gradedOnRateLimit.length} |`,
      ),
    );
  lines.push('');
}
for (const r of results)
  for (const x of r.runs)
    if (x.gradedOnRateLimit.length > 0)
      lines.push(
        `## ${r.agent}, ${x.side}${sharedAgent ? '' : ` ${x.round}`}: ${x.gradedOnRateLimit.length} steps graded on a rate-limited answer`,
        '',
        ...x.gradedOnRateLimit.map((key) => `- ${key}`),
        '',
      );
for (const r of results) {
  for (const c of r.comparisons) {
    const { left, right } = c;
    for (const [list, heading] of [
      [c.differing, 'differing'],
      [c.otherText, 'same verdict, other reason text'],
    ]) {
      if (list.length === 0) continue;
      lines.push(`## ${r.agent}, ${c.what}: ${list.length} ${heading}`, '');
      lines.push(`| step | ${left} | ${right} | ${left}: why | ${right}: why |`, '|---|---|---|---|---|');
      for (const d of list)
        lines.push(
          `| ${cell(d.key)} | ${verdictText(d.a)} | ${verdictText(d.b)} | ${cell(d.a?.detail ?? '')} | ${cell(d.b?.detail ?? '')} |`,
        );
      lines.push('');
    }
  }
}
const markdown = lines.join('\n');
const out = join(root, 'bench', 'out');
mkdirSync(out, { recursive: true });
const stamp = startedAt.slice(0, 16).replace(/:/g, '');
writeFileSync(join(out, `verdicts-${stamp}.md`), `${markdown}\n`);
writeFileSync(
  join(out, `verdicts-${stamp}.json`),
  `${JSON.stringify({ startedAt, sharedAgent, rounds, latency, concurrency: concurrency ?? null, results }, null, 2)}\n`,
);
console.log(`\n${markdown}\nwritten to bench/out/verdicts-${stamp}.md (every verdict: verdicts-${stamp}.json)`);
