/**
 * The storyboard project's global setup: a configuration that cannot work —
 * no agent URL, a URL that is not http(s), an unknown protocol, plain http to
 * a remote agent — stops the run once, with the fix, before any storyboard
 * file is loaded. Without it every step of every storyboard printed the same
 * message (95 copies, 1,289 lines, for one missing environment variable).
 * Vitest runs a project's global setup only when the project has test files,
 * so a configuration without storyboards to run is never stopped by this.
 */
import type { TestProject } from 'vitest/node';
import { ConfigurationError, resolveRuntimeConfig, type RuntimeConfig } from '../config.js';

export default function preflight(project: TestProject): void {
  const given = (project.getProvidedContext() as { vitestAdcp?: RuntimeConfig }).vitestAdcp ?? {};
  const config = resolveRuntimeConfig(given, process.env);
  if (config.error) throw new ConfigurationError(`vitest-adcp cannot run the storyboards: ${config.error}`);
}
