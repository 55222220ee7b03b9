/**
 * The `signed_requests` storyboard (universal/signed-requests.yaml, the corpus
 * file itself) through the real engine against the fixture agent, whose
 * request_signing* endpoints verify with the published verifier of
 * @adcp/sdk/signing/server: it passes on a correct verifier and fails exactly
 * the vectors each faulty one gets wrong; an agent that does not advertise
 * the capability grades not_applicable; the stateful vectors follow the test
 * kit's contracts, and fail (never skip) without them.
 *
 * Every run gets its own `session_<key>` endpoint: the agent's replay cache is
 * scoped by target URI, so one run's nonces and per-keyid cap never meet another's.
 */
import { rateLimitBoundMs } from '../../src/transport/rate-limit.js';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { resolveCorpus } from '../../src/corpus.js';
import type { StepOutcome, StepResult } from '../../src/model/records.js';
import { REQUEST_SIGNING_PROBE_TASK } from '../../src/model/runner-tasks.js';
import { withVectorSteps } from '../../src/plan/signing-vectors.js';
import { StoryboardRun } from '../../src/engine/run.js';
import { BUILTIN_ROLES } from '../../src/roles/index.js';
import { planPhases } from '../../src/engine/role.js';
import { signingVectorsFor } from '../../src/roles/request-signing/vectors.js';
import { formatStepFailure } from '../../src/report/format.js';
import { redactStepResult } from '../../src/report/record.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { loadTestKit } from '../../src/storyboard/test-kit.js';
import type { Storyboard, TestKit } from '../../src/model/storyboard.js';
import { McpTransport } from '../../src/transport/mcp.js';
import { TOKEN } from '../helpers/inline-run.js';

const corpus = resolveCorpus(undefined);
const STORYBOARD_FILE = join(corpus.root, 'universal', 'signed-requests.yaml');
const KIT_FILE = join(corpus.root, 'test-kits', 'signed-requests-runner.yaml');
const VECTORS = join(corpus.root, 'test-vectors', 'request-signing');
const vectorIds = (polarity: 'positive' | 'negative') =>
  readdirSync(join(VECTORS, polarity))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => `${polarity}-${f.replace(/\.json$/, '')}`);
const PRIVATE_SCALARS = (
  JSON.parse(readFileSync(join(VECTORS, 'keys.json'), 'utf8')).keys as { _private_d_for_test_only: string }[]
).map((k) => k._private_d_for_test_only);

function signedRequestsStoryboard(): Storyboard {
  const loaded = loadStoryboard(readFileSync(STORYBOARD_FILE, 'utf8'), STORYBOARD_FILE);
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
  return loaded.storyboard;
}

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

interface Ran {
  steps: Record<string, StepOutcome>;
  /** step id → passed | failed | skipped:<reason> */
  verdicts: Record<string, string>;
  session: string;
}

let sessions = 0;

async function runSigned(
  behaviours: string[],
  options: { testKit?: TestKit | null; skipRateAbuse?: boolean } = {},
): Promise<Ran> {
  const session = `sr${++sessions}`;
  const run = new StoryboardRun(signedRequestsStoryboard(), {
    roles: BUILTIN_ROLES,
    transport: () =>
      new McpTransport({
        url: agent.urlFor([...behaviours, `session_${session}`]),
        maxResponseBytes: 10 * 1024 * 1024,
      }),
    testKit: options.testKit === null ? undefined : (options.testKit ?? loadTestKit(KIT_FILE)),
    authToken: TOKEN,
    timeoutMs: 10_000,
    requestSigning: { skipRateAbuse: options.skipRateAbuse === true },
  });
  try {
    const outcomes = await run.runAll();
    const steps = Object.fromEntries(outcomes.map((o) => [o.result.step_id, o]));
    const verdicts = Object.fromEntries(
      outcomes.map((o) => [o.result.step_id, o.status === 'skipped' ? `skipped:${o.result.skip!.reason}` : o.status]),
    );
    return { steps, verdicts, session };
  } finally {
    await run.close();
  }
}

/** One run per endpoint, shared by the tests that read it. */
const runs = new Map<string, Promise<Ran>>();
const ran = (...behaviours: string[]) => {
  const key = behaviours.join('+');
  if (!runs.has(key)) runs.set(key, runSigned(behaviours));
  return runs.get(key)!;
};

const ids = (r: Ran, verdict: string) =>
  Object.entries(r.verdicts)
    .filter(([, v]) => v === verdict)
    .map(([id]) => id)
    .sort();
