/**
 * The rate-limit-trip role (test-kits/rate-limit-trip-runner.yaml; universal/idempotency.yaml >
 * rate_limit_replay_invariant): the runner task `expect_rate_limit_not_replayed` — a burst that trips the agent's rate
 * limiter, the wait, the replay of the tripped key (trip.ts), graded by `replay_not_cached_rate_limit`.
 *
 * Out of scope unless the operator puts it in (RunSettings.runnerContracts.rate_limit_trip_runner): up to 500
 * mutating requests meant to exhaust the agent's rate-limit budget, which "against production would consume
 * rate-limit budget that legitimate traffic relies on and may produce real downstream commitments … Graders MUST
 * target a sandbox/staging endpoint" — which the runner cannot tell, so the operator says it. Out of scope, the step
 * grades not_applicable naming the contract ("Runners without rate_limit_trip_runner skip this phase with a stable
 * not_applicable marker"), as does a step naming another contract.
 *
 * Its calls go over a transport of its own, of the run's protocol to the run's agent URL: the run's transport
 * (`RoleRun.transport()`, open-run.ts) is a `RateLimitedTransport`, which answers a RATE_LIMITED by waiting its
 * `retry_after` and resending the same request — the burst would never see its trip, and the resend would be the
 * replay, unobserved. Opened on the step's first call, closed with the run.
 */
import type { BoundSettings, RoleRun, RoleSession, RunnerRole } from '../../engine/role.js';
import type { SkipResult } from '../../model/records.js';
import type { Step } from '../../model/storyboard.js';
import { createTransport } from '../../transport/create.js';
import type { AgentTransport } from '../../transport/types.js';
import {
  DEFAULT_REPLAY_MAX_WAIT_S,
  misconfigured,
  RATE_LIMIT_TRIP_CONTRACT,
  RATE_LIMIT_TRIP_TASK,
  runTrip,
} from './trip.js';

export const rateLimitTripRole: RunnerRole = {
  name: 'rate-limit-trip',
  tasks: new Set([RATE_LIMIT_TRIP_TASK]),
  // Each attempt within the run's per-call bound; then the wait, the replay and the request builder's own call.
  stepBoundMs: (step, settings) =>
    step.task === RATE_LIMIT_TRIP_TASK && inScope(settings) && !misconfigured(step.rate_limit_trip)
      ? (step.rate_limit_trip!.max_attempts + 2) * settings.timeoutMs +
        (step.rate_limit_trip!.replay_max_wait_seconds ?? DEFAULT_REPLAY_MAX_WAIT_S) * 1000
      : undefined,
  open: (run) => tripSession(run),
};

/** Whether the operator put the trip in scope (RunSettings.runnerContracts.rate_limit_trip_runner). */
function inScope(settings: Pick<BoundSettings, 'runnerContracts'>): boolean {
  return settings.runnerContracts?.rate_limit_trip_runner === true;
}

function tripSession(run: RoleRun): RoleSession {
  const { settings } = run;
  const tripInScope = inScope(settings);
  let own: AgentTransport | undefined;
  const transport = () =>
    (own ??= createTransport(run.transport().kind, {
      url: run.transport().url,
      maxResponseBytes: settings.maxResponseBytes ?? 10 * 1024 * 1024,
      ...(settings.urlGuard ? { urlGuard: settings.urlGuard } : {}),
    }));
  return {
    gate: ({ step, task, tools }) =>
      task === RATE_LIMIT_TRIP_TASK ? tripSkip(step, tripInScope, tools.tools) : undefined,
    run: async ({ step }, result, help) => {
      const problem = misconfigured(step.rate_limit_trip);
      if (problem) return { result: { ...result, error: problem } };
      return runTrip({ transport: transport(), file: run.storyboard.file }, step, result, help);
    },
    close: async () => {
      await own?.close();
    },
  };
}

/** Whether the trip step does not apply to this run: its contract out of scope, or an agent without its target task. */
function tripSkip(step: Step, inScope: boolean, tools: ReadonlySet<string> | undefined): SkipResult | undefined {
  const contract = typeof step.requires_contract === 'string' ? step.requires_contract : RATE_LIMIT_TRIP_CONTRACT;
  if (contract !== RATE_LIMIT_TRIP_CONTRACT)
    return {
      reason: 'not_applicable',
      detail: `${RATE_LIMIT_TRIP_TASK} requires the test-kit contract "${contract}", which is not in scope for this run`,
    };
  if (!inScope) {
    const target = step.rate_limit_trip;
    return {
      reason: 'not_applicable',
      detail: `${RATE_LIMIT_TRIP_TASK} requires the test-kit contract "${RATE_LIMIT_TRIP_CONTRACT}", which is not in scope for this run: it sends up to ${target?.max_attempts ?? 'max_attempts'} ${target?.trip_target_task ?? 'mutating'} requests to trip the agent's rate limiter, so it runs only when the operator names a sandbox endpoint for it (run setting runnerContracts.${RATE_LIMIT_TRIP_CONTRACT}: true)`,
    };
  }
  const target = step.rate_limit_trip?.trip_target_task;
  if (tools && typeof target === 'string' && !tools.has(target))
    return {
      reason: 'missing_tool',
      detail: `the agent does not advertise the tool "${target}" (rate_limit_trip.trip_target_task); agent tools: [${[...tools].sort().join(', ')}]`,
    };
  return undefined;
}
