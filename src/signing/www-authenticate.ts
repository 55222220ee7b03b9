/**
 * The one place a verifier's error code travels on the wire: a 401's
 * `WWW-Authenticate: Signature error="<code>"` (security.mdx, transport error
 * taxonomy). Writing it for our webhook receiver, reading it from an agent's
 * answer to a signed-requests vector.
 */

/** The challenge a verifier sends with a 401: no realm, no other parameters, as the profile requires. */
export function signatureChallenge(code: string): string {
  return `Signature error="${code}"`;
}

type Lexeme = { kind: 'token' | 'quoted'; text: string } | { kind: ',' | '=' };

/** RFC 9110 §11.6.1 challenge syntax, reduced to what locating one parameter needs. */
function lex(header: string): Lexeme[] {
  const lexemes: Lexeme[] = [];
  for (let i = 0; i < header.length; ) {
    const ch = header[i]!;
    if (/\s/.test(ch)) i++;
    else if (ch === ',' || ch === '=') {
      lexemes.push({ kind: ch });
      i++;
    } else if (ch === '"') {
      let text = '';
      for (i++; i < header.length && header[i] !== '"'; i++) text += header[i] === '\\' ? header[++i] ?? '' : header[i];
      lexemes.push({ kind: 'quoted', text });
      i++;
    } else {
      const end = header.slice(i).search(/[\s,="]/);
      const text = end < 0 ? header.slice(i) : header.slice(i, i + end);
      lexemes.push({ kind: 'token', text });
      i += text.length;
    }
  }
  return lexemes;
}

/**
 * The `error` parameter of the `Signature` challenge in a `WWW-Authenticate`
 * value (or values), or `undefined` when there is none. Other challenges
 * (`Bearer realm=…`) and other parameters are tolerated, as RFC 7235 asks.
 */
export function signatureErrorCode(header: string | readonly string[] | null | undefined): string | undefined {
  if (header === null || header === undefined) return undefined;
  const lexemes = lex(typeof header === 'string' ? header : header.join(', '));
  let scheme: string | undefined;
  for (let i = 0; i < lexemes.length; i++) {
    const at = lexemes[i]!;
    const isParameter = at.kind === 'token' && lexemes[i + 1]?.kind === '=' && ['token', 'quoted'].includes(lexemes[i + 2]?.kind ?? '');
    if (isParameter && scheme !== undefined) {
      const value = lexemes[i + 2] as { text: string };
      if (scheme === 'signature' && at.text.toLowerCase() === 'error') return value.text;
      i += 2;
    } else if (at.kind === 'token' && (i === 0 || lexemes[i - 1]?.kind === ',')) {
      // A token that starts a list element and is not a parameter names the next challenge's scheme.
      scheme = at.text.toLowerCase();
    }
  }
  return undefined;
}
