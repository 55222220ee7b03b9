/**
 * The Vite/Vitest plugin: adds storyboard files to the run, compiles each into
 * a test module (with a source map back to the YAML), and hands the workers
 * their configuration.
 */
import { availableParallelism } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vitest/config';
import type { TestProject, TestSpecification, VitestPluginContext } from 'vitest/node';
import { defaultCacheDir } from '../cache/location.js';
import { CompileCache, type CachedCompile } from '../compile/compile-cache.js';
import { compileOversizeStoryboard, compileStoryboard, type CompileOptions } from '../compile/compile.js';
import { signingVectorsFor } from '../roles/request-signing/vectors.js';
import { ConfigurationError } from '../model/errors.js';
import { resolveRuntimeConfig, type RuntimeConfig } from '../config.js';
import { complianceFromEnv, resolveCorpus, runCorpus, type Corpus } from '../corpus.js';
import { agentPreflight } from './agent-preflight.js';
import { CapabilitySelectionError, storyboardIdsForAgent } from './capabilities.js';
import { addSummaryReporter } from '../vitest/summary-reporter.js';
import { checkOptions } from './check-options.js';
import { selectCorpusInRunOrder, type CorpusSelection } from '../storyboard/select.js';
import { resolveWebhookReceiver, type WebhookOptions } from '../webhooks/options.js';
import { fileBytesOverBound, type StoryboardBounds } from '../storyboard/bounds.js';
import { HostedWebhookReceiver } from '../webhooks/remote.js';

