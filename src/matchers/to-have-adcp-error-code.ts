import { answerError, ERROR_CODE_LOCATIONS, findErrorCode } from '../model/answer-error.js';
import { describeObserved, exchangeOf, judge } from './answer.js';
import type { MatcherContext, MatcherResult } from './types.js';

/**
 * `expect(res).toHaveAdcpErrorCode('AUTH_REQUIRED')` (or a list of allowed
 * codes; omitted: any code): the answer carries an AdCP error with that code,
 * found wherever the storyboards' `error_code` check finds one
 * (model/answer-error.ts `findErrorCode`: `adcp_error.code` in structuredContent /
 * text content / JSON-RPC `error.data` / an A2A DataPart, `errors[0].code`, a
 * comply_test_controller answer's `error`, …).
 */
export function toHaveAdcpErrorCode(
  this: MatcherContext,
  received: unknown,
  code?: string | readonly string[],
): MatcherResult | Promise<MatcherResult> {
  const allowed = code === undefined ? undefined : typeof code === 'string' ? [code] : [...code];
  if (allowed?.some((c) => typeof c !== 'string' || c === ''))
    throw new TypeError(
      `toHaveAdcpErrorCode: the code must be a string such as 'AUTH_REQUIRED', or a list of them; received ${JSON.stringify(code)}`,
    );
  return judge(received, undefined, (answer) => {
    const exchange = exchangeOf(answer);
    const found = exchange ? findErrorCode(exchange) : undefined;
    const pass = found !== undefined && (allowed === undefined || allowed.includes(found.code));
    const hint = this.utils.matcherHint('toHaveAdcpErrorCode', 'answer', allowed === undefined ? '' : 'code', {
      isNot: this.isNot,
      promise: this.promise,
    });
    const expected = allowed === undefined ? 'an AdCP error code' : allowed.length === 1 ? allowed[0] : allowed;
    const where = found ? ` at ${found.location} (JSON Pointer ${found.pointer} of the task data)` : '';
    return {
      pass,
      message: () => {
        if (pass)
          return `${hint}\n\nExpected ${answer.subject} not to carry AdCP error code ${this.utils.printExpected(expected)}\nReceived: ${this.utils.printReceived(found!.code)}${where}`;
        const expectedLine = `Expected ${answer.subject} to carry AdCP error code ${allowed && allowed.length > 1 ? `one of ${allowed.map((c) => this.utils.printExpected(c)).join(', ')}` : this.utils.printExpected(expected)}`;
        if (found) return `${hint}\n\n${expectedLine}\nReceived: ${this.utils.printReceived(found.code)}${where}`;
        const what = exchange
          ? `extraction path "${exchange.extraction.path}", ${describeObserved(answer)}`
          : describeObserved(answer);
        // Whether it was an error at all is the runner's one rule (model/answer-error.ts): an error may carry no code.
        const failure = exchange ? answerError(exchange) : undefined;
        const received = failure
          ? `an error without an AdCP code (${failure.where}; ${what})`
          : `no AdCP error (${what})`;
        return `${hint}\n\n${expectedLine}\nReceived: ${received}; looked for ${ERROR_CODE_LOCATIONS}`;
      },
    };
  });
}
