/**
 * How many workers storyboard files get, in which `sequence.groupOrder`, and — `sequential` — in which order they run
 * (docs/architecture.md, "What a run pays once": workers).
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { TestProject, VitestPluginContext } from 'vitest/node';
import { isStoryboard, type PluginState } from './state.js';

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

/** The storyboard project's worker settings: `sequential`'s, else workerSettings'. */
export function storyboardWorkers(vitest: VitestPluginContext['vitest'], sequential: boolean): object {
  return sequential ? SEQUENTIAL_SETTINGS : workerSettings(vitest);
}

/**
 * `sequential`: the storyboard files one at a time (the storyboard project has one worker, storyboardProject), in
 * run order — Vitest's sequencer, wrapped (sequencer.ts), puts them in that order among the slots Vitest gave them.
 */
export async function runInOrder(
  state: PluginState,
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
  const files = [...corpusOrder, ...(state.options.files ?? []).map((file) => resolve(state.root, file))];
  const { installRunOrder } = await import('./sequencer.js');
  installRunOrder(vitest, {
    owns: (spec) => spec.project === project && (project !== userProject || isStoryboard(state, spec.moduleId)),
    files: () => files,
  });
}
