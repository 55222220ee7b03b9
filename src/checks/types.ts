import type { SchemaRegistry } from '../schemas/registry.js';
import type { Step, Validation } from '../model/storyboard.js';
import type { Exchange } from '../model/exchange.js';
import type { ValidationResult } from '../model/records.js';
import type { UpstreamObservation } from './upstream-observation.js';

/** An earlier step of the same storyboard run that reached the agent (or a role), oldest first. */
export interface PriorAnswer {
  step: string;
  task: string;
  /** The request as sent (after substitution and the request builder). */
  request: unknown;
  /** The answer as storyboard paths see it (`Exchange.data`). */
  data: unknown;
  /** The step passed. */
  passed: boolean;
}

/**
 * The resolved response set of a step that dispatched more than one request under a runner contract
 * (storyboard-schema.yaml > Cross-response assertions): what the `cross_response` kinds grade. Produced by the role
 * of the contract (src/roles/parallel-dispatch, src/roles/rate-limit-trip); a single-dispatch step has none, and the
 * cross-response kinds then grade not_applicable.
 */
export interface ResponseSet {
  contract: 'parallel_dispatch_runner' | 'rate_limit_trip_runner';
  /** Every dispatch in dispatch order: its answer's data when it resolved, else why not. */
  dispatches: readonly { data?: unknown; errorCode?: string; error?: string; timedOut?: boolean }[];
  /** rate_limit_trip_runner: the answer that tripped the limiter, and the replay of its idempotency key. */
  trip?: { data: unknown; errorCode?: string };
  replay?: { data: unknown; errorCode?: string };
}

export interface CheckInput {
  validation: Validation;
  step: Step;
  /** The task actually invoked (after test-kit resolution). */
  task: string;
  exchange: Exchange;
  schemas?: SchemaRegistry;
  /** The run's context accumulator (captures + storyboard-root `context:`), for checks that read it (`refs_resolve`). */
  context?: ReadonlyMap<string, unknown>;
  /** The URL of the agent under test (`$agent_url` in `refs_resolve` scopes). */
  agentUrl?: string;
  /** The storyboard's earlier steps that reached the agent, oldest first (canonical_format_satisfaction reads them). */
  history?: readonly PriorAnswer[];
  /** A2A: the last earlier A2A step's Task `contextId` (a2a_context_continuity). */
  priorA2a?: { step: string; contextId?: string };
  /**
   * What the agent reported of its upstream traffic for this step (upstream_traffic; engine/upstream.ts), by window:
   * `''` for this step's own, `<step id>` for a validation's `since: <step id>`.
   */
  upstream?: Readonly<Record<string, UpstreamObservation>>;
  /** The response set of a multi-dispatch step (the cross_response kinds). */
  responses?: ResponseSet;
}

/**
 * A check returns the contract fields it knows; the engine adds check, description and source, and — on a failure —
 * the step's request and response, unless the check names the exchange it graded instead (upstream_traffic: the
 * controller query).
 */
export type CheckVerdict = Omit<ValidationResult, 'check' | 'description' | 'source'>;

export type Check = (input: CheckInput) => CheckVerdict;
