/**
 * The parallel-dispatch role (test-kits/parallel-dispatch-runner.yaml; universal/idempotency.yaml > concurrent_retry):
 * a step declaring `requires_contract: parallel_dispatch_runner` and a `parallel_dispatch` block is an agent step like
 * any other — gated, cascaded, its request built by the engine — but its request goes out `count` times at once
 * (dispatch.ts), and the step is graded on the resolved set.
 *
 * What is graded on what (the test kit: cross-response kinds on the set, "standard per-response checks … apply to each
 * response individually"): the cross_response_* validations read the response set (checks/cross-response.ts); the
 * step's other validations, `expect_error`, the invariants and its `context_outputs` are graded on ONE answer — the
 * first dispatch's, in dispatch order, that got an answer (all dispatches send the same request, and the first is the
 * one a reader finds in the record). The engine grades a role's outcome on one exchange; grading them on each dispatch
 * needs the engine to grade every answer of the set.
 *
 * In scope unless the run says otherwise (RunSettings.runnerContracts): 2–10 copies of a request the storyboard
 * already sends, the traffic of its sequential steps. Out of scope, the step grades not_applicable, naming the
 * contract (storyboard-schema.yaml > Composition; idempotency.yaml: "runners without parallel-dispatch skip this
 * phase with a stable not_applicable marker").
 */
import { randomUUID } from 'node:crypto';
import { dispatchOf } from '../../checks/cross-response.js';
import type { ResponseSet } from '../../checks/types.js';
import type { RoleOutcome, RoleRun, RoleSender, RoleSession, RunnerRole } from '../../engine/role.js';
import type { StepResult, ValidationResult } from '../../model/records.js';
import type { Step } from '../../model/storyboard.js';
import { dispatchAll, type Dispatched } from './dispatch.js';

const PARALLEL_DISPATCH_CONTRACT = 'parallel_dispatch_runner';
/** test-kits/parallel-dispatch-runner.yaml > parallel_dispatch_step_contract: count_min, count_max. */
const COUNT = { min: 2, max: 10 };

export const parallelDispatchRole: RunnerRole = {
  name: 'parallel-dispatch',
  tasks: new Set(),
  open: (run) => parallelSession(run),
};

/** A step of the contract: `requires_contract: parallel_dispatch_runner` and a `parallel_dispatch` block. */
function isParallelStep(step: Step): boolean {
  const block: unknown = step.parallel_dispatch;
  return step.requires_contract === PARALLEL_DISPATCH_CONTRACT && typeof block === 'object' && block !== null;
}

function parallelSession(run: RoleRun): RoleSession {
  const inScope = run.settings.runnerContracts?.parallel_dispatch_runner !== false;
  return {
    gate: ({ step, task }) =>
      isParallelStep(step) && !inScope
        ? {
            reason: 'not_applicable',
            detail: `${task} with parallel_dispatch requires the test-kit contract "${PARALLEL_DISPATCH_CONTRACT}", which is not in scope for this run (run setting runnerContracts.${PARALLEL_DISPATCH_CONTRACT}: false)`,
          }
        : undefined,
    sender: ({ step, task }) => (isParallelStep(step) && inScope ? sender(run, step, task) : undefined),
  };
}

/** test-kits/parallel-dispatch-runner.yaml: in-flight resolution is bounded by "the runner's documented timeout (default 60s)". */
const IN_FLIGHT_BUDGET_MS = 60_000;

function sender(run: RoleRun, step: Step, task: string): RoleSender {
  return async ({ payload, callOptions }, result) => {
    const block = step.parallel_dispatch!;
    const problem = misconfigured(block);
    if (problem) return { result: { ...result, error: problem } };
    const payloads = Array.from({ length: block.count }, () =>
      // The same key on every dispatch is the point of the rule-9 test; otherwise each dispatch is its own request.
      block.same_idempotency_key || typeof payload.idempotency_key !== 'string'
        ? { ...payload }
        : { ...payload, idempotency_key: randomUUID() },
    );
    const budgetMs = run.settings.inFlightBudgetMs ?? Math.max(run.settings.timeoutMs, IN_FLIGHT_BUDGET_MS);
    const dispatched = await dispatchAll({ transport: run.transport(), task, payloads, callOptions, budgetMs });
    const first = dispatched.find((d) => !d.exchange.transportError) ?? dispatched[0]!;
    const unresolved = dispatched.flatMap((d, i) => (d.unresolved ? [`dispatch ${i + 1}: ${d.unresolved}`] : []));
    if (unresolved.length > 0) return stepTimeout(run, step, result, first, unresolved, budgetMs);
    const responses: ResponseSet = {
      contract: PARALLEL_DISPATCH_CONTRACT,
      dispatches: dispatched.map((d) => dispatchOf(d.exchange)),
    };
    return { exchange: first.exchange, responses };
  };
}

/** What the engine's loader does not hold a storyboard built in code to: the test kit's step contract. */
function misconfigured(block: NonNullable<Step['parallel_dispatch']>): string | undefined {
  if (!Number.isInteger(block.count) || block.count < COUNT.min || block.count > COUNT.max)
    return `parallel_dispatch.count must be an integer from ${COUNT.min} to ${COUNT.max} (test-kits/parallel-dispatch-runner.yaml > parallel_dispatch_step_contract); it is ${JSON.stringify(block.count)}`;
  if (typeof block.same_idempotency_key !== 'boolean')
    return 'parallel_dispatch.same_idempotency_key is required (test-kits/parallel-dispatch-runner.yaml > parallel_dispatch_step_contract > required_step_fields): true for a rule-9 test (every dispatch carries one idempotency_key), false for dispatches that are each their own request';
  return undefined;
}

/**
 * The runner-synthesized `step_timeout` (storyboard-schema.yaml > Cross-response assertions: "If resolution exceeds
 * the runner's step-timeout budget, the step grades `step_timeout`, not a rule-9 violation"): the cross-response
 * checks are not graded on a set that did not resolve.
 */
function stepTimeout(
  run: RoleRun,
  step: Step,
  result: StepResult,
  shown: Dispatched,
  unresolved: string[],
  budgetMs: number,
): RoleOutcome {
  const { request, response } = shown.exchange;
  const validation: ValidationResult = {
    check: 'step_timeout',
    passed: false,
    description: `the ${step.parallel_dispatch!.count} parallel dispatches resolve within the step timeout`,
    json_pointer: null,
    expected: { resolved_within_ms: budgetMs },
    actual: { unresolved },
    schema_id: null,
    schema_url: null,
    request,
    response: response ?? null,
    source: { file: run.storyboard.file, line: step.loc.line, column: step.loc.column },
  };
  return {
    result: {
      ...result,
      request,
      ...(response ? { response } : {}),
      extraction: shown.exchange.extraction,
      validations: [validation],
      error: `step_timeout: the parallel dispatches did not resolve within the step's ${budgetMs} ms (${unresolved.join('; ')})`,
    },
  };
}
