/**
 * The dispatches of a `parallel_dispatch` step (test-kits/parallel-dispatch-runner.yaml): `count` calls of the step's
 * request, fired together from this process (the test kit's `process_local` mode: every call is started before any
 * answer is awaited), each followed until it resolves.
 *
 * Resolution (storyboard-schema.yaml > Cross-response assertions > Resolution semantics): a dispatch answered
 * IDEMPOTENCY_IN_FLIGHT waits the error's `retry_after` and is sent again with the SAME idempotency_key, as a buyer
 * must ("MUST NOT mint a fresh idempotency_key", enums/error-code.json), until it answers anything else. `retry_after`
 * is clamped to 1..3600 s (core/error.json: "Clients MUST clamp values outside this range"); without one the wait is
 * 1 s, the least a seller may ask. The whole resolution is bounded by the step's budget (the run's step timeout): a
 * dispatch still in flight when its next wait would overrun the budget, or whose call got no answer within it, is
 * unresolved — the step grades `step_timeout`, not a rule-9 violation.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterOf } from '../../checks/cross-response.js';
import { answerError } from '../../model/answer-error.js';
import type { Exchange } from '../../model/exchange.js';
import { openCallScope } from '../../transport/call.js';
import type { AgentTransport, CallOptions } from '../../transport/types.js';

const IN_FLIGHT = 'IDEMPOTENCY_IN_FLIGHT';

/** One dispatch, followed to its end. */
export interface Dispatched {
  /** The last answer: the resolved one, or the one the budget ran out on. */
  exchange: Exchange;
  /** How often it answered IDEMPOTENCY_IN_FLIGHT and was sent again. */
  resent: number;
  /** Why it did not resolve within the budget, when it did not. */
  unresolved?: string;
}

export interface DispatchOptions {
  transport: AgentTransport;
  task: string;
  /** One payload per dispatch. */
  payloads: readonly Record<string, unknown>[];
  callOptions: CallOptions;
  /** The step's budget for the whole resolution, from now. */
  budgetMs: number;
}

/** Every dispatch, started together, each resolved within the budget; in dispatch order. */
export function dispatchAll(options: DispatchOptions): Promise<Dispatched[]> {
  const deadline = Date.now() + options.budgetMs;
  return Promise.all(options.payloads.map((payload) => resolveOne(options, payload, deadline)));
}

async function resolveOne(options: DispatchOptions, payload: Record<string, unknown>, deadline: number) {
  const { transport, task, callOptions } = options;
  for (let resent = 0; ; resent++) {
    const remaining = Math.max(1, deadline - Date.now());
    // The signal also ends a rate-limit wait of the run's transport (transport/rate-limit.ts) at the deadline; it is
    // ended with the call, so that nothing listening on it (the MCP SDK's request) hears an abort afterwards.
    const scope = openCallScope({ signal: callOptions.signal, timeoutMs: remaining });
    const exchange = await transport
      .call(task, payload, {
        ...callOptions,
        timeoutMs: Math.min(callOptions.timeoutMs, remaining),
        signal: scope.signal,
      })
      .finally(() => scope.end());
    if (exchange.transportError)
      return Date.now() >= deadline
        ? { exchange, resent, unresolved: `no answer within the step's ${options.budgetMs} ms` }
        : { exchange, resent };
    if (answerError(exchange)?.code !== IN_FLIGHT) return { exchange, resent };
    const asked = retryAfterOf(exchange);
    const waitMs = Math.min(Math.max(asked ?? 1, 1), 3600) * 1000;
    if (Date.now() + waitMs >= deadline)
      return {
        exchange,
        resent,
        unresolved: `still ${IN_FLIGHT} after ${resent + 1} answer(s); its retry_after (${asked ?? 'none, so 1'} s) runs past the step's ${options.budgetMs} ms`,
      };
    await sleep(waitMs);
  }
}
