import { describeObserved, observedAnswer } from './answer.js';
import type { ProbeOptions } from './probe.js';
import type { MatcherContext, MatcherResult } from './types.js';

export interface WwwAuthenticateOptions extends ProbeOptions {
  /** Auth scheme the header must offer, e.g. 'Bearer' or 'Basic' (case-insensitive). */
  scheme?: string;
}

/**
 * `await expect(agentUrl).toExposeWwwAuthenticate({ scheme: 'Bearer' })`: an
 * unauthenticated call gets a 401 with a `WWW-Authenticate` header (RFC 6750 §3;
 * security_baseline's `on_401_require_header`), offering `scheme` if given.
 * Over A2A with `{ protocol: 'a2a' }`. Given a recorded answer instead of a
 * URL (an exchange, an HTTP probe, a step record, `{ status, headers }`), judges that.
 */
export async function toExposeWwwAuthenticate(this: MatcherContext, received: unknown, options: WwwAuthenticateOptions = {}): Promise<MatcherResult> {
  const answer = await observedAnswer(received, options);
  const { status } = answer;
  const header = answer.headers['www-authenticate'];
  const offersScheme = options.scheme === undefined || (header !== undefined && new RegExp(`(^|[\\s,])${options.scheme.replace(/[^\w-]/g, '')}(\\s|$)`, 'i').test(header));
  const pass = status === 401 && header !== undefined && offersScheme;
  const hint = this.utils.matcherHint('toExposeWwwAuthenticate', answer.recorded ? 'answer' : 'agentUrl', 'options', { isNot: this.isNot, promise: this.promise });
  const expected = `401 with WWW-Authenticate${options.scheme ? ` offering ${options.scheme}` : ''}`;
  const received_ = status === 401 ? `401 with ${header === undefined ? 'no WWW-Authenticate header' : `WWW-Authenticate: ${header}`}` : describeObserved(answer);
  const subject = answer.subject.replace(/^an /, 'the ');
  return {
    pass,
    message: () =>
      pass
        ? `${hint}\n\nExpected ${subject} not to get ${this.utils.printExpected(expected)}\nReceived: ${this.utils.printReceived(received_)}`
        : `${hint}\n\nExpected ${subject} to get ${this.utils.printExpected(expected)}\nReceived: ${this.utils.printReceived(received_)}\n\nClients learn how to authenticate from this header (RFC 6750 §3, e.g. Bearer realm="<agent url>").`,
  };
}
