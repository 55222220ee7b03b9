/**
 * A second opinion: the storyboard runner that ships with @adcp/sdk (the
 * reference implementation) grades the fixture agent. The conformant endpoint
 * must pass the real universal storyboards it is built for, and the auth and
 * context behaviours must fail the steps they claim to break — so the fixture's
 * notion of "conformant" is not just ours.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadStoryboardFile, runStoryboard } from '@adcp/sdk/testing';
import { FIXTURE_TEST_KIT_PATH, startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';

const require = createRequire(import.meta.url);
const COMPLIANCE = join(dirname(require.resolve('@adcp/sdk/package.json')), 'compliance/cache/3.0.6');
const FIXTURE_STORYBOARDS = fileURLToPath(new URL('../../fixtures/storyboards/', import.meta.url));

/** The 3.1.0-rc.2 security storyboard (adds HTTP Basic), kept as test input in fixtures/spec. */
const SECURITY_3_1 = fileURLToPath(new URL('../../fixtures/spec/security-3.1.0-rc.2.yaml', import.meta.url));

const STORYBOARDS = {
  capability_discovery: join(COMPLIANCE, 'universal/capability-discovery.yaml'),
  security_3_0_6: join(COMPLIANCE, 'universal/security.yaml'),
  security_3_1_0_rc_2: SECURITY_3_1,
  fixture_discovery: join(FIXTURE_STORYBOARDS, 'discovery.storyboard.yaml'),
  fixture_auth: fileURLToPath(new URL('../../fixtures/storyboards/auth.storyboard.yaml', import.meta.url)),
};

const fixtureKit = parseYaml(readFileSync(FIXTURE_TEST_KIT_PATH, 'utf8'));
const acmeKit = parseYaml(readFileSync(join(COMPLIANCE, 'test-kits/acme-outdoor.yaml'), 'utf8'));

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(async () => {
  await agent?.close();
});

/** Runs one storyboard with the kit's API key as default credential; returns "phase.step" → passed. */
async function grade(storyboard: keyof typeof STORYBOARDS, url: string, kit = fixtureKit) {
  const result = await runStoryboard(url, loadStoryboardFile(STORYBOARDS[storyboard]), {
    allow_http: true,
    test_kit: kit,
    auth: { type: 'bearer', token: kit.auth.api_key },
  });
  const steps: Record<string, boolean> = {};
  for (const phase of result.phases)
    for (const step of phase.steps) steps[`${phase.phase_id}.${step.step_id}`] = step.passed;
  return { passed: result.overall_passed, steps };
}

const failing = (steps: Record<string, boolean>) => Object.keys(steps).filter((k) => !steps[k]);

describe('the @adcp/sdk reference runner', () => {
  const available = Object.keys(STORYBOARDS) as (keyof typeof STORYBOARDS)[];
  it.each(available)('passes %s against the conformant endpoint', async (storyboard) => {
    const { passed, steps } = await grade(storyboard, agent.url);
    expect(failing(steps)).toEqual([]);
    expect(passed).toBe(true);
  });

  it("passes security_baseline with the storyboard's own kit (acme-outdoor): any demo- key is accepted", async () => {
    const { passed } = await grade('security_3_0_6', agent.url, acmeKit);
    expect(passed).toBe(true);
  });

  it('sees missing_auth_check serve the unauthenticated and invalid-credential probes', async () => {
    const { steps } = await grade('security_3_1_0_rc_2', agent.urlFor(['missing_auth_check']));
    expect(failing(steps)).toEqual([
      'unauth_rejection.probe_unauth',
      'api_key_path.probe_invalid_api_key',
      'basic_path.probe_invalid_basic',
      'oauth_discovery.probe_invalid_oauth_token',
      'mechanism_required.assert_mechanism',
    ]);
  });

  it('sees no_www_authenticate fail only the header checks (and so every mechanism)', async () => {
    const { steps } = await grade('fixture_auth', agent.urlFor(['no_www_authenticate']));
    expect(failing(steps)).toEqual([
      'unauthenticated.probe_without_credentials',
      'api_key.probe_with_invalid_api_key',
      'basic.probe_with_invalid_basic_credential',
      'oauth.probe_with_forged_jwt',
    ]);
  });

  it('sees wrong_resource fail resource_equals_agent_url', async () => {
    const { steps } = await grade('fixture_auth', agent.urlFor(['wrong_resource']));
    expect(failing(steps)).toEqual(['oauth.get_protected_resource_metadata']);
  });

  it.each(['drop_context', 'wrong_value'])('sees %s fail both capability_discovery steps', async (behaviour) => {
    const { steps } = await grade('capability_discovery', agent.urlFor([behaviour]));
    expect(failing(steps)).toEqual([
      'protocol_discovery.get_capabilities',
      'protocol_discovery.get_capabilities_filtered',
    ]);
  });

  it.each(['text_only', 'json_response', 'slow_ms_50'])('sees %s as a valid variation', async (behaviour) => {
    const { passed } = await grade('capability_discovery', agent.urlFor([behaviour]));
    expect(passed).toBe(true);
  });
});
