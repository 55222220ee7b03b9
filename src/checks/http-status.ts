import type { Exchange } from '../model/exchange.js';
import type { Check } from './types.js';

/**
 * The HTTP-level checks, graded from the status and headers observed on the
 * agent's answer to the step's own call (the MCP POST, or an HTTP rejection
 * before MCP): `http_status` (exactly `value`), `http_status_in`
 * (`allowed_values`) and `on_401_require_header` (a 401 carries the header
 * named by `value`; any other status passes — the rule is about 401s).
 */
function observedStatus(exchange: Exchange): number | undefined {
  return exchange.response?.status;
}

const noStatus = (expected: unknown) => ({
  passed: false,
  json_pointer: null,
  expected,
  actual: null,
  error: 'no HTTP status was observed for this call (the agent did not answer over HTTP)',
});

export const httpStatus: Check = ({ validation, exchange }) => {
  const status = observedStatus(exchange);
  if (status === undefined) return noStatus(validation.value);
  const passed = status === Number(validation.value);
  return passed
    ? { passed, json_pointer: null }
    : {
        passed,
        json_pointer: null,
        expected: validation.value,
        actual: status,
        error: `HTTP status ${status}, expected ${validation.value}`,
      };
};

export const httpStatusIn: Check = ({ validation, exchange }) => {
  const allowed = (Array.isArray(validation.allowed_values) ? validation.allowed_values : []).map(Number);
  const status = observedStatus(exchange);
  if (status === undefined) return noStatus(validation.allowed_values ?? []);
  const passed = allowed.includes(status);
  return passed
    ? { passed, json_pointer: null }
    : {
        passed,
        json_pointer: null,
        expected: validation.allowed_values ?? [],
        actual: status,
        error: `HTTP status ${status} is not one of ${allowed.join(', ')}`,
      };
};

export const on401RequireHeader: Check = ({ validation, exchange }) => {
  const status = observedStatus(exchange);
  const header = String(validation.value ?? 'www-authenticate').toLowerCase();
  if (status !== 401) return { passed: true, json_pointer: null };
  const headers = exchange.response?.headers ?? {};
  const present = Object.entries(headers).some(
    ([name, value]) => name.toLowerCase() === header && String(value).length > 0,
  );
  return present
    ? { passed: true, json_pointer: null }
    : {
        passed: false,
        json_pointer: null,
        expected: header,
        actual: null,
        error: `the 401 answer has no ${header} header`,
      };
};

/**
 * `resource_equals_agent_url`: the protected-resource metadata's `resource`
 * names the agent's endpoint (RFC 9728 §3.3), compared after URL
 * normalisation (scheme and host case, default port, trailing slash).
 */
export const resourceEqualsAgentUrl: Check = ({ exchange, agentUrl }) => {
  const resource = (exchange.data as { resource?: unknown } | undefined)?.resource;
  if (typeof resource !== 'string') {
    return {
      passed: false,
      json_pointer: '/resource',
      expected: agentUrl ?? null,
      actual: resource ?? null,
      error: 'the metadata has no "resource" string',
    };
  }
  const passed = agentUrl !== undefined && sameUrl(resource, agentUrl);
  return passed
    ? { passed, json_pointer: '/resource' }
    : {
        passed,
        json_pointer: '/resource',
        expected: agentUrl ?? null,
        actual: resource,
        error: `"resource" ${resource} is not the agent URL ${agentUrl}`,
      };
};

function sameUrl(a: string, b: string): boolean {
  const normalise = (value: string) => {
    try {
      const url = new URL(value);
      return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${url.search}`;
    } catch {
      return value.trim().replace(/\/+$/, '');
    }
  };
  return normalise(a) === normalise(b);
}
