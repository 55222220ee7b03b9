/**
 * Authentication on every mechanism, over MCP and A2A, against the real
 * fixture agent (its auth modes: fixtures/agent/auth-modes.mjs):
 *
 * - every step's `auth:` reaches the agent as the credential it names, on
 *   both transports (read from the agent's call log);
 * - security_baseline — the 3.0.6 corpus file and the 3.1.0-rc.2 one that adds
 *   HTTP Basic (fixtures/spec/, loaded as a user storyboard) — passes against
 *   each well-configured auth mode, and against each faulty variant fails at
 *   the step that catches it, and only there;
 * - fixtures/storyboards/auth.storyboard.yaml (all three mechanisms, every
 *   phase required) passes on the default endpoint and fails the named step
 *   under each auth behaviour.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { FIXTURE_TEST_KIT_PATH, startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { resolveCorpus } from '../../src/corpus.js';
import type { StepOutcome } from '../../src/model/records.js';
import type { TestKit } from '../../src/model/storyboard.js';
import { runInline, storyboard } from '../helpers/inline-run.js';

const PROTOCOLS = ['mcp', 'a2a'] as const;
type Protocol = (typeof PROTOCOLS)[number];

const SECURITY = {
  '3.0.6': readFileSync(join(resolveCorpus('3.0.6').root, 'universal/security.yaml'), 'utf8'),
  '3.1.0-rc.2': readFileSync(
    fileURLToPath(new URL('../../fixtures/spec/security-3.1.0-rc.2.yaml', import.meta.url)),
    'utf8',
  ),
};
type Version = keyof typeof SECURITY;
const AUTH_STORYBOARD = readFileSync(
  fileURLToPath(new URL('../../fixtures/storyboards/auth.storyboard.yaml', import.meta.url)),
  'utf8',
);

const fixtureKit = parseYaml(readFileSync(FIXTURE_TEST_KIT_PATH, 'utf8')) as TestKit & {
  auth: { basic: { username: string; password: string } };
};
const BASIC = fixtureKit.auth.basic;

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

let sessions = 0;

/** A fresh session of the endpoint with these behaviours, over one protocol, and its share of the call log. */
function endpoint(protocol: Protocol, behaviours: string[]) {
  const session = `auth${++sessions}`;
  const tokens = [...behaviours, `session_${session}`];
  return {
    url: protocol === 'a2a' ? agent.a2aUrlFor(tokens) : agent.urlFor(tokens),
    calls: (tool?: string) =>
      agent.calls.filter((c) => c.session === session && (tool === undefined || c.tool === tool)),
  };
}

/** step id → passed | failed | skipped:<reason>. */
function verdicts(outcomes: Record<string, StepOutcome>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(outcomes).map(([id, o]) => [
      id,
      o.status === 'skipped' ? `skipped:${o.result.skip?.reason}` : o.status,
    ]),
  );
}

/** The checks that failed on a step. */
const failedChecks = (o: StepOutcome | undefined) =>
  (o?.result.validations ?? []).filter((v) => !v.passed).map((v) => v.check);

