/**
 * `task_completion.<path>` captures (storyboard-schema.yaml > context_outputs):
 * when a task answers with a non-terminal envelope (`submitted`, `working`,
 * `input-required`, with a `task_id`), the runner polls the AdCP task-status
 * tool (`get_task_status` in 3.1, `tasks/get` before) until a terminal state and reads the capture from the completion —
 * bounded in time, so an agent that never finishes costs one step, not the run.
 */
import { answerError, PROTOCOL_ENVELOPE_KEYS } from '../model/answer-error.js';
import type { Exchange } from '../model/exchange.js';
import type { Step } from '../model/storyboard.js';
import type { ResponseRecord } from '../model/records.js';
import type { AgentTransport, CallOptions } from '../transport/types.js';
import { TASK_COMPLETION_PREFIX } from '../model/runner-tasks.js';
import { CHECK_KIND } from '../checks/kinds.js';

const NON_TERMINAL = new Set(['submitted', 'working', 'input-required']);
const FAILED = new Set(['failed', 'canceled', 'rejected']);
/** States in which the task waits on someone else: polling further cannot help. */
const PAUSED = new Set(['input-required', 'auth-required']);

export type TaskCompletion =
  | { outcome: 'completed'; data: unknown; polls: number; response?: ResponseRecord }
  | { outcome: 'failed'; status: string; data: unknown; polls: number; response?: ResponseRecord }
  | { outcome: 'timeout'; lastStatus?: string; polls: number; waitedMs: number; tool: string }
  | { outcome: 'error'; error: string; polls: number };

export interface PollOptions extends CallOptions {
  /** Pause between polls. */
  intervalMs: number;
  /** Bound on the whole wait. */
  deadlineMs: number;
  /** The tool polled (pollingTool). @default 'tasks/get' */
  pollTool?: string;
}

/**
 * Which tool polls an AdCP async task: AdCP 3.1 names it `get_task_status` ("a 3.x protocol-namespace alias for the
 * legacy AdCP tasks/get polling surface", protocol/get-task-status-request.json; same request), 3.0 `tasks/get` (some
 * agents serve it as `tasks_get`). The one the agent advertises, the 3.1 name first; none advertised: `tasks/get`.
 */
export function pollingTool(tools: ReadonlySet<string> | undefined): string {
  return ['get_task_status', 'tasks/get', 'tasks_get'].find((t) => tools?.has(t)) ?? 'tasks/get';
}

/** The async envelope of an answer, if it is one and the storyboard wants its completion. */
export function pendingTask(
  exchange: Exchange,
  wantsCompletion: boolean,
): { taskId: string; status: string } | undefined {
  if (!wantsCompletion || exchange.transportError) return undefined;
  const data = exchange.data as { status?: unknown; task_id?: unknown } | null | undefined;
  if (!data || typeof data !== 'object') return undefined;
  const { status, task_id } = data;
  if (typeof status !== 'string' || !NON_TERMINAL.has(status)) return undefined;
  // A task id is an opaque token: bounded, printable.
  if (
    typeof task_id !== 'string' ||
    task_id.length === 0 ||
    task_id.length > 256 ||
    /[\u0000-\u001f\u007f]/.test(task_id)
  )
    return undefined;
  return { taskId: task_id, status };
}

/** True when an async answer is only the protocol envelope (status, task_id, …): the result will come with the task's completion. */
export function isEnvelopeOnly(data: unknown): boolean {
  return (
    data !== null &&
    typeof data === 'object' &&
    !Array.isArray(data) &&
    Object.keys(data).every((k) => PROTOCOL_ENVELOPE_KEYS.has(k))
  );
}

async function pollTaskCompletion(
  transport: AgentTransport,
  taskId: string,
  options: PollOptions,
): Promise<TaskCompletion> {
  const tool = options.pollTool ?? 'tasks/get';
  const started = performance.now();
  let polls = 0;
  let lastStatus: string | undefined;
  for (;;) {
    const remaining = options.deadlineMs - (performance.now() - started);
    if (remaining <= 0)
      return { outcome: 'timeout', lastStatus, polls, waitedMs: Math.round(performance.now() - started), tool };
    // Whole milliseconds: the transports hand this to AbortSignal.timeout, which throws on a fraction.
    const timeoutMs = Math.ceil(Math.min(options.timeoutMs, remaining));
    const exchange = await transport.call(tool, { task_id: taskId, include_result: true }, { ...options, timeoutMs });
    polls++;
    if (exchange.transportError) {
      // A poll cut short by the overall deadline means the task did not finish in time, not that polling broke.
      const waitedMs = performance.now() - started;
      if (waitedMs >= options.deadlineMs)
        return { outcome: 'timeout', lastStatus, polls, waitedMs: Math.round(waitedMs), tool };
      return { outcome: 'error', error: exchange.transportError, polls };
    }
    const body = (exchange.data ?? {}) as { status?: unknown; result?: unknown; task_id?: unknown };
    const status = typeof body.status === 'string' ? body.status : undefined;
    // An error answer (model/answer-error.ts) is the poll failing — unless it reports the task's own failed end
    // (`{ task_id, status: "failed", errors }`): that is the task's outcome, read below.
    const failure = answerError(exchange);
    if (failure && !(status && FAILED.has(status))) {
      return {
        outcome: 'error',
        error: `${tool} answered with an error: ${failure.message ?? failure.code ?? failure.where}`,
        polls,
      };
    }
    const otherTask = notThisTask(body.task_id, taskId, tool);
    if (otherTask) return { outcome: 'error', error: otherTask, polls };
    lastStatus = status;
    const data = body.result !== undefined ? body.result : body;
    const ended = taskEnd(status, data, polls, exchange.response);
    if (ended) return ended;
    // Short first waits (agents that finish at once), growing to the interval.
    const backoff = Math.min(options.intervalMs, 50 * 2 ** (polls - 1));
    const wait = Math.min(backoff, Math.max(0, options.deadlineMs - (performance.now() - started)));
    await pause(wait, options.signal);
    if (options.signal?.aborted) return { outcome: 'error', error: 'polling was cancelled', polls };
  }
}

