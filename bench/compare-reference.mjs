#!/usr/bin/env node
/**
 * vitest-adcp against the reference runner of @adcp/sdk, step by step, on
 * the SDK's own example agents (node_modules/@adcp/sdk/examples/*.ts).
 *
 * For each agent: start it (and the mock upstream it wraps) on 127.0.0.1 with
 * tsx, NODE_ENV=development, free ports; run `adcp storyboard run <url> --json`
 * (the agent's capabilities choose the storyboards); restart the agent fresh;
 * run vitest-adcp on the same storyboards; compare each step's verdict
 * (passed | failed | skipped:<reason>) keyed by (storyboard, phase, step).
 * `signed_requests` and `webhook_emission` are counted apart from the agreement.
 *
 *   npm run bench:compare                                 (builds dist/ first)
 *   node bench/compare-reference.mjs --agents error-compliant,signals-marketplace --keep
 *   node bench/compare-reference.mjs --list
 *
 * Against another @adcp/sdk (bench/compare/sdk.mjs): `--sdk <dir>`, a directory
 * whose node_modules/@adcp/sdk it is. Its examples, `adcp mock-server`, the
 * reference CLI (run in that directory) and the reference's corpus all come
 * from it, and 13.x has its own agent set (bench/compare/agents.mjs
 * AGENTS_SDK13). `--compliance <version-or-path>` is the corpus vitest-adcp
 * runs (ADCP_COMPLIANCE; default the SDK's ADCP_VERSION); vitest-adcp also
 * finds that SDK as its installed @adcp/sdk (a node_modules link in its
 * scratch directory), as a user of that SDK would have it. `--dist <path>`
 * runs another build (e.g. /work/main/dist).
 *
 *   npm run bench:compare:sdk13        (= --sdk /work/ref/sdk13 --out bench/out/sdk13)
 *   node bench/compare-reference.mjs --sdk /work/ref/sdk13 --agents signals-marketplace --dist /work/main/dist
 *
 * Writes bench/out/compare-<agent>.json (every compared step, each difference
 * with its cause) and prints a markdown table for docs/conformance.md;
 * `node bench/compare-summary.mjs <out dir>` summarises a run by cause. `--keep` keeps the raw outputs
 * (reference JSON, our contract report, logs) in bench/out/raw/<agent>/.
 * One agent at a time; not part of `npm test`.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { agentSet } from './compare/agents.mjs';
import { openCorpus } from './compare/corpus.mjs';
import { compare, loadErrorIssues, markdown, printAgent, stepsFromOurReport } from './compare/diff.mjs';
import { runOurs } from './compare/ours.mjs';
import {
  answersHttp,
  answersMcp,
  freePort,
  startProcess,
  stopProcess,
  tail,
  waitUntilReady,
} from './compare/processes.mjs';
import {
  referenceSupplementFile,
  runReferenceAssessment,
  runReferenceFile,
  stepsFromAssessment,
  stepsFromStoryboardResult,
  unreportedStoryboards,
  useSkipTableOf,
} from './compare/reference.mjs';
import { complianceRoot, corpusVersion, openSdk, referenceComplianceRoot } from './compare/sdk.mjs';

const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const preload = join(root, 'bench', 'compare', 'listen-local.mjs');
/** Serves an example's AdcpServer over A2A instead of MCP (agents with `protocol: 'a2a'`). */
const a2aPreload = join(root, 'bench', 'compare', 'a2a-serve.mjs');
/** Wires request signing into an example's createAdcpServer (agents with `signing: true`). */
const signingPreload = join(root, 'bench', 'compare', 'signing-serve.mjs');
const { values } = parseArgs({
  options: {
    agents: { type: 'string' },
    // Both runners host a webhook receiver: `loopback` (127.0.0.1 URLs), or a host name that resolves to this
    // machine (e.g. one /etc/hosts maps to 127.0.0.1), given to the agent as an http://<host>:<port> public base
    // URL (proxy mode) — for agents that refuse loopback IP literals in push_notification_config.url.
    webhooks: { type: 'string' },
    // Where results, raw outputs and the dist/ snapshot go (default bench/out), and the built package to snapshot.
    out: { type: 'string' },
    dist: { type: 'string' },
    // The SDK to compare against (a directory whose node_modules/@adcp/sdk it is) and the corpus our runner gets.
    sdk: { type: 'string' },
    compliance: { type: 'string' },
    keep: { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
    via: { type: 'string', default: 'auto' }, // auto | cli | vitest
    'ref-timeout': { type: 'string', default: '600' },
    'ready-timeout': { type: 'string', default: '90' },
  },
});

const fromCwd = (p) => (isAbsolute(p) ? p : join(process.cwd(), p));
const outDir = values.out ? fromCwd(values.out) : join(root, 'bench', 'out');
const builtDist = values.dist ? fromCwd(values.dist) : join(root, 'dist');
const sdk = openSdk(values.sdk, root);
const sdkRoot = sdk.root;
const { agents: AGENTS, defaults: DEFAULT_AGENTS } = agentSet(sdk);
useSkipTableOf(sdkRoot);
/** The receiver flags of each runner (a fresh port per run in proxy mode). */
async function webhookArgs(runner) {
  if (!values.webhooks) return [];
  if (values.webhooks === 'loopback') return ['--webhook-receiver'];
  const port = await freePort();
  const base = `http://${values.webhooks}:${port}`;
  return runner === 'reference'
    ? ['--webhook-receiver', 'proxy', '--webhook-receiver-public-url', base, '--webhook-receiver-port', String(port)]
    : ['--webhook-base-url', base, '--webhook-port', String(port), '--webhook-allow-http'];
}
/** Flags a runner gets for an agent: the webhook receiver, and `--protocol a2a` for an A2A agent. */
const argsFor = async (spec, runner) => [
  ...(await webhookArgs(runner)),
  ...(spec.protocol === 'a2a' ? ['--protocol', 'a2a'] : []),
];

if (values.list) {
  for (const a of AGENTS)
    console.log(`${a.name.padEnd(20)} ${a.example.padEnd(40)} ${a.role}${a.mock ? ` (mock-server ${a.mock})` : ''}`);
  process.exit(0);
}

const wanted = values.agents
  ? values.agents
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  : DEFAULT_AGENTS;
const unknown = wanted.filter((n) => !AGENTS.some((a) => a.name === n));
if (unknown.length) {
  console.error(`unknown agent(s): ${unknown.join(', ')}; known: ${AGENTS.map((a) => a.name).join(', ')}`);
  process.exit(2);
}

// A snapshot of dist/ (and schema/, which dist reads beside it): a rebuild while the bench runs cannot pull it away mid-run.
const snapshot = join(outDir, 'snapshot');
const dist = join(snapshot, 'dist');
if (!existsSync(join(builtDist, 'index.js'))) {
  console.error('dist/ is not built: run `npm run build` (npm run bench:compare does)');
  process.exit(2);
}
rmSync(snapshot, { recursive: true, force: true });
cpSync(builtDist, dist, { recursive: true });
// The schema/ beside that build (another checkout's, with --dist), else ours.
const builtSchema = join(builtDist, '..', 'schema');
cpSync(existsSync(builtSchema) ? builtSchema : join(root, 'schema'), join(snapshot, 'schema'), { recursive: true });
// Two corpora, the same one unless --compliance says otherwise: the reference's (its step titles are mapped back to
// step ids through it; `--file` runs take their storyboard from it) and ours (ADCP_COMPLIANCE of our runner).
const refCorpusRoot = referenceComplianceRoot(sdk);
const ourCorpusRoot = complianceRoot(sdk, values.compliance);
const seeds3_1 = sdk.major >= 13;
const corpus = openCorpus(refCorpusRoot, { seeds3_1 });
const ourCorpus = ourCorpusRoot === refCorpusRoot ? corpus : openCorpus(ourCorpusRoot, { seeds3_1 });
const sdkVersion = sdk.version;
const corpora = {
  reference: { root: refCorpusRoot, version: corpusVersion(refCorpusRoot) },
  ours: { root: ourCorpusRoot, version: corpusVersion(ourCorpusRoot) },
};
console.log(
  `@adcp/sdk ${sdk.version} (${sdk.root}); corpus: reference ${corpora.reference.version}, vitest-adcp ${corpora.ours.version}${ourCorpusRoot === refCorpusRoot ? '' : ` (${ourCorpusRoot})`}; dist ${builtDist}`,
);
const oursVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const readyTimeoutMs = Number(values['ready-timeout']) * 1000;

/** Starts the agent (and its mock upstream), fresh, runs `fn(url)`, always stops both. */
async function withAgent(spec, dir, label, fn) {
  const ports = { agent: await freePort(), mock: spec.mock ? await freePort() : undefined };
  // ADCP_BENCH_SDK_ROOT: the SDK the a2a-serve preload patches (the one the example imports; signing-serve, whose
  // agents are 6.x-only, still takes the checkout's).
  // ADCP_SKIP_VERSION_CHECK: the SDK's CLI asks the npm registry for its latest version otherwise (13.x).
  const baseEnv = {
    ...process.env,
    NODE_ENV: 'development',
    ADCP_BENCH_SDK_ROOT: sdkRoot,
    ADCP_SKIP_VERSION_CHECK: '1',
  };
  delete baseEnv.PORT;
  let mock;
  let agent;
  const started = {};
  try {
    if (spec.mock) {
      const args = [
        '--import',
        preload,
        join(sdkRoot, 'bin', 'adcp.js'),
        'mock-server',
        spec.mock,
        '--port',
        String(ports.mock),
      ];
      mock = startProcess(`mock-server ${spec.mock}`, process.execPath, args, {
        cwd: sdk.dir,
        env: baseEnv,
        logFile: join(dir, `${label}-mock.log`),
      });
      started.mock = `adcp mock-server ${spec.mock} --port ${ports.mock}`;
      await waitUntilReady(mock, answersHttp(`http://127.0.0.1:${ports.mock}/_debug/traffic`), {
        timeoutMs: readyTimeoutMs,
      });
    }
    const env = {
      ...baseEnv,
      ...(spec.env?.(ports) ?? {}),
      // Examples that hard-code their port are rebound to ours by the preload; every listen is 127.0.0.1.
      ADCP_BENCH_PORT_MAP: JSON.stringify(spec.fixedPort ? { [spec.fixedPort]: ports.agent } : {}),
    };
    const example = join(sdkRoot, 'examples', spec.example);
    const a2a = spec.protocol === 'a2a';
    agent = startProcess(
      spec.name,
      sdk.tsx,
      [
        '--import',
        preload,
        ...(a2a ? ['--import', a2aPreload] : []),
        ...(spec.signing ? ['--import', signingPreload] : []),
        example,
      ],
      { cwd: sdk.dir, env, logFile: join(dir, `${label}-agent.log`) },
    );
    started.agent = `NODE_ENV=development ${Object.entries(spec.env?.(ports) ?? {})
      .map(([k, v]) => `${k}=${v} `)
      .join(
        '',
      )}tsx ${sdk.own ? '' : `${sdk.dir}/`}node_modules/@adcp/sdk/examples/${spec.example}${spec.fixedPort ? ` (port ${spec.fixedPort} rebound to ${ports.agent})` : ''}`;
    const url = `http://127.0.0.1:${ports.agent}/${a2a ? 'a2a' : 'mcp'}`;
    const t0 = Date.now();
    await waitUntilReady(agent, a2a ? answersHttp(`${url}/.well-known/agent-card.json`) : answersMcp(url, spec.auth), {
      timeoutMs: readyTimeoutMs,
    });
    started.ready_ms = Date.now() - t0;
    return { ...(await fn(url)), started };
  } finally {
    await stopProcess(agent);
    await stopProcess(mock);
  }
}

async function runAgent(spec) {
  const dir = join(outDir, 'raw', spec.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const childEnv = { ...process.env, ADCP_SKIP_VERSION_CHECK: '1' };
  delete childEnv.NODE_ENV;

  console.log(`\n▶ ${spec.name}: ${spec.example}${spec.mock ? ` + mock-server ${spec.mock}` : ''}`);
  // 1–2. The reference, on a fresh agent.
  const ref = await withAgent(spec, dir, 'reference', async (url) => {
    const assessment = await runReferenceAssessment({
      url,
      auth: spec.auth,
      outFile: join(dir, 'reference.json'),
      logFile: join(dir, 'reference.log'),
      cwd: sdk.dir,
      env: childEnv,
      timeoutS: Number(values['ref-timeout']),
      extraArgs: await argsFor(spec, 'reference'),
    });
    // Storyboards the assessment ran but reported in no track: their steps via `--file`, same agent.
    const supplement = [];
    for (const id of unreportedStoryboards(assessment.json)) {
      const file = corpus.primary(id);
      if (!file) continue;
      const r = await runReferenceFile({
        url,
        auth: spec.auth,
        file,
        outFile: referenceSupplementFile(dir, id),
        logFile: join(dir, 'reference.log'),
        cwd: sdk.dir,
        env: childEnv,
        extraArgs: await argsFor(spec, 'reference'),
      });
      supplement.push({ id, file, ms: r.ms, exitCode: r.exitCode, result: r.json });
    }
    return { assessment, supplement };
  });
  const json = ref.assessment.json;
  if (json.overall_status === 'unreachable')
    throw new Error(`reference: agent unreachable — ${(json.failures ?? [])[0]?.error ?? ''}`);
  const refSteps = stepsFromAssessment(json, corpus);
  // What it ran, then (13.x) what it graded not applicable without running it: ours gets both, to grade them itself.
  const storyboards = [...(json.storyboards_executed ?? []), ...refSteps.notExecuted];
  console.log(
    `  reference: ${storyboards.length - refSteps.notExecuted.length} storyboards${refSteps.notExecuted.length ? ` (+${refSteps.notExecuted.length} graded not applicable, not run)` : ''}, ${json.summary?.total_steps} steps, ${(ref.assessment.ms / 1000).toFixed(1)} s (+${ref.supplement.length} via --file: ${ref.supplement.map((s) => s.id).join(', ') || 'none'}); agent ready in ${ref.started.ready_ms} ms`,
  );

  for (const s of ref.supplement)
    for (const [k, v] of stepsFromStoryboardResult(s.result, corpus, refSteps.emptyPhases))
      if (!refSteps.steps.has(k)) refSteps.steps.set(k, v);
  // Failures the assessment lists for those storyboards that the `--file` run did not produce (e.g. the
  // per-vector steps of signed_requests, generated at run time): phase unknown, kept as `?`.
  const unreported = new Set(ref.supplement.map((s) => s.id));
  const keyed = new Set([...refSteps.steps.values()].map((v) => `${v.storyboard_id}|${v.step_id}`));
  for (const f of json.failures ?? []) {
    if (!unreported.has(f.storyboard_id) || keyed.has(`${f.storyboard_id}|${f.step_id}`)) continue;
    // signed_requests: the vector steps the runners synthesize live in its two vector phases (same step ids in both).
    const phase =
      f.phase_id ??
      (f.storyboard_id === 'signed_requests'
        ? { positive: 'positive_vectors', negative: 'negative_vectors' }[/^(positive|negative)-/.exec(f.step_id)?.[1]]
        : undefined) ??
      '?';
    const key = `${f.storyboard_id}|${phase}|${f.step_id}`;
    refSteps.steps.set(key, {
      storyboard_id: f.storyboard_id,
      phase_id: phase,
      step_id: f.step_id,
      verdict: 'failed',
      source: 'assessment failures[]',
      task: f.task,
      detail: f.error ?? f.validation?.description,
    });
  }

  // 3. Ours, on a fresh agent, same storyboards, in the reference's order.
  const order = [
    ...storyboards.flatMap((id) => ourCorpus.files(id).slice(0, 1)),
    ...storyboards.flatMap((id) => ourCorpus.files(id).slice(1)),
  ];
  const ours = await withAgent(spec, dir, 'ours', async (url) =>
    runOurs({
      root,
      dist,
      url,
      auth: spec.auth,
      storyboards,
      order,
      workDir: join(dir, 'ours'),
      outFile: join(dir, 'ours.json'),
      via: values.via,
      extraArgs: await argsFor(spec, 'ours'),
      env: { ADCP_COMPLIANCE: ourCorpusRoot },
      installedSdk: sdk.own ? undefined : sdkRoot,
    }),
  );
  if (!ours.report)
    throw new Error(
      `vitest-adcp wrote no report (exit ${ours.exitCode}${ours.timedOut ? ', timed out' : ''}):\n${tail(ours.log)}`,
    );
  console.log(
    `  vitest-adcp (${ours.via}): ${ours.report.storyboards.length} storyboards, ${ours.report.summary.total_steps} steps, ${(ours.ms / 1000).toFixed(1)} s`,
  );
  const ourSteps = stepsFromOurReport(ours.report, ourCorpus);
  // Our report names a file relative to our run's cwd; the corpus knows it by absolute path.
  const notLoaded = loadErrorIssues(ours.report.load_errors, (file) =>
    ourCorpus.idOf(resolve(join(dir, 'ours'), file)),
  );

  // 4. Compare.
  const comparison = compare(refSteps.steps, ourSteps.steps, {
    notLoaded,
    ourStoryboards: new Set(ours.report.storyboards.map((sb) => sb.storyboard_id)),
  });
  const result = {
    agent: spec.name,
    example: spec.example,
    role: spec.role,
    started: { reference: ref.started, ours: ours.started, auth: spec.auth ? `Bearer ${spec.auth}` : 'none' },
    sdk: { version: sdk.version, root: sdk.root },
    corpora,
    storyboards,
    reference: {
      command: ref.assessment.command.replace(/http:\/\/127\.0\.0\.1:\d+/, '<url>'),
      ms: ref.assessment.ms,
      exit_code: ref.assessment.exitCode,
      overall_status: json.overall_status,
      adcp_version: json.adcp_version,
      summary: json.summary && {
        total_steps: json.summary.total_steps,
        steps_passed: json.summary.steps_passed,
        steps_failed: json.summary.steps_failed,
        steps_skipped: json.summary.steps_skipped,
        // 13.x
        ...(json.summary.skipped_by_reason ? { skipped_by_reason: json.summary.skipped_by_reason } : {}),
        ...(json.summary.steps_not_selected !== undefined
          ? { steps_not_selected: json.summary.steps_not_selected }
          : {}),
        ...(json.summary.validations_not_applicable !== undefined
          ? { validations_not_applicable: json.summary.validations_not_applicable }
          : {}),
      },
      // 13.x: storyboards graded not applicable without a run (given to ours too), and storyboard-level verdicts.
      not_executed: refSteps.notExecuted,
      storyboard_level: refSteps.storyboardLevel,
      unreported_in_tracks: ref.supplement.map((s) => ({
        id: s.id,
        ran_via_file: Boolean(s.result),
        exit_code: s.exitCode,
      })),
      titles_not_mapped_to_step_ids: refSteps.unmapped,
      failures_not_matched: refSteps.mismatched,
      // Phases the reference reported with no step (e.g. a `skip_if` phase): their steps show as "only in ours".
      phases_without_steps: refSteps.emptyPhases,
    },
    ours: {
      via: ours.via,
      command: ours.command.replace(/http:\/\/127\.0\.0\.1:\d+/, '<url>'),
      ms: ours.ms,
      exit_code: ours.exitCode,
      summary: {
        total_steps: ours.report.summary.total_steps,
        steps_passed: ours.report.summary.steps_passed,
        steps_failed: ours.report.summary.steps_failed,
        steps_skipped: ours.report.summary.steps_skipped,
      },
      duplicate_storyboards: ourSteps.duplicates,
      load_errors: ours.report.load_errors,
      // Per storyboard id, what kept it from loading (unknown keys and checks, schema errors).
      load_error_issues: Object.fromEntries(notLoaded),
    },
    comparison,
  };
  if (refSteps.unmapped.length)
    console.log(
      `  note: ${refSteps.unmapped.length} reference step titles not mapped to a step id (kept as ~<title>), e.g. ${refSteps.unmapped
        .slice(0, 2)
        .map((u) => `${u.storyboard_id}/${u.phase_id}: ${u.title}`)
        .join('; ')}`,
    );
  if (refSteps.mismatched.length)
    console.log(
      `  note: ${refSteps.mismatched.length} reference failures[] not found as failed steps: ${refSteps.mismatched.slice(0, 5).join(', ')}`,
    );
  if (ourSteps.duplicates.length)
    console.log(
      `  note: vitest-adcp ran ${ourSteps.duplicates.length} storyboard id(s) twice (corpus mirror copies: ${ourSteps.duplicates
        .slice(0, 3)
        .map((d) => d.file.replace(/^.*compliance\/cache\/[^/]+\//, ''))
        .join(', ')}${ourSteps.duplicates.length > 3 ? ', …' : ''}); the first copy is compared`,
    );
  if (ours.report.load_errors?.length)
    console.log(
      `  note: ${ours.report.load_errors.length} storyboard file(s) did not load in vitest-adcp: ${[...notLoaded.keys()].join(', ')}`,
    );
  writeFileSync(join(outDir, `compare-${spec.name}.json`), JSON.stringify(result, null, 2) + '\n');
  printAgent(spec.name, result.comparison);
  return { result, dir };
}

mkdirSync(outDir, { recursive: true });
const results = [];
let via = 'n/a';
for (const name of wanted) {
  const spec = AGENTS.find((a) => a.name === name);
  let dir;
  try {
    const run = await runAgent(spec);
    results.push(run.result);
    via = run.result.ours.via;
    dir = run.dir;
  } catch (error) {
    console.log(`\n✗ ${spec.name}: ${error?.stack ?? error}`);
    results.push({ agent: spec.name, example: spec.example, role: spec.role, error: String(error?.message ?? error) });
    writeFileSync(join(outDir, `compare-${spec.name}.json`), JSON.stringify(results.at(-1), null, 2) + '\n');
    dir = join(outDir, 'raw', spec.name);
    console.log(`  (raw outputs kept in ${dir})`);
    continue;
  }
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
  else console.log(`  raw outputs: ${dir}`);
}
try {
  rmdirSync(join(outDir, 'raw')); // only when empty
} catch {
  // not empty: the raw outputs stay
}
if (!values.keep) rmSync(snapshot, { recursive: true, force: true });

console.log('\n── markdown (docs/conformance.md) ──────────────────────\n');
console.log(
  markdown(results, {
    sdkVersion,
    oursVersion,
    via,
    corpora,
    date: new Date().toISOString().slice(0, 10),
  }),
);