describe.each(PROTOCOLS)('auth on every step, over %s', (protocol) => {
  const kit: TestKit = {
    auth: {
      api_key: 'demo-auth-matrix-kit',
      basic: BASIC,
      probe_task: 'list_creatives',
      principals: { alice: { api_key: 'demo-alice' }, bob: { api_key: 'demo-bob' } },
    },
  } as TestKit;
  const step = (id: string, auth: unknown) => ({
    id,
    title: id,
    task: 'list_creatives',
    sample_request: { context: { correlation_id: id } },
    auth,
    expect_error: true,
    validations: [],
  });

  it('none, the kit key, a named principal, Basic, the operator token and each random invalid credential reach the agent as such', async () => {
    const { url, calls } = endpoint(protocol, []);
    const steps = [
      step('default_credentials', undefined),
      step('no_credentials', 'none'),
      step('kit_api_key', { type: 'api_key', from_test_kit: true }),
      step('principal_alice', { type: 'api_key', from_test_kit: 'auth.principals.alice.api_key' }),
      step('principal_bob', { type: 'api_key', from_test_kit: 'auth.principals.bob.api_key' }),
      step('kit_basic', { type: 'basic', from_test_kit: 'auth.basic' }),
      step('kit_basic_default_path', { type: 'basic', from_test_kit: true }),
      step('random_key', { type: 'api_key', value_strategy: 'random_invalid' }),
      step('random_basic', { type: 'basic', value_strategy: 'random_invalid' }),
      step('random_jwt', { type: 'oauth_bearer', value_strategy: 'random_invalid_jwt' }),
    ];
    const yaml = storyboard(...steps.map((s) => JSON.stringify(s)).map((json) => `- ${json}`));
    const outcomes = await runInline(yaml, url, { protocol, testKit: kit, authToken: 'demo-operator-token' });
    expect(Object.keys(outcomes)).toHaveLength(steps.length);
    const seen = calls('list_creatives').map((c) => [
      (c.arguments as { context: { correlation_id: string } }).context.correlation_id,
      c.auth,
      c.principal,
    ]);
    expect(seen).toEqual([
      ['default_credentials', 'api_key', 'key:demo-operator-token'],
      ['no_credentials', 'none', 'anonymous'],
      ['kit_api_key', 'api_key', 'key:demo-auth-matrix-kit'],
      ['principal_alice', 'api_key', 'key:demo-alice'],
      ['principal_bob', 'api_key', 'key:demo-bob'],
      ['kit_basic', 'basic', `basic:${BASIC.username}`],
      ['kit_basic_default_path', 'basic', `basic:${BASIC.username}`],
      ['random_key', 'invalid', 'anonymous'],
      ['random_basic', 'invalid', 'anonymous'],
      ['random_jwt', 'invalid', 'anonymous'],
    ]);
    // The rejected ones are the agent's 401 answers, recorded on the step.
    for (const id of ['no_credentials', 'random_key', 'random_basic', 'random_jwt'])
      expect(outcomes[id]!.result.response?.status, id).toBe(401);
    for (const id of ['kit_api_key', 'principal_alice', 'kit_basic'])
      expect(outcomes[id]!.result.response?.status, id).toBe(200);
  });

  it('a principal the kit does not have fails its step without calling the agent', async () => {
    const { url, calls } = endpoint(protocol, []);
    const outcomes = await runInline(
      storyboard(
        `- ${JSON.stringify(step('carol', { type: 'api_key', from_test_kit: 'auth.principals.carol.api_key' }))}`,
      ),
      url,
      { protocol, testKit: kit },
    );
    expect(outcomes.carol).toMatchObject({
      status: 'failed',
      result: {
        error:
          'the step asks for credentials at "auth.principals.carol.api_key" in the test kit, but the test kit has none there',
      },
    });
    expect(calls('list_creatives')).toEqual([]);
  });
});

// ─── security_baseline on every mechanism ───────────────────────────────────

const KITS = {
  api_key: { auth: { api_key: 'demo-security-matrix', probe_task: 'list_creatives' } },
  basic: { auth: { basic: BASIC, probe_task: 'list_creatives' } },
  oauth: { auth: { probe_task: 'list_creatives' } },
  all: { auth: { api_key: 'demo-security-matrix', basic: BASIC, probe_task: 'list_creatives' } },
} as Record<string, TestKit>;

const STEPS_3_0 = [
  'probe_unauth',
  'probe_api_key',
  'probe_invalid_api_key',
  'probe_protected_resource',
  'probe_auth_server_metadata',
  'probe_invalid_oauth_token',
  'assert_mechanism',
];
const STEPS_3_1 = [
  'probe_unauth',
  'probe_api_key',
  'probe_invalid_api_key',
  'probe_basic',
  'probe_invalid_basic',
  'probe_protected_resource',
  'probe_auth_server_metadata',
  'probe_invalid_oauth_token',
  'assert_mechanism',
];
const NA = 'skipped:not_applicable';

/** The expected verdict of every step: `passed` unless named otherwise. */
function expected(version: Version, others: Record<string, string>): Record<string, string> {
  return Object.fromEntries((version === '3.0.6' ? STEPS_3_0 : STEPS_3_1).map((id) => [id, others[id] ?? 'passed']));
}

const apiKeyPhase = {
  probe_basic: NA,
  probe_invalid_basic: NA,
  probe_protected_resource: NA,
  probe_auth_server_metadata: NA,
  probe_invalid_oauth_token: NA,
};
const basicPhase = {
  probe_api_key: NA,
  probe_invalid_api_key: NA,
  probe_protected_resource: NA,
  probe_auth_server_metadata: NA,
  probe_invalid_oauth_token: NA,
};
const oauthPhase = { probe_api_key: NA, probe_invalid_api_key: NA, probe_basic: NA, probe_invalid_basic: NA };

interface Case {
  name: string;
  behaviours: string[];
  kit: keyof typeof KITS;
  /** Per version: the verdicts that are not `passed`. */
  '3.0.6': Record<string, string>;
  '3.1.0-rc.2': Record<string, string>;
  /** The failing step → the checks that fail on it (the step the faulty variant must be caught at). */
  caughtAt?: Record<string, string[]>;
}

