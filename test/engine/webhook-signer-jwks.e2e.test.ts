/**
 * The operator-supplied webhook signer JWKS (issue 31 item 7; src/webhooks/operator-jwks.ts): a seller in local
 * development publishes no brand.json, so the spec's key discovery grades its signatures
 * `webhook_signature_key_unknown`; `webhookSignerJwks` (plugin `webhooks.signerJwks`) verifies them against a JWKS
 * the operator gives instead, and every such verdict says its keys are not the spec's discovery.
 *
 * Real sockets throughout: the fixture agent (its brand.json and jwks.json unpublished) signs its webhooks with
 * @adcp/sdk's signWebhook, a WebhookReceiver on 127.0.0.1 takes them, the JWKS is a file on disk or a loopback HTTP
 * server. The records go through the report builder and the contract schema.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import type { StepResult, ValidationResult } from '../../src/model/records.js';
import { openStoryboardRun } from '../../src/open-run.js';
import { buildReport } from '../../src/report/build.js';
import { serialiseReport } from '../../src/report/contract.js';
import { formatStepFailure } from '../../src/report/format.js';
import { redactStepResult } from '../../src/report/record.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { WebhookReceiver } from '../../src/webhooks/receiver.js';
import { assertValidContractReport } from '../helpers/contract-schema.js';
import { phasedStoryboard } from '../helpers/inline-run.js';

const TOKEN = 'demo-signer-jwks';
const dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-signer-jwks-'));
let agent: FixtureAgent | undefined;
let receiver: WebhookReceiver | undefined;
const servers: Server[] = [];
let sessions = 0;

/** A seller on localhost that has published neither brand.json nor a JWKS. */
async function localSeller(): Promise<FixtureAgent> {
  agent ??= await startFixtureAgent({ publishWebhookKeys: false });
  return agent;
}
afterAll(async () => {
  await receiver?.close();
  await agent?.close();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

const storyboard = (() => {
  const loaded = loadStoryboard(
    phasedStoryboard([
      {
        id: 'main',
        steps: [
          {
            id: 'book',
            task: 'create_media_buy',
            sample_request: {
              idempotency_key: '$generate:uuid_v4#book',
              push_notification_config: { url: '{{runner.webhook_url:book}}' },
            },
          },
          { id: 'signed', task: 'expect_webhook_signature_valid', triggered_by: 'book', stateful: true },
        ],
      },
    ]),
    '/virtual/signer-jwks.storyboard.yaml',
  );
  if (!loaded.ok) throw new Error('the inline storyboard does not load');
  return loaded.storyboard;
})();

/** Runs trigger + signature step on a fresh sandbox of the local seller; the signature step's record. */
async function signatureStep(webhookSignerJwks?: string): Promise<StepResult> {
  const seller = await localSeller();
  receiver ??= await WebhookReceiver.start();
  const run = openStoryboardRun(
    storyboard,
    {
      agentUrl: seller.urlFor([`session_jwks${++sessions}`]),
      authToken: TOKEN,
      timeoutMs: 10_000,
      projectRoot: dir,
      ...(webhookSignerJwks !== undefined ? { webhookSignerJwks } : {}),
    },
    { env: {}, webhooks: receiver },
  );
  try {
    const outcomes = await run.runAll();
    expect(outcomes[0]!.result.passed, 'the trigger').toBe(true);
    return outcomes[1]!.result;
  } finally {
    await run.close();
  }
}

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** A JWKS served on 127.0.0.1 (plain http: loopback is allowed), and its URL. */
async function served(jwks: unknown): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url !== '/jwks.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
}

const failures = (r: StepResult): ValidationResult[] => r.validations.filter((v) => !v.passed);
const codes = (r: StepResult) => failures(r).map((v) => (v.actual as { code: string }).code);

/** The record through the report builder and the contract schema of its version; the report's step. */
function throughReport(result: StepResult): Record<string, unknown> {
  const info = { id: result.storyboard_id, title: 'signer jwks', file: '/virtual/signer-jwks.storyboard.yaml' };
  const status = result.skip ? 'skipped' : result.passed ? 'passed' : 'failed';
  const report = serialiseReport(
    buildReport(
      [
        {
          project: '',
          file: info.file,
          name: result.step_id,
          state: status,
          errors: [],
          meta: { adcp: { id: `${info.id}/main/${result.step_id}`, status, result, storyboard: info } },
        },
      ],
      { root: '/virtual' },
    ),
  );
  assertValidContractReport(report);
  const storyboards = (report as unknown as { storyboards: { steps: Record<string, unknown>[] }[] }).storyboards;
  return storyboards[0]!.steps[0]!;
}

describe('a seller in local development, without brand.json', () => {
  it('without signerJwks its signature grades webhook_signature_key_unknown, the detail naming discovery and the local-development option', async () => {
    const result = await signatureStep();
    expect(result.passed).toBe(false);
    expect(codes(result)).toEqual(['webhook_signature_key_unknown']);
    const [failure] = failures(result);
    expect(failure!.error).toMatch(
      /key discovery: GET http:\/\/127\.0\.0\.1:\d+\/\.well-known\/brand\.json answered HTTP 404/,
    );
    expect(failure!.error).toContain(
      "for an agent in local development that publishes no brand.json, webhooks.signerJwks (--webhook-signer-jwks) verifies against a JWKS you give, outside the spec's discovery",
    );
    expect(failure!.key_source).toBeUndefined();
    expect(result.warnings ?? []).toEqual([]);
  });

  it('with signerJwks a file of its public JWKS: the signature verifies, and the record, the report and the terminal say the keys are the operator’s', async () => {
    const seller = await localSeller();
    const path = file('public.json', seller.webhookJwks);
    const result = await signatureStep(path);
    expect(result.passed, JSON.stringify(result.validations)).toBe(true);
    const [check] = result.validations;
    expect(check).toMatchObject({
      passed: true,
      key_source: 'operator_jwks',
      description: expect.stringContaining('keyid fixture-webhook-ed25519'),
      observations: [
        `key source: the operator-supplied JWKS ${path} (webhooks.signerJwks), not the spec's brand.json discovery`,
      ],
    });
    expect(result.warnings).toEqual([
      `webhook signatures were verified against the operator-supplied JWKS ${path} (webhooks.signerJwks), not keys found by the spec's brand.json discovery: a pass here is not a pass under AdCP key discovery; publish the key at your brand.json agents[].jwks_uri before deploying`,
    ]);
    const step = throughReport(redactStepResult(result));
    expect(step.warnings).toEqual(result.warnings);
    expect((step.validations as ValidationResult[])[0]).toMatchObject({ key_source: 'operator_jwks' });
  });

  it('a relative file path is read from the project root; a key file with the private key in it verifies, and no record holds the private member', async () => {
    const seller = await localSeller();
    const secret = seller.webhookPrivateJwks.keys[0]!.d as string;
    file('private.json', seller.webhookPrivateJwks);
    const result = await signatureStep('private.json');
    expect(result.passed, JSON.stringify(result.validations)).toBe(true);
    expect(result.validations[0]!.observations![0]).toContain(join(dir, 'private.json'));
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(JSON.stringify(throughReport(redactStepResult(result)))).not.toContain(secret);
  });

  it('with signerJwks a loopback http URL serving its public JWKS: the signature verifies, the record names the URL', async () => {
    const seller = await localSeller();
    const url = await served(seller.webhookJwks);
    const result = await signatureStep(url);
    expect(result.passed, JSON.stringify(result.validations)).toBe(true);
    expect(result.validations[0]).toMatchObject({ key_source: 'operator_jwks' });
    expect(result.warnings![0]).toContain(`the operator-supplied JWKS ${url} (webhooks.signerJwks)`);
  });

  it('a JWKS without the signer’s kid fails webhook_signature_key_unknown, naming the operator’s JWKS and its kids', async () => {
    const other = { ...publicKey(), kid: 'someone-else' };
    const result = await signatureStep(file('other-kid.json', { keys: [other] }));
    expect(codes(result)).toEqual(['webhook_signature_key_unknown']);
    expect(failures(result)[0]!.error).toContain(
      `not in the operator-supplied JWKS ${join(dir, 'other-kid.json')} (webhooks.signerJwks, which replaces the spec's brand.json discovery; its kids: someone-else)`,
    );
    expect(failures(result)[0]!.key_source).toBe('operator_jwks');
    // A failure under the operator's keys is marked too: the terminal text shows the warning and the key source.
    const text = formatStepFailure(redactStepResult(result)).message;
    expect(text).toContain('not keys found by the spec');
    throughReport(redactStepResult(result));
  });

  it('a JWKS with the signer’s kid but another key fails webhook_signature_invalid', async () => {
    const wrong = { ...publicKey(), kid: 'fixture-webhook-ed25519' };
    const result = await signatureStep(file('wrong-key.json', { keys: [wrong] }));
    expect(codes(result)).toEqual(['webhook_signature_invalid']);
    expect(failures(result)[0]!.key_source).toBe('operator_jwks');
  });

  it('a JWKS that cannot be read makes the step a one-line configuration error, not a signature verdict', async () => {
    const missing = join(dir, 'missing.json');
    const result = await signatureStep(missing);
    expect(result.passed).toBe(false);
    expect(result.validations).toEqual([]);
    expect(result.error).toBe(
      `the webhook signer JWKS ${missing} cannot be read (ENOENT): set webhooks.signerJwks (--webhook-signer-jwks, ADCP_RUNNER_WEBHOOK_SIGNER_JWKS) to a JWKS JSON file ({"keys": [...]}) or to an https URL that serves one (plain http only to a loopback host)`,
    );
  });
});

/** A webhook-signing Ed25519 public JWK that is not the fixture's. */
function publicKey(): Record<string, unknown> {
  const { x } = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  return { kty: 'OKP', crv: 'Ed25519', x, alg: 'EdDSA', use: 'sig', key_ops: ['verify'], adcp_use: 'webhook-signing' };
}
