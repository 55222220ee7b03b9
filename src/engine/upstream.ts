/**
 * What a step's `upstream_traffic` validations grade (storyboard-schema.yaml > Upstream side-effects;
 * runner-output-contract.yaml 2.6.0 > notes.upstream_traffic_*): after the step, the runner asks the agent's
 * comply_test_controller for the outbound calls it recorded, scenario `query_upstream_traffic`, and the check
 * (checks/upstream-traffic.ts) grades the answer. Here: whether the agent offers the scenario at all — its controller's
 * `list_scenarios`, asked once per run —, the window of each query — the runner's own clock when it sent the step's
 * request (or, for `since: <step>`, that earlier step's), less 250 ms of clock-skew tolerance (the recommended value),
 * inclusive —, and the attestation mode (`raw`: the selection rule asks for `digest` only when the runner knows the
 * calls are JSON-shaped, which it never does before seeing them). One query per distinct window.
 */
import type { RecordedCall, UpstreamObservation } from '../checks/upstream-observation.js';
import { answerError, findErrorCode } from '../model/answer-error.js';
import type { Step } from '../model/storyboard.js';
import type { AgentTransport, Credentials } from '../transport/types.js';
import type { AgentTools } from './gate.js';

const CONTROLLER = 'comply_test_controller';
const SCENARIO = 'query_upstream_traffic';
/** storyboard-schema.yaml: "50ms minimum, 250ms recommended". */
const CLOCK_SKEW_MS = 250;
/** The controller's page: its maximum (comply-test-controller-request.json > limit). */
const LIMIT = 1000;

export interface UpstreamContext {
  transport: AgentTransport;
  credentials: Credentials;
  timeoutMs: number;
  tools: AgentTools;
  /** The scenarios the agent's controller lists, asked once per run (`list_scenarios`), or why not. */
  scenarios(): Promise<string[] | { error: string }>;
  /** When the runner sent an earlier step's request (ms since the epoch), by step id. */
  startedAt(stepId: string): number | undefined;
}

/** Whether a step has anything for this module to observe. */
function observesUpstream(step: Step): boolean {
  return step.validations.some((v) => v.check === 'upstream_traffic');
}

/** The controller's scenario list, as `list_scenarios` answers it (`{ success: true, scenarios: [...] }`). */
export async function listScenarios(
  transport: AgentTransport,
  credentials: Credentials,
  timeoutMs: number,
): Promise<string[] | { error: string }> {
  const exchange = await transport.call(CONTROLLER, { scenario: 'list_scenarios' }, { credentials, timeoutMs });
  if (exchange.transportError) return { error: exchange.transportError };
  const failure = answerError(exchange);
  if (failure) return { error: `list_scenarios answered with an error${failure.code ? ` ${failure.code}` : ''}` };
  const scenarios = (exchange.data as { scenarios?: unknown } | undefined)?.scenarios;
  return Array.isArray(scenarios)
    ? scenarios.filter((s): s is string => typeof s === 'string')
    : { error: 'list_scenarios answered without a scenarios list' };
}

/**
 * The observations a step's upstream_traffic validations grade, by window (`''`: this step's; a step id: `since:`),
 * or undefined when the step has none. `startedAt` is when this step's request went out.
 */
export async function observeUpstream(
  step: Step,
  startedAt: number,
  ctx: UpstreamContext,
): Promise<Record<string, UpstreamObservation> | undefined> {
  if (!observesUpstream(step)) return undefined;
  const windows = new Set([
    '',
    ...step.validations
      .filter((v) => v.check === 'upstream_traffic' && typeof v.since === 'string')
      .map((v) => v.since!),
  ]);
  const notOffered = await notAdvertised(ctx);
  const observed: Record<string, UpstreamObservation> = {};
  for (const key of windows) {
    if (notOffered) {
      observed[key] = notOffered;
      continue;
    }
    const from = key === '' ? startedAt : ctx.startedAt(key);
    observed[key] = from === undefined ? { status: 'unresolved_since', since: key } : await query(from, ctx);
  }
  return observed;
}

async function notAdvertised(ctx: UpstreamContext): Promise<UpstreamObservation | undefined> {
  if (ctx.tools.tools && !ctx.tools.tools.has(CONTROLLER))
    return { status: 'not_advertised', detail: `the agent does not advertise ${CONTROLLER}` };
  const scenarios = await ctx.scenarios();
  if (!Array.isArray(scenarios))
    return {
      status: 'not_advertised',
      detail: `${CONTROLLER} list_scenarios failed (${scenarios.error}), so ${SCENARIO} is not advertised`,
    };
  if (!scenarios.includes(SCENARIO))
    return { status: 'not_advertised', detail: `${SCENARIO} scenario not advertised in ${CONTROLLER} list_scenarios` };
  return undefined;
}

async function query(from: number, ctx: UpstreamContext): Promise<UpstreamObservation> {
  const since = new Date(from - CLOCK_SKEW_MS).toISOString();
  const payload = { scenario: SCENARIO, params: { since_timestamp: since, limit: LIMIT, attestation_mode: 'raw' } };
  const exchange = await ctx.transport.call(CONTROLLER, payload, {
    credentials: ctx.credentials,
    timeoutMs: ctx.timeoutMs,
  });
  const records = { request: exchange.request, ...(exchange.response ? { response: exchange.response } : {}) };
  if (exchange.transportError) return { status: 'failed', error: exchange.transportError, ...records };
  const data = exchange.data as
    { success?: unknown; recorded_calls?: unknown; error?: unknown; error_detail?: unknown } | undefined;
  const failure = answerError(exchange);
  if (failure || data?.success !== true || !Array.isArray(data.recorded_calls)) {
    const code = findErrorCode(exchange)?.code ?? (typeof data?.error === 'string' ? data.error : undefined);
    const detail =
      typeof data?.error_detail === 'string'
        ? `: ${data.error_detail}`
        : failure?.message
          ? `: ${failure.message}`
          : '';
    return {
      status: 'failed',
      error: `${SCENARIO} answered ${code ?? 'without recorded_calls'}${detail}`,
      ...(code === 'JCS_NON_FINITE_NUMBER' ? { nonFinite: true } : {}),
      ...records,
    };
  }
  const calls = data.recorded_calls.filter(
    (c): c is RecordedCall => c !== null && typeof c === 'object' && !Array.isArray(c),
  );
  return { status: 'observed', request: exchange.request, response: exchange.response!, calls, since };
}