export interface AdcpStoryboardsOptions {
  /**
   * Globs (relative to the project root) of your own storyboard files, added
   * to Vitest's `include` — your own test globs stay as they are.
   * @default ['**\/*.storyboard.yaml', '**\/*.storyboard.yml']
   */
  include?: string | string[];
  /** Explicit storyboard files (any name) to run as well. */
  files?: string[];
  /**
   * Storyboards from the AdCP compliance corpus of the installed `@adcp/sdk`
   * (or of `version` / `path`): by storyboard id, bundle or track, and/or the
   * ones the agent's capabilities call for (`fromCapabilities`). The scenarios
   * a selected storyboard requires (`requires_scenarios`) run too.
   * Env: ADCP_COMPLIANCE (a version, or a path to a compliance tree).
   * @default undefined (no corpus storyboards run)
   */
  compliance?: CorpusSelection & {
    /**
     * Also run what the agent must pass, chosen from its `get_adcp_capabilities`
     * as `npx adcp storyboard run <url>` chooses: `universal`, a bundle per
     * declared `supported_protocols` entry, each declared specialism. Asked once
     * per run, before any test file is collected; an unreachable agent fails
     * the run with one error. Unknown protocols/specialisms are warnings.
     * @default false
     */
    fromCapabilities?: boolean;
    version?: string;
    path?: string;
  };
  /** The agent under test. Env fallbacks: ADCP_AGENT_URL, ADCP_PROTOCOL, ADCP_AUTH_TOKEN. */
  agent?: {
    url?: string;
    /** @default 'mcp' */
    protocol?: 'mcp' | 'a2a';
    /** Bearer token sent on steps that do not declare their own `auth:`. */
    auth?: { token?: string };
    /**
     * Local development only: allow a plain-http agent URL that is not loopback (otherwise a
     * configuration error: credentials would go out in cleartext), and let the runner fetch
     * agent-supplied URLs (OAuth issuer, A2A endpoint) over http or on private addresses.
     * Results are then not publishable. Env: ADCP_ALLOW_HTTP=1. @default false
     */
    allowHttp?: boolean;
  };
  /** Per-step bound on the call to the agent, in ms. @default 30000 */
  timeoutMs?: number;
  /** Largest agent response read, in bytes. @default 10485760 (10 MiB) */
  maxResponseBytes?: number;
  /**
   * The signed_requests storyboard. `skipRateAbuse`: do not send vector 020's
   * N+1 requests (the test kit's per-keyid cap); it grades unsatisfied_contract
   * (`rate_abuse_opt_out`). Env: ADCP_SKIP_RATE_ABUSE=1. @default false
   */
  signedRequests?: { skipRateAbuse?: boolean };
  /**
   * Run storyboard files with Vitest's per-file module isolation, in your own
   * project. By default they run in a project of their own (`vitest-adcp`)
   * with `isolate: false`, which is several times faster: each worker loads
   * the engine and compiles the schemas once instead of once per file — and,
   * where Vitest's default would give them a single worker (2 cores), with two,
   * after your own tests. Your own tests keep their settings either way.
   * @default false
   */
  isolate?: boolean;
  /**
   * Run storyboard files one at a time, in the reference runner's order
   * (`npx adcp storyboard run`), as the official grader does — for agents that
   * keep state per account or brand, where one storyboard's leftovers (a
   * governance plan, a media buy) change a later one's verdict. The order:
   * the corpus selection as the reference runs it — ids named in
   * `compliance.storyboards` in the order given, the capability-selected ones
   * in the order `resolveStoryboardsForCapabilities` returns them, then
   * `bundles`, then `tracks`, each expanded in the reference's corpus order; a
   * required scenario just before the first storyboard that requires it —
   * then `files` in the order given, then files matched by `include`, by
   * path (docs/conformance.md, "Run order on stateful agents"). One worker
   * (`maxWorkers: 1`), after your own tests; the rest of the run keeps
   * Vitest's order. With `isolate: true` the storyboards run in your project,
   * which then runs all its files one at a time.
   * By default storyboard files run in Vitest's order (larger and slower files
   * first), two at a time where Vitest would give them one worker.
   * @default false
   */
  sequential?: boolean;
  /**
   * Directories (relative to the project root) that storyboards may read test
   * kits from, besides the project itself and the compliance corpus. A kit's
   * values are sent to the agent and written to reports, so nothing else on
   * disk can be named as one.
   */
  testKitDirs?: string[];
  /** Directory of AdCP JSON Schemas. @default the installed @adcp/sdk's, matching the corpus version */
  schemasDir?: string;
  /**
   * Where compiled AdCP schema validators are kept between runs, so a worker
   * loads them instead of compiling each response schema again (about a
   * quarter of a second per worker over the corpus). Entries are keyed by the
   * schemas' own text: a changed or reinstalled schema set gets new ones.
   * Relative to the project root; `false`: no cache.
   * @default `vitest-adcp/` in Vite's cacheDir (`node_modules/.vite/vitest-adcp`); outside any package (no
   * `package.json` up the tree), `vitest-adcp/cache` in the OS's per-user cache directory (`~/.cache` on Linux)
   */
  cacheDir?: string | false;
  /**
   * A key the storyboard format does not define (`validation:`, `sample_requst:`)
   * or a `check` it does not define is a load error naming file:line:col and the
   * key meant — a misspelt key would otherwise disable what it names and let the
   * step pass. `false` is for storyboards written for a newer format version:
   * near misses are then warnings (in the terminal and on the storyboard's first
   * step in reports), other unknown keys are kept, and an unknown check fails at
   * run time. Your own annotations never need it: prefix them `x-`.
   * @default true
   */
  strictKeys?: boolean;
  /**
   * Size and complexity bounds on each storyboard file, checked before it is read (bytes) or parsed (anchors,
   * aliases) and after (expanded size, phases, steps); a file over one fails only itself, with a `storyboard_bound`
   * load error naming the bound. Raise one for a storyboard meant to be that big. @default `{ maxBytes: 524288,
   * maxAnchors: 100, maxAliases: 100, maxExpandedBytes: 2097152, maxPhases: 100, maxSteps: 500 }`
   */
  storyboardBounds?: StoryboardBounds;
  /**
   * The runner's webhook receiver (test-kits/webhook-receiver-runner.yaml), for
   * `expect_webhook*` steps and `{{runner.webhook_url:…}}`: `receiver: 'loopback'`
   * (127.0.0.1, for an agent on this machine), or a public base URL (proxy
   * mode; env ADCP_RUNNER_WEBHOOK_BASE_URL, https) routing to `port`. Hosted
   * once per run in the main process. Without one, those steps grade
   * not_applicable. @default off (proxy when ADCP_RUNNER_WEBHOOK_BASE_URL is set)
   */
  webhooks?: WebhookOptions;
  /**
   * How requests are built. `'enriched'`: the per-task request builder the
   * storyboards are written for completes each request — a field the storyboard
   * wrote is sent as written; what it leaves out (a webhook trigger's packages,
   * an auction's bid_price) is filled from what the run discovered, and a past
   * flight is moved forward — each change a warning on the step (terminal,
   * JUnit, report). `'as-written'`: only `sample_request` after substitution,
   * for storyboard authors who want to see what their text alone sends.
   * Env: ADCP_REQUESTS=as-written. @default 'enriched'
   */
  requests?: 'enriched' | 'as-written';
}