const WELL_CONFIGURED: Case[] = [
  {
    name: 'API key only',
    behaviours: ['auth_api_key_only'],
    kit: 'api_key',
    '3.0.6': apiKeyPhase,
    '3.1.0-rc.2': apiKeyPhase,
  },
  // 3.0.6 knows no Basic mechanism: a Basic-only agent verifies none of its mechanisms (the reason 3.1 adds basic_path).
  {
    name: 'Basic only',
    behaviours: ['auth_basic_only'],
    kit: 'basic',
    '3.0.6': { ...basicPhase, assert_mechanism: 'failed' },
    '3.1.0-rc.2': basicPhase,
  },
  { name: 'OAuth only', behaviours: ['auth_oauth_only'], kit: 'oauth', '3.0.6': oauthPhase, '3.1.0-rc.2': oauthPhase },
  { name: 'all three (the default endpoint)', behaviours: [], kit: 'all', '3.0.6': {}, '3.1.0-rc.2': {} },
];

const FAULTY: Case[] = [
  {
    name: 'API key only, ignores credentials',
    behaviours: ['auth_api_key_only', 'missing_auth_check'],
    kit: 'api_key',
    '3.0.6': { ...apiKeyPhase, probe_unauth: 'failed', probe_invalid_api_key: 'failed', assert_mechanism: 'failed' },
    '3.1.0-rc.2': {
      ...apiKeyPhase,
      probe_unauth: 'failed',
      probe_invalid_api_key: 'failed',
      assert_mechanism: 'failed',
    },
    caughtAt: {
      probe_unauth: ['http_status_in', 'expect_error'],
      probe_invalid_api_key: ['http_status_in', 'expect_error'],
    },
  },
  {
    name: 'API key only, 401 without WWW-Authenticate',
    behaviours: ['auth_api_key_only', 'no_www_authenticate'],
    kit: 'api_key',
    '3.0.6': { ...apiKeyPhase, probe_unauth: 'failed', probe_invalid_api_key: 'failed', assert_mechanism: 'failed' },
    '3.1.0-rc.2': {
      ...apiKeyPhase,
      probe_unauth: 'failed',
      probe_invalid_api_key: 'failed',
      assert_mechanism: 'failed',
    },
    caughtAt: { probe_unauth: ['on_401_require_header'], probe_invalid_api_key: ['on_401_require_header'] },
  },
  {
    name: 'Basic only, ignores credentials',
    behaviours: ['auth_basic_only', 'missing_auth_check'],
    kit: 'basic',
    '3.0.6': { ...basicPhase, probe_unauth: 'failed', assert_mechanism: 'failed' },
    '3.1.0-rc.2': { ...basicPhase, probe_unauth: 'failed', probe_invalid_basic: 'failed', assert_mechanism: 'failed' },
    caughtAt: { probe_unauth: ['http_status_in', 'expect_error'] },
  },
  {
    name: 'Basic only, 401 without WWW-Authenticate',
    behaviours: ['auth_basic_only', 'no_www_authenticate'],
    kit: 'basic',
    '3.0.6': { ...basicPhase, probe_unauth: 'failed', assert_mechanism: 'failed' },
    '3.1.0-rc.2': { ...basicPhase, probe_unauth: 'failed', probe_invalid_basic: 'failed', assert_mechanism: 'failed' },
    caughtAt: { probe_unauth: ['on_401_require_header'] },
  },
  {
    name: 'OAuth only, ignores credentials',
    behaviours: ['auth_oauth_only', 'missing_auth_check'],
    kit: 'oauth',
    '3.0.6': { ...oauthPhase, probe_unauth: 'failed', probe_invalid_oauth_token: 'failed', assert_mechanism: 'failed' },
    '3.1.0-rc.2': {
      ...oauthPhase,
      probe_unauth: 'failed',
      probe_invalid_oauth_token: 'failed',
      assert_mechanism: 'failed',
    },
    caughtAt: {
      probe_unauth: ['http_status_in', 'expect_error'],
      probe_invalid_oauth_token: ['http_status_in', 'expect_error'],
    },
  },
  {
    name: 'OAuth only, 401 without WWW-Authenticate',
    behaviours: ['auth_oauth_only', 'no_www_authenticate'],
    kit: 'oauth',
    '3.0.6': { ...oauthPhase, probe_unauth: 'failed', probe_invalid_oauth_token: 'failed', assert_mechanism: 'failed' },
    '3.1.0-rc.2': {
      ...oauthPhase,
      probe_unauth: 'failed',
      probe_invalid_oauth_token: 'failed',
      assert_mechanism: 'failed',
    },
    caughtAt: { probe_unauth: ['on_401_require_header'], probe_invalid_oauth_token: ['on_401_require_header'] },
  },
  {
    name: 'OAuth only, advertises an issuer whose metadata it does not serve',
    behaviours: ['auth_oauth_only', 'oauth_issuer_unserved'],
    kit: 'oauth',
    // The token is still validated, so the mechanism counts; the unserved issuer is caught at its own probe.
    '3.0.6': { ...oauthPhase, probe_auth_server_metadata: 'failed' },
    '3.1.0-rc.2': { ...oauthPhase, probe_auth_server_metadata: 'failed' },
    caughtAt: { probe_auth_server_metadata: ['http_status', 'field_present', 'field_present'] },
  },
  {
    name: 'OAuth only, metadata whose resource is another URL',
    behaviours: ['auth_oauth_only', 'wrong_resource'],
    kit: 'oauth',
    '3.0.6': { ...oauthPhase, probe_protected_resource: 'failed', assert_mechanism: 'failed' },
    '3.1.0-rc.2': { ...oauthPhase, probe_protected_resource: 'failed', assert_mechanism: 'failed' },
    caughtAt: { probe_protected_resource: ['resource_equals_agent_url'] },
  },
];

