import { describeAnswer, probeUnauthenticated, type ProbeOptions } from './probe.js';
import type { MatcherContext, MatcherResult } from './types.js';

/**
 * `await expect(agentUrl).toRejectUnauthenticated({ task })`: a call without
 * credentials is refused with HTTP 401 or 403 (security_baseline's
 * unauthenticated probe: `http_status_in [401, 403]`).
 */
export async function toRejectUnauthenticated(this: MatcherContext, received: unknown, options: ProbeOptions = {}): Promise<MatcherResult> {
  const { task, exchange } = await probeUnauthenticated(received, options);
  const status = exchange.response?.status;
  const pass = status === 401 || status === 403;
  const hint = this.utils.matcherHint('toRejectUnauthenticated', 'agentUrl', 'options', { isNot: this.isNot, promise: this.promise });
  return {
    pass,
    message: () =>
      pass
        ? `${hint}\n\nExpected the agent to serve an unauthenticated ${task} call, but it refused it: ${this.utils.printReceived(describeAnswer(exchange))}`
        : `${hint}\n\nExpected an unauthenticated ${task} call to be refused with ${this.utils.printExpected('HTTP 401 or 403')}\nReceived: ${this.utils.printReceived(describeAnswer(exchange))}\n\nAn agent that answers protected tasks without credentials is not checking them.`,
  };
}
