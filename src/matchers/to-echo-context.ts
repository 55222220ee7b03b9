import { contextOf, judgeContextEcho } from '../engine/invariants.js';
import { describeObserved, judge } from './answer.js';
import type { MatcherContext, MatcherResult } from './types.js';

/**
 * `expect(res).toEchoContext({ correlation_id: 'c-1' })`: the answer's
 * `context` is the one sent, verbatim; when none was sent, the answer carries
 * none (an agent never invents one) — the engine's `context.echo` invariant
 * (engine/invariants.ts). Without an argument, the context of the request the
 * received record carries (a client response, a step result).
 */
export function toEchoContext(
  this: MatcherContext,
  received: unknown,
  ...args: [sent?: unknown]
): MatcherResult | Promise<MatcherResult> {
  return judge(received, undefined, (answer) => {
    // An explicit `toEchoContext(undefined)` means "none was sent", like omitting it on a record without a request.
    const sent = args.length > 0 ? args[0] : contextOf(answer.request?.payload);
    const hint = this.utils.matcherHint('toEchoContext', 'answer', args.length > 0 ? 'sent' : '', {
      isNot: this.isNot,
      promise: this.promise,
    });
    const data = answer.taskData?.data;
    if (data === undefined) {
      return {
        pass: false,
        message: () =>
          `${hint}\n\nExpected ${answer.subject} to ${sent === undefined ? 'carry no invented context' : 'echo the context sent'}, but it has no task answer: ${this.utils.printReceived(describeObserved(answer))}`,
      };
    }
    const got = contextOf(data);
    const verdict = judgeContextEcho(sent, got);
    const pass = verdict === undefined || verdict.passed;
    return {
      pass,
      actual: got,
      expected: sent,
      message: () => {
        if (pass) {
          return sent === undefined
            ? `${hint}\n\nExpected ${answer.subject} to carry a context, but none was sent and none came back`
            : `${hint}\n\nExpected ${answer.subject} not to echo ${this.utils.printExpected(sent)}, but it echoed it verbatim`;
        }
        if (sent === undefined)
          return `${hint}\n\nExpected ${answer.subject} to carry no context: none was sent, and an agent never invents one\nReceived context: ${this.utils.printReceived(got)}`;
        if (got === undefined || got === null)
          return `${hint}\n\nExpected ${answer.subject} to echo the context verbatim: ${this.utils.printExpected(sent)}\nReceived: ${this.utils.printReceived(got === null ? null : 'no context')}`;
        return `${hint}\n\nExpected ${answer.subject} to echo the context verbatim\n\n${this.utils.diff(sent, got) ?? `Expected: ${this.utils.printExpected(sent)}\nReceived: ${this.utils.printReceived(got)}`}`;
      },
    };
  });
}
