/**
 * The runner output contract's A2A extraction (a2a-response-extraction.mdx): where the task data is in an A2A
 * answer — a Task, or a Message answered directly — which path that was, and the task's normalised state. Final
 * states read the last DataPart of `artifacts[0].parts[]` (falling back to `status.message`), interim states the
 * first DataPart of `status.message.parts[]`; a failed, rejected or canceled task is an error answer
 * (transport-errors.mdx > A2A Binding). a2a.ts re-exports what other modules use.
 */
import { isErrorOnly } from '../model/answer-error.js';
import type { ExtractionRecord } from '../model/records.js';

const FINAL_STATES = new Set(['completed', 'failed', 'canceled', 'rejected']);
const INTERIM_STATES = new Set(['working', 'submitted', 'input-required', 'auth-required']);

/** What the extraction reads of an A2A Task or Message, as an agent may send it: any of it missing or of another type. */
interface A2aAnswerShape {
  kind?: unknown;
  parts?: unknown;
  status?: { state?: unknown; message?: { parts?: unknown } };
  artifacts?: { parts?: unknown }[];
}

/** Where the task data is, which path that was, and the task's normalised state. */
export interface A2aExtraction {
  extraction: ExtractionRecord;
  data: unknown;
  state?: string;
}

/** `TASK_STATE_INPUT_REQUIRED` (A2A 1.0) and `input-required` (0.3) → `input-required`. */
export function normalizeA2aState(state: unknown): string | undefined {
  if (typeof state !== 'string' || state.length === 0) return undefined;
  return state
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-');
}

const STREAM_KEYS = ['task', 'message', 'statusUpdate', 'artifactUpdate'];

/** An A2A 1.0 `StreamResponse` (`{ task }`, …) unwrapped once; a nested envelope is malformed (undefined). */
export function unwrapStreamResponse(input: unknown): unknown {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return input;
  const keys = Object.keys(input);
  if (keys.length !== 1 || !STREAM_KEYS.includes(keys[0]!)) return input;
  const inner = (input as Record<string, unknown>)[keys[0]!];
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) return input;
  // Unwrapped exactly once: an inner object that is itself keyed like an envelope is smuggling, not a Task.
  if (Object.keys(inner).some((k) => STREAM_KEYS.includes(k))) return undefined;
  return inner;
}

function isDataPart(part: unknown): part is { data: Record<string, unknown> } {
  if (!part || typeof part !== 'object') return false;
  const { kind, data } = part as { kind?: unknown; data?: unknown };
  return (kind === undefined || kind === 'data') && data !== null && typeof data === 'object' && !Array.isArray(data);
}

function dataParts(parts: unknown): { data: Record<string, unknown>; index: number }[] {
  if (!Array.isArray(parts)) return [];
  return parts.flatMap((part, index) => (isDataPart(part) ? [{ data: part.data, index }] : []));
}

function texts(parts: unknown): string[] {
  if (!Array.isArray(parts)) return [];
  return parts
    .filter(
      (p: { kind?: unknown; text?: unknown } | null | undefined) =>
        p && typeof p.text === 'string' && (p.kind === undefined || p.kind === 'text'),
    )
    .map((p: { text: string }) => p.text);
}

/** The first DataPart of an interim status message. */
export function interimData(task: unknown): Record<string, unknown> | undefined {
  return dataParts((task as A2aAnswerShape | undefined)?.status?.message?.parts)[0]?.data;
}

/** An AdCP async envelope with a task id: the engine follows it through the AdCP `tasks/get` task instead. */
export function hasAdcpHandle(data: Record<string, unknown> | undefined): boolean {
  return typeof data?.task_id === 'string' && data.task_id.length > 0;
}

/** The authoritative DataPart of a final Task: the last one of `artifacts[0].parts[]`, with its JSON pointer. */
export function finalDataPart(task: unknown): { data: Record<string, unknown>; pointer: string } | undefined {
  const found = dataParts((task as A2aAnswerShape | undefined)?.artifacts?.[0]?.parts).at(-1);
  if (found) return { data: found.data, pointer: `/artifacts/0/parts/${found.index}/data` };
  const interim = dataParts((task as A2aAnswerShape | undefined)?.status?.message?.parts)[0];
  return interim ? { data: interim.data, pointer: `/status/message/parts/${interim.index}/data` } : undefined;
}