describe.each(
  PROTOCOLS.flatMap((protocol) => (Object.keys(SECURITY) as Version[]).map((version) => ({ protocol, version }))),
)('security_baseline $version over $protocol', ({ protocol, version }) => {
  const grade = async (c: Case) => {
    const { url, calls } = endpoint(protocol, c.behaviours);
    const outcomes = await runInline(SECURITY[version], url, { protocol, testKit: KITS[c.kit], authToken: null });
    for (const o of Object.values(outcomes))
      if (o.result.request && o.result.request.transport !== 'http') expect(o.result.request.transport).toBe(protocol);
    return { outcomes, calls };
  };

  it.each(WELL_CONFIGURED)(
    '$name: passes (3.0.6 + Basic only: fails assert_mechanism, it has no Basic phase)',
    async (c) => {
      const { outcomes, calls } = await grade(c);
      expect(verdicts(outcomes)).toEqual(expected(version, c[version]));
      if (c.kit === 'basic' && version !== '3.0.6') {
        // Basic went out as Basic on this transport, and was accepted.
        expect(calls('list_creatives').map((call) => call.auth)).toEqual(['none', 'basic', 'invalid']);
      }
    },
  );

  it.each(FAULTY)('$name: fails at the step that catches it', async (c) => {
    const { outcomes } = await grade(c);
    expect(verdicts(outcomes)).toEqual(expected(version, c[version]));
    for (const [stepId, checks] of Object.entries(c.caughtAt ?? {}))
      expect(failedChecks(outcomes[stepId]), stepId).toEqual(checks);
  });
});

// ─── fixtures/storyboards/auth.storyboard.yaml ──────────────────────────────

describe.each(PROTOCOLS)('the fixture auth storyboard over %s', (protocol) => {
  const run = async (behaviours: string[]) =>
    verdicts(
      await runInline(AUTH_STORYBOARD, endpoint(protocol, behaviours).url, {
        protocol,
        testKit: fixtureKit,
        authToken: null,
      }),
    );
  const all = (others: Record<string, string> = {}) =>
    Object.fromEntries(
      [
        'get_capabilities_without_credentials',
        'probe_without_credentials',
        'probe_with_kit_api_key',
        'probe_with_invalid_api_key',
        'probe_with_kit_basic_credential',
        'probe_with_invalid_basic_credential',
        'get_protected_resource_metadata',
        'get_auth_server_metadata',
        'probe_with_forged_jwt',
      ].map((id) => [id, others[id] ?? 'passed']),
    );
  const invalidProbes = {
    probe_with_invalid_api_key: 'failed',
    probe_with_invalid_basic_credential: 'failed',
    probe_with_forged_jwt: 'failed',
  };

  it('passes every step on the conformant endpoint', async () => {
    expect(await run([])).toEqual(all());
  });

  it.each<[string, string[], Record<string, string>]>([
    ['ignores credentials', ['missing_auth_check'], { probe_without_credentials: 'failed', ...invalidProbes }],
    [
      '401 without WWW-Authenticate',
      ['no_www_authenticate'],
      { probe_without_credentials: 'failed', ...invalidProbes },
    ],
    ['metadata names another resource', ['wrong_resource'], { get_protected_resource_metadata: 'failed' }],
    ['advertises an issuer it does not serve', ['oauth_issuer_unserved'], { get_auth_server_metadata: 'failed' }],
    [
      'no OAuth metadata at all',
      ['no_oauth'],
      { get_protected_resource_metadata: NA, get_auth_server_metadata: NA, probe_with_forged_jwt: NA },
    ],
    [
      'API key only',
      ['auth_api_key_only'],
      {
        probe_with_kit_basic_credential: 'failed',
        get_protected_resource_metadata: NA,
        get_auth_server_metadata: NA,
        probe_with_forged_jwt: NA,
      },
    ],
  ])('%s: fails the step that catches it', async (_, behaviours, others) => {
    expect(await run(behaviours)).toEqual(all(others));
  });
});
