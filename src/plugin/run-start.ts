/**
 * A run's start: the configuration check and the agent preflight (agent-preflight.ts), once, before any storyboard
 * file runs — never for a collection (`vitest list`, an IDE's test discovery), which calls no agent.
 */
import { isAbsolute, relative } from 'node:path';
import type { TestProject, TestSpecification, VitestPluginContext } from 'vitest/node';
import { resolveRuntimeConfig, type ResolvedRuntimeConfig, type RuntimeConfig } from '../config.js';
import { ConfigurationError } from '../model/errors.js';
import type { Storyboard } from '../model/storyboard.js';
import { signerJwksFor } from '../webhooks/operator-jwks.js';
import { agentAccess, agentPreflight, takePreflight } from './agent-preflight.js';
import { fileSize } from './file-size.js';
import { ensureAgentStarted } from './run-agent.js';
import { filtered } from './run-host.js';
import { isStoryboard, type PluginState } from './state.js';
import { formatDiagnostic } from '../storyboard/diagnostics.js';
import { loadErrors, loadForRun, warmUp } from './storyboard-modules.js';

/** `concurrency`'s default: storyboards in flight at once (docs/architecture.md, "Storyboards in flight"). */
const DEFAULT_CONCURRENCY = 32;

/**
 * The configuration check and the agent's start (agentUpFor), then the agent preflight (agent-preflight.ts): each
 * stops the run once, before any test file runs. Called only when a run starts with storyboard files in it (watchRuns): never for a collection
 * (`vitest list`, an IDE's test discovery), which calls no agent — so not from a global setup, which Vitest runs
 * for both.
 */
async function preflightRun(state: PluginState, agentUp: Promise<ResolvedRuntimeConfig>): Promise<void> {
  const config = await agentUp;
  // Once per Vitest process while it passes; a failed check is made again on the next run (watch mode: the agent
  // may be up, or the token fixed, by then).
  const agent = agentAccess(config);
  // The bin's run: started as the bin asked for the capabilities (agent-preflight.ts startPreflight), passed by now.
  state.agentChecked ??= (takePreflight(agent) ?? agentPreflight(agent)).catch((error: unknown) => {
    state.agentChecked = undefined;
    throw error;
  });
  await state.agentChecked;
}

/**
 * The run's configuration, checked, and its agent up: `agent.start`'s agent started (or restarted, after an edit to
 * its source) and answering, before the preflight looks at it — and before the run host's runs read its tool list.
 */
async function agentUpFor(state: PluginState, project: TestProject): Promise<ResolvedRuntimeConfig> {
  const given = (project.getProvidedContext() as { vitestAdcp?: RuntimeConfig }).vitestAdcp ?? {};
  const config = resolveRuntimeConfig(given, process.env);
  if (config.error) throw new ConfigurationError(`vitest-adcp cannot run the storyboards: ${config.error}`);
  if (state.selectionProblem) throw state.selectionProblem;
  await checkSignerJwks(config);
  await ensureAgentStarted(state, config);
  return config;
}

/**
 * The operator's webhook signer JWKS, read once before anything runs: a file or URL that cannot be used stops the run
 * with its one line, before the agent is called (the storyboard runs then share what was read: signerJwksFor).
 */
async function checkSignerJwks(config: ResolvedRuntimeConfig): Promise<void> {
  const location = config.webhookSignerJwks;
  if (location === undefined) return;
  try {
    await signerJwksFor(location, {
      timeoutMs: config.timeoutMs,
      allowHttp: config.allowHttp === true,
      baseDir: config.projectRoot ?? process.cwd(),
    });
  } catch (error) {
    throw new ConfigurationError(`vitest-adcp cannot run the storyboards: ${(error as Error).message}`);
  }
}

/**
 * Learns when a run starts, and with which files, through a reporter with no output of its own (its
 * onTestRunStart comes before global setups, and never for a collection). A run with storyboard files is checked
 * there: an error thrown then stops it before anything runs, where one from a global setup would also make
 * Vitest's summary claim "No test files found". A run without any — your own tests only — is never stopped, except
 * an unfiltered one that wanted capability-selected storyboards it could not select.
 */
