import { toJsonPointer } from '../engine/path.js';
import type { Check, Exchange } from './types.js';

export interface FoundErrorCode {
  code: string;
  /** Where it was found, as a JSON Pointer into the extracted task data. */
  pointer: string;
  location: string;
}

function codeAt(value: unknown, keys: readonly (string | number)[]): string | undefined {
  let current: any = value;
  for (const key of keys) {
    if (current === null || typeof current !== 'object') return undefined;
    current = current[key];
  }
  return typeof current === 'string' && current.length > 0 ? current : undefined;
}

/** Where `findErrorCode` looks, in words: for messages that say where no code was found. */
export const ERROR_CODE_LOCATIONS = 'adcp_error.code in structuredContent, text content, JSON-RPC error.data, and errors[0].code';

/**
 * Finds the AdCP error code wherever a transport binding may carry it, in the
 * client detection order of storyboard-schema.yaml > "Error-shape validation":
 * `adcp_error.code` (MCP structuredContent / A2A DataPart / text-fallback JSON,
 * i.e. the extracted data), JSON-RPC `error.data.adcp_error.code`, then
 * `errors[0].code` top-level or under `payload`.
 */
export function findErrorCode(exchange: Pick<Exchange, 'data'>): FoundErrorCode | undefined {
  // Pointers are relative to the extracted task data (structuredContent, the
  // parsed text content, or the JSON-RPC error's data), like every other check;
  // `extraction.path` and its note say which one that was.
  const candidates: { keys: (string | number)[]; location: string }[] = [
    { keys: ['adcp_error', 'code'], location: 'adcp_error.code' },
    { keys: ['errors', 0, 'code'], location: 'errors[0].code' },
    { keys: ['payload', 'errors', 0, 'code'], location: 'payload.errors[0].code' },
    { keys: ['payload', 'adcp_error', 'code'], location: 'payload.adcp_error.code' },
  ];
  for (const candidate of candidates) {
    const code = codeAt(exchange.data, candidate.keys);
    if (code) return { code, pointer: toJsonPointer(candidate.keys), location: candidate.location };
  }
  // comply_test_controller's own error shape (compliance/comply-test-controller-response: ControllerError):
  // `{ success: false, error: "<CODE>", error_detail }`.
  const data = exchange.data as { success?: unknown; error?: unknown } | undefined;
  if (data?.success === false && typeof data.error === 'string' && /^[A-Z][A-Z0-9_]{2,}$/.test(data.error)) {
    return { code: data.error, pointer: '/error', location: 'error (controller error)' };
  }
  return undefined;
}

/** `error_code`: the agent answered with an AdCP error whose code is `value` or one of `allowed_values`. */
export const errorCode: Check = ({ validation, exchange }) => {
  const allowed = Array.isArray(validation.allowed_values)
    ? validation.allowed_values.map(String)
    : validation.value !== undefined
      ? [String(validation.value)]
      : undefined;
  const expected = Array.isArray(validation.allowed_values) ? validation.allowed_values : validation.value;
  const found = findErrorCode(exchange);
  if (!found) {
    return {
      passed: false,
      json_pointer: null,
      expected: expected ?? 'an AdCP error code',
      actual: null,
      error: `the agent did not return an AdCP error (looked for ${ERROR_CODE_LOCATIONS})`,
    };
  }
  const passed = allowed === undefined || allowed.includes(found.code);
  return passed
    ? { passed, json_pointer: found.pointer }
    : { passed, json_pointer: found.pointer, expected, actual: found.code, error: `error code "${found.code}" (at ${found.location}) is not the one expected` };
};
