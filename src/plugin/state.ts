/**
 * What the plugin's hooks share: one object per plugin instance, i.e. per Vitest run (a config reload makes a new
 * instance), handed to each hook's function (plugin.ts) in place of closure variables. `CompileState` is the part the
 * module hooks (storyboard-modules.ts) read; `PluginState` adds what configuring and starting a run keep.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import type { CachedCompile, CompileCache } from '../compile/compile-cache.js';
import type { StoredStoryboards } from '../cache/stored-storyboards.js';
import { complianceFromEnv } from '../corpus.js';
import type { ConfigurationError } from '../model/errors.js';
import type { HostedWebhookReceiver } from '../webhooks/remote.js';
import type { StartedAgent } from '../agent/agent-start.js';
import type { AdcpStoryboardsOptions } from './options.js';
import type { FinishTimes } from './finish-times.js';
import type { RunHost } from './run-host.js';

export interface CompileState {
  readonly options: AdcpStoryboardsOptions;
  /** The runtime module compiled storyboards import. */
  readonly runtime: string;
  /** Storyboard files named explicitly (`files`, the selected corpus files), absolute: storyboards whatever their name. */
  readonly explicit: Set<string>;
  /** The storyboard project's test globs, once configured: a `.yaml` file they match is a storyboard. */
  matchesTestGlob?: (id: string) => boolean;
  /** Storyboard module ids over the byte bound: the load hook made their module, unread. */
  readonly refused: Set<string>;
  /** Where corpus-relative test kits resolve: the selected corpus, else the newest installed one. */
  kitRoot?: string;
  /** Compiled corpus storyboards between runs (unless `cacheDir: false`). */
  compileCache?: CompileCache;
  /** What the loader checks `task` and `sample_request` against (storyboard/adcp-tasks.ts), and where it keeps their validators. */
  loadSchemasDir?: string;
  schemaCacheDir?: string;
  /** The run host's compile of a module (mode and file), by its text, until the transform takes it: one for both. */
  readonly recentCompiles: Map<string, { code: string; result: CachedCompile }>;
  /** Files whose compile came from the compile cache this run: an earlier run compiled (and transformed) them. */
  readonly compiledBefore: Set<string>;
  /**
   * Where test modules' storyboards are kept for the workers (cache/stored-storyboards.ts; unless `cacheDir: false` or
   * no private directory for it: the modules then embed them).
   */
  storedStoryboards?: StoredStoryboards;
  /** The storyboard project keeps its transformed modules on disk (module-cache.ts). */
  moduleCacheOn?: boolean;
}

export interface PluginState extends CompileState {
  root: string;
  /** ADCP_COMPLIANCE, read when the plugin is made. */
  readonly complianceEnv: string | undefined;
  /** Whether the options select corpus storyboards (by id, bundle, track or capabilities). */
  readonly wantsCorpus: boolean;
  /** The capability-driven ids: asked once per plugin instance, i.e. once per Vitest run (a config reload makes a new instance). */
  capabilityIds?: Promise<string[]>;
  /** Projects this instance injected for storyboard files (configureVitest must not treat them as a user's). */
  readonly storyboardProjects: WeakSet<TestProject>;
  /** The webhook receiver: one per plugin instance (i.e. per Vitest run), closed with Vitest. */
  webhookReceiver?: Promise<HostedWebhookReceiver>;
  /** When each storyboard's run ended in the runs before (finish-times.ts): the worker's order (workers.ts finishFirst). */
  finishTimes?: FinishTimes;
  /** The run host (run-host.ts): one per plugin instance, closed with Vitest. */
  runHost?: Promise<RunHost>;
  /** The agent `agent.start` started (or found answering) for this Vitest process (run-agent.ts). */
  agentStarted?: Promise<StartedAgent>;
  /** Where that agent's output is written when it stops: `<report>.agent.log`, when a contract report is written. */
  agentLogFile?: string;
  agentStartPrepared?: boolean;
  /** The last start of that agent failed: the run exits 2 at Vitest's close, as the bin does (run-agent.ts). */
  agentStartFailed?: boolean;
  /** A file of `agent.start.watch` changed (agent-watch.ts): the next run's start restarts the agent first. */
  agentRestartWanted?: boolean;
  /** How many runs have started (run-start.ts): after the first, a run of `vitest --watch` is a re-run. */
  runsStarted: number;
  /** The storyboard files of every run so far: what an edit to the agent's source re-runs (agent-watch.ts). */
  readonly storyboardFiles: Set<string>;
  /** The agent preflight (agent-preflight.ts) of this Vitest process, once it has passed. */
  agentChecked?: Promise<void>;
  /**
   * `compliance.fromCapabilities` without an agent to ask: the collection goes on without those storyboards (a list
   * needs no agent), and a run that would have run them stops with this.
   */
  selectionProblem?: ConfigurationError;
  /** `--project` selects the storyboard project and not yours (config): your project then runs the storyboards alone. */
  storyboardsOnly: boolean;
  runWatched: boolean;
  configSeen: boolean;
  /** The module-cache key generator is registered (Vitest 4: once, for every project). */
  moduleKeysDefined?: boolean;
}

export function createState(options: AdcpStoryboardsOptions): PluginState {
  const compliance = options.compliance;
  return {
    options,
    runtime: runtimeModule(),
    explicit: new Set(),
    refused: new Set(),
    recentCompiles: new Map(),
    compiledBefore: new Set(),
    root: process.cwd(),
    complianceEnv: complianceFromEnv(),
    wantsCorpus: Boolean(
      compliance &&
      (compliance.fromCapabilities ||
        compliance.storyboards?.length ||
        compliance.bundles?.length ||
        compliance.tracks?.length),
    ),
    storyboardProjects: new WeakSet(),
    storyboardsOnly: false,
    runsStarted: 0,
    storyboardFiles: new Set(),
    runWatched: false,
    configSeen: false,
  };
}

/**
 * Query marking a storyboard imported by another module (a hand-written test):
 * it compiles to the typed data only, so importing a storyboard never
 * registers its tests in the importer. Test files themselves are loaded by
 * path, without an importer, and compile to tests.
 */
export const DATA_QUERY = 'adcp-storyboard-data';
/** The id prefix of a test file over the byte bound while Vitest's module cache is on (oversize-entry.ts says why). */
export const OVERSIZE_ENTRY = '\0vitest-adcp-oversize:';
const STORYBOARD_SUFFIX = /\.storyboard\.ya?ml$/;

export function cleanId(id: string): string {
  return id.split('?')[0]!;
}

export function isStoryboard(state: CompileState, id: string): boolean {
  const file = cleanId(id);
  if (!/\.ya?ml$/.test(file) || file.startsWith(OVERSIZE_ENTRY)) return false;
  return STORYBOARD_SUFFIX.test(file) || state.explicit.has(file) || (state.matchesTestGlob?.(file) ?? false);
}

/**
 * A module of this package by its path from `src/` (or `dist/`), `/`-separated:
 * `.ts` when the plugin runs from source, `.js` from the build.
 */
function packageModule(fromRoot: string): string {
  const here = fileURLToPath(import.meta.url);
  const ext = here.endsWith('.ts') ? '.ts' : '.js';
  return resolve(here, '..', '..', `${fromRoot}${ext}`).split('\\').join('/');
}

/** The runtime module compiled storyboards import. */
const runtimeModule = () => packageModule('runtime');
