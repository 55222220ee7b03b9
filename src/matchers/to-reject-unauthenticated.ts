import { describeObserved, judge } from './answer.js';
import type { ProbeOptions } from './probe.js';
import type { MatcherContext, MatcherResult } from './types.js';

export interface RejectUnauthenticatedOptions extends ProbeOptions {
  /**
   * Also count HTTP 400 as a refusal. security.yaml allows it for a malformed or bogus credential (the agent
   * enforces a key format; a parse-time token rejection — RFC 6750 §3.1 `invalid_request`), never for a call
   * without credentials, so leave it off for those.
   * @default false
   */
  allowBadRequest?: boolean;
}

/**
 * `expect(res).toRejectUnauthenticated()`: the call was refused for its
 * credentials, with HTTP 401 or 403 (security_baseline's unauthenticated
 * probe: `http_status_in [401, 403]`). 2xx, 5xx, timeouts and answers without
 * an HTTP status fail. Given the agent's URL, it makes that call itself
 * (without credentials; await it).
 */
export function toRejectUnauthenticated(
  this: MatcherContext,
  received: unknown,
  options: RejectUnauthenticatedOptions = {},
): MatcherResult | Promise<MatcherResult> {
  return judge(received, options, (answer) => {
    const allowed = options.allowBadRequest ? [400, 401, 403] : [401, 403];
    const pass = answer.status !== undefined && allowed.includes(answer.status);
    const hint = this.utils.matcherHint('toRejectUnauthenticated', answer.recorded ? 'answer' : 'agentUrl', 'options', {
      isNot: this.isNot,
      promise: this.promise,
    });
    const what = describeObserved(answer);
    const expected = options.allowBadRequest ? 'HTTP 400, 401 or 403' : 'HTTP 401 or 403';
    const served = answer.status !== undefined && answer.status >= 200 && answer.status < 300 && !answer.unknownTask;
    return {
      pass,
      message: () =>
        pass
          ? answer.recorded
            ? `${hint}\n\nExpected ${answer.subject} not to be a refusal, but it was: ${this.utils.printReceived(what)}`
            : `${hint}\n\nExpected the agent to serve ${answer.subject}, but it refused it: ${this.utils.printReceived(what)}`
          : `${hint}\n\nExpected ${answer.subject} to be refused with ${this.utils.printExpected(expected)}\nReceived: ${this.utils.printReceived(what)}${served ? '\n\nAn agent that answers protected tasks without credentials is not checking them.' : ''}`,
    };
  });
}