const result = (r: Ran, id: string): StepResult => {
  const outcome = r.steps[id];
  if (!outcome) throw new Error(`no step ${id}`);
  return outcome.result;
};

/** Vectors an MCP endpoint cannot carry, whatever the verifier: URL edges (port, path, IPv6 host) and a JWKS override. */
const UNREPRODUCIBLE = [
  'negative-025-jwk-alg-crv-mismatch',
  'positive-005-default-port-stripped',
  'positive-006-dot-segment-path',
  'positive-008-percent-encoded-path',
  'positive-009-percent-encoded-unreserved-decoded',
  'positive-010-percent-encoded-slash-preserved',
  'positive-011-ipv6-authority',
  'positive-012-ipv6-authority-default-port-stripped',
];
/**
 * Not applicable on `request_signing` (covers_content_digest "either"). Vector 027 (an unsigned update_media_buy that
 * registers a webhook) applies: the agent serves update_media_buy, and a correct verifier answers it 401.
 */
const NOT_APPLICABLE_EITHER = [
  ...UNREPRODUCIBLE,
  'negative-007-missing-content-digest',
  'negative-018-digest-covered-when-forbidden',
].sort();
const APPLICABLE_NEGATIVES = vectorIds('negative').filter((id) => !NOT_APPLICABLE_EITHER.includes(id));

describe('synthesized vector steps', () => {
  it("one step per vector file, with the reference runner's ids, titled with the vector id and name, at the phase line", () => {
    const storyboard = signedRequestsStoryboard();
    const phases = withVectorSteps(storyboard, signingVectorsFor(storyboard));
    for (const [phaseId, polarity] of [
      ['positive_vectors', 'positive'],
      ['negative_vectors', 'negative'],
    ] as const) {
      const phase = phases.find((p) => p.id === phaseId)!;
      expect(phase.steps.map((s) => s.id)).toEqual(vectorIds(polarity));
      for (const step of phase.steps) {
        expect(step.task).toBe(REQUEST_SIGNING_PROBE_TASK);
        expect(step.loc).toEqual(storyboard.phases.find((p) => p.id === phaseId)!.loc);
      }
    }
    const first = phases.find((p) => p.id === 'positive_vectors')!.steps[0]!;
    expect(first.title).toBe('001-basic-post: Basic POST, Ed25519, no content-digest coverage');
    // The YAML line of `- id: positive_vectors`.
    const line =
      readFileSync(STORYBOARD_FILE, 'utf8')
        .split('\n')
        .findIndex((l) => /^\s*- id: positive_vectors\s*$/.test(l)) + 1;
    expect(first.loc.line).toBe(line);
    // The engine plans the same steps; the storyboard's own data is untouched.
    expect(planPhases(BUILTIN_ROLES, storyboard, {}).flatMap((p) => p.steps.map((s) => s.id))).toEqual([
      'get_capabilities',
      ...vectorIds('positive'),
      ...vectorIds('negative'),
    ]);
    expect(storyboard.phases.find((p) => p.id === 'negative_vectors')!.steps).toEqual([]);
  });

  it('a vector phase whose vectors cannot be found gets one failing step, never an empty pass', async () => {
    const storyboard = { ...signedRequestsStoryboard(), file: '/nowhere/signed-requests.yaml' };
    const phase = withVectorSteps(storyboard, signingVectorsFor(storyboard)).find((p) => p.id === 'positive_vectors')!;
    expect(phase.steps.map((s) => s.id)).toEqual(['vectors_unavailable']);
    const run = new StoryboardRun(storyboard, {
      roles: BUILTIN_ROLES,
      transport: () =>
        new McpTransport({ url: agent.urlFor(['request_signing', 'session_missing_vectors']), maxResponseBytes: 1e6 }),
      authToken: TOKEN,
      timeoutMs: 10_000,
    });
    try {
      const outcome = await run.settle('positive_vectors', 'vectors_unavailable');
      expect(outcome.status).toBe('failed');
      expect(outcome.result.error).toContain(
        'no test-vectors/request-signing folder beside /nowhere/signed-requests.yaml',
      );
    } finally {
      await run.close();
    }
  });
});

