import { finalDataPart, normalizeA2aState, unwrapStreamResponse } from '../transport/a2a-extract.js';
import type { Check, CheckVerdict } from './types.js';

interface Failure {
  pointer: string;
  expected: unknown;
  actual: unknown;
  why: string;
}

/** What the check reads of an A2A Task, as the agent sent it: any of it may be missing or of another type. */
interface A2aTask {
  kind?: unknown;
  id?: unknown;
  contextId?: unknown;
  status?: { state?: unknown };
  artifacts?: { parts?: unknown }[];
}

/**
 * `a2a_submitted_artifact` (storyboard-schema.yaml > "A2A wire-shape"): the A2A
 * envelope invariants of an AdCP `submitted` answer — `Task.id` and
 * `Task.contextId` non-empty, `Task.state` normalised to `completed` (the A2A
 * call is over; the AdCP work is what is submitted), and the authoritative
 * (last) DataPart's `data.status === 'submitted'`. It "grades `not_applicable`
 * on non-A2A transports", so over MCP it passes with `not_applicable` set —
 * the report shows it was not applied rather than silently passed. Pointers
 * are into the A2A Task (the JSON-RPC `result`, recorded as `response.payload`).
 */
export const a2aSubmittedArtifact: Check = ({ exchange }) => {
  if (exchange.request.transport !== 'a2a') {
    return {
      passed: true,
      json_pointer: null,
      not_applicable: `the agent was reached over ${exchange.request.transport}, not A2A`,
    };
  }
  if (exchange.rpcError) {
    return {
      passed: false,
      json_pointer: null,
      expected: 'an A2A Task (JSON-RPC result)',
      actual: { error: exchange.rpcError },
      error: `the agent answered with a JSON-RPC error (${exchange.rpcError.code}), not an A2A Task`,
    };
  }
  const task = unwrapStreamResponse(exchange.response?.payload);
  if (!isA2aTask(task)) return notATask(task);
  return verdict([...idFailures(task), ...stateFailures(task), ...dataPartFailures(task)]);
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value);

/** An A2A Task: an object with a status, of kind `task` when it names its kind. */
function isA2aTask(value: unknown): value is A2aTask {
  return isObject(value) && (value.kind === undefined || value.kind === 'task') && value.status !== undefined;
}

function notATask(answer: unknown): CheckVerdict {
  return {
    passed: false,
    json_pointer: null,
    expected: 'an A2A Task (JSON-RPC result)',
    actual: isObject(answer) ? { kind: answer.kind ?? null } : (answer ?? null),
    error: 'the answer is not an A2A Task, so there is no submitted-arm envelope to check',
  };
}

/** `Task.id` and `Task.contextId` non-empty strings. */
function idFailures(task: A2aTask): Failure[] {
  const failures: Failure[] = [];
  for (const key of ['id', 'contextId'] as const) {
    const value = task[key];
    if (typeof value !== 'string' || value.length === 0) {
      failures.push({
        pointer: `/${key}`,
        expected: 'a non-empty string',
        actual: value ?? null,
        why: `Task.${key} is not a non-empty string`,
      });
    }
  }
  return failures;
}

/** `Task.state` normalised to `completed`: the A2A call is over. */
function stateFailures(task: A2aTask): Failure[] {
  const rawState = task.status?.state;
  if (normalizeA2aState(rawState) === 'completed') return [];
  return [
    {
      pointer: '/status/state',
      expected: 'completed',
      actual: rawState ?? null,
      why: `Task.state is ${JSON.stringify(rawState ?? null)}: a submitted AdCP arm completes the A2A call (the AdCP task, not the A2A one, is submitted)`,
    },
  ];
}

/** The authoritative (last) DataPart's `data.status === 'submitted'`. */
function dataPartFailures(task: A2aTask): Failure[] {
  const part = finalDataPart(task);
  if (!part) {
    return [
      {
        pointer: '/artifacts/0/parts',
        expected: 'a DataPart carrying the AdCP response',
        actual: task.artifacts?.[0]?.parts ?? null,
        why: 'no DataPart carries the AdCP response',
      },
    ];
  }
  if (part.data.status === 'submitted') return [];
  return [
    {
      pointer: `${part.pointer}/status`,
      expected: 'submitted',
      actual: part.data.status ?? null,
      why: `the AdCP payload's status is ${JSON.stringify(part.data.status ?? null)}, not "submitted"`,
    },
  ];
}

/** Passed with no failure; else the first one's pointer, and every failure named when there are several. */
function verdict(failures: Failure[]): CheckVerdict {
  if (failures.length === 0) return { passed: true, json_pointer: null };
  const [first] = failures as [Failure, ...Failure[]];
  return {
    passed: false,
    json_pointer: first.pointer,
    expected: first.expected,
    actual: first.actual,
    error:
      failures.length === 1
        ? first.why
        : `${failures.length} A2A envelope invariants failed: ${failures.map((f) => `${f.pointer}: ${f.why}`).join('; ')}`,
  };
}