/**
 * Why a poll's answer is not about the task polled, or undefined when it is: the answer names its task (`task_id` is
 * required in tasks-get-response.json and get-task-status-response.json), and an answer for another task must not be
 * taken as this task's result (its status, its artifact).
 */
function notThisTask(answered: unknown, taskId: string, tool: string): string | undefined {
  if (answered === taskId) return undefined;
  const said = typeof answered === 'string' ? `for task ${JSON.stringify(answered.slice(0, 80))}` : 'without a task_id';
  return `${tool} for task ${JSON.stringify(taskId)} answered ${said}: an answer for another task is not this task's`;
}

/** The task's end, when a poll's `status` says it ended (or waits on someone else: polling further cannot help). */
function taskEnd(
  status: string | undefined,
  data: unknown,
  polls: number,
  response: ResponseRecord | undefined,
): TaskCompletion | undefined {
  if (status === 'completed' || (status && PAUSED.has(status))) return { outcome: 'completed', data, polls, response };
  if (status && FAILED.has(status)) return { outcome: 'failed', status, data, polls, response };
  return undefined;
}

/** A wait between polls that a cancelled run (the call's signal) ends at once. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface FollowedAnswer {
  exchange: Exchange;
  /** The task's end, when the step captures `task_completion.` values. */
  completion?: TaskCompletion;
  /** Why the step is graded on an interim answer after all. */
  warning?: string;
}

/**
 * An async answer (`submitted` / `working` with a `task_id`) is followed to
 * its end through the task-status tool (pollingTool), bounded by `deadlineMs`:
 * - when the step captures `task_completion.` values, for those captures
 *   (storyboard-schema.yaml > context_outputs); the step is graded on the
 *   immediate answer;
 * - when the answer is only the envelope and the step does not validate the
 *   envelope itself (an async `status`, `task_id`, the A2A shape), the step is
 *   graded on the task's completion — what a buyer's client acts on — and the
 *   extraction note says so. A step that tests the async arm keeps the
 *   immediate answer.
 */
export async function followAsync(
  transport: AgentTransport,
  step: Step,
  exchange: Exchange,
  options: PollOptions,
): Promise<FollowedAnswer> {
  const wantsCompletion = (step.context_outputs ?? []).some(
    (o) => typeof o.path === 'string' && o.path.startsWith(TASK_COMPLETION_PREFIX),
  );
  const pending = pendingTask(exchange, true);
  if (!pending) return { exchange };
  const gradeOnCompletion = !wantsCompletion && isEnvelopeOnly(exchange.data) && !validatesEnvelope(step);
  if (!wantsCompletion && !gradeOnCompletion) return { exchange };
  const completion = await pollTaskCompletion(transport, pending.taskId, options);
  if (!gradeOnCompletion) return { exchange, completion };
  if (completion.outcome !== 'completed' && completion.outcome !== 'failed') {
    const why =
      completion.outcome === 'timeout'
        ? `was still ${completion.lastStatus ?? pending.status} when the step timeout ran out`
        : `could not be polled (${completion.error})`;
    return {
      exchange,
      warning: `the agent answered ${pending.status} (task ${pending.taskId}); the task ${why}, so the step is graded on that interim answer`,
    };
  }
  return { exchange: completedExchange(exchange, pending, completion, options.pollTool ?? 'tasks/get') };
}

/** The answer a step is graded on when its task ended: the completion (or failure), with a note on how it was reached. */
function completedExchange(
  exchange: Exchange,
  pending: { taskId: string; status: string },
  completion: Extract<TaskCompletion, { outcome: 'completed' | 'failed' }>,
  tool: string,
): Exchange {
  const note = `the agent answered ${pending.status} (task ${pending.taskId}); graded on the task's ${completion.outcome === 'completed' ? 'completion' : `end (${completion.status})`} after ${completion.polls} ${tool} poll(s)`;
  // The context echo belongs to the answer to this call (storyboard-schema.yaml > Context echo contract: "whether
  // the response is synchronous or asynchronous"); a completion artifact that lacks it keeps the envelope's.
  const envelopeContext = (exchange.data as { context?: unknown }).context;
  const data =
    envelopeContext !== undefined &&
    completion.data &&
    typeof completion.data === 'object' &&
    !Array.isArray(completion.data) &&
    !('context' in completion.data)
      ? { ...(completion.data as Record<string, unknown>), context: envelopeContext }
      : completion.data;
  return {
    ...exchange,
    ...(completion.response ? { response: completion.response } : {}),
    data,
    extraction: { path: completion.outcome === 'failed' ? 'error' : exchange.extraction.path, note },
  };
}

const ASYNC_STATUSES = new Set(['submitted', 'working', 'input-required']);

/**
 * Whether a step's validations look at the async envelope itself — its A2A
 * shape, `task_id`, or a `status` expected to be an async one — so it must be
 * graded on the immediate answer. (`status: pending_creatives` is the result's
 * status: that step wants the completion.)
 */
function validatesEnvelope(step: Step): boolean {
  return step.validations.some((v) => {
    if (CHECK_KIND.get(v.check)?.reads === 'envelope' || v.path === 'task_id') return true;
    if (v.path !== 'status') return false;
    const expected = [v.value, ...(Array.isArray(v.allowed_values) ? v.allowed_values : [])];
    return expected.some((value) => typeof value === 'string' && ASYNC_STATUSES.has(value));
  });
}
