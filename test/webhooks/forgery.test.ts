/**
 * Issue 20, case 9: a forged webhook through a report. The receiver accepts a
 * delivery only at a URL minted and registered for the run, and the URL's
 * operation id is its unguessable part — so no output may name it: the step
 * records, the contract JSON, the NDJSON stream (world-readable, written as
 * the run goes), JUnit, HTML, markdown, the terminal and the test meta show
 * `…/step/<step>/[redacted]`. A local process that reads an output and POSTs
 * to the URL it finds there gets 404, and `expect_webhook` does not pass on
 * its body; the agent, which was sent the whole URL, delivers and its RFC 9421
 * signatures (which cover the target URI) verify.
 *
 * Real runs only: the engine with a real WebhookReceiver against the fixture
 * agent (a forger between the trigger and the assertions), and a real
 * `vitest run` with the plugin's receiver and every reporter's file.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { stepFailureText } from '../../src/adapter/step-failure.js';
import { resolveCorpus } from '../../src/corpus.js';
import type { StepResult } from '../../src/model/records.js';
import { openStoryboardRun } from '../../src/open-run.js';
import { redactStepResult } from '../../src/report/record.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { WebhookReceiver } from '../../src/webhooks/receiver.js';
import { builtModule } from '../helpers/built.js';
import { phasedStoryboard } from '../helpers/inline-run.js';
import { repoRoot, runVitest } from '../helpers/run-vitest.js';

const TOKEN = 'demo-webhook-forgery';
let agent: FixtureAgent | undefined;
const receivers: WebhookReceiver[] = [];
const scratch: string[] = [];

async function fixture(): Promise<FixtureAgent> {
  agent ??= await startFixtureAgent();
  return agent;
}
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await agent?.close();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** Every spelling of an operation id an output could carry it in. */
const spellings = (id: string) => [id, id.toUpperCase(), id.replace(/-/g, ''), id.replace(/-/g, '').toUpperCase()];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The operation ids of the receiver URLs the agent POSTed to (the last path segment: what it echoes as operation_id). */
function deliveredOperationIds(a: FixtureAgent, base: string): string[] {
  const ids = new Set(
    a.webhookAttempts
      .filter((w) => w.url.startsWith(`${base}/step/`))
      .map((w) => new URL(w.url).pathname.split('/').pop()!),
  );
  return [...ids];
}

/** A forged delivery, shaped like the fixture's (mcp-webhook-payload.json), with a mark only a filter for it matches. */
async function forge(url: string): Promise<number> {
  const body = JSON.stringify({
    idempotency_key: 'whk_forged_0123456789abcdef',
    operation_id: url.split('/').pop(),
    task_id: 'forged',
    task_type: 'create_media_buy',
    protocol: 'media-buy',
    status: 'completed',
    timestamp: new Date().toISOString(),
    result: {},
    ext: { forged: true },
  });
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await response.arrayBuffer();
  return response.status;
}

describe('a forger reading the step records (engine, real receiver, fixture agent)', () => {
  const storyboard = () => {
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
            // Only the forged body carries ext.forged: this step passes only if the forgery was accepted.
            {
              id: 'forged_only',
              task: 'expect_webhook',
              triggered_by: 'book',
              stateful: true,
              filter: { 'ext.forged': true },
              timeout_seconds: 1.5,
            },
            {
              id: 'real',
              task: 'expect_webhook',
              triggered_by: 'book',
              stateful: true,
              filter: { operation_id: '{{prior_step.book.operation_id}}', status: 'completed' },
            },
            { id: 'signed', task: 'expect_webhook_signature_valid', triggered_by: 'book', stateful: true },
          ],
        },
      ]),
      '/virtual/forgery.storyboard.yaml',
    );
    if (!loaded.ok)
      throw new Error(loaded.diagnostics.map((d) => `${d.line}:${d.column} [${d.rule}] ${d.message}`).join('\n'));
    return loaded.storyboard;
  };

  it('the records show the URL without its operation id; POSTing to what they show is 404 and passes nothing; the agent’s signed deliveries pass', async () => {
    const a = await fixture();
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const corpus = resolveCorpus(undefined);
    const engine = openStoryboardRun(
      storyboard(),
      { agentUrl: a.urlFor(['session_forgery1']), authToken: TOKEN, corpusRoot: corpus.root, timeoutMs: 10_000 },
      { env: {}, webhooks: receiver },
    );
    try {
      const book = await engine.settle('main', 'book');
      expect(book.status).toBe('passed');
      // What the run writes out for the step (the worker's record: meta, reports, NDJSON are built from it).
      const output = (r: StepResult) => redactStepResult(r, engine.secrets());
      const shown = (output(book.result).request!.payload as { push_notification_config: { url: string } })
        .push_notification_config.url;
      // Soft: on a regression every claim below reports, not only the first.
      expect.soft(shown).toBe(`${receiver.baseUrl}/step/book/[redacted]`);

      // The forger POSTs to the URL it read, and to it with a guessed id: 404, nothing recorded.
      expect.soft(await forge(shown)).toBe(404);
      expect.soft(await forge(`${receiver.baseUrl}/step/book/00000000-0000-4000-8000-000000000000`)).toBe(404);

      const forged = await engine.settle('main', 'forged_only');
      expect.soft(forged.status).toBe('failed');
      expect
        .soft(forged.result.validations.filter((v) => !v.passed).map((v) => (v.actual as { code: string }).code))
        .toEqual(['no_webhook_received']);
      const real = await engine.settle('main', 'real');
      const signed = await engine.settle('main', 'signed');
      expect([real.status, signed.status]).toEqual(['passed', 'passed']);
      expect(signed.result.validations).toEqual([
        expect.objectContaining({
          passed: true,
          description: expect.stringContaining('keyid fixture-webhook-ed25519'),
        }),
      ]);
      // Every delivery the receiver kept is the agent's, at the URL it was sent (operation id included).
      const sent = (book.result.request!.payload as { push_notification_config: { url: string } })
        .push_notification_config.url;
      const operationId = sent.split('/').pop()!;
      expect(operationId).toMatch(UUID);
      expect(
        receiver.deliveries().map((d) => [d.url, (JSON.parse(d.body.toString()) as { ext?: unknown }).ext]),
      ).toEqual(receiver.deliveries().map(() => [sent, undefined]));
      expect(deliveredOperationIds(a, receiver.baseUrl)).toEqual([operationId]);

      // No output of any step names the operation id, in any spelling: records, and the failure text the terminal shows.
      for (const outcome of [book, forged, real, signed]) {
        const record = output(outcome.result);
        const texts = [
          JSON.stringify(record),
          ...(outcome.status === 'failed' ? [JSON.stringify(stepFailureText(record, engine.secrets()))] : []),
        ];
        for (const text of texts) for (const spelling of spellings(operationId)) expect(text).not.toContain(spelling);
      }
      const deliveries = output(real.result).webhook_deliveries!;
      expect(deliveries.map((d) => d.url)).toEqual(deliveries.map(() => `${receiver.baseUrl}/step/book/[redacted]`));
      expect(deliveries[0]!.body).toMatchObject({ operation_id: '[redacted]', status: 'completed' });
      expect(
        stepFailureText(output(forged.result), engine.secrets()).details +
          stepFailureText(output(forged.result), engine.secrets()).headline,
      ).toContain(`/step/book/[redacted]`);
    } finally {
      await engine.close();
    }
  });
});

