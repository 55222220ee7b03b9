import { describe, expect, it } from 'vitest';
import { CredentialResolver, CredentialsError } from '../../src/engine/credentials.js';

const kit = {
  auth: { api_key: 'kit-api-key-123', basic: { username: 'u', password: 'kit-basic-pw' } },
  other: { token: 42 },
  nulled: null,
  bad_basic: { username: 'u' },
  no_user: { password: 'p' },
};

describe('credentials', () => {
  it('no auth: the operator token, else the kit api key, else nothing; auth none sends nothing', () => {
    expect(new CredentialResolver({ defaultToken: 'op-token', testKit: kit }).resolve(undefined)).toEqual({
      kind: 'bearer',
      token: 'op-token',
    });
    expect(new CredentialResolver({ testKit: kit }).resolve(undefined)).toEqual({
      kind: 'bearer',
      token: 'kit-api-key-123',
    });
    expect(new CredentialResolver({}).resolve(undefined)).toEqual({ kind: 'none' });
    expect(new CredentialResolver({ testKit: {} }).resolve(undefined)).toEqual({ kind: 'none' });
    expect(new CredentialResolver({ defaultToken: '' }).resolve(undefined)).toEqual({ kind: 'none' });
    expect(new CredentialResolver({ defaultToken: 'op-token' }).resolve('none')).toEqual({ kind: 'none' });
    expect(new CredentialResolver({ defaultToken: 'op-token' }).resolve({ type: 'api_key' })).toEqual({
      kind: 'bearer',
      token: 'op-token',
    });
    expect(
      new CredentialResolver({ defaultToken: 'op-token' }).resolve({ type: 'api_key', from_test_kit: false }),
    ).toEqual({ kind: 'bearer', token: 'op-token' });
  });

  it('from_test_kit: true reads auth.api_key (auth.basic for basic); a string is a path', () => {
    const r = new CredentialResolver({ defaultToken: 'op-token', testKit: kit });
    expect(r.resolve({ type: 'api_key', from_test_kit: true })).toEqual({ kind: 'bearer', token: 'kit-api-key-123' });
    expect(r.resolve({ type: 'basic', from_test_kit: true })).toEqual({
      kind: 'basic',
      username: 'u',
      password: 'kit-basic-pw',
    });
    expect(r.resolve({ type: 'oauth_bearer', from_test_kit: 'other.token' })).toEqual({ kind: 'bearer', token: '42' });
    expect(() => r.resolve({ type: 'api_key', from_test_kit: 'nulled' })).toThrow(CredentialsError);
    expect(() => r.resolve({ type: 'api_key', from_test_kit: 'missing.key' })).toThrow(
      'the step asks for credentials at "missing.key" in the test kit, but the test kit has none there',
    );
    expect(() => r.resolve({ type: 'basic', from_test_kit: 'bad_basic' })).toThrow(
      'test kit "bad_basic" must be { username, password } for HTTP Basic',
    );
    expect(() => r.resolve({ type: 'basic', from_test_kit: 'other.token' })).toThrow(CredentialsError);
    expect(() => r.resolve({ type: 'basic', from_test_kit: 'no_user' })).toThrow(
      'test kit "no_user" must be { username, password } for HTTP Basic',
    );
    expect(() => r.resolve({ type: 'api_key', from_test_kit: 'nulled' })).toThrow(
      expect.objectContaining({ name: 'CredentialsError' }),
    );
  });

  it('random invalid credentials: one per run, never the real ones, basic or bearer by type', () => {
    const r = new CredentialResolver({ defaultToken: 'op-token', testKit: kit });
    const key = r.resolve({ type: 'api_key', value_strategy: 'random_invalid' });
    expect(key).toEqual({ kind: 'bearer', token: expect.stringMatching(/^invalid-[0-9a-f]{64}$/) });
    expect(r.resolve({ type: 'api_key', value_strategy: 'random_invalid', from_test_kit: true })).toEqual(key);
    const basic = r.resolve({ type: 'basic', value_strategy: 'random_invalid' });
    expect(basic).toEqual({
      kind: 'basic',
      username: expect.stringMatching(/^invalid-[0-9a-f]{16}$/),
      password: expect.stringMatching(/^[0-9a-f]{48}$/),
    });
    const jwt = r.resolve({ type: 'oauth_bearer', value_strategy: 'random_invalid_jwt' });
    expect(jwt).toEqual({ kind: 'bearer', token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]{342}$/) });
    expect(r.resolve({ type: 'oauth_bearer', value_strategy: 'random_invalid_jwt' })).toEqual(jwt);
    const other = new CredentialResolver({ defaultToken: 'op-token' });
    expect(other.resolve({ type: 'api_key', value_strategy: 'random_invalid' })).not.toEqual(key);
  });

  it('secrets: every credential the run may send, none empty', () => {
    const r = new CredentialResolver({ defaultToken: 'op-token', testKit: kit });
    const key = (r.resolve({ type: 'api_key', value_strategy: 'random_invalid' }) as { token: string }).token;
    const jwt = (r.resolve({ type: 'api_key', value_strategy: 'random_invalid_jwt' }) as { token: string }).token;
    const basic = r.resolve({ type: 'basic', value_strategy: 'random_invalid' }) as {
      username: string;
      password: string;
    };
    // A Basic credential also as it goes on the wire: base64(user:pass), and the whole header value.
    const b64 = (user: string, pass: string) => Buffer.from(`${user}:${pass}`).toString('base64');
    const kitB64 = b64(kit.auth!.basic!.username!, 'kit-basic-pw');
    const randomB64 = b64(basic.username, basic.password);
    expect(r.secrets()).toEqual([
      'op-token',
      'kit-api-key-123',
      'kit-basic-pw',
      `Basic ${kitB64}`,
      kitB64,
      `Basic ${randomB64}`,
      randomB64,
      key,
      jwt,
      jwt.split('.')[2],
      basic.password,
    ]);
    const bare = new CredentialResolver({ defaultToken: '', testKit: { auth: { api_key: '' } } });
    // Only the run's random invalid credentials: the key, the JWT and its signature, the Basic password, header and base64.
    expect(bare.secrets()).toHaveLength(6);
  });
});

