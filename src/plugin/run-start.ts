/**
 * A run's start: the configuration check and the agent preflight (agent-preflight.ts), once, before any storyboard
 * file runs — never for a collection (`vitest list`, an IDE's test discovery), which calls no agent.
 */
import type { TestProject, TestSpecification, VitestPluginContext } from 'vitest/node';
import { resolveRuntimeConfig, type RuntimeConfig } from '../config.js';
import { ConfigurationError } from '../model/errors.js';
import { agentPreflight } from './agent-preflight.js';
import { isStoryboard, type PluginState } from './state.js';

/**
 * The configuration check, then the agent preflight (agent-preflight.ts): each stops the run once, before any test
 * file runs. Called only when a run starts with storyboard files in it (watchRuns): never for a collection
 * (`vitest list`, an IDE's test discovery), which calls no agent — so not from a global setup, which Vitest runs
 * for both.
 */
async function preflightRun(state: PluginState, project: TestProject): Promise<void> {
  const given = (project.getProvidedContext() as { vitestAdcp?: RuntimeConfig }).vitestAdcp ?? {};
  const config = resolveRuntimeConfig(given, process.env);
  if (config.error) throw new ConfigurationError(`vitest-adcp cannot run the storyboards: ${config.error}`);
  if (state.selectionProblem) throw state.selectionProblem;
  // Once per Vitest process while it passes; a failed check is made again on the next run (watch mode: the agent
  // may be up, or the token fixed, by then).
  state.agentChecked ??= agentPreflight({
    url: config.agentUrl!,
    protocol: config.protocol,
    authToken: config.authToken,
    timeoutMs: config.timeoutMs,
    maxResponseBytes: config.maxResponseBytes,
    allowHttp: config.allowHttp,
  }).catch((error: unknown) => {
    state.agentChecked = undefined;
    throw error;
  });
  await state.agentChecked;
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
      if (storyboards.length > 0) return preflightRun(state, project);
      const filtered = Boolean((vitest as { filenamePattern?: string[] }).filenamePattern?.length);
      if (state.selectionProblem && !filtered && vitest.projects.includes(project)) throw state.selectionProblem;
    },
  });
}
