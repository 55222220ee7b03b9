/**
 * `seedsTogether` (RunSettings): at the first seed of a kind (seed_product, …) of the injected seeding phase, every seed
 * of that kind the run goes through next is sent at once; each kind still waits for the one before it (the spec's
 * foreign-key order: storyboard-schema.yaml > fixtures, "Foreign-key dependency DAG the runner MUST honor when
 * auto-seeding"). Nothing a seed sends depends on another seed's answer — seeds are not stateful (no cascade between
 * them), and all are attempted whatever halted the storyboard — so only when they reach the agent changes: the run
 * still takes their results in run order (and its halt by the deciding step's index: halt.ts).
 */
import type { StepResult } from '../model/records.js';
import type { Step } from '../model/storyboard.js';
import { isSeedStep } from '../plan/seeding.js';

export class SeedsTogether<E extends { index: number; step: Step }> {
  /** Seeds started ahead of their turn in the run's loop, by index. */
  private readonly ahead = new Map<number, Promise<StepResult>>();

  constructor(
    private readonly together: boolean,
    private readonly entries: readonly E[],
    private readonly execute: (entry: E) => Promise<StepResult>,
  ) {}

  /** The execution of `entry`: started ahead with its kind, or now (with the rest of its kind up to `lastIndex`). */
  execution(entry: E, lastIndex: number): Promise<StepResult> {
    const ahead = this.ahead.get(entry.index);
    if (ahead) {
      this.ahead.delete(entry.index);
      return ahead;
    }
    const own = this.execute(entry);
    const kind = seedKind(entry.step);
    if (this.together && kind !== undefined)
      for (let index = entry.index + 1; index <= lastIndex && seedKind(this.entries[index]!.step) === kind; index++) {
        const execution = this.execute(this.entries[index]!);
        // Taken (its rejection handled) when the run's loop reaches it; until then it must not count as unhandled.
        execution.catch(() => {});
        this.ahead.set(index, execution);
      }
    return own;
  }
}

/** An injected seed's kind (its scenario); undefined for any other step. */
function seedKind(step: Step): string | undefined {
  return isSeedStep(step) ? step.seed.scenario : undefined;
}