describe('random_invalid_jwt (security.yaml > probe_invalid_oauth_token)', () => {
  const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));

  it('is a JWT a parser accepts: RS256 header, { sub: invalid, aud: the agent URL }, a random 256-byte signature', () => {
    // eslint-disable-next-line prefer-const -- assigned after the resolver exists: the audience is read when a token is made
    let agentUrl: string | undefined;
    const r = new CredentialResolver({ audience: () => agentUrl });
    agentUrl = 'https://agent.example/mcp';
    const { token } = r.resolve({ type: 'oauth_bearer', value_strategy: 'random_invalid_jwt' }) as { token: string };
    const [header, payload, signature] = token.split('.');
    expect(decode(header!)).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(decode(payload!)).toEqual({ sub: 'invalid', aud: 'https://agent.example/mcp' });
    expect(Buffer.from(signature!, 'base64url')).toHaveLength(256);
    expect(r.secrets()).toContain(token);
  });

  it('is fresh per run, and has no aud before the agent URL is known', () => {
    const [a, b] = [new CredentialResolver({}), new CredentialResolver({})].map(
      (r) => (r.resolve({ type: 'oauth_bearer', value_strategy: 'random_invalid_jwt' }) as { token: string }).token,
    );
    expect(a).not.toBe(b);
    expect(decode(a!.split('.')[1]!)).toEqual({ sub: 'invalid' });
  });
});

describe('secrets a run may send', () => {
  it('include every secret-named value under the kit auth, at any depth, and what from_test_kit actually sent', () => {
    const principals = {
      auth: {
        type: 'api_key',
        principals: {
          alice: { api_key: 'alice-key-0001', name: 'Alice' },
          bob: { credentials: { password: 'bob-pw-0002' } },
        },
        extra: { handle: 'handle-0003' },
      },
    };
    const r = new CredentialResolver({ defaultToken: 'op-token', testKit: principals as never });
    const before = r.secrets();
    expect(before).toEqual(expect.arrayContaining(['op-token', 'alice-key-0001', 'bob-pw-0002']));
    // Not secret-named: neither the auth type nor a display name.
    expect(before).not.toContain('api_key');
    expect(before).not.toContain('Alice');
    expect(before).not.toContain('handle-0003');
    r.resolve({ type: 'api_key', from_test_kit: 'auth.extra.handle' });
    expect(r.secrets()).toContain('handle-0003');
    expect(new Set(r.secrets()).size).toBe(r.secrets().length);
  });
});
