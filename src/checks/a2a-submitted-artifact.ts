import type { Check } from './types.js';

/**
 * `a2a_submitted_artifact` (storyboard-schema.yaml > "A2A wire-shape"): the A2A
 * envelope invariants of a `submitted` answer. It "grades `not_applicable` on
 * non-A2A transports", so over MCP it passes with `not_applicable` set — the
 * report shows it was not applied rather than silently passed. The A2A side
 * lands with the A2A transport.
 */
export const a2aSubmittedArtifact: Check = ({ exchange }) => {
  if (exchange.request.transport !== 'a2a') {
    return { passed: true, json_pointer: null, not_applicable: `the agent was reached over ${exchange.request.transport}, not A2A` };
  }
  return {
    passed: false,
    json_pointer: null,
    expected: 'an A2A Task envelope',
    actual: null,
    error: 'a2a_submitted_artifact is not graded by this version of vitest-adcp over A2A yet',
  };
};
