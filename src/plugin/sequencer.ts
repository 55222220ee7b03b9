/**
 * The order storyboard files reach the workers. Vitest orders a run's files with its `sequence.sequencer` (by
 * default: larger and slower files first, from its results cache); this one lets the configured sequencer sort (and
 * shard) everything, then puts the storyboard files back into the slots they occupy in that order, in an order of
 * ours. The rest of the run — other projects, your own test files — keeps the configured order.
 *   - `sequential: true`: the reference runner's order (workers.ts runInOrder).
 *   - otherwise: the order their outcomes are ready in, as the run before had them (workers.ts finishFirst). The run
 *     host runs them all ahead of their tests, the longest first (plan/launch-order.ts); a worker takes one file at a
 *     time and waits for each step's outcome, so a worker given the largest file first sat idle until it ended, then
 *     showed every other file after the agent's last answer (1.3–1.9 s of a 58-storyboard run at 50 ms of latency).
 *
 * Loaded only when a storyboard project runs: it imports `vitest/node`.
 */
import { realpathSync } from 'node:fs';
import {
  BaseSequencer,
  type ResolvedConfig,
  type TestSequencer,
  type TestSpecification,
  type Vitest,
} from 'vitest/node';

type SequencerConstructor = ResolvedConfig['sequence']['sequencer'];

const slash = (path: string) => path.split('\\').join('/');

export interface RunOrder {
  /** Whether Vitest's file is one of the storyboard files this order places. */
  owns(spec: TestSpecification): boolean;
  /** Each owned file's place: lower first; equal places in path order. */
  rank(spec: TestSpecification): number;
}

/** A rank from absolute files in run order; a file not listed runs after them (`sequential`). */
export function listedRank(files: readonly string[]): (spec: TestSpecification) => number {
  const rank = new Map<string, number>();
  files.forEach((file, i) => {
    if (!rank.has(slash(file))) rank.set(slash(file), i);
  });
  return (spec) => {
    const file = slash(spec.moduleId);
    let at = rank.get(file);
    if (at === undefined) {
      try {
        at = rank.get(slash(realpathSync(spec.moduleId)));
      } catch {
        // Not on disk (a virtual module): unranked.
      }
    }
    return at ?? Number.MAX_SAFE_INTEGER;
  };
}

/** `specs` with the files `order` owns reordered among their own slots; everything else where it was. */
export function inRunOrder(specs: readonly TestSpecification[], order: RunOrder): TestSpecification[] {
  const slots: number[] = [];
  specs.forEach((spec, i) => {
    if (order.owns(spec)) slots.push(i);
  });
  const ours = slots
    .map((i) => ({ spec: specs[i]!, rank: order.rank(specs[i]!) }))
    .sort(
      (a, b) => a.rank - b.rank || (a.spec.moduleId < b.spec.moduleId ? -1 : a.spec.moduleId > b.spec.moduleId ? 1 : 0),
    );
  const sorted = [...specs];
  slots.forEach((slot, k) => (sorted[slot] = ours[k]!.spec));
  return sorted;
}

/**
 * A sequencer (a `BaseSequencer`, as Vitest asks of custom ones) that sorts
 * and shards with `configured` — Vitest's default or the user's own — and
 * then applies each run order given (one per plugin instance that asked).
 */
function runOrderSequencer(configured: SequencerConstructor, orders: readonly RunOrder[]): SequencerConstructor {
  return class StoryboardRunOrderSequencer extends BaseSequencer {
    private readonly configured: TestSequencer;
    constructor(ctx: Vitest) {
      super(ctx);
      this.configured = new configured(ctx);
    }
    override async shard(files: TestSpecification[]): Promise<TestSpecification[]> {
      return this.configured.shard(files);
    }
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      let sorted = [...(await this.configured.sort(files))];
      for (const order of orders) sorted = inRunOrder(sorted, order);
      return sorted;
    }
  };
}

/** Orders installed on a Vitest instance, so that two plugin instances in one run share one sequencer. */
const installed = new WeakMap<object, RunOrder[]>();

/** Makes `vitest`'s sequencer apply `order` (on top of the one configured). Before the run starts: Vitest builds its sequencer when it first runs files. */
export function installRunOrder(vitest: Vitest, order: RunOrder): void {
  const orders = installed.get(vitest);
  if (orders) {
    orders.push(order);
    return;
  }
  const list = [order];
  installed.set(vitest, list);
  const sequence = vitest.config.sequence as { sequencer: SequencerConstructor };
  sequence.sequencer = runOrderSequencer(sequence.sequencer, list);
}