export function watchRuns(
  state: PluginState,
  vitest: VitestPluginContext['vitest'],
  project: TestProject,
  userProject: TestProject,
): void {
  if (state.runWatched) return;
  state.runWatched = true;
  (vitest.config.reporters as unknown[]).push({
    onTestRunStart: async (specs: readonly TestSpecification[]) => {
      // `--merge-reports` replays the runs of blob reports through the same event: nothing is run, nothing asked.
      if ((vitest.config as { mergeReports?: string }).mergeReports) return;
      const storyboards = specs.filter(
        (spec) => spec.project === project && (project !== userProject || isStoryboard(state, spec.moduleId)),
      );
      // A watch-mode re-run (a file saved, `r`): Vitest does not catch what stops it, and would exit with the error.
      const watchRerun = vitest.config.watch && state.runsStarted > 0;
      state.runsStarted++;
      for (const spec of storyboards) state.storyboardFiles.add(spec.moduleId);
      if (storyboards.length > 0) {
        // The runs are loaded and opened while the preflight waits on the agent; none calls it before the preflight
        // has passed (a failed one stops the run here, and the runs that waited never call; in a watch-mode re-run,
        // their steps fail with its line, and the watch goes on).
        const agentUp = agentUpFor(state, project);
        const preflight = preflightRun(state, agentUp).catch((error: unknown) =>
          loadErrorsFirst(state, storyboards, error),
        );
        // Awaited below, once the run host has its runs: a command that exits at once fails the preflight while hostRun
        // still loads and orders them, and that rejection must not count as unhandled meanwhile (an exit code of 1,
        // not the configuration error's 2).
        preflight.catch(() => {});
        await hostRun(state, vitest, project, storyboards, preflight, agentUp);
        // The workers' transforms once the preflight has passed, as the workers start: before, they held the main
        // process ~0.5 s (58 storyboards) ahead of the preflight's requests, the run's first, which nothing passes.
        const warm = () => (project !== userProject ? warmUp(state, project) : undefined);
        await (watchRerun ? preflight.catch(() => {}) : preflight).then(warm);
      }
      const filtered = Boolean((vitest as { filenamePattern?: string[] }).filenamePattern?.length);
      if (state.selectionProblem && !filtered && vitest.projects.includes(project)) throw state.selectionProblem;
    },
  });
}

/** The start of the preflight's messages (agent-preflight.ts), said of the files that loaded when some did not. */
const CANNOT_RUN = 'vitest-adcp cannot run the storyboards: ';

/**
 * A failed preflight, with the run's load errors said first (issue 31, item 5: a misspelt task hid behind "the agent
 * … cannot be reached"). Load errors need no agent. When no file loads, nothing would call the agent: the run goes on
 * and each file fails on its own load errors. When some load, the run stops with one error: each load error located
 * (`file:line:col: [rule] …`), then the preflight's one line, said of the files that loaded. A failed capability
 * selection is not the agent's answer to these files: it stops the run as it is.
 */
function loadErrorsFirst(state: PluginState, specs: readonly TestSpecification[], error: unknown): void {
  if (error === state.selectionProblem || !(error instanceof Error)) throw error;
  const failing = specs
    .map((spec) => ({ file: spec.moduleId, errors: loadErrors(state, spec.moduleId) }))
    .filter((f) => f.errors.length > 0);
  if (failing.length === 0) throw error;
  if (failing.length === specs.length) return;
  const loaded = specs.length - failing.length;
  const lines = failing.flatMap((f) => f.errors.map((d) => formatDiagnostic({ ...d, file: shown(state, d.file) })));
  const agentLine = error.message.startsWith(CANNOT_RUN)
    ? `vitest-adcp cannot run the ${filesThat(loaded, 'loads', 'load')}: ${error.message.slice(CANNOT_RUN.length)}`
    : error.message;
  const heading = `vitest-adcp: ${failing.length} of ${storyboardFiles(specs.length)} ${failing.length === 1 ? 'does' : 'do'} not load (load errors need no agent: fix them first):`;
  throw new ConfigurationError([heading, ...lines, agentLine].join('\n'));
}

