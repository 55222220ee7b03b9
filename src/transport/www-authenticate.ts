/**
 * The `WWW-Authenticate` header, read as RFC 9110 §11.6.1 writes it: a list of
 * challenges, each an auth scheme followed by either a token68 or a list of
 * auth-params (`name=token` or `name="quoted string"`, with `\` escapes).
 * Header lines are one list (RFC 9110 §5.3). One parser for everything that
 * reads the header: the auth matchers and the request-signing probe
 * (signing/www-authenticate.ts).
 */

export interface Challenge {
  /** The auth scheme as the agent wrote it (compare case-insensitively, RFC 9110 §11.1). */
  scheme: string;
  /** auth-params; names lower-cased (they are case-insensitive), values unquoted and unescaped. */
  params: Record<string, string>;
  /** The token68 form (`Basic YWxhZGRpbjpvcGVu`), when the challenge has one instead of params. */
  token68?: string;
}

export interface ParsedWwwAuthenticate {
  /** The challenges read, in order — up to a syntax error, when there is one. */
  challenges: Challenge[];
  /** Where and why the header stops following the grammar. */
  error?: string;
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const TOKEN68_CHAR = /[A-Za-z0-9\-._~+/]/;

/** Parses one or several `WWW-Authenticate` values. Never throws: a syntax error comes back in `error`. */
export function parseWwwAuthenticate(header: string | readonly string[]): ParsedWwwAuthenticate {
  const text = typeof header === 'string' ? header : header.join(', ');
  const challenges: Challenge[] = [];
  let i = 0;
  const ows = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  // `#rule` lists allow empty elements: ", ," is nothing.
  const separators = () => {
    ows();
    while (text[i] === ',') {
      i++;
      ows();
    }
  };
  const token = () => {
    const start = i;
    while (i < text.length && TCHAR.test(text[i]!)) i++;
    return text.slice(start, i);
  };
  const quoted = (): string | undefined => {
    let out = '';
    for (i++; i < text.length; i++) {
      const ch = text[i]!;
      if (ch === '"') {
        i++;
        return out;
      }
      if (ch === '\\') {
        if (i + 1 >= text.length) return undefined;
        out += text[++i];
      } else out += ch;
    }
    return undefined;
  };
  /** token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=", alone up to the end of its challenge. */
  const token68 = (): string | undefined => {
    let j = i;
    while (j < text.length && TOKEN68_CHAR.test(text[j]!)) j++;
    if (j === i) return undefined;
    while (text[j] === '=') j++;
    let k = j;
    while (text[k] === ' ' || text[k] === '\t') k++;
    if (k < text.length && text[k] !== ',') return undefined; // `name=value`: an auth-param
    const value = text.slice(i, j);
    i = j;
    return value;
  };
  const fail = (why: string): ParsedWwwAuthenticate => ({
    challenges,
    error: `${why} at character ${i + 1} of ${JSON.stringify(text)}`,
  });

  /** The auth-params of a challenge, up to the next challenge's scheme: the failure at a syntax error, else undefined. */
  const authParams = (challenge: Challenge): ParsedWwwAuthenticate | undefined => {
    for (;;) {
      const name = token();
      if (!name) return fail('expected an auth-param name');
      ows();
      if (text[i] !== '=') return fail(`expected "=" after auth-param "${name}"`);
      i++;
      ows();
      const valueStart = i;
      const value = text[i] === '"' ? quoted() : token() || undefined;
      if (value === undefined) {
        i = valueStart;
        return fail(
          text[i] === '"'
            ? `unterminated quoted string for auth-param "${name}"`
            : text[i] === undefined
              ? `no value for auth-param "${name}"`
              : `expected a token or quoted string for auth-param "${name}"`,
        );
      }
      const key = name.toLowerCase();
      // RFC 9110 §11.2: "Each parameter name MUST only occur once per challenge."
      if (key in challenge.params) return fail(`auth-param "${name}" repeated in the ${challenge.scheme} challenge`);
      challenge.params[key] = value;
      ows();
      if (i >= text.length) return undefined;
      if (text[i] !== ',') return fail('expected "," after an auth-param');
      separators();
      if (i >= text.length) return undefined;
      // After a comma, `name =` continues this challenge's params; anything else is the next challenge's scheme.
      const mark = i;
      const next = token();
      ows();
      const isParam = next !== '' && text[i] === '=';
      i = mark;
      if (!isParam) return undefined;
    }
  };

  separators();
  while (i < text.length) {
    const scheme = token();
    if (!scheme) return fail('expected an auth scheme');
    const challenge: Challenge = { scheme, params: {} };
    challenges.push(challenge);
    const afterScheme = i;
    ows();
    if (i >= text.length || text[i] === ',') {
      separators();
      continue;
    }
    if (i === afterScheme) return fail(`expected a space after the auth scheme "${scheme}"`);
    const t68 = token68();
    if (t68 !== undefined) {
      challenge.token68 = t68;
      separators();
      continue;
    }
    const failed = authParams(challenge);
    if (failed) return failed;
  }
  return { challenges };
}

/** A challenge as a header would carry it: `Bearer realm="x", error="invalid_token"`. */
export function formatChallenge(challenge: Challenge): string {
  if (challenge.token68 !== undefined) return `${challenge.scheme} ${challenge.token68}`;
  const params = Object.entries(challenge.params).map(
    ([name, value]) => `${name}="${value.replace(/["\\]/g, '\\$&')}"`,
  );
  return params.length ? `${challenge.scheme} ${params.join(', ')}` : challenge.scheme;
}
