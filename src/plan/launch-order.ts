/**
 * The order the run host starts storyboards in when several run at once (plugin/run-start.ts; one at a time keeps the
 * run's order, the reference's). What a storyboard's place changes is what it costs the others at the agent:
 *   - a window (plan/agent-windows.ts: a seeding phase, or a window that has the agent alone) stops every shared step
 *     of the storyboards in flight: it waits for those under way to end, then holds the agent. Started with the run,
 *     before anything is in flight, windows wait for nothing, and the seeding phases of the storyboards started
 *     together run together, one wave. Started later, as slots free up, each one came mid-run, with its wait;
 *   - a storyboard's steps go one after another, so the longest should not wait for a slot.
 * So: the storyboards with a window first, then the others; in each, the most planned steps first (what a storyboard
 * at most sends), then the larger file.
 */
import type { Phase, Step } from '../model/storyboard.js';
import { agentTurns } from './agent-windows.js';

/** What the order reads of a storyboard's plan. */
export interface LaunchShape {
  /** Whether a step of it takes a window (a `seed` or `alone` turn). */
  windows: boolean;
  /** Its planned steps, injected ones included. */
  steps: number;
  /** Its file's size: a tie-break. */
  bytes: number;
}

/** A storyboard's shape from its planned steps (the run's plan: engine/run.ts `planned()`). */
export function launchShape(steps: readonly { phase: Phase; step: Step }[], bytes: number): LaunchShape {
  return { windows: agentTurns(steps).some((turn) => turn.mode !== 'shared'), steps: steps.length, bytes };
}

/**
 * `items` in launch order (a stable sort). An item without a shape (its file does not load: it never calls the agent)
 * goes first: it ends at once, and its worker shows its load error without waiting.
 */
export function inLaunchOrder<T>(items: readonly T[], shapeOf: (item: T) => LaunchShape | undefined): T[] {
  const shapes = new Map(items.map((item) => [item, shapeOf(item)]));
  const key = (shape: LaunchShape | undefined): number[] =>
    shape ? [1, shape.windows ? 0 : 1, -shape.steps, -shape.bytes] : [0];
  return [...items].sort((a, b) => {
    const [x, y] = [key(shapes.get(a)), key(shapes.get(b))];
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return 0;
  });
}
