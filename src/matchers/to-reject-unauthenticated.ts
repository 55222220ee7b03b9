import { describeObserved, observedAnswer } from './answer.js';
import type { ProbeOptions } from './probe.js';
import type { MatcherContext, MatcherResult } from './types.js';

/**
 * `await expect(agentUrl).toRejectUnauthenticated({ task })`: a call without
 * credentials is refused with HTTP 401 or 403 (security_baseline's
 * unauthenticated probe: `http_status_in [401, 403]`). Over A2A with
 * `{ protocol: 'a2a' }`. Given a recorded answer instead of a URL (an
 * exchange, an HTTP probe, a step record, `{ status, headers }`), judges that.
 */
export async function toRejectUnauthenticated(this: MatcherContext, received: unknown, options: ProbeOptions = {}): Promise<MatcherResult> {
  const answer = await observedAnswer(received, options);
  const pass = answer.status === 401 || answer.status === 403;
  const hint = this.utils.matcherHint('toRejectUnauthenticated', answer.recorded ? 'answer' : 'agentUrl', 'options', { isNot: this.isNot, promise: this.promise });
  const what = describeObserved(answer);
  return {
    pass,
    message: () =>
      pass
        ? answer.recorded
          ? `${hint}\n\nExpected ${answer.subject} not to be a refusal, but it was: ${this.utils.printReceived(what)}`
          : `${hint}\n\nExpected the agent to serve ${answer.subject}, but it refused it: ${this.utils.printReceived(what)}`
        : `${hint}\n\nExpected ${answer.subject} to be refused with ${this.utils.printExpected('HTTP 401 or 403')}\nReceived: ${this.utils.printReceived(what)}${answer.unknownTask ? '' : '\n\nAn agent that answers protected tasks without credentials is not checking them.'}`,
  };
}