const DEFAULT_INCLUDE = ['**/*.storyboard.yaml', '**/*.storyboard.yml'];
/** The storyboard project's name (`vitest-adcp:<name>` beside a named project of yours): what `--project` selects. */
export const STORYBOARD_PROJECT = 'vitest-adcp';
/**
 * Query marking a storyboard imported by another module (a hand-written test):
 * it compiles to the typed data only, so importing a storyboard never
 * registers its tests in the importer. Test files themselves are loaded by
 * path, without an importer, and compile to tests.
 */
const DATA_QUERY = 'adcp-storyboard-data';
const STORYBOARD_SUFFIX = /\.storyboard\.ya?ml$/;
/** Where the Jest preset writes its corpus stubs (jest/preset.cts), below the project root. */
const JEST_CORPUS_STUBS = '**/.adcp-corpus/**';

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

function cleanId(id: string): string {
  return id.split('?')[0]!;
}

export function adcpStoryboards(options: AdcpStoryboardsOptions = {}): Plugin {
  checkOptions(options);
  const include = options.include === undefined ? DEFAULT_INCLUDE : ([] as string[]).concat(options.include);
  const explicit = new Set<string>();
  let corpus: Corpus | undefined;
  /** Where corpus-relative test kits resolve: the selected corpus, else the newest installed one. */
  let kitRoot: string | undefined;
  /** Compiled corpus storyboards between runs (unless `cacheDir: false`). */
  let compileCache: CompileCache | undefined;
  /** What the loader checks `task` and `sample_request` against (storyboard/adcp-tasks.ts), and where it keeps their validators. */
  let loadSchemasDir: string | undefined;
  let schemaCacheDir: string | undefined;
  let root = process.cwd();
  let matchesTestGlob: ((id: string) => boolean) | undefined;
  const runtime = runtimeModule();

  const compliance = options.compliance;
  const complianceEnv = complianceFromEnv();
  const wantsCorpus = Boolean(
    compliance &&
    (compliance.fromCapabilities ||
      compliance.storyboards?.length ||
      compliance.bundles?.length ||
      compliance.tracks?.length),
  );
  /** The capability-driven ids: asked once per plugin instance, i.e. once per Vitest run (a config reload makes a new instance). */
  let capabilityIds: Promise<string[]> | undefined;
  /** Projects this instance injected for storyboard files (configureVitest must not treat them as a user's). */
  const storyboardProjects = new WeakSet<TestProject>();
  /** The webhook receiver: one per plugin instance (i.e. per Vitest run), closed with Vitest. */
  let webhookReceiver: Promise<HostedWebhookReceiver> | undefined;
  /** Storyboard module ids over the byte bound: the load hook made their module, unread. */
  const refused = new Set<string>();
  /** The agent preflight (agent-preflight.ts) of this Vitest process, once it has passed. */
  let agentChecked: Promise<void> | undefined;
  /**
   * `compliance.fromCapabilities` without an agent to ask: the collection goes on without those storyboards (a list
   * needs no agent), and a run that would have run them stops with this.
   */
  let selectionProblem: ConfigurationError | undefined;
  /** `--project` selects the storyboard project and not yours (config): your project then runs the storyboards alone. */
  let storyboardsOnly = false;
  let runWatched = false;
  let configSeen = false;

  /**
   * The configuration check, then the agent preflight (agent-preflight.ts): each stops the run once, before any test
   * file runs. Called only when a run starts with storyboard files in it (watchRuns): never for a collection
   * (`vitest list`, an IDE's test discovery), which calls no agent — so not from a global setup, which Vitest runs
   * for both.
   */
  async function preflightRun(project: TestProject): Promise<void> {
    const given = (project.getProvidedContext() as { vitestAdcp?: RuntimeConfig }).vitestAdcp ?? {};
    const config = resolveRuntimeConfig(given, process.env);
    if (config.error) throw new ConfigurationError(`vitest-adcp cannot run the storyboards: ${config.error}`);
    if (selectionProblem) throw selectionProblem;
    // Once per Vitest process while it passes; a failed check is made again on the next run (watch mode: the agent
    // may be up, or the token fixed, by then).
    agentChecked ??= agentPreflight({
      url: config.agentUrl!,
      protocol: config.protocol,
      authToken: config.authToken,
      timeoutMs: config.timeoutMs,
      maxResponseBytes: config.maxResponseBytes,
      allowHttp: config.allowHttp,
    }).catch((error: unknown) => {
      agentChecked = undefined;
      throw error;
    });
    await agentChecked;
  }

  /**
   * Learns when a run starts, and with which files, through a reporter with no output of its own (its
   * onTestRunStart comes before global setups, and never for a collection). A run with storyboard files is checked
   * there: an error thrown then stops it before anything runs, where one from a global setup would also make
   * Vitest's summary claim "No test files found". A run without any — your own tests only — is never stopped, except
   * an unfiltered one that wanted capability-selected storyboards it could not select.
   */
  function watchRuns(vitest: VitestPluginContext['vitest'], project: TestProject, userProject: TestProject): void {
    if (runWatched) return;
    runWatched = true;
    (vitest.config.reporters as unknown[]).push({
      onTestRunStart: async (specs: readonly TestSpecification[]) => {
        // `--merge-reports` replays the runs of blob reports through the same event: nothing is run, nothing asked.
        if ((vitest.config as { mergeReports?: string }).mergeReports) return;
        const storyboards = specs.filter(
          (spec) => spec.project === project && (project !== userProject || isStoryboard(spec.moduleId)),
        );
        if (storyboards.length > 0) return preflightRun(project);
        const filtered = Boolean((vitest as { filenamePattern?: string[] }).filenamePattern?.length);
        if (selectionProblem && !filtered && vitest.projects.includes(project)) throw selectionProblem;
      },
    });
  }

  function agentGiven(): RuntimeConfig {
    return {
      agentUrl: options.agent?.url,
      protocol: options.agent?.protocol,
      authToken: options.agent?.auth?.token,
      timeoutMs: options.timeoutMs,
      maxResponseBytes: options.maxResponseBytes,
      allowHttp: options.agent?.allowHttp,
    };
  }

  function storyboardIdsFromCapabilities(
    corpus: Corpus,
    root: string,
    cacheDir: string | undefined,
  ): Promise<string[]> {
    const agent = resolveRuntimeConfig(agentGiven());
    if (agent.error)
      return Promise.reject(
        new CapabilitySelectionError(
          `compliance.fromCapabilities asks the agent which storyboards apply, but ${agent.error}`,
        ),
      );
    return storyboardIdsForAgent(
      {
        url: agent.agentUrl!,
        protocol: agent.protocol,
        authToken: agent.authToken,
        timeoutMs: agent.timeoutMs,
        maxResponseBytes: agent.maxResponseBytes,
        allowHttp: agent.allowHttp,
      },
      corpus.root,
      { fromDir: root, ...(cacheDir ? { cacheDir } : {}) },
    );
  }

  /**
   * `sequential`: the storyboard files one at a time (the storyboard project has one worker, storyboardProject), in
   * run order — Vitest's sequencer, wrapped (sequencer.ts), puts them in that order among the slots Vitest gave them.
   */
  async function runInOrder(
    vitest: VitestPluginContext['vitest'],
    project: TestProject,
    userProject: TestProject,
    corpusOrder: string[],
  ): Promise<void> {
    if (project === userProject) {
      // isolate: true — the storyboards share the user's project, which then runs its files one at a time.
      const config = project.config as { maxWorkers?: number; fileParallelism?: boolean };
      config.maxWorkers = 1;
      config.fileParallelism = false;
    }
    const files = [...corpusOrder, ...(options.files ?? []).map((file) => resolve(root, file))];
    const { installRunOrder } = await import('./sequencer.js');
    installRunOrder(vitest, {
      owns: (spec) => spec.project === project && (project !== userProject || isStoryboard(spec.moduleId)),
      files: () => files,
    });
  }

  function isStoryboard(id: string): boolean {
    const file = cleanId(id);
    if (!/\.ya?ml$/.test(file)) return false;
    return STORYBOARD_SUFFIX.test(file) || explicit.has(file) || (matchesTestGlob?.(file) ?? false);
  }

  const plugin: Plugin = {
    name: 'vitest-adcp',
    enforce: 'pre',
    config(config) {
      root = resolve(config.root ?? process.cwd());
      // The storyboard project carries this same instance: its config is made here (storyboardProject), not read.
      if (configSeen) return undefined;
      configSeen = true;
      const test = (config as { test?: { includeTaskLocation?: boolean; name?: string; projects?: unknown } }).test;
      const changes: { includeTaskLocation?: boolean; name?: string } = {};
      // Test locations (and so IDE navigation) need includeTaskLocation.
      if (test?.includeTaskLocation === undefined) changes.includeTaskLocation = true;
      // `--project vitest-adcp` and not your project: Vitest filters the projects a config declares before any plugin
      // can inject one, so nothing would be left to run. Your project then takes the storyboard project's name and
      // runs the storyboards alone (configureVitest empties its own include), as the storyboard project would.
      if (options.isolate !== true && test?.projects === undefined && selectsStoryboardsOnly(test?.name)) {
        storyboardsOnly = true;
        changes.name = storyboardProjectName(test?.name);
      }
      return Object.keys(changes).length > 0 ? ({ test: changes } as any) : undefined;
    },
    async configureVitest({ project: userProject, vitest, injectTestProjects }) {
      // The storyboard project carries this same plugin instance: it is configured from the user's project, once.
      if (storyboardProjects.has(userProject)) return;
      root = userProject.config.root;
      // Where storyboard files run (see storyboardProject): a project of their own, without per-file isolation, unless
      // the user asked for isolation. Either way the user's own tests keep their settings.
      const project = storyboardsOnly
        ? asStoryboardProject(userProject, vitest, options.sequential === true)
        : options.isolate === true
          ? userProject
          : await storyboardProject(userProject, injectTestProjects, plugin, vitest, options.sequential === true);
      // `--project '!vitest-adcp'` (or a filter naming only your projects): no storyboard runs, and nothing asks the agent.
      if (!project) return;
      storyboardProjects.add(project);
      // The per-track summary at the end of a run (vitest/summary-reporter.ts), beside a terminal reporter only.
      addSummaryReporter(vitest);
      watchRuns(vitest, project, userProject);
      // Pushed, not returned from config(): a returned test.include would replace the user's.
      project.config.include.push(...include);
      // The Jest preset's corpus stubs (jest/preset.cts) in a repository that runs both: Jest's files, not storyboards.
      project.config.exclude.push(JEST_CORPUS_STUBS);
      for (const file of options.files ?? []) {
        const abs = resolve(root, file);
        explicit.add(abs);
        project.config.include.push(toGlob(root, abs));
      }
      const version = compliance?.path ?? compliance?.version ?? complianceEnv;
      const cacheDir = runtimeCacheDir(options, root, project);
      schemaCacheDir = cacheDir;
      try {
        corpus = version || wantsCorpus ? resolveCorpus(version, root) : undefined;
      } catch (error) {
        // A corpus that was asked for (by selection, or by naming a version or path) must exist; else none is needed.
        if (wantsCorpus || version) throw error;
        corpus = undefined;
      }
      /** The selected corpus files in the reference runner's order (`sequential`). */
      let corpusOrder: string[] = [];
      if (corpus && wantsCorpus) {
        const selection = { ...compliance };
        if (compliance!.fromCapabilities) {
          const agent = resolveRuntimeConfig(agentGiven());
          if (agent.error) {
            // Collecting needs no agent (`vitest list`, an IDE's discovery without your shell's environment): list what
            // can be listed, say what is missing, and stop a run that would have run it (preflightRun, watchRuns).
            selectionProblem = new ConfigurationError(
              `vitest-adcp cannot run the storyboards: compliance.fromCapabilities asks the agent which storyboards apply, but ${agent.error}`,
            );
            console.warn(
              `[vitest-adcp] compliance.fromCapabilities: no storyboards selected from the agent's capabilities, because ${agent.error}. This collection lists your own storyboards and those named in compliance.storyboards / bundles / tracks; a run stops with this message.`,
            );
          } else {
            capabilityIds ??= storyboardIdsFromCapabilities(corpus, root, cacheDir);
            selection.storyboards = [...(compliance!.storyboards ?? []), ...(await capabilityIds)];
          }
        }
        const files = selectCorpusInRunOrder(corpus.root, selection);
        corpusOrder = files;
        for (const file of files) {
          explicit.add(file);
          project.config.include.push(toGlob(root, file));
        }
        allowCorpusThroughExclude(project.config.exclude, corpus.root, root);
      }
      if (options.sequential === true) await runInOrder(vitest, project, userProject, corpusOrder);
      // Without a selected corpus, test kits and schemas come from the newest installed one.
      const fallback = corpus ?? (version ? undefined : runCorpus(undefined, root));
      kitRoot = fallback?.root;
      loadSchemasDir = options.schemasDir ?? fallback?.schemasDir;
      compileCache = cacheDir
        ? new CompileCache(
            cacheDir,
            JSON.stringify({
              runtime,
              kitRoot,
              corpusVersion: fallback?.version,
              strictKeys: options.strictKeys !== false,
              bounds: options.storyboardBounds ?? {},
            }),
          )
        : undefined;
      matchesTestGlob = (id) => project.matchesTestGlob(id);
      const runtimeConfig: RuntimeConfig = {
        agentUrl: options.agent?.url,
        protocol: options.agent?.protocol,
        authToken: options.agent?.auth?.token,
        timeoutMs: options.timeoutMs,
        maxResponseBytes: options.maxResponseBytes,
        corpusRoot: kitRoot,
        corpusVersion: fallback?.version,
        schemasDir: options.schemasDir ?? fallback?.schemasDir,
        cacheDir,
        projectRoot: root,
        ...(options.testKitDirs?.length ? { testKitDirs: options.testKitDirs.map((d) => resolve(root, d)) } : {}),
        skipRateAbuse: options.signedRequests?.skipRateAbuse,
        allowHttp: options.agent?.allowHttp,
        requests: options.requests,
      };
      const receiverOptions = resolveWebhookReceiver(options.webhooks);
      if (receiverOptions) {
        if (!webhookReceiver) {
          const starting = HostedWebhookReceiver.start(receiverOptions);
          webhookReceiver = starting;
          vitest.onClose(async () => (await starting).close());
        }
        runtimeConfig.webhooks = (await webhookReceiver).config;
      }
      project.provide('vitestAdcp', stripUndefined(runtimeConfig));
      // Compile the corpus storyboards now, in the main process, while the workers start: otherwise each worker
      // waits for its next file's transform in turn (the main process sat idle 60% of a run).
      if (project !== userProject) {
        const ssr = (
          project.vite as { environments?: Record<string, { warmupRequest?: (url: string) => Promise<void> }> }
        ).environments?.ssr;
        for (const file of explicit) void ssr?.warmupRequest?.(file);
      }
    },
    async resolveId(source, importer, resolveOptions) {
      // Vite names `<root>/index.html` as the importer of entries (test files).
      if (!importer || importer.endsWith('.html') || !/\.ya?ml(\?|$)/.test(source) || isStoryboard(importer))
        return null;
      const resolved = await this.resolve(source, importer, { ...resolveOptions, skipSelf: true });
      if (!resolved || resolved.external || !isStoryboard(resolved.id) || resolved.id.includes(DATA_QUERY)) return null;
      return `${cleanId(resolved.id)}?${DATA_QUERY}`;
    },
    load(id) {
      // A storyboard over the byte bound is never read: its module is its load failure (transform leaves it alone).
      if (!isStoryboard(id)) return null;
      const bytes = fileBytesOverBound(cleanId(id), options.storyboardBounds);
      if (bytes === undefined) {
        refused.delete(id);
        return null;
      }
      refused.add(id);
      const compiled = compileOversizeStoryboard(cleanId(id), bytes, {
        runtime,
        mode: id.includes(`?${DATA_QUERY}`) ? 'data' : 'tests',
        ...(options.storyboardBounds ? { bounds: options.storyboardBounds } : {}),
      });
      return { code: compiled.code, map: compiled.map as any };
    },
    transform(code, id) {
      if (!isStoryboard(id) || refused.has(id)) return null;
      const file = cleanId(id);
      const mode = id.includes(`?${DATA_QUERY}`) ? 'data' : 'tests';
      // Corpus files are installed, never edited: their compiled modules come from the cache (compile/compile-cache.ts).
      const key =
        compileCache && kitRoot && isBelow(file, kitRoot) ? compileCache.key(file, `${mode}\0${code}`) : undefined;
      let result = key ? compileCache!.load(key) : undefined;
      if (!result) {
        result = compileFresh(code, file, {
          runtime,
          corpusRoot: kitRoot,
          mode,
          ...(loadSchemasDir ? { schemasDir: loadSchemasDir } : {}),
          ...(schemaCacheDir ? { schemaCacheDir } : {}),
          ...(options.strictKeys === false ? { strictKeys: false } : {}),
          ...(options.storyboardBounds ? { bounds: options.storyboardBounds } : {}),
        });
        if (key) compileCache!.store(key, result);
      }
      for (const d of result.diagnostics.filter((d) => d.severity === 'warning')) {
        this.warn(`${d.file}:${d.line}:${d.column}: [${d.rule}] ${d.message}${d.hint ? ` — ${d.hint}` : ''}`);
      }
      // Editing a relative test kit re-runs the storyboards that use it.
      if (result.testKit?.startsWith('.')) this.addWatchFile(resolve(file, '..', result.testKit));
      return { code: result.code, map: result.map as any };
    },
  };
  return plugin;
}