/** `1 storyboard file`, `2 storyboard files`. */
function storyboardFiles(n: number): string {
  return `${n} storyboard file${n === 1 ? '' : 's'}`;
}

/** `1 storyboard file that loads`, `2 storyboard files that load`. */
function filesThat(n: number, one: string, many: string): string {
  return `${storyboardFiles(n)} that ${n === 1 ? one : many}`;
}

/** A file as the messages show it: relative to the project root when below it. */
function shown(state: PluginState, file: string): string {
  const rel = relative(state.root, file);
  return rel.startsWith('..') || isAbsolute(rel) ? file : rel;
}

/** How many storyboards the run host runs at once: the option, `1` for `sequential`. */
function concurrencyOf(options: PluginState['options']): number {
  if (options.sequential === true) return 1;
  const value = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(value) || value < 1)
    throw new ConfigurationError(
      `adcpStoryboards({ concurrency: ${String(value)} }): concurrency is how many storyboards run at once, a whole number of 1 or more (1: one after another)`,
    );
  return value;
}

/**
 * Hands the run's storyboard files to the run host (run-host.ts), in plan/launch-order.ts's order, or one at a time in
 * `sequential`'s order: each opens the way a worker would open it, with the configuration the workers are given and
 * the webhook receiver of this process.
 */
async function hostRun(
  state: PluginState,
  vitest: VitestPluginContext['vitest'],
  project: TestProject,
  specs: readonly TestSpecification[],
  preflight: Promise<void>,
  agentUp: Promise<unknown>,
): Promise<void> {
  if (!state.runHost) return;
  const concurrency = concurrencyOf(state.options);
  const host = await state.runHost;
  const pattern = vitest.config.testNamePattern;
  const hosted = specs.filter((spec) => !filtered(spec, pattern));
  const given = (project.getProvidedContext() as { vitestAdcp?: RuntimeConfig }).vitestAdcp ?? {};
  // Loaded here, each file once: its plan decides its place (one at a time: the run's order, the reference's, with
  // `sequential`: the run's sequencer gives it; several: plan/launch-order.ts), and its run opens from it.
  const loaded = new Map(hosted.map((spec) => [spec, loadForRun(state, spec.moduleId)]));
  const Sequencer = vitest.config.sequence.sequencer;
  const ordered = concurrency > 1 ? await launchOrder(hosted, loaded, given) : await new Sequencer(vitest).sort(hosted);
  const receiver = state.webhookReceiver ? (await state.webhookReceiver).receiver : undefined;
  host.begin(
    ordered.map((spec) => ({
      file: spec.moduleId,
      open: async () => {
        const load = loaded.get(spec);
        loaded.delete(spec);
        if (!load) return undefined;
        const { openStoryboardRun } = await import('../open-run.js');
        const run = openStoryboardRun(load.storyboard, given, {
          shareSessions: true,
          // Storyboards seed beside each other here already: a storyboard's own seeds of a kind go out together too.
          seedsTogether: concurrency > 1,
          loadWarnings: load.loadWarnings,
          ...(receiver ? { webhooks: receiver } : {}),
        });
        return { storyboard: load.storyboard, run };
      },
    })),
    concurrency,
    {
      ready: preflight,
      agentUp,
      // When each run ended: the next run's order of the files in the worker (workers.ts finishFirst).
      finished: (ends) => state.finishTimes?.record(ends),
    },
  );
}

/**
 * The files in plan/launch-order.ts's order, each planned as its run will plan it (`loaded`: loadForRun's result of
 * each; undefined when the file does not load).
 */
export async function launchOrder(
  specs: readonly TestSpecification[],
  loaded: ReadonlyMap<TestSpecification, { storyboard: Storyboard } | undefined>,
  given: RuntimeConfig,
): Promise<TestSpecification[]> {
  const [{ planOf }, { inLaunchOrder, launchShape }] = await Promise.all([
    import('../adapter/planned-steps.js'),
    import('../plan/launch-order.js'),
  ]);
  const { corpusRoot } = resolveRuntimeConfig(given, process.env);
  return inLaunchOrder(specs, (spec) => {
    const load = loaded.get(spec);
    return load && launchShape(planOf(load.storyboard, { corpusRoot }), fileSize(spec.moduleId));
  });
}
