/**
 * How many workers storyboard files get, in which `sequence.groupOrder`, and — `sequential` — in which order they run
 * (docs/architecture.md, "What a run pays once": workers).
 */
import { resolve } from 'node:path';
import type { TestProject, TestSpecification, VitestPluginContext } from 'vitest/node';
import { fileSize } from './file-size.js';
import type { RunOrder } from './sequencer.js';
import { isStoryboard, type PluginState } from './state.js';

/** The storyboard project's `sequence.groupOrder` when it runs with a worker count of its own: after the user's groups. */
const STORYBOARD_GROUP_ORDER = 100;

/**
 * `sequential`: one worker for storyboard files, whatever the machine or the run's worker count — and so a group of
 * its own, after the user's tests. Not isolated, one worker: Vitest hands that worker all the files at once, in the
 * sequencer's order, and it runs them one after the other.
 */
const SEQUENTIAL_SETTINGS: WorkerSettings = {
  maxWorkers: 1,
  fileParallelism: false,
  sequence: { groupOrder: STORYBOARD_GROUP_ORDER },
};

/**
 * The storyboard project's worker settings: `sequential`'s, else none — Vitest's own count (one on a 2-core machine,
 * which leaves a core free) in the user's group. The run host (run-host.ts) runs the storyboards in the main process;
 * a worker only shows the host's outcomes, and a second one (the plugin gave storyboard files two on 2 cores before
 * the host existed, when workers ran them) loaded every module again for nothing: the bin's run of 90 storyboards on
 * 3.1.15, one worker against two, CPU 0.88–0.92 and wall 0.95–1.02 (first and warm runs, 0 and 50 ms of latency);
 * 35 storyboards on 3.0.6 at 50 ms, CPU 0.87, wall 0.96 (docs/benchmarks.md).
 */
export function storyboardWorkers(sequential: boolean): WorkerSettings {
  return sequential ? SEQUENTIAL_SETTINGS : {};
}

/** What the storyboard project's worker settings may set. */
export interface WorkerSettings {
  maxWorkers?: number;
  fileParallelism?: boolean;
  sequence?: { groupOrder: number };
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
  const { installRunOrder, listedRank } = await import('./sequencer.js');
  installRunOrder(vitest, { owns: storyboardsOf(state, project, userProject), rank: listedRank(files) });
}

/**
 * Not `sequential`: the storyboard files reach the worker in the order the run host ends their runs in — the order of
 * the last run that ran them (finish-times.ts says why not a guess from the plan), then the files it did not run,
 * smallest first (on a first run, all of them: roughly that order, as the host runs the longest first,
 * plan/launch-order.ts). A worker takes one file at a time and waits for each step's outcome: a file whose run ends
 * late holds every file after it, however ready. A file a worker waits for that the host has not started yet starts
 * at once (run-host.ts `wanted`). This is the order the worker starts from: at each file's end it takes next the files
 * whose runs have ended since (vitest/worker-order.ts).
 */
export async function finishFirst(
  state: PluginState,
  vitest: VitestPluginContext['vitest'],
  project: TestProject,
  userProject: TestProject,
): Promise<void> {
  const { installRunOrder } = await import('./sequencer.js');
  const lastEnd = (file: string) => state.finishTimes?.get(file);
  installRunOrder(vitest, finishFirstOrder(storyboardsOf(state, project, userProject), lastEnd));
}

/** Above any time a run ended at (ms): the place of a file no run has ended yet, after those, by size. */
const NOT_ENDED = 1e12;

/**
 * finishFirst's order of the files `owns` picks: those whose run has ended before (`lastEnd`, ms from its run's start)
 * in that order, then the others smallest first.
 */
export function finishFirstOrder(
  owns: RunOrder['owns'],
  lastEnd: (file: string) => number | undefined = () => undefined,
): RunOrder {
  return { owns, rank: (spec) => lastEnd(spec.moduleId) ?? NOT_ENDED + fileSize(spec.moduleId) };
}

/** Whether a file of the run is a storyboard file of this plugin's project (the user's project holds others too). */
function storyboardsOf(state: PluginState, project: TestProject, userProject: TestProject) {
  return (spec: TestSpecification): boolean =>
    spec.project === project && (project !== userProject || isStoryboard(state, spec.moduleId));
}
