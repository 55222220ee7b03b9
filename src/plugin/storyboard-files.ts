/**
 * Which files the storyboard project runs, pushed onto its `include` in `configureVitest` (never replacing your own
 * include): the `include` globs, the `files` named explicitly, and the corpus storyboards a run selects
 * (`compliance`: ids, bundles, tracks, the agent's capabilities) in the reference runner's order, let through Vitest's
 * `node_modules` exclude.
 */
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { convertPathToPattern } from 'tinyglobby';
import type { TestProject } from 'vitest/node';
import { envFlag, resolveRuntimeConfig, type RuntimeConfig } from '../config.js';
import { resolveCorpus, type Corpus } from '../corpus.js';
import { ConfigurationError } from '../model/errors.js';
import { selectCorpusInRunOrder } from '../storyboard/select.js';
import { agentAccess } from './agent-preflight.js';
import { CapabilitySelectionError, storyboardIdsForAgent } from './capabilities.js';
import { excludeAllowingCorpus } from './corpus-exclude.js';
import { ensureAgentStarted } from './run-agent.js';
import type { PluginState } from './state.js';
import type { NotApplicableStoryboard } from '../model/step-meta.js';
import { gradedUpFront } from './up-front.js';

const DEFAULT_INCLUDE = ['**/*.storyboard.yaml', '**/*.storyboard.yml'];
/** Where the Jest preset writes its corpus stubs (jest/preset.cts), below the project root. */
const JEST_CORPUS_STUBS = '**/.adcp-corpus/**';

/** Your own storyboard files: the `include` globs (default `*.storyboard.yaml`/`.yml`) and the `files` named. */
export function includeStoryboardFiles(state: PluginState, project: TestProject): void {
  const { options, root } = state;
  const include = options.include === undefined ? DEFAULT_INCLUDE : ([] as string[]).concat(options.include);
  // Pushed, not returned from config(): a returned test.include would replace the user's.
  project.config.include.push(...include);
  // The Jest preset's corpus stubs (jest/preset.cts) in a repository that runs both: Jest's files, not storyboards.
  project.config.exclude.push(JEST_CORPUS_STUBS);
  const files = (options.files ?? []).map((file) => resolve(root, file));
  for (const file of files) state.explicit.add(file);
  project.config.include.push(...exactGlobs(root, files));
}

/**
 * Globs that match exactly `files` (absolute), for a project's `include`: one per directory (`dir/{a.yaml,b.yaml}`),
 * relative to `root` when below it, each path escaped as Vitest's globber reads it (tinyglobby's `convertPathToPattern`,
 * the library it globs with). One glob per file made Vitest's search for test files match every file of the corpus
 * against each of them: the 90 files of a 3.1.15 selection held the main process ~270 ms before a run started (16 ms
 * as 7 globs). A name with a comma, which a brace would split, keeps a glob of its own.
 */
export function exactGlobs(root: string, files: Iterable<string>): string[] {
  const byDir = new Map<string, string[]>();
  for (const file of files) {
    const names = byDir.get(dirname(file)) ?? [];
    names.push(basename(file));
    byDir.set(dirname(file), names);
  }
  const globs: string[] = [];
  for (const [dir, names] of byDir) {
    const rel = relative(root, dir);
    const base = rel === '' ? '' : rel.startsWith('..') || isAbsolute(rel) ? dir : rel;
    const prefix = base === '' ? '' : `${convertPathToPattern(base)}/`;
    const braced = [...new Set(names.filter((name) => !name.includes(',')))].map((name) => convertPathToPattern(name));
    if (braced.length === 1) globs.push(`${prefix}${braced[0]}`);
    else if (braced.length > 1) globs.push(`${prefix}{${braced.join(',')}}`);
    for (const name of names.filter((n) => n.includes(','))) globs.push(`${prefix}${convertPathToPattern(name)}`);
  }
  return globs;
}

/** The corpus of `compliance.path` / `version` / ADCP_COMPLIANCE, or the installed one when storyboards are selected. */
export function findCorpus(state: PluginState, version: string | undefined): Corpus | undefined {
  try {
    return version || state.wantsCorpus ? resolveCorpus(version, state.root) : undefined;
  } catch (error) {
    // A corpus that was asked for (by selection, or by naming a version or path) must exist; else none is needed.
    if (state.wantsCorpus || version) throw error;
    return undefined;
  }
}

