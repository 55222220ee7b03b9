/**
 * Resolving a step's `auth:` (storyboard-schema.yaml > Step > auth) into the
 * credentials one call carries. Random invalid credentials are generated once
 * per run, as the spec asks ("a per-run random bogus API key").
 */
import { randomBytes } from 'node:crypto';
import type { StepAuth, TestKit } from '../model/storyboard.js';
import type { Credentials } from '../transport/types.js';
import { basicAuthForms, REDACTED_KEY_PATTERN } from '../model/redact.js';
import { resolvePath } from '../model/path.js';

export class CredentialsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialsError';
  }
}

export interface RunCredentials {
  /** The operator's token (option `auth.token` / ADCP_AUTH_TOKEN), sent as a Bearer by default. */
  defaultToken?: string;
  testKit?: TestKit;
  /** The agent URL, the `aud` of the random invalid JWT (read when the JWT is sent: the transport opens lazily). */
  audience?: () => string | undefined;
}

const base64url = (bytes: number) => randomBytes(bytes).toString('base64url');

export class CredentialResolver {
  private readonly randomApiKey = `invalid-${randomBytes(32).toString('hex')}`;
  /** security.yaml > probe_invalid_oauth_token: a JWT parsers accept, whose signature (random, RS256-sized) cannot verify. */
  private readonly randomJwtSignature = base64url(256);
  private readonly randomBasic = {
    username: `invalid-${randomBytes(8).toString('hex')}`,
    password: randomBytes(24).toString('hex'),
  };

  constructor(private readonly run: RunCredentials) {}

  /**
   * Every secret this run may send, in the form it goes on the wire too, so messages and reports can scrub them: the
   * operator's token, the test kit's secret values, and for HTTP Basic the `base64(username:password)` we build and its
   * whole `Basic …` header value (the plain password alone does not match an echoed header). The other spellings an
   * output can carry (JSON- and URL-escaped, `\u`-escaped) are added where they are scrubbed (model/redact.ts
   * `secretForms`).
   */
  secrets(): string[] {
    const basic = [...basicPairs(this.run.testKit?.auth), this.randomBasic].flatMap(({ username, password }) =>
      basicAuthForms(username, password),
    );
    const candidates = [
      this.run.defaultToken,
      ...secretLeaves(this.run.testKit?.auth),
      ...this.resolved,
      ...basic,
      this.randomApiKey,
      this.randomJwt(),
      this.randomJwtSignature,
      this.randomBasic.password,
    ];
    return [...new Set(candidates.filter((s): s is string => typeof s === 'string' && s.length > 0))];
  }

  /** Test-kit values a step's `from_test_kit` sent, wherever in the kit they live. */
  private readonly resolved = new Set<string>();

  resolve(auth: StepAuth | undefined): Credentials {
    if (auth === 'none') return { kind: 'none' };
    if (auth === undefined) return this.defaults();
    const type = auth.type;
    if (auth.value_strategy === 'random_invalid') {
      return type === 'basic' ? { kind: 'basic', ...this.randomBasic } : { kind: 'bearer', token: this.randomApiKey };
    }
    if (auth.value_strategy === 'random_invalid_jwt') return { kind: 'bearer', token: this.randomJwt() };
    if (auth.from_test_kit !== undefined && auth.from_test_kit !== false) {
      const path =
        auth.from_test_kit === true ? (type === 'basic' ? 'auth.basic' : 'auth.api_key') : auth.from_test_kit;
      const found = resolvePath(this.run.testKit, path);
      if (!found.found || found.value === null) {
        throw new CredentialsError(
          `the step asks for credentials at "${path}" in the test kit, but the test kit has none there`,
        );
      }
      if (type === 'basic') {
        const value = found.value as { username?: unknown; password?: unknown };
        if (typeof value?.username !== 'string' || typeof value?.password !== 'string') {
          throw new CredentialsError(`test kit "${path}" must be { username, password } for HTTP Basic`);
        }
        this.resolved.add(value.password);
        for (const form of basicAuthForms(value.username, value.password)) this.resolved.add(form);
        return { kind: 'basic', username: value.username, password: value.password };
      }
      this.resolved.add(String(found.value));
      return { kind: 'bearer', token: String(found.value) };
    }
    return this.defaults();
  }

  /** `{"alg":"RS256","typ":"JWT"}`.`{"sub":"invalid","aud":"<agent url>"}`.<random signature>, fresh per run. */
  private randomJwt(): string {
    const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const audience = this.run.audience?.();
    return `${segment({ alg: 'RS256', typ: 'JWT' })}.${segment({ sub: 'invalid', ...(audience ? { aud: audience } : {}) })}.${this.randomJwtSignature}`;
  }

  /** No `auth:` on the step: the operator's token, else the test kit's API key, else nothing. */
  private defaults(): Credentials {
    const token = this.run.defaultToken ?? this.run.testKit?.auth?.api_key;
    return token ? { kind: 'bearer', token } : { kind: 'none' };
  }
}

/**
 * Every string under the test kit's `auth` whose key names a secret (`api_key`,
 * `password`, `token`, … at any depth, e.g. `principals.alice.api_key`): what
 * an agent might echo back, whether or not a step of this storyboard sends it.
 */
function secretLeaves(value: unknown, key = '', depth = 0): string[] {
  if (depth > 16) return [];
  if (typeof value === 'string') return REDACTED_KEY_PATTERN.test(key) ? [value] : [];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
    secretLeaves(v, Array.isArray(value) ? key : k, depth + 1),
  );
}

/** Every `{ username, password }` pair under the test kit's `auth` (HTTP Basic credentials a step may send). */
function basicPairs(value: unknown, depth = 0): { username: string; password: string }[] {
  if (depth > 16 || value === null || typeof value !== 'object') return [];
  const { username, password } = value as { username?: unknown; password?: unknown };
  const here = typeof username === 'string' && typeof password === 'string' ? [{ username, password }] : [];
  return [...here, ...Object.values(value as Record<string, unknown>).flatMap((inner) => basicPairs(inner, depth + 1))];
}
