/**
 * What polling an A2A task with A2A `tasks/get` decides (a2a.ts polls): whether an answer leaves a task at work, and
 * whether a `tasks/get` answer is the task asked for.
 */
import { hasAdcpHandle, interimData, normalizeA2aState, unwrapStreamResponse } from './a2a-extract.js';

/** Interim states in which the agent is still at work: the call is not over yet. */
const RUNNING_STATES = new Set(['working', 'submitted']);

/**
 * The A2A task a JSON-RPC result leaves at work, to poll: a Task with an id in a running state, without an AdCP
 * async handle (the engine follows that instead). Undefined when the call is over.
 */
export function runningTask(result: unknown): { id: string; state: string; contextId?: string } | undefined {
  const task = unwrapStreamResponse(result) as { id?: unknown; contextId?: unknown; status?: { state?: unknown } };
  const state = normalizeA2aState(task?.status?.state);
  if (!task || typeof task.id !== 'string' || !state || !RUNNING_STATES.has(state) || hasAdcpHandle(interimData(task)))
    return undefined;
  return { id: task.id, state, contextId: typeof task.contextId === 'string' ? task.contextId : undefined };
}

/** At most this much of an agent-chosen id goes into a message. */
const MAX_ID_SHOWN = 80;
const shownId = (id: unknown) => (JSON.stringify(id) ?? String(id)).slice(0, MAX_ID_SHOWN);

/**
 * Why an A2A `tasks/get` answer is not the task it was asked for (the Task polled), or undefined when it is: a Task
 * with the same `id` and, when both name one, the same `contextId`. A Message, or a Task without an id, does not say
 * which task it is. One line; the ids are agent-chosen, cut and JSON-quoted.
 */
export function otherTask(id: string, context: string | undefined, result: unknown): string | undefined {
  const got = unwrapStreamResponse(result) as { id?: unknown; contextId?: unknown } | null | undefined;
  const what = `the agent answered A2A tasks/get for task ${shownId(id)}`;
  if (!got || typeof got !== 'object' || Array.isArray(got) || got.id === undefined)
    return `${what} with no task id (a tasks/get answer is the Task asked for)`;
  if (got.id !== id)
    return `${what} with another task (id ${shownId(got.id)}); an answer about another task is not this call's`;
  if (context !== undefined && got.contextId !== undefined && got.contextId !== context) {
    return `${what} with the task in another context (contextId ${shownId(got.contextId)}, the task's is ${shownId(context)}); an answer about another task is not this call's`;
  }
  return undefined;
}
