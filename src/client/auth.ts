import type { Credentials } from '../transport/types.js';

/**
 * Credentials for a call, as a hand-written test says them:
 * - `'none'`: no `Authorization` header (an unauthenticated probe);
 * - a string: a Bearer token (an API key or an OAuth access token);
 * - `{ basic: { username, password } }` or `{ basic: 'username:password' }`: HTTP Basic.
 */
export type AdcpAuth = 'none' | string | { basic: { username: string; password: string } | string };

/** The transport's credentials for an `auth` value; a value that cannot be one is a TypeError saying what is accepted. */
export function credentialsFor(auth: AdcpAuth | undefined, where: string): Credentials {
  if (auth === undefined || auth === 'none') return { kind: 'none' };
  if (typeof auth === 'string') {
    if (auth.trim() === '')
      throw new TypeError(
        `${where}: the auth token is empty; pass a token, { basic: … }, or 'none' for no credentials`,
      );
    return { kind: 'bearer', token: auth };
  }
  const basic = auth !== null && typeof auth === 'object' ? (auth as { basic?: unknown }).basic : undefined;
  if (typeof basic === 'string') {
    const colon = basic.indexOf(':');
    if (colon < 0) throw new TypeError(`${where}: { basic: '…' } must be 'username:password'`);
    return { kind: 'basic', username: basic.slice(0, colon), password: basic.slice(colon + 1) };
  }
  const pair = basic !== null && typeof basic === 'object' ? (basic as { username?: unknown; password?: unknown }) : {};
  if (typeof pair.username === 'string' && typeof pair.password === 'string') {
    return { kind: 'basic', username: pair.username, password: pair.password };
  }
  throw new TypeError(
    `${where}: auth must be 'none', a Bearer token string, or { basic: { username, password } } (or { basic: 'username:password' })`,
  );
}