describe('a correct verifier (@adcp/sdk/signing/server)', () => {
  it('passes signed_requests: every applicable vector passes, the rest is not applicable with its reason', async () => {
    const r = await ran('request_signing');
    expect(ids(r, 'failed')).toEqual([]);
    expect(ids(r, 'skipped:not_applicable')).toEqual(NOT_APPLICABLE_EITHER);
    expect(ids(r, 'passed')).toEqual(
      ['get_capabilities', ...vectorIds('positive'), ...vectorIds('negative')]
        .filter((id) => !NOT_APPLICABLE_EITHER.includes(id))
        .sort(),
    );
    expect(result(r, 'positive-005-default-port-stripped').skip!.detail).toMatch(
      /^vector 005-default-port-stripped: the vector's edge is the explicit port/,
    );
    expect(result(r, 'negative-025-jwk-alg-crv-mismatch').skip!.detail).toContain('jwks_override');
    expect(result(r, 'negative-007-missing-content-digest').skip!.detail).toContain(
      'covers_content_digest: required; the agent declares "either"',
    );
    expect(result(r, 'negative-027-webhook-registration-authentication-unsigned').response).toMatchObject({
      status: 401,
    });
  });

  it('records what was sent and what came back: the operation, the signature fields, 401 + the challenge', async () => {
    const r = await ran('request_signing');
    const wrongTag = result(r, 'negative-002-wrong-tag');
    expect(wrongTag.task).toBe(REQUEST_SIGNING_PROBE_TASK);
    expect(wrongTag.request).toMatchObject({
      transport: 'http',
      operation: 'create_media_buy',
      payload: { method: 'tools/call', params: { name: 'create_media_buy', arguments: { plan_id: 'plan_001' } } },
    });
    expect(wrongTag.response).toMatchObject({
      transport: 'http',
      status: 401,
      headers: { 'www-authenticate': 'Signature error="request_signature_tag_invalid"' },
    });
    expect(wrongTag.signed_request!.signature_input).toContain('tag="example-org/signing/v1"');
    expect(wrongTag.validations.map((v) => [v.check, v.passed, v.actual])).toEqual([
      ['http_status', true, 401],
      ['signature_error_code', true, 'request_signature_tag_invalid'],
    ]);
    const positive = result(r, 'positive-003-es256-post');
    expect(positive.validations).toMatchObject([
      { check: 'request_signature_accepted', passed: true, actual: { status: 200 } },
    ]);
    expect(positive.signed_request!.signature_input).toContain('keyid="test-es256-2026";alg="ecdsa-p256-sha256"');
    expect(result(r, 'positive-007-query-byte-preserved').request!.url).toMatch(/\/mcp\?b=2&a=1&c=3$/);
    expect(result(r, 'negative-026-non-ascii-host').signed_request!.host).toBe('bücher.example.com');
    // The agent served the accepted ones as the signer (a verified signature authenticates).
    expect(
      agent.calls.filter((c) => c.session === r.session && c.tool === 'create_media_buy' && c.auth === 'signature')
        .length,
    ).toBeGreaterThan(50);
  });

  it('never records key material', async () => {
    const r = await ran('request_signing');
    const text = JSON.stringify(Object.values(r.steps).map((o) => redactStepResult(o.result)));
    for (const d of PRIVATE_SCALARS) expect(text).not.toContain(d);
  });

  it('follows the stateful contracts: 016 sends one request twice, 020 fills the per-keyid cap first, 017 signs as the pre-revoked keyid', async () => {
    const r = await ran('request_signing');
    const replay = result(r, 'negative-016-replayed-nonce');
    expect(replay.validations.map((v) => [v.check, v.passed])).toEqual([
      ['replay_first_accepted', true],
      ['http_status', true],
      ['signature_error_code', true],
    ]);
    expect(result(r, 'negative-020-rate-abuse').signed_request!.notes.join('\n')).toMatch(
      /contract rate_abuse: 100 distinct-nonce requests first \(answers: .*401 request_signature_rate_abuse/,
    );
    expect(result(r, 'negative-017-key-revoked').signed_request!.signature_input).toContain(
      'keyid="test-revoked-2026"',
    );
  });

  it('grades the profile-specific vectors on agents with that profile (required / forbidden digest, nothing required)', async () => {
    const required = await ran('request_signing_digest_required');
    expect(ids(required, 'failed')).toEqual([]);
    expect(required.verdicts['negative-007-missing-content-digest']).toBe('passed');
    expect(result(required, 'negative-002-wrong-tag').signed_request!.signature_input).toContain('"content-digest"');

    const forbidden = await ran('request_signing_digest_forbidden');
    expect(ids(forbidden, 'failed')).toEqual([]);
    expect(forbidden.verdicts['negative-018-digest-covered-when-forbidden']).toBe('passed');
    expect(forbidden.verdicts['positive-002-post-with-content-digest']).toBe('skipped:not_applicable');
    expect(forbidden.verdicts['negative-010-content-digest-mismatch']).toBe('skipped:not_applicable');

    const optional = await ran('request_signing_not_required');
    expect(ids(optional, 'failed')).toEqual([]);
    expect(optional.verdicts['negative-027-webhook-registration-authentication-unsigned']).toBe('passed');
    expect(optional.verdicts['negative-001-no-signature-header']).toBe('skipped:not_applicable');
  });
});

describe('faulty verifiers fail exactly the vectors they get wrong', () => {
  it('accepts everything: every applicable negative vector fails on the 2xx, every positive one passes', async () => {
    const r = await ran('request_signing_accept_all');
    expect(ids(r, 'failed')).toEqual(APPLICABLE_NEGATIVES);
    expect(result(r, 'negative-003-expired-signature').validations.map((v) => [v.check, v.passed, v.actual])).toEqual([
      ['http_status', false, 200],
      ['signature_error_code', false, null],
    ]);
    expect(result(r, 'negative-003-expired-signature').validations[0]!.error).toBe(
      'the agent accepted a request it must reject: Signature expired more than 60 s ago',
    );
  });

  it('answers the wrong code: every applicable negative vector but 015 fails on the code, byte for byte', async () => {
    const r = await ran('request_signing_wrong_code');
    expect(ids(r, 'failed')).toEqual(APPLICABLE_NEGATIVES.filter((id) => id !== 'negative-015-signature-invalid'));
    const revoked = result(r, 'negative-017-key-revoked');
    expect(revoked.validations.map((v) => [v.check, v.passed, v.expected, v.actual])).toEqual([
      ['http_status', true, 401, 401],
      ['signature_error_code', false, 'request_signature_key_revoked', 'request_signature_invalid'],
    ]);
    expect(revoked.validations[1]!.error).toContain('step-ordering bug');
    const message = formatStepFailure(revoked).message;
    expect(message).toContain('signed request (vector negative/017-key-revoked, as create_media_buy):');
    expect(message).toContain('Signature-Input: sig1=("@method" "@target-uri" "@authority" "content-type");created=');
  });

  it('keeps no replay cache: exactly 016 and 020 fail', async () => {
    const r = await ran('request_signing_no_replay_cache');
    expect(ids(r, 'failed')).toEqual(['negative-016-replayed-nonce', 'negative-020-rate-abuse']);
  });
});

describe('gating and contracts', () => {
  it("a storyboard without the capability step: the vectors come from the run's corpus root, and the runner asks for the capability itself", async () => {
    const yaml = [
      'id: signed_requests',
      'title: Signed requests, vectors only',
      'phases:',
      '  - id: positive_vectors',
      '    title: Positive',
      '',
    ].join('\n');
    const loaded = loadStoryboard(yaml, '/virtual/signed-requests.yaml');
    if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
    const verdictOn = async (behaviours: string[]) => {
      const run = new StoryboardRun(loaded.storyboard, {
        roles: BUILTIN_ROLES,
        transport: () =>
          new McpTransport({ url: agent.urlFor([...behaviours, `session_sr${++sessions}`]), maxResponseBytes: 1e6 }),
        authToken: TOKEN,
        timeoutMs: 10_000,
        corpusRoot: corpus.root,
      });
      try {
        return (await run.settle('positive_vectors', 'positive-001-basic-post')).result;
      } finally {
        await run.close();
      }
    };
    expect((await verdictOn(['request_signing'])).passed).toBe(true);
    expect((await verdictOn([])).skip).toMatchObject({
      reason: 'not_applicable',
      detail: expect.stringMatching(/^request_signing_not_advertised: /),
    });
  });

  it('an agent that does not advertise request_signing: the capability step and every vector are not_applicable, nothing signed is sent', async () => {
    const r = await ran();
    const steps = Object.values(r.verdicts);
    expect(new Set(steps)).toEqual(new Set(['skipped:not_applicable']));
    expect(steps).toHaveLength(1 + vectorIds('positive').length + vectorIds('negative').length);
    const detail = result(r, 'get_capabilities').skip!.detail;
    expect(detail).toBe(
      "request_signing_not_advertised: the agent's get_adcp_capabilities declares no request_signing block (supported_protocols: [media_buy, creative], specialisms: []), " +
        'so it does not offer verified signed requests and signed_requests does not apply (signed-requests.yaml > Gating: "absence of advertisement is not a failure")',
    );
    expect(result(r, 'negative-002-wrong-tag').skip!.detail).toBe(detail);
    expect(result(r, 'get_capabilities').request?.operation).toBe('get_adcp_capabilities');
    expect(agent.calls.filter((c) => c.session === r.session).map((c) => c.tool)).toEqual(['get_adcp_capabilities']);
  });

  it('without the signed_requests_runner test kit the stateful vectors FAIL, never skip', async () => {
    const r = await runSigned(['request_signing'], { testKit: null });
    expect(ids(r, 'failed')).toEqual([
      'negative-016-replayed-nonce',
      'negative-017-key-revoked',
      'negative-020-rate-abuse',
    ]);
    expect(result(r, 'negative-017-key-revoked').error).toBe(
      'vector 017-key-revoked requires the test-kit contract "revocation", and this run has no signed_requests_runner test kit declaring it (prerequisites.test_kit: test-kits/signed-requests-runner.yaml > stateful_vector_contract), so the runner cannot satisfy it: signed-requests.yaml grades such vectors FAIL, never SKIP',
    );
  });

  it("the operator's rate-abuse opt-out: 020 is unsatisfied_contract (rate_abuse_opt_out), and no flood is sent", async () => {
    const r = await runSigned(['request_signing'], { skipRateAbuse: true });
    expect(r.verdicts['negative-020-rate-abuse']).toBe('skipped:unsatisfied_contract');
    expect(result(r, 'negative-020-rate-abuse').skip!.detail).toMatch(
      /^rate_abuse_opt_out: the operator opted out of vector 020-rate-abuse \(contract "rate_abuse" of signed_requests_runner/,
    );
    expect(ids(r, 'failed')).toEqual([]);
    expect(agent.calls.filter((c) => c.session === r.session && c.tool === 'create_media_buy').length).toBeLessThan(40);
  });

  it('a vector whose operation the agent does not implement is skipped missing_tool, citing the tools', async () => {
    const r = await runSigned(['request_signing', 'without@create_media_buy', 'without@update_media_buy']);
    expect(r.verdicts['positive-001-basic-post']).toBe('skipped:missing_tool');
    expect(result(r, 'positive-001-basic-post').skip!.detail).toMatch(
      /^vector 001-basic-post is sent as one of \[create_media_buy, update_media_buy, sync_creatives, activate_signal\], none of which the agent advertises .*; agent tools: \[comply_test_controller, get_adcp_capabilities, /,
    );
    expect(ids(r, 'failed')).toEqual([]);
  });
});

describe('the bound of a settle (worstCaseMs), which the step tests get as their timeout', () => {
  const bound = (options: { skipRateAbuse?: boolean; testKit?: TestKit }) =>
    new StoryboardRun(signedRequestsStoryboard(), {
      roles: BUILTIN_ROLES,
      transport: () => {
        throw new Error('no call is made to compute a bound');
      },
      timeoutMs: 1_000,
      ...(options.testKit ? { testKit: options.testKit } : {}),
      requestSigning: { skipRateAbuse: options.skipRateAbuse === true },
    }).worstCaseMs();
  const planned = withVectorSteps(signedRequestsStoryboard(), signingVectorsFor(signedRequestsStoryboard())).flatMap(
    (p) => p.steps,
  );
  const steps = planned.length;
  // A step that calls the agent's tools may wait and resend for a rate limit; a vector step sends raw HTTP, never resent.
  const toolSteps = planned.filter((s) => !('vector' in s)).length;
  const resends = toolSteps * rateLimitBoundMs(1_000);

  it("adds each step's own bound: 016 sends twice, 020 floods for the contract's window_seconds (60 s in the kit) and then sends the graded request", () => {
    expect(steps).toBeGreaterThan(30);
    // (every step + tool list + OAuth probes) × timeout, + 016's second send, + 020's window and its two bounded requests.
    expect(toolSteps).toBeGreaterThan(0);
    expect(bound({ testKit: loadTestKit(KIT_FILE) })).toBe((steps + 3) * 1_000 + resends + 1_000 + 60_000 + 1_000);
  });

  it('leaves the flood out when the operator opted out of 020, and a kit without the contract adds no window', () => {
    expect(bound({ testKit: loadTestKit(KIT_FILE), skipRateAbuse: true })).toBe((steps + 3) * 1_000 + resends + 1_000);
    expect(bound({})).toBe((steps + 3) * 1_000 + resends + 1_000 + 1_000);
  });
});