/** No task data, and why. */
function noData(note: string, state?: string): A2aExtraction {
  return { extraction: { path: 'none', note }, data: undefined, ...(state === undefined ? {} : { state }) };
}

/** An answer's data: on the error path when it holds only an AdCP error, else structured content. */
function answered(data: Record<string, unknown>, note: string, state?: string): A2aExtraction {
  return {
    extraction: { path: isErrorOnly(data) ? 'error' : 'structured_content', note },
    data,
    ...(state === undefined ? {} : { state }),
  };
}

/**
 * The contract's A2A extraction: where the task data is in an A2A answer (a
 * Task, or a Message answered directly), which path that was, and the task's
 * normalised state.
 */
export function extractA2aResult(result: unknown): A2aExtraction {
  const answer = unwrapStreamResponse(result);
  if (answer === undefined) return noData('nested A2A stream envelope (malformed)');
  if (!answer || typeof answer !== 'object' || Array.isArray(answer))
    return noData('the JSON-RPC result is neither an A2A Task nor a Message');
  const task = answer as A2aAnswerShape;
  if (task.kind === 'message' || (task.status === undefined && Array.isArray(task.parts)))
    return fromMessage(task.parts);
  const state = normalizeA2aState(task.status?.state);
  if (!state) return noData('A2A Task without status.state');
  if (FINAL_STATES.has(state)) return fromFinalTask(task, state);
  if (INTERIM_STATES.has(state)) return fromInterimTask(task, state);
  return noData(`unknown A2A task state ${JSON.stringify(String(task.status?.state)).slice(0, 80)}`, state);
}

/** A Message answered directly (no Task): its last DataPart. */
function fromMessage(parts: unknown): A2aExtraction {
  const last = dataParts(parts).at(-1);
  if (!last) return noData('A2A Message without a DataPart');
  return answered(last.data, 'A2A Message (no Task): last DataPart of parts[]');
}

/** A framework's `{ response: … }` wrapper around the task data, which clients must reject. */
function isFrameworkWrapper(data: Record<string, unknown>): boolean {
  const keys = Object.keys(data);
  return keys.length === 1 && keys[0] === 'response' && !!data.response && typeof data.response === 'object';
}

/** A final Task: the last DataPart of `artifacts[0].parts[]`, else the first of `status.message.parts[]`. */
function fromFinalTask(task: A2aAnswerShape, state: string): A2aExtraction {
  const last = dataParts(task.artifacts?.[0]?.parts).at(-1);
  if (last && isFrameworkWrapper(last.data))
    return noData(
      `A2A task ${state}: the DataPart is a framework wrapper { response: … }, which clients must reject (a2a-response-extraction > Wrapper rejection)`,
      state,
    );
  const data = last ? last.data : interimData(task);
  const where = last
    ? 'artifacts[0].parts[] last DataPart'
    : 'status.message.parts[] first DataPart (no DataPart in artifacts[0])';
  if (state !== 'completed') return fromUnsuccessfulTask(task, state, data, where);
  if (!data) return noData('A2A task completed without a DataPart in artifacts[0] or status.message', state);
  return answered(data, `A2A task completed: ${where}`, state);
}

/** failed / rejected / canceled: the error path (transport-errors.mdx > A2A Binding), with the task's text when it has no DataPart. */
function fromUnsuccessfulTask(
  task: A2aAnswerShape,
  state: string,
  data: Record<string, unknown> | undefined,
  where: string,
): A2aExtraction {
  if (data) return { extraction: { path: 'error', note: `A2A task ${state}: ${where}` }, data, state };
  const message = [...texts(task.artifacts?.[0]?.parts), ...texts(task.status?.message?.parts)].join('\n');
  return {
    extraction: { path: 'error', note: `A2A task ${state} without a DataPart` },
    data: message ? { message } : {},
    state,
  };
}

/** An interim Task: the first DataPart of `status.message.parts[]`. */
function fromInterimTask(task: A2aAnswerShape, state: string): A2aExtraction {
  const data = interimData(task);
  if (!data) return noData(`interim A2A state ${state} without a DataPart in status.message.parts[]`, state);
  return answered(data, `interim A2A state ${state}: status.message.parts[] first DataPart`, state);
}