/**
 * A storyboard file compiled (not from the cache). The compiler reads no file: the signed_requests vectors a test module
 * plans from are read here (once per process, a few ms; roles/request-signing/vectors.ts).
 */
function compileFresh(code: string, file: string, options: CompileOptions): CachedCompile {
  const compiled = compileStoryboard(code, file, {
    ...options,
    ...(options.mode !== 'data'
      ? { signingVectors: signingVectorsFor({ file }, { corpusRoot: options.corpusRoot }) }
      : {}),
  });
  return {
    code: compiled.code,
    map: compiled.map,
    diagnostics: compiled.diagnostics,
    ...(compiled.storyboard?.prerequisites?.test_kit ? { testKit: compiled.storyboard.prerequisites.test_kit } : {}),
  };
}

/**
 * The project storyboard files run in by default: injected beside the user's
 * (inheriting its config — plugins, setup files, env — but not its test files
 * or global setup, which the user's project runs once), with `isolate: false`.
 *
 * Why: each storyboard file is a fresh module graph under Vitest's default
 * per-file isolation, so every file re-imports the engine, the MCP SDK and
 * ajv and recompiles the schemas before its first step answers — about 300 ms
 * a file, 5× the reference runner's wall time over the corpus. Without
 * isolation a worker loads all that once and runs file after file. Storyboard
 * runs keep no module-level state of their own (each file opens its own
 * StoryboardRun: context, captures, credentials, transport), and the caches
 * they share — compiled schemas, the corpus id list — are read-only
 * (test/e2e/shared-worker.test.ts proves it).
 */
