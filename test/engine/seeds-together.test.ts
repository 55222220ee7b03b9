/**
 * The seeding phase's seeds of one kind sent together (src/engine/seeds-together.ts) and the run's halt kept by run
 * order (src/engine/halt.ts), apart from any agent: which executions start when, and which halt decides.
 * test/engine/grading-model.e2e.test.ts runs them against the fixture agent.
 */
import { describe, expect, it } from 'vitest';
import { RunHalt } from '../../src/engine/halt.js';
import { SeedsTogether } from '../../src/engine/seeds-together.js';
import type { SkipResult, StepResult } from '../../src/model/records.js';
import type { Step } from '../../src/model/storyboard.js';

const loc = { line: 1, column: 1 };
const seed = (scenario: string, id: string) =>
  ({ id, task: 'comply_test_controller', seed: { scenario, key: 'k' }, loc }) as unknown as Step;
const plain = (id: string) => ({ id, task: 'get_products', loc }) as unknown as Step;
const entriesOf = (steps: Step[]) => steps.map((step, index) => ({ index, step }));

/** A SeedsTogether over `steps`, recording which entries it executed, in order. */
function seeds(steps: Step[], together = true) {
  const entries = entriesOf(steps);
  const executed: number[] = [];
  const run = new SeedsTogether(together, entries, (entry) => {
    executed.push(entry.index);
    return Promise.resolve({ step_id: entry.step.id } as StepResult);
  });
  return { entries, executed, run };
}

describe('SeedsTogether', () => {
  it('at the first seed of a kind, starts the rest of that kind up to the last index asked for, and hands each over once', async () => {
    const { entries, executed, run } = seeds([
      seed('seed_product', 'p1'),
      seed('seed_product', 'p2'),
      seed('seed_product', 'p3'),
      seed('seed_pricing_option', 'po1'),
    ]);
    await run.execution(entries[0]!, 3);
    expect(executed.sort()).toEqual([0, 1, 2]);
    expect(await run.execution(entries[1]!, 3)).toEqual({ step_id: 'p2' });
    expect(await run.execution(entries[2]!, 3)).toEqual({ step_id: 'p3' });
    expect(executed.sort()).toEqual([0, 1, 2]);
    // The next kind waits for its own turn in the loop.
    await run.execution(entries[3]!, 3);
    expect(executed.sort()).toEqual([0, 1, 2, 3]);
  });

  it('goes no further than the last index asked for', async () => {
    const { entries, executed, run } = seeds([
      seed('seed_product', 'p1'),
      seed('seed_product', 'p2'),
      seed('seed_product', 'p3'),
    ]);
    await run.execution(entries[0]!, 1);
    expect(executed.sort()).toEqual([0, 1]);
  });

  it('starts nothing ahead for a step that is not a seed, nor when the run sends seeds one after another', async () => {
    const steps = seeds([plain('a'), plain('b')]);
    await steps.run.execution(steps.entries[0]!, 1);
    expect(steps.executed).toEqual([0]);
    const oneByOne = seeds([seed('seed_product', 'p1'), seed('seed_product', 'p2')], false);
    await oneByOne.run.execution(oneByOne.entries[0]!, 1);
    expect(oneByOne.executed).toEqual([0]);
  });
});

describe('RunHalt', () => {
  const halt = (detail: string): SkipResult => ({ reason: 'not_applicable', detail });

  it('keeps the halt of the earliest step in run order, whichever was decided first', () => {
    const run = new RunHalt();
    expect(run.skip).toBeUndefined();
    run.decide(undefined, 0);
    expect(run.skip).toBeUndefined();
    run.decide(halt('third'), 3);
    run.decide(halt('fourth'), 4);
    expect(run.skip!.detail).toBe('third');
    run.decide(halt('second'), 2);
    expect(run.skip!.detail).toBe('second');
    // Another halt of the same step, or none, changes nothing.
    run.decide(halt('second again'), 2);
    run.decide(undefined, 1);
    expect(run.skip!.detail).toBe('second');
  });
});
