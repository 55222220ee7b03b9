/**
 * The Vite/Vitest plugin: adds storyboard files to the run, compiles each into
 * a test module (with a source map back to the YAML), and hands the workers
 * their configuration.
 *
 * Each hook is a function of its own, in this directory: projects.ts (which project storyboard files run in),
 * storyboard-files.ts (which files), workers.ts (worker count and order), run-config.ts (what the workers
 * are given), run-start.ts (the preflight at a run's start), storyboard-modules.ts (load and transform). They share
 * one PluginState (state.ts) per plugin instance.
 */
import type { Plugin } from 'vitest/config';
import type { VitestPluginContext } from 'vitest/node';
import { missingSchemas, prepareCorpus, runCorpus } from '../corpus.js';
import { addSummaryReporter } from '../vitest/summary-reporter.js';
import { checkOptions } from './check-options.js';
import { FinishTimes } from './finish-times.js';
import type { AdcpStoryboardsOptions } from './options.js';
import { defineModuleCacheKeys } from './module-cache.js';
import { loadOversizeEntry, oversizeEntryFile, oversizeEntryId } from './oversize-entry.js';
import { configHook, projectForStoryboards } from './projects.js';
import { prepareAgentStart } from './run-agent.js';
import { provideRunConfig, runtimeCacheDir } from './run-config.js';
import { watchRuns } from './run-start.js';
import { cleanId, createState, DATA_QUERY, isStoryboard, type PluginState } from './state.js';
import { configureCompile, loadStoryboard, transformStoryboard } from './storyboard-modules.js';
import { findCorpus, includeCorpus, includeStoryboardFiles } from './storyboard-files.js';
import { finishFirst, runInOrder } from './workers.js';

export type { AdcpStoryboardsOptions } from './options.js';

export function adcpStoryboards(options: AdcpStoryboardsOptions = {}): Plugin {
  checkOptions(options);
  const state = createState(options);
  const plugin: Plugin = {
    name: 'vitest-adcp',
    enforce: 'pre',
    config(config) {
      return configHook(state, config);
    },
    configureVitest(context) {
      return configureVitest(state, plugin, context);
    },
    async resolveId(source, importer, resolveOptions) {
      // A compiled storyboard module's import of the runtime (compile.ts): its absolute path, already this package's
      // own file — Vite's resolver would only find it again, for each of a run's modules.
      if (source === state.runtime && importer !== undefined && isStoryboard(state, importer)) return source;
      // Vite names `<root>/index.html` as the importer of entries (test files).
      if (!importer || importer.endsWith('.html')) return oversizeEntryId(state, source) ?? null;
      // An oversize entry's import of its file, once within the bound: the file's test module.
      if (!/\.ya?ml(\?|$)/.test(source) || isStoryboard(state, importer) || oversizeEntryFile(importer)) return null;
      const resolved = await this.resolve(source, importer, { ...resolveOptions, skipSelf: true });
      if (!resolved || resolved.external || !isStoryboard(state, resolved.id) || resolved.id.includes(DATA_QUERY))
        return null;
      return `${cleanId(resolved.id)}?${DATA_QUERY}`;
    },
    load(id) {
      const oversize = oversizeEntryFile(id);
      return oversize ? loadOversizeEntry(this, state, oversize) : loadStoryboard(state, id);
    },
    transform(code, id) {
      return transformStoryboard(this, state, code, id);
    },
  };
  return plugin;
}

/**
 * The `configureVitest` hook: the storyboard project chosen (or made), its files added, its worker settings and order,
 * the module hooks' setup, the workers' configuration. The steps keep this order: each reads what the one before set.
 */
async function configureVitest(state: PluginState, plugin: Plugin, context: VitestPluginContext): Promise<void> {
  const { project: userProject, vitest } = context;
  const { options } = state;
  defineModuleCacheKeys(state, context);
  // The storyboard project carries this same plugin instance: it is configured from the user's project, once.
  if (state.storyboardProjects.has(userProject)) return;
  state.root = userProject.config.root;
  const project = await projectForStoryboards(state, plugin, context);
  // `--project '!vitest-adcp'` (or a filter naming only your projects): no storyboard runs, and nothing asks the agent.
  if (!project) return;
  state.storyboardProjects.add(project);
  // The per-track summary at the end of a run (vitest/summary-reporter.ts), beside a terminal reporter only.
  addSummaryReporter(vitest);
  watchRuns(state, vitest, project, userProject);
  prepareAgentStart(state, vitest);
  includeStoryboardFiles(state, project);
  const version = options.compliance?.path ?? options.compliance?.version ?? state.complianceEnv;
  // A published version the installed SDK lacks: fetched (and verified, and cached) before anything resolves it.
  await prepareCorpus(version, state.root, {
    ...(options.compliance?.baseUrl ? { baseUrl: options.compliance.baseUrl } : {}),
    ...(options.agent?.allowHttp ? { allowHttp: true } : {}),
  });
  const cacheDir = runtimeCacheDir(options, state.root, project);
  state.schemaCacheDir = cacheDir;
  state.finishTimes = FinishTimes.in(cacheDir);
  const corpus = findCorpus(state, version);
  const unschema = corpus ? missingSchemas(corpus, options.schemasDir) : undefined;
  if (unschema) throw unschema;
  /** The selected corpus files in the reference runner's order (`sequential`). */
  const corpusOrder = corpus && state.wantsCorpus ? await includeCorpus(state, project, corpus) : [];
  if (options.sequential === true) await runInOrder(state, vitest, project, userProject, corpusOrder);
  else await finishFirst(state, vitest, project, userProject);
  // Without a selected corpus, test kits and schemas come from the newest installed one.
  const fallback = corpus ?? (version ? undefined : runCorpus(undefined, state.root));
  configureCompile(state, project, fallback, cacheDir);
  await provideRunConfig(state, vitest, project, fallback, cacheDir);
}