/**
 * The selected corpus files, pushed onto `include`: in the reference runner's order (`sequential`). Those the agent's
 * capabilities answer grades not applicable up front (up-front.ts) are left out, and given to the contract reporter
 * (`vitestAdcpNotApplicable`), which reports each skipped as a whole.
 */
export async function includeCorpus(state: PluginState, project: TestProject, corpus: Corpus): Promise<string[]> {
  const selected = selectCorpusInRunOrder(corpus.root, await corpusSelection(state, corpus));
  const notApplicable = await gradedForRun(state, corpus, selected);
  project.provide('vitestAdcpNotApplicable', notApplicable);
  const skipped = new Set(notApplicable.map((n) => n.storyboard.file));
  const files = selected.filter((file) => !skipped.has(file));
  for (const file of files) state.explicit.add(file);
  project.config.include.push(...exactGlobs(state.root, files));
  const exclude = excludeAllowingCorpus(project.config.exclude, corpus.root, state.root);
  project.config.exclude.splice(0, project.config.exclude.length, ...exclude);
  return files;
}

/**
 * The selected storyboards the agent's capabilities answer grades not applicable before the run (up-front.ts), when
 * capability selection read one in this process for the run's agent (the plugin's `fromCapabilities`, or the bin's
 * selection, which hands the plugin the ids it selected).
 */
async function gradedForRun(
  state: PluginState,
  corpus: Corpus,
  selected: readonly string[],
): Promise<NotApplicableStoryboard[]> {
  const agent = resolveRuntimeConfig(agentGiven(state));
  if (agent.error) return [];
  return gradedUpFront(agentAccess(agent), selected, state.options.schemasDir ?? corpus.schemasDir);
}

/** `compliance` with the capability-selected ids added to its `storyboards` (`fromCapabilities`). */
async function corpusSelection(
  state: PluginState,
  corpus: Corpus,
): Promise<NonNullable<PluginState['options']['compliance']>> {
  const compliance = state.options.compliance!;
  const selection = { ...compliance };
  if (!compliance.fromCapabilities) return selection;
  const agent = resolveRuntimeConfig(agentGiven(state));
  if (agent.error) {
    // Collecting needs no agent (`vitest list`, an IDE's discovery without your shell's environment): list what
    // can be listed, say what is missing, and stop a run that would have run it (preflightRun, watchRuns).
    state.selectionProblem = new ConfigurationError(
      `vitest-adcp cannot run the storyboards: compliance.fromCapabilities asks the agent which storyboards apply, but ${agent.error}`,
    );
    console.warn(
      `[vitest-adcp] compliance.fromCapabilities: no storyboards selected from the agent's capabilities, because ${agent.error}. This collection lists your own storyboards and those named in compliance.storyboards / bundles / tracks; a run stops with this message.`,
    );
  } else {
    state.capabilityIds ??= storyboardIdsFromCapabilities(state, corpus);
    selection.storyboards = [...(compliance.storyboards ?? []), ...(await state.capabilityIds)];
  }
  return selection;
}

/** The agent the options name (with how to reach it): what capability selection and the preflight need. */
export function agentGiven({ options }: Pick<PluginState, 'options'>): RuntimeConfig {
  return {
    agentUrl: options.agent?.url,
    protocol: options.agent?.protocol,
    authToken: options.agent?.auth?.token,
    timeoutMs: options.timeoutMs,
    maxResponseBytes: options.maxResponseBytes,
    allowHttp: options.agent?.allowHttp,
  };
}

async function storyboardIdsFromCapabilities(state: PluginState, corpus: Corpus): Promise<string[]> {
  const agent = resolveRuntimeConfig(agentGiven(state));
  if (agent.error)
    throw new CapabilitySelectionError(
      `compliance.fromCapabilities asks the agent which storyboards apply, but ${agent.error}`,
    );
  // `agent.start`: the agent asked for its capabilities is the one the run starts.
  await ensureAgentStarted(state, agent);
  return storyboardIdsForAgent(agentAccess(agent), corpus.root, {
    allowUnsupportedVersion:
      state.options.compliance?.allowUnsupportedVersion ?? envFlag(process.env.ADCP_ALLOW_UNSUPPORTED_VERSION),
  });
}
