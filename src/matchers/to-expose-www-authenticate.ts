import { formatChallenge, parseWwwAuthenticate, type Challenge } from '../transport/www-authenticate.js';
import { describeObserved, judge } from './answer.js';
import type { ProbeOptions } from './probe.js';
import type { MatcherContext, MatcherResult } from './types.js';

/** auth-params a challenge must carry: a value to equal, a RegExp to match, or an asymmetric matcher. Names are case-insensitive. */
export type ChallengeParams = Record<string, unknown>;

export interface WwwAuthenticateOptions extends ProbeOptions {
  /** Auth scheme a challenge must offer, e.g. 'Bearer' or 'Basic' (case-insensitive). */
  scheme?: string;
  /** auth-params that challenge must carry, e.g. `{ error: 'invalid_token' }`. */
  params?: ChallengeParams;
}

/**
 * `expect(res).toExposeWwwAuthenticate('Bearer', { error: 'invalid_token' })`:
 * a 401 whose `WWW-Authenticate` header (RFC 9110 §11.6.1: several challenges,
 * quoted strings, auth-params, token68) has a challenge of that scheme
 * (case-insensitive) carrying those params (RFC 6750 §3; security_baseline's
 * `on_401_require_header`). Also takes an options object
 * (`{ scheme, params, task, protocol }`), the form the agent-URL call uses.
 */
export function toExposeWwwAuthenticate(
  this: MatcherContext,
  received: unknown,
  schemeOrOptions?: string | WwwAuthenticateOptions,
  params?: ChallengeParams,
  probe: ProbeOptions = {},
): MatcherResult | Promise<MatcherResult> {
  const optionsForm = schemeOrOptions !== null && typeof schemeOrOptions === 'object';
  const options: WwwAuthenticateOptions = optionsForm
    ? schemeOrOptions
    : {
        ...probe,
        ...(schemeOrOptions !== undefined ? { scheme: schemeOrOptions } : {}),
        ...(params ? { params } : {}),
      };
  return judge(received, options, (answer) => {
    const header = answer.headers['www-authenticate'];
    const parsed = header === undefined ? undefined : parseWwwAuthenticate(header);
    const wanted = Object.entries(options.params ?? {});
    const matches = (challenge: Challenge) =>
      (options.scheme === undefined || challenge.scheme.toLowerCase() === options.scheme.toLowerCase()) &&
      wanted.every(([name, expected]) => {
        const actual = challenge.params[name.toLowerCase()];
        if (actual === undefined) return false;
        return expected instanceof RegExp ? expected.test(actual) : this.equals(actual, expected);
      });
    const offered = parsed !== undefined && parsed.error === undefined && parsed.challenges.some(matches);
    const pass = answer.status === 401 && offered;
    const hint = this.utils.matcherHint(
      'toExposeWwwAuthenticate',
      answer.recorded ? 'answer' : 'agentUrl',
      optionsForm
        ? 'options'
        : ['scheme', 'params'].slice(0, params ? 2 : schemeOrOptions !== undefined ? 1 : 0).join(', '),
      {
        isNot: this.isNot,
        promise: this.promise,
      },
    );
    const paramsText = wanted
      .map(([name, value]) => `${name}=${describeParam(value, this.utils.stringify)}`)
      .join(', ');
    const expected = `401 with WWW-Authenticate${options.scheme ? ` offering ${options.scheme}` : ''}${paramsText ? ` with ${paramsText}` : ''}`;
    const receivedText =
      answer.status === 401
        ? `401 with ${header === undefined ? 'no WWW-Authenticate header' : `WWW-Authenticate: ${header}`}`
        : describeObserved(answer);
    const challenges = parsed?.challenges.length
      ? `\n\nChallenges offered:\n${parsed.challenges.map((c) => `  ${formatChallenge(c)}`).join('\n')}`
      : '';
    const syntax = parsed?.error ? `\n\nThe header does not follow RFC 9110 §11.6.1: ${parsed.error}` : '';
    const subject = answer.subject.replace(/^an /, 'the ');
    return {
      pass,
      message: () =>
        pass
          ? `${hint}\n\nExpected ${subject} not to get ${this.utils.printExpected(expected)}\nReceived: ${this.utils.printReceived(receivedText)}`
          : `${hint}\n\nExpected ${subject} to get ${this.utils.printExpected(expected)}\nReceived: ${this.utils.printReceived(receivedText)}${syntax}${answer.status === 401 && wanted.length ? challenges : ''}\n\nClients learn how to authenticate from this header (RFC 6750 §3, e.g. Bearer realm="<agent url>").`,
    };
  });
}

/**
 * An expected auth-param as the test wrote it: a string quoted, a RegExp as its literal, an asymmetric matcher with its
 * argument (`StringContaining "agent"`, the framework's own printing when it offers one).
 */
function describeParam(value: unknown, stringify?: (value: unknown) => string): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof RegExp) return String(value);
  if (stringify) return stringify(value);
  const asymmetric = value as { toAsymmetricMatcher?: () => string; sample?: unknown } | null;
  if (typeof asymmetric?.toAsymmetricMatcher === 'function') {
    const name = asymmetric.toAsymmetricMatcher();
    return 'sample' in asymmetric && !name.includes(' ')
      ? `${name} ${asymmetric.sample instanceof RegExp ? String(asymmetric.sample) : JSON.stringify(asymmetric.sample)}`
      : name;
  }
  return JSON.stringify(value) ?? String(value);
}
