/**
 * Endpoints of one fixture agent that see only their own test's calls: each gets a fresh `session_<key>` behaviour (its
 * sandbox, its call log entries), so tests sharing the agent never read each other's calls.
 */
import type { FixtureAgent, FixtureCall } from '../../fixtures/agent/server.mjs';

export interface SessionEndpoint {
  url: string;
  /** The calls this endpoint received (of one tool, when named), in order. */
  calls(tool?: string): FixtureCall[];
}

export function sessionEndpoints(
  agent: () => FixtureAgent,
  prefix: string,
): (behaviours?: string[]) => SessionEndpoint {
  let sessions = 0;
  return (behaviours = []) => {
    const session = `${prefix}${++sessions}`;
    return {
      url: agent().urlFor([...behaviours, `session_${session}`]),
      calls: (tool) => agent().calls.filter((c) => c.session === session && (tool === undefined || c.tool === tool)),
    };
  };
}