async function storyboardProject(
  user: TestProject,
  inject: VitestPluginContext['injectTestProjects'],
  plugin: Plugin,
  vitest: VitestPluginContext['vitest'],
  sequential: boolean,
): Promise<TestProject | undefined> {
  const name = storyboardProjectName(user.name);
  // Not `extends`: that would load the config file again and make a second, unconfigured instance of this plugin.
  // What storyboard files need from the user's project is its root, its env and its exclude; its global setup runs
  // once, in the user's project, before any test (its env changes reach these workers too).
  const [project] = await inject({
    plugins: [plugin],
    // Vitest 5 makes an inline project extend the config that declares it by default: the user's plugins (this one
    // included) would then apply twice, and a storyboard's compiled module would be compiled again as YAML. Vitest
    // 3.2 and 4 never extend unless asked, which `false` keeps (their types only know `string | true`).
    ...({ extends: false } as object),
    test: {
      name,
      root: user.config.root,
      include: [],
      exclude: [...user.config.exclude],
      env: { ...user.config.env },
      isolate: false,
      includeTaskLocation: true,
      ...(sequential ? SEQUENTIAL_SETTINGS : workerSettings(vitest)),
    },
  } as Parameters<VitestPluginContext['injectTestProjects']>[0]);
  // Vitest leaves out an injected project its `--project` filter excludes (`--project '!vitest-adcp'`).
  if (!project && !vitest.matchesProjectFilter(name)) return undefined;
  if (!project) throw new Error('vitest-adcp: Vitest did not create the storyboard project');
  return project;
}

