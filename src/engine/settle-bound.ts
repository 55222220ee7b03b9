/**
 * The longest one `settle` of a storyboard run can take while every bound holds: a settle may run every step of the
 * storyboard (a `-t` replay, a branch set), each within its own bound, plus the tool list and the OAuth probes. A test
 * framework's own timer must be above it (adapter/step-session.ts `timeout`).
 *
 * A function of the planned steps, the roles and the settings, not of an open run: a worker whose steps the plugin's
 * run host runs (adapter/hosted-run.ts) needs the bound for its tests' timeouts and nothing else of a run — opening one
 * there (the test kit read and parsed, the run's state built) cost each run's worker ~50 ms before its first test,
 * and a worker of a 90-storyboard run ~140 ms.
 */
import type { Step } from '../model/storyboard.js';
import { rateLimitBoundMs } from '../transport/rate-limit.js';
import type { BoundSettings, RunnerRole } from './role.js';

export function settleBoundMs(roles: readonly RunnerRole[], steps: readonly Step[], settings: BoundSettings): number {
  return steps.reduce((sum, step) => sum + stepBoundMs(roles, step, settings), 3 * settings.timeoutMs);
}

/**
 * How long one step can take: its call (polling included) is bounded by `timeoutMs`, and the waits and resends of a
 * rate-limited call (transport/rate-limit.ts) by `rateLimitBoundMs`; a role's step may say longer (the first role, in
 * the roles' order, that has a bound for it).
 */
function stepBoundMs(roles: readonly RunnerRole[], step: Step, settings: BoundSettings): number {
  for (const role of roles) {
    const bound = role.stepBoundMs?.(step, settings);
    if (bound !== undefined) return bound;
  }
  return settings.timeoutMs + rateLimitBoundMs(settings.timeoutMs);
}
