/**
 * The storyboard project's global setup: a configuration that cannot work — no agent URL, a URL that is not http(s),
 * an unknown protocol, plain http to a remote agent — or an agent that refuses the run's credential or cannot be
 * reached stops the run once, with the fix, before any storyboard file is loaded. Without it every step of every
 * storyboard printed the same message (95 copies, 1,289 lines, for one missing environment variable).
 *
 * Vitest runs a project's global setup only when the project has test files in the run, so a run without storyboard
 * files (`--project '!vitest-adcp'`, a file filter that selects only your own tests) is never stopped by this. It also
 * runs it when tests are only collected (`vitest list`, an IDE's test discovery), which call no agent: the plugin
 * tells the two apart (plugin.ts `preflightRun`) and checks nothing for a collection.
 */
import type { TestProject } from 'vitest/node';
import { ConfigurationError, resolveRuntimeConfig, type RuntimeConfig } from '../config.js';

/**
 * Where the plugin that made the storyboard project leaves its preflight on the project. This module is loaded by
 * Vitest's module runner, a module graph apart from the plugin's: the project object is what both see.
 */
export const PREFLIGHT_HOOK = Symbol.for('vitest-adcp.preflight');

export default async function preflight(project: TestProject): Promise<void> {
  const hook = (project as unknown as { [PREFLIGHT_HOOK]?: (project: TestProject) => Promise<void> })[PREFLIGHT_HOOK];
  if (hook) return hook(project);
  // A project made by another copy of the plugin (none today): the configuration check alone.
  const given = (project.getProvidedContext() as { vitestAdcp?: RuntimeConfig }).vitestAdcp ?? {};
  const config = resolveRuntimeConfig(given, process.env);
  if (config.error) throw new ConfigurationError(`vitest-adcp cannot run the storyboards: ${config.error}`);
}