function storyboardProjectName(userName: string | undefined): string {
  return userName ? `${STORYBOARD_PROJECT}:${userName}` : STORYBOARD_PROJECT;
}

/**
 * `--project` (Vitest's CLI flag) selects the storyboard project and not the project of the config: Vitest would drop
 * that project before any plugin runs, leaving none. Read from the command line because the config hook runs before
 * Vitest resolves its options; Vitest's own pattern rules (`*` wildcards, `!` negation, case-insensitive).
 */
function selectsStoryboardsOnly(userName: string | undefined): boolean {
  const filters: string[] = [];
  const argv = process.argv;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--project' && argv[i + 1] !== undefined) filters.push(argv[++i]!);
    else if (arg.startsWith('--project=')) filters.push(arg.slice('--project='.length));
  }
  if (filters.length === 0) return false;
  const matches = (name: string) => filters.some((filter) => projectPattern(filter).test(name));
  return matches(storyboardProjectName(userName)) && !matches(userName ?? '');
}

function projectPattern(filter: string): RegExp {
  const negated = filter.startsWith('!');
  const escape = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const body = (negated ? filter.slice(1) : filter).split('*').map(escape).join('.*') + '$';
  return new RegExp('^' + (negated ? `(?!${body})` : body), 'i');
}

/**
 * `--project vitest-adcp` alone: your project (renamed by the config hook) becomes the storyboard project — your own
 * test files are filtered out, as the flag asks, and the storyboards run with the settings the storyboard project
 * would give them.
 */
