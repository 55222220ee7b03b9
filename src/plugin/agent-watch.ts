/**
 * `agent.start.watch` in `vitest --watch` (issue 33): an edit to the agent's source restarts the agent and re-runs the
 * storyboard files — through Vitest's own rerun trigger, `watchTriggerPatterns`, not a watch loop of ours. The edit
 * only marks the agent for a restart; the restart itself is made by the re-run's start (run-agent.ts,
 * ensureAgentStarted, from the preflight in run-start.ts), before any of its steps, so a run still going on keeps the
 * agent it started with and no step talks to a half-started one.
 *
 * Vite's watcher takes folders, not globs, and watches the project root only: each glob's folder is added to it, so
 * an agent beside the tests' project (a `cwd` outside its root) is seen too. What Vite's watcher ignores
 * (`node_modules`, `.git`, `server.watch.ignored`) it does not report, whatever the globs say.
 */
import { resolve } from 'node:path';
import type { VitestPluginContext } from 'vitest/node';
import type { PluginState } from './state.js';
import { watchedGlobs } from './watch-globs.js';

type Vitest = VitestPluginContext['vitest'];

/** Registers the agent's source globs with Vitest's watcher: in `vitest --watch` only (a bad glob fails any run). */
export function watchAgentSource(state: PluginState, vitest: Vitest): void {
  const start = state.options.agent?.start;
  if (start?.watch === undefined) return;
  const globs = watchedGlobs(start.watch, resolve(state.root, start.cwd ?? '.'));
  if (!vitest.config.watch || globs.paths.length === 0) return;
  vitest.vite.watcher.add(globs.paths);
  vitest.config.watchTriggerPatterns = [
    ...(vitest.config.watchTriggerPatterns ?? []),
    {
      pattern: globs.pattern,
      testsToRun: () => {
        state.agentRestartWanted = true;
        // Every storyboard file of the runs so far (a run stopped by a failed first start included): the changed agent
        // is what they all test. Vitest drops a file deleted since.
        return [...state.storyboardFiles];
      },
    },
  ];
}
