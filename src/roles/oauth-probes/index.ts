/**
 * The OAuth-probes role (universal/security.yaml > oauth_discovery): the runner's own RFC 9728 / RFC 8414 GETs
 * (probes.ts), graded as the agent's answers are; a phase whose protected-resource metadata is absent is not applicable
 * from there on. Wholly in this folder: the engine knows it only through the role interface (engine/role.ts).
 */
import type { RoleRun, RoleSession, RunnerRole } from '../../engine/role.js';
import { PROBE_TASKS } from '../../transport/probe.js';
import { OAuthProbes } from './probes.js';

export const oauthProbesRole: RunnerRole = {
  name: 'oauth-probes',
  tasks: PROBE_TASKS,
  open: (run) => oauthSession(run),
};

function oauthSession(run: RoleRun): RoleSession {
  let probes: OAuthProbes | undefined;
  // Created on first use: the agent's URL is known once the transport is.
  const opened = () =>
    (probes ??= new OAuthProbes({
      agentUrl: run.transport().url,
      timeoutMs: run.settings.timeoutMs,
      maxResponseBytes: run.settings.maxResponseBytes ?? 10 * 1024 * 1024,
      guard: run.settings.urlGuard,
    }));
  return {
    gate: ({ phase }) => opened().skipFor(phase),
    run: async ({ task, phase }, result) => {
      const outcome = await opened().run(task, phase);
      if ('error' in outcome) return { result: { ...result, error: outcome.error } };
      if ('skip' in outcome) {
        const exchange = outcome.exchange;
        return {
          skip: outcome.skip,
          ...(exchange ? { record: { request: exchange.request, response: exchange.response } } : {}),
        };
      }
      return { exchange: outcome.exchange };
    },
  };
}