function asStoryboardProject(
  project: TestProject,
  vitest: VitestPluginContext['vitest'],
  sequential: boolean,
): TestProject {
  const config = project.config as {
    include: string[];
    isolate: boolean;
    maxWorkers?: number;
    fileParallelism?: boolean;
    sequence: { groupOrder?: number };
  };
  config.include.length = 0;
  config.isolate = false;
  const settings = (sequential ? SEQUENTIAL_SETTINGS : workerSettings(vitest)) as {
    maxWorkers?: number;
    fileParallelism?: boolean;
  };
  if (settings.maxWorkers !== undefined) config.maxWorkers = settings.maxWorkers;
  if (settings.fileParallelism !== undefined) config.fileParallelism = settings.fileParallelism;
  return project;
}

/**
 * The `cacheDir` option resolved; undefined when off. Default (cache/location.ts): `vitest-adcp/` in the project's Vite
 * cache directory inside a package, this user's OS cache directory outside any.
 */
function runtimeCacheDir(options: AdcpStoryboardsOptions, root: string, project: TestProject): string | undefined {
  return options.cacheDir === false
    ? undefined
    : options.cacheDir !== undefined
      ? resolve(root, options.cacheDir)
      : defaultCacheDir(root, project.vite.config.cacheDir);
}

function isBelow(file: string, dir: string): boolean {
  const rel = relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * Two workers for storyboard files where Vitest's default would give them one (a 2-core machine: Vitest leaves a core
 * free), unless the run names a worker count. Storyboards wait on the agent most of the time, and a second worker
 * overlaps one's waiting with the other's work (bench/speed.mjs). Vitest runs projects of one `sequence.groupOrder`
 * with one worker count, so the storyboard project takes a group of its own, after the user's tests (order 0).
 */
