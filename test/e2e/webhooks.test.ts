/**
 * The webhook receiver in a real `vitest run` (child process): the plugin
 * hosts it in the main process, the storyboard's worker registers its URLs
 * and reads its deliveries over the loopback control endpoint, and the
 * verdicts and records reach the test meta.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
    const run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: inject('agentUrl'),
        ADCP_AUTH_TOKEN: 'demo-webhooks-plugin',
        E2E_CORPUS: 'webhook_emission',
      },
    });
    for (const step of steps) {
      const test = byId(run, `webhook_emission/${step}`);
      expect(test.state, `${test.fullName}\n${test.errors.map((e) => e.message).join('\n')}\n${run.stderr}`).toBe(
        'passed',
      );
    }
    const retry = byId(run, 'webhook_emission/idempotency_key_stability/expect_key_stable_across_retries').meta.adcp
      .result;
    expect(retry.webhook_deliveries.map((d: { answered_status: number }) => d.answered_status)).toEqual([
      503, 503, 503, 200,
    ]);
    // Through the record's header allowlist: no signature headers in the meta.
    expect(Object.keys(retry.webhook_deliveries[0].headers).sort()).toEqual(['content-length', 'content-type']);
    expect(run.exitCode).toBe(0);
  });

  it('on a strict seller the triggers pass because the request builder completes them, and each fill is a warning in the terminal, the JUnit report and the test meta', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-enrich-'));
    const junit = join(dir, 'junit.xml');
    try {
      const strict = inject('agentUrl').replace(/\/mcp$/, '/x/strict/mcp');
      const run = await runVitest({
        config,
        env: { ADCP_AGENT_URL: strict, ADCP_AUTH_TOKEN: 'demo-webhooks-strict', E2E_CORPUS: 'webhook_emission' },
        reporters: ['junit', 'verbose'],
        args: [`--outputFile.junit=${junit}`],
      });
      for (const step of steps)
        expect(byId(run, `webhook_emission/${step}`).state, `${step}\n${run.stderr}`).toBe('passed');
      const warnings: string[] = byId(run, 'webhook_emission/idempotency_key_presence/trigger_webhook_operation').meta
        .adcp.result.warnings;
      const bidless = warnings.find((w) => w.startsWith('packages[0].product_id = '));
      expect(bidless).toMatch(
        /^packages\[0\]\.product_id = "prod_display_ros" added: the storyboard authored no packages; the storyboard discovers no products, so the runner asked get_products itself/,
      );
      // Vitest's verbose reporter prints a passing test's annotations (the default one, a failing test's, and the failure
      // text carries them too: report/format.ts); JUnit has them (escaped as XML).
      expect(run.stdout + run.stderr).toContain('packages[0].product_id = "prod_display_ros" added');
      expect(readFileSync(junit, 'utf8')).toContain('packages[0].product_id = &quot;prod_display_ros&quot; added');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with ADCP_RUNNER_WEBHOOK_SIGNER_JWKS the signatures are verified against the operator’s JWKS, and the step says so in its meta and annotations', async () => {
    // The agent's own jwks.json, named as the operator's: the same key, another source (not the spec's discovery).
    const jwks = `${new URL(inject('agentUrl')).origin}/.well-known/jwks.json`;
    const run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: inject('agentUrl'),
        ADCP_AUTH_TOKEN: 'demo-webhooks-plugin',
        E2E_CORPUS: 'webhook_emission',
        ADCP_RUNNER_WEBHOOK_SIGNER_JWKS: jwks,
      },
      reporters: ['verbose'],
    });
    const signed = byId(run, 'webhook_emission/signature_validity/expect_signature_valid');
    expect(signed.state, `${run.stdout}\n${run.stderr}`).toBe('passed');
    expect(signed.meta.adcp.result.validations[0]).toMatchObject({ passed: true, key_source: 'operator_jwks' });
    const warning = `webhook signatures were verified against the operator-supplied JWKS ${jwks} (webhooks.signerJwks), not keys found by the spec's brand.json discovery`;
    expect(signed.meta.adcp.result.warnings[0]).toContain(warning);
    expect(run.stdout + run.stderr).toContain(warning);
    expect(run.exitCode).toBe(0);
  });

  it('a signer JWKS that cannot be read stops the run before any step, with one line naming the fix', async () => {
    const run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: inject('agentUrl'),
        ADCP_AUTH_TOKEN: 'demo-webhooks-plugin',
        E2E_CORPUS: 'webhook_emission',
        ADCP_RUNNER_WEBHOOK_SIGNER_JWKS: 'no-such-jwks.json',
      },
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode).toBe(1);
    expect(output).toMatch(
      /vitest-adcp cannot run the storyboards: the webhook signer JWKS \S+no-such-jwks\.json cannot be read \(ENOENT\): set webhooks\.signerJwks \(--webhook-signer-jwks, ADCP_RUNNER_WEBHOOK_SIGNER_JWKS\) to a JWKS JSON file/,
    );
    expect(run.tests).toEqual([]);
  });

  it('without a receiver every step is skipped not_applicable (unresolved_substitution)', async () => {
    const run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: inject('agentUrl'),
        ADCP_AUTH_TOKEN: 'demo-webhooks-plugin',
        E2E_CORPUS: 'webhook_emission',
        E2E_WEBHOOKS: 'off',
      },
    });
    for (const step of steps) {
      const test = byId(run, `webhook_emission/${step}`);
      expect(test.state).toBe('skipped');
      expect(test.meta.adcp.result.skip).toMatchObject({
        reason: 'not_applicable',
        detail: expect.stringMatching(/^unresolved_substitution: /),
      });
    }
    expect(run.exitCode).toBe(0);
  });
});
