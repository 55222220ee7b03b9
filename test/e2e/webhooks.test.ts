/**
 * The webhook receiver in a real `vitest run` (child process): the plugin
 * hosts it in the main process, the storyboard's worker registers its URLs
 * and reads its deliveries over the loopback control endpoint, and the
 * verdicts and records reach the test meta.
 */
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { byId, repoRoot, runVitest } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'webhooks.config.ts');
const steps = [
  'capability_discovery/get_capabilities',
  'idempotency_key_presence/trigger_webhook_operation',
  'idempotency_key_presence/expect_webhook_presence',
  'idempotency_key_stability/trigger_retry_scenario',
  'idempotency_key_stability/expect_key_stable_across_retries',
  'signature_validity/trigger_signed_webhook',
  'signature_validity/expect_signature_valid',
];

describe('webhook_emission through the plugin', () => {
  it('passes against the conformant agent with webhooks: { receiver: "loopback" }, deliveries in the test meta', async () => {
    const run = await runVitest({ config, env: { ADCP_AGENT_URL: inject('agentUrl'), ADCP_AUTH_TOKEN: 'demo-webhooks-plugin', E2E_CORPUS: 'webhook_emission' } });
    for (const step of steps) {
      const test = byId(run, `webhook_emission/${step}`);
      expect(test.state, `${test.fullName}\n${test.errors.map((e) => e.message).join('\n')}\n${run.stderr}`).toBe('passed');
    }
    const retry = byId(run, 'webhook_emission/idempotency_key_stability/expect_key_stable_across_retries').meta.adcp.result;
    expect(retry.webhook_deliveries.map((d: { answered_status: number }) => d.answered_status)).toEqual([503, 503, 503, 200]);
    // Through the record's header allowlist: no signature headers in the meta.
    expect(Object.keys(retry.webhook_deliveries[0].headers).sort()).toEqual(['content-length', 'content-type']);
    expect(run.exitCode).toBe(0);
  });

  it('without a receiver every step is skipped not_applicable (unresolved_substitution)', async () => {
    const run = await runVitest({ config, env: { ADCP_AGENT_URL: inject('agentUrl'), ADCP_AUTH_TOKEN: 'demo-webhooks-plugin', E2E_CORPUS: 'webhook_emission', E2E_WEBHOOKS: 'off' } });
    for (const step of steps) {
      const test = byId(run, `webhook_emission/${step}`);
      expect(test.state).toBe('skipped');
      expect(test.meta.adcp.result.skip).toMatchObject({ reason: 'not_applicable', detail: expect.stringMatching(/^unresolved_substitution: /) });
    }
    expect(run.exitCode).toBe(0);
  });
});