function workerSettings(vitest: VitestPluginContext['vitest']): object {
  const config = vitest.config as { watch?: boolean; maxWorkers?: unknown };
  if (config.watch || config.maxWorkers || availableParallelism() > 2) return {};
  return { maxWorkers: 2, sequence: { groupOrder: STORYBOARD_GROUP_ORDER } };
}

/** The storyboard project's `sequence.groupOrder` when it runs with a worker count of its own: after the user's groups. */
const STORYBOARD_GROUP_ORDER = 100;

/**
 * `sequential`: one worker for storyboard files, whatever the machine or the run's worker count — and so a group of
 * its own, after the user's tests. Not isolated, one worker: Vitest hands that worker all the files at once, in the
 * sequencer's order, and it runs them one after the other.
 */
const SEQUENTIAL_SETTINGS = { maxWorkers: 1, fileParallelism: false, sequence: { groupOrder: STORYBOARD_GROUP_ORDER } };

function toGlob(root: string, file: string): string {
  const rel = relative(root, file).split('\\').join('/');
  return rel.startsWith('..') || isAbsolute(rel) ? file.split('\\').join('/') : rel;
}

/**
 * Vitest's default exclude drops everything under node_modules, where the
 * corpus of @adcp/sdk lives. Narrow that one entry so the corpus tree (and only
 * it) gets through; picomatch extglobs express "node_modules except this path".
 */
function allowCorpusThroughExclude(exclude: string[], corpusRoot: string, root: string): void {
  const rel = relative(root, corpusRoot).split('\\').join('/');
  const parts = rel.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at === -1) return;
  const index = exclude.indexOf('**/node_modules/**');
  if (index === -1) return;
  const inner = parts.slice(at + 1);
  const replacements: string[] = [];
  let prefix = '**/node_modules';
  for (const part of inner) {
    replacements.push(`${prefix}/!(${part})/**`);
    prefix = `${prefix}/${part}`;
  }
  // Nested dependencies inside the corpus path stay excluded.
  replacements.push(`${prefix}/**/node_modules/**`);
  exclude.splice(index, 1, ...replacements);
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
