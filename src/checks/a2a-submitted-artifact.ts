import { finalDataPart, normalizeA2aState, unwrapStreamResponse } from '../transport/a2a.js';
import type { Check } from './types.js';

interface Failure {
  pointer: string;
  expected: unknown;
  actual: unknown;
  why: string;
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
  const task = unwrapStreamResponse(exchange.response?.payload) as Record<string, any> | undefined;
  if (
    !task ||
    typeof task !== 'object' ||
    Array.isArray(task) ||
    (task.kind !== undefined && task.kind !== 'task') ||
    task.status === undefined
  ) {
    return {
      passed: false,
      json_pointer: null,
      expected: 'an A2A Task (JSON-RPC result)',
      actual: task && typeof task === 'object' && !Array.isArray(task) ? { kind: task.kind ?? null } : (task ?? null),
      error: 'the answer is not an A2A Task, so there is no submitted-arm envelope to check',
    };
  }
  const failures: Failure[] = [];
  for (const key of ['id', 'contextId'] as const) {
    if (typeof task[key] !== 'string' || task[key].length === 0) {
      failures.push({
        pointer: `/${key}`,
        expected: 'a non-empty string',
        actual: task[key] ?? null,
        why: `Task.${key} is not a non-empty string`,
      });
    }
  }
  const rawState = task.status?.state;
  if (normalizeA2aState(rawState) !== 'completed') {
    failures.push({
      pointer: '/status/state',
      expected: 'completed',
      actual: rawState ?? null,
      why: `Task.state is ${JSON.stringify(rawState ?? null)}: a submitted AdCP arm completes the A2A call (the AdCP task, not the A2A one, is submitted)`,
    });
  }
  const part = finalDataPart(task);
  if (!part) {
    failures.push({
      pointer: '/artifacts/0/parts',
      expected: 'a DataPart carrying the AdCP response',
      actual: task.artifacts?.[0]?.parts ?? null,
      why: 'no DataPart carries the AdCP response',
    });
  } else if (part.data.status !== 'submitted') {
    failures.push({
      pointer: `${part.pointer}/status`,
      expected: 'submitted',
      actual: part.data.status ?? null,
      why: `the AdCP payload's status is ${JSON.stringify(part.data.status ?? null)}, not "submitted"`,
    });
  }
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
};