describe('a forger reading the NDJSON stream (a real `vitest run`, the plugin’s receiver, every report file)', () => {
  it('no output names an operation id the agent was sent; the agent’s signed deliveries pass', async () => {
    const a = await fixture();
    const dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-forgery-'));
    scratch.push(dir);
    const files = {
      json: join(dir, 'contract.json'),
      ndjson: join(dir, 'contract.ndjson'),
      junit: join(dir, 'junit.xml'),
      html: join(dir, 'report.html'),
      markdown: join(dir, 'summary.md'),
    };
    // A key rotated on retry fails one step, so failure text (which lists the deliveries and their URLs) is printed too.
    const agentUrl = a.urlFor(['webhook_rotating_key@create_media_buy', 'session_forgery2']);
    const before = new Set(a.webhookAttempts.map((w) => w.url));
    const run = await runVitest({
      config: join(repoRoot, 'test', 'e2e', 'webhooks.config.ts'),
      env: { ADCP_AGENT_URL: agentUrl, ADCP_AUTH_TOKEN: TOKEN, E2E_CORPUS: 'webhook_emission' },
      reporters: [await builtModule('vitest/reporter'), 'junit'],
      args: [
        `--outputFile.vitest-adcp=${files.json}`,
        `--outputFile.vitest-adcp-ndjson=${files.ndjson}`,
        `--outputFile.junit=${files.junit}`,
        `--outputFile.vitest-adcp-html=${files.html}`,
        `--outputFile.vitest-adcp-markdown=${files.markdown}`,
      ],
    });
    const state = (step: string) => run.tests.find((t) => t.meta?.adcp?.id === `webhook_emission/${step}`)?.state;
    // (c) The agent's deliveries, signatures included, still pass; the rotated key fails its own step.
    expect(
      {
        presence: state('idempotency_key_presence/expect_webhook_presence'),
        retry: state('idempotency_key_stability/expect_key_stable_across_retries'),
        signature: state('signature_validity/expect_signature_valid'),
      },
      run.stderr,
    ).toEqual({ presence: 'passed', retry: 'failed', signature: 'passed' });

    const attempts = a.webhookAttempts.filter(
      (w) => !before.has(w.url) && /\/step\/trigger_[a-z_]+\/[^/]+$/.test(new URL(w.url).pathname),
    );
    const operationIds = [...new Set(attempts.map((w) => new URL(w.url).pathname.split('/').pop()!))];
    expect(operationIds.length).toBe(3);
    for (const id of operationIds) expect(id).toMatch(UUID);

    // (a) Not in any spelling, in any output.
    const outputs: Record<string, string> = {
      stdout: run.stdout,
      stderr: run.stderr,
      meta: JSON.stringify(run.tests.map((t) => [t.meta, t.errors])),
    };
    for (const [name, file] of Object.entries(files)) outputs[name] = readFileSync(file, 'utf8');
    for (const name of readdirSync(dir)) outputs[name] ??= readFileSync(join(dir, name), 'utf8');
    for (const [name, text] of Object.entries(outputs)) {
      for (const id of operationIds)
        for (const spelling of spellings(id)) expect(text.includes(spelling), `${name} names ${spelling}`).toBe(false);
    }
    // The stream shows each trigger's URL with its operation id replaced, and the failure text is in the terminal.
    const steps = outputs
      .ndjson!.split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((l) => l.type === 'step');
    const trigger = steps.find((l) => l.step.step_id === 'trigger_webhook_operation')!.step;
    expect(trigger.request.payload.push_notification_config.url).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/step\/trigger_webhook_operation\/\[redacted\]$/,
    );
    expect(run.stdout + run.stderr).toMatch(/\/step\/trigger_retry_scenario\/\[redacted\]/);
  });
});
