/**
 * The webhook tasks (src/roles/webhook-receiver/webhooks.ts) end to end: the corpus
 * storyboards that use them (universal/webhook-emission.yaml,
 * universal/idempotency.yaml) and inline ones, through the real engine and
 * MCP transport, against the fixture agent — which signs its webhooks with
 * @adcp/sdk's signWebhook and publishes its key in brand.json — and a real
 * receiver on 127.0.0.1. Each run has its own `session_<key>` sandbox; every
 * wait is on a delivery or the storyboard's own window, never a sleep.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { resolveCorpus } from '../../src/corpus.js';
import type { StepResult, ValidationResult } from '../../src/model/records.js';
import { openStoryboardRun } from '../../src/open-run.js';
import { formatStepFailure } from '../../src/report/format.js';
import { redactStepResult } from '../../src/report/record.js';
import { loadStoryboard, loadStoryboardFile } from '../../src/storyboard/load.js';
import type { Storyboard } from '../../src/model/storyboard.js';
import { McpTransport } from '../../src/transport/mcp.js';
import { WebhookReceiver, type WebhookReceiverOptions } from '../../src/webhooks/receiver.js';
import { phasedStoryboard, type InlinePhase } from '../helpers/inline-run.js';

const TOKEN = 'demo-webhooks-e2e';
let agent: FixtureAgent | undefined;
const receivers: WebhookReceiver[] = [];
let sessions = 0;

/** Lazily started (Stryker: work a test needs happens in the test). */
async function fixture(): Promise<FixtureAgent> {
  agent ??= await startFixtureAgent();
  return agent;
}
async function receiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const r = await WebhookReceiver.start(options);
  receivers.push(r);
  return r;
}
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await agent?.close();
});

const corpus = resolveCorpus(undefined);
function corpusStoryboard(path: string): Storyboard {
  const loaded = loadStoryboardFile(join(corpus.root, path), { corpusRoot: corpus.root });
  if (!loaded.ok) throw new Error(`${path} does not load`);
  return loaded.storyboard;
}
function inline(phases: InlinePhase[], root: Record<string, unknown> = {}): Storyboard {
  const loaded = loadStoryboard(phasedStoryboard(phases, root), '/virtual/webhooks.storyboard.yaml');
  if (!loaded.ok)
    throw new Error(loaded.diagnostics.map((d) => `${d.line}:${d.column} [${d.rule}] ${d.message}`).join('\n'));
  return loaded.storyboard;
}

interface Ran {
  /** step id → passed | failed | skipped:<reason> */
  verdicts: Record<string, string>;
  results: Record<string, StepResult>;
  url: string;
  receiver?: WebhookReceiver;
}

/** Runs a storyboard on a fresh sandbox of the fixture agent exhibiting `behaviours` (scoped to create_media_buy). */
async function run(
  storyboard: Storyboard,
  options: {
    behaviours?: string[];
    receiver?: WebhookReceiver | false;
    timeoutMs?: number;
    before?: (url: string) => Promise<void>;
  } = {},
): Promise<Ran> {
  const a = await fixture();
  const url = a.urlFor([...(options.behaviours ?? []).map((b) => `${b}@create_media_buy`), `session_wh${++sessions}`]);
  await options.before?.(url);
  const sink = options.receiver === false ? undefined : (options.receiver ?? (await receiver()));
  const engine = openStoryboardRun(
    storyboard,
    { agentUrl: url, authToken: TOKEN, corpusRoot: corpus.root, timeoutMs: options.timeoutMs ?? 10_000 },
    { env: {}, ...(sink ? { webhooks: sink } : {}) },
  );
  try {
    const outcomes = await engine.runAll();
    const results = Object.fromEntries(outcomes.map((o) => [o.result.step_id, o.result]));
    const verdicts = Object.fromEntries(
      outcomes.map((o) => [o.result.step_id, o.status === 'skipped' ? `skipped:${o.result.skip!.reason}` : o.status]),
    );
    return { verdicts, results, url, ...(sink ? { receiver: sink } : {}) };
  } finally {
    await engine.close();
  }
}

const failures = (r: StepResult): ValidationResult[] => r.validations.filter((v) => !v.passed);
const codes = (r: StepResult): string[] => failures(r).map((v) => (v.actual as { code: string }).code);

const EMISSION = 'universal/webhook-emission.yaml';
const EMISSION_STEPS = [
  'get_capabilities',
  'trigger_webhook_operation',
  'expect_webhook_presence',
  'trigger_retry_scenario',
  'expect_key_stable_across_retries',
  'trigger_signed_webhook',
  'expect_signature_valid',
];
const verdictsOf = (r: Ran, expected: Record<string, string>) =>
  expect(r.verdicts).toEqual(Object.fromEntries(EMISSION_STEPS.map((id) => [id, expected[id] ?? 'passed'])));

describe('universal/webhook-emission.yaml against the fixture agent', () => {
  it('passes every step when the agent signs, keys and retries correctly; the records show what arrived', async () => {
    const r = await run(corpusStoryboard(EMISSION));
    verdictsOf(r, {});
    // The trigger carried a URL minted for its own step, and nothing unresolved.
    const sent = r.results.trigger_retry_scenario!.request!.payload as { push_notification_config: { url: string } };
    expect(sent.push_notification_config.url).toMatch(
      new RegExp(`^${r.receiver!.baseUrl}/step/trigger_retry_scenario/[0-9a-f-]{36}$`),
    );
    // Retry contract: 503 three times, then 200 — four deliveries, one key.
    const retry = r.results.expect_key_stable_across_retries!;
    expect(retry.webhook_deliveries!.map((d) => d.answered_status)).toEqual([503, 503, 503, 200]);
    expect(
      new Set(retry.webhook_deliveries!.map((d) => (d.body as { idempotency_key: string }).idempotency_key)).size,
    ).toBe(1);
    expect(retry.validations.map((v) => v.description)).toEqual([
      '4 deliveries observed (the receiver answered 503, 503, 503, 200)',
      'the idempotency_key is byte-identical on all 4 deliveries',
      "every delivery's RFC 9421 signature verifies, each with a fresh nonce",
    ]);
    // Presence: body, key and the payload schema (with the schema's identity).
    const presence = r.results.expect_webhook_presence!;
    expect(presence.validations.find((v) => v.description.includes('mcp-webhook-payload'))).toMatchObject({
      passed: true,
      schema_id: '/schemas/3.0.6/core/mcp-webhook-payload.json',
    });
    const presenceUrl = (
      r.results.trigger_webhook_operation!.request!.payload as { push_notification_config: { url: string } }
    ).push_notification_config.url;
    expect(presence.webhook_deliveries![0]!.body).toMatchObject({
      task_type: 'create_media_buy',
      status: 'completed',
      operation_id: presenceUrl.split('/').pop(),
    });
    expect(r.results.expect_signature_valid!.validations).toEqual([
      expect.objectContaining({ passed: true, description: expect.stringContaining('keyid fixture-webhook-ed25519') }),
    ]);
    expect(presence.extraction.note).toMatch(/nothing is sent to the agent/);
  });

  it('unsigned deliveries fail the signature step and, under 9421, the retry step (every retry is verified)', async () => {
    const r = await run(corpusStoryboard(EMISSION), { behaviours: ['webhook_unsigned'] });
    verdictsOf(r, { expect_key_stable_across_retries: 'failed', expect_signature_valid: 'failed' });
    expect(codes(r.results.expect_signature_valid!)).toEqual(['webhook_signature_header_malformed']);
    expect(failures(r.results.expect_signature_valid!)[0]!.error).toMatch(/no Signature-Input or Signature header/);
    expect(codes(r.results.expect_key_stable_across_retries!)).toEqual(['webhook_signature_header_malformed']);
    expect(failures(r.results.expect_key_stable_across_retries!)[0]!.error).toMatch(/^delivery 1 of 4: /);
  });

  it('a payload without idempotency_key fails presence (missing_idempotency_key, and the payload schema) and the retry step', async () => {
    const r = await run(corpusStoryboard(EMISSION), { behaviours: ['webhook_no_idempotency_key'] });
    verdictsOf(r, { expect_webhook_presence: 'failed', expect_key_stable_across_retries: 'failed' });
    expect(codes(r.results.expect_webhook_presence!)).toEqual(['missing_idempotency_key', 'schema_violation']);
    expect(failures(r.results.expect_webhook_presence!)[1]!.error).toMatch(/idempotency_key/);
    expect(codes(r.results.expect_key_stable_across_retries!)).toEqual(['missing_idempotency_key']);
  });

  it('a key rotated on retry fails only the retry step, with every observed key', async () => {
    const r = await run(corpusStoryboard(EMISSION), { behaviours: ['webhook_rotating_key'] });
    verdictsOf(r, { expect_key_stable_across_retries: 'failed' });
    const [rotated] = failures(r.results.expect_key_stable_across_retries!);
    expect(rotated).toMatchObject({ json_pointer: '/idempotency_key', actual: { code: 'idempotency_key_rotated' } });
    const observed = (rotated!.actual as { observed: string[] }).observed;
    expect(observed).toHaveLength(4);
    expect(new Set(observed).size).toBe(4);
  });

  it('a sender that does not retry fails the retry step with insufficient_retries once the window closes', async () => {
    const r = await run(corpusStoryboard(EMISSION), { behaviours: ['webhook_no_retry'], timeoutMs: 1_500 });
    verdictsOf(r, { expect_key_stable_across_retries: 'failed' });
    const [insufficient] = failures(r.results.expect_key_stable_across_retries!);
    expect(insufficient).toMatchObject({ actual: { code: 'insufficient_retries', observed: 1 } });
    expect(insufficient!.error).toMatch(/answered 503\): the agent did not retry/);
    expect(insufficient!.error).toMatch(/timeout_seconds 90, capped by the run's step timeout/);
  });

  it('a nonce reused across retries fails the retry step on the second delivery (the run-scoped replay store)', async () => {
    const r = await run(corpusStoryboard(EMISSION), { behaviours: ['webhook_reused_nonce'] });
    verdictsOf(r, { expect_key_stable_across_retries: 'failed' });
    expect(codes(r.results.expect_key_stable_across_retries!)).toEqual(['webhook_signature_replayed']);
    expect(failures(r.results.expect_key_stable_across_retries!)[0]!.error).toMatch(/^delivery 2 of 4: /);
  });

  it('no webhook at all: every assertion step fails no_webhook_received, bounded by the step timeout', async () => {
    const r = await run(corpusStoryboard(EMISSION), { behaviours: ['webhook_never'], timeoutMs: 1_000 });
    verdictsOf(r, {
      expect_webhook_presence: 'failed',
      expect_key_stable_across_retries: 'failed',
      expect_signature_valid: 'failed',
    });
    expect(codes(r.results.expect_webhook_presence!)).toEqual(['no_webhook_received']);
    expect(codes(r.results.expect_key_stable_across_retries!)).toEqual(['insufficient_retries']);
    expect(codes(r.results.expect_signature_valid!)).toEqual(['no_webhook_received']);
    expect(r.results.expect_webhook_presence!.webhook_deliveries).toEqual([]);
  });

  it('without a receiver the whole storyboard is not_applicable (unresolved_substitution), and nothing reaches the agent', async () => {
    const a = await fixture();
    const r = await run(corpusStoryboard(EMISSION), { receiver: false });
    expect(Object.values(r.verdicts)).toEqual(EMISSION_STEPS.map(() => 'skipped:not_applicable'));
    expect(r.results.get_capabilities!.skip!.detail).toMatch(
      /^unresolved_substitution: this storyboard needs the runner's webhook receiver \(test-kit contract "webhook_receiver_runner"\)/,
    );
    const session = new URL(r.url).pathname.match(/session_(\w+)/)![1];
    expect(a.calls.filter((c) => c.session === session)).toEqual([]);
  });
});

describe('{{runner.webhook_url}} in another corpus storyboard: universal/idempotency.yaml', () => {
  /** The storyboard books the placeholder product "test-product" / "test-pricing": seed them in the run's sandbox. */
  const seedPlaceholders = async (url: string) => {
    const transport = new McpTransport({ url, maxResponseBytes: 1_000_000 });
    const options = { credentials: { kind: 'bearer' as const, token: TOKEN }, timeoutMs: 10_000 };
    try {
      await transport.call(
        'comply_test_controller',
        { scenario: 'seed_product', params: { product_id: 'test-product', fixture: {} } },
        options,
      );
      await transport.call(
        'comply_test_controller',
        {
          scenario: 'seed_pricing_option',
          params: { product_id: 'test-product', pricing_option_id: 'test-pricing', fixture: {} },
        },
        options,
      );
    } finally {
      await transport.close();
    }
  };

  /**
   * The corpus storyboard, less one capture the fixture cannot satisfy: `idempotency_key_a` reads
   * `idempotency_key` from the create response, a field create-media-buy-response.json does not define
   * (the fixture does not echo it), and its failure would cascade over the steps under test.
   */
  const idempotency = () => {
    const storyboard = corpusStoryboard('universal/idempotency.yaml');
    const initial = storyboard.phases.flatMap((p) => p.steps).find((s) => s.id === 'create_media_buy_initial')!;
    initial.context_outputs = initial.context_outputs!.filter((o) => o.name !== 'idempotency_key_a');
    return storyboard;
  };

  it('the initial call and its replay carry the same minted URL; one logical webhook passes no_duplicate_webhooks_on_replay', async () => {
    const r = await run(idempotency(), { before: seedPlaceholders, timeoutMs: 2_000 });
    expect(r.verdicts).toMatchObject({
      create_media_buy_initial: 'passed',
      create_media_buy_replay: 'passed',
      no_duplicate_webhooks_on_replay: 'passed',
    });
    const urlOf = (id: string) =>
      (r.results[id]!.request!.payload as { push_notification_config: { url: string } }).push_notification_config.url;
    expect(urlOf('create_media_buy_initial')).toMatch(
      new RegExp(`^${r.receiver!.baseUrl}/step/create_media_buy_initial/[0-9a-f-]{36}$`),
    );
    expect(urlOf('create_media_buy_replay')).toBe(urlOf('create_media_buy_initial'));
    expect(r.results.no_duplicate_webhooks_on_replay!.webhook_deliveries).toHaveLength(1);
  });

  it('an agent that re-sends the webhook on replay fails it with duplicate_webhook_on_replay', async () => {
    const r = await run(idempotency(), {
      before: seedPlaceholders,
      behaviours: ['webhook_duplicate_on_replay'],
      timeoutMs: 2_000,
    });
    expect(r.verdicts).toMatchObject({ create_media_buy_replay: 'passed', no_duplicate_webhooks_on_replay: 'failed' });
    expect(codes(r.results.no_duplicate_webhooks_on_replay!)).toEqual(['duplicate_webhook_on_replay']);
    expect(
      (failures(r.results.no_duplicate_webhooks_on_replay!)[0]!.actual as { observed: string[] }).observed,
    ).toHaveLength(2);
  });

  it('without a receiver the whole storyboard is not_applicable before any step runs (unresolved_substitution), create_media_buy_missing_key included, and nothing reaches the agent', async () => {
    // storyboard-schema.yaml (3.0.6 as 3.1) > Unresolved substitution behavior, preflight 1: "grade the storyboard as
    // not_applicable … and skip execution entirely. This is the preferred behavior for absent webhook receivers."
    const a = await fixture();
    const r = await run(idempotency(), { receiver: false });
    const steps = idempotency().phases.flatMap((p) => p.steps.map((s) => s.id));
    expect(Object.keys(r.verdicts)).toEqual(steps);
    expect(Object.values(r.verdicts)).toEqual(steps.map(() => 'skipped:not_applicable'));
    const detail =
      'unresolved_substitution: {{runner.webhook_url:create_media_buy_initial}} (step "create_media_buy_initial", step "create_media_buy_replay") needs the runner\'s webhook receiver, and this run hosts none (plugin option webhooks: { receiver: \'loopback\' }, or --webhook-receiver) — so no step of this storyboard runs';
    for (const id of steps) expect(r.results[id]!.skip!.detail, id).toBe(detail);
    const session = new URL(r.url).pathname.match(/session_(\w+)/)![1];
    expect(a.calls.filter((c) => c.session === session)).toEqual([]);
  });
});

describe('webhook steps in inline storyboards', () => {
  const trigger = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    task: 'create_media_buy',
    sample_request: {
      idempotency_key: `$generate:uuid_v4#${id}`,
      push_notification_config: { url: `{{runner.webhook_url:${id}}}`, ...extra },
    },
  });
  const expectWebhook = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    task: 'expect_webhook',
    triggered_by: 'book',
    stateful: true,
    ...extra,
  });

  it('filter fields other than operation_id match the payload; no match within the window is no_webhook_received, naming what did arrive', async () => {
    const r = await run(
      inline([
        {
          id: 'main',
          steps: [
            trigger('book'),
            // The trigger's one package is the runner's (request enrichment: the first product the agent lists).
            expectWebhook('completed', {
              filter: {
                operation_id: '{{prior_step.book.operation_id}}',
                status: 'completed',
                'result.packages[0].product_id': 'prod_display_ros',
              },
            }),
            expectWebhook('failed_only', { filter: { status: 'failed' }, timeout_seconds: 0.5 }),
          ],
        },
      ]),
    );
    expect(r.verdicts).toEqual({ book: 'passed', completed: 'passed', failed_only: 'failed' });
    expect(failures(r.results.failed_only!)[0]!.error).toMatch(
      /within 0\.5 s; 1 delivery\(ies\) arrived there but none matched the filter \{"status":"failed"\}/,
    );
    expect(r.results.failed_only!.webhook_deliveries).toEqual([
      expect.objectContaining({ matched: false, answered_status: 200 }),
    ]);
  });

  it('webhook_payload_schema_ref is validated with the schema registry (schema_violation, with the schema identity)', async () => {
    const r = await run(
      inline([
        {
          id: 'main',
          steps: [
            trigger('book'),
            expectWebhook('wrong_schema', { webhook_payload_schema_ref: 'media-buy/create-media-buy-request.json' }),
          ],
        },
      ]),
    );
    expect(r.verdicts.wrong_schema).toBe('failed');
    const [violation] = failures(r.results.wrong_schema!);
    expect(violation).toMatchObject({
      actual: { code: 'schema_violation' },
      schema_id: '/schemas/3.0.6/media-buy/create-media-buy-request.json',
    });
  });

  it('a body over the receiver limit is recorded as oversize and fails with schema_violation', async () => {
    const r = await run(inline([{ id: 'main', steps: [trigger('book'), expectWebhook('small')] }]), {
      receiver: await receiver({ maxBodyBytes: 64 }),
    });
    expect(r.verdicts.small).toBe('failed');
    expect(codes(r.results.small!)).toEqual(['schema_violation']);
    expect(r.results.small!.webhook_deliveries![0]).toMatchObject({ oversize: true, answered_status: 413 });
  });

  it('a trigger that registered push_notification_config.authentication (legacy HMAC) makes the signature step not applicable', async () => {
    const r = await run(
      inline([
        {
          id: 'main',
          steps: [
            trigger('book', {
              authentication: { schemes: ['HMAC-SHA256'], credentials: 'a-shared-secret-of-at-least-32-bytes!!' },
            }),
            { id: 'signed', task: 'expect_webhook_signature_valid', triggered_by: 'book', stateful: true },
          ],
        },
      ]),
    );
    expect(r.verdicts).toEqual({ book: 'passed', signed: 'skipped:not_applicable' });
    expect(r.results.signed!.skip!.detail).toMatch(/legacy HMAC\/Bearer fallback/);
  });

  it('a wrong require_tag fails with webhook_signature_tag_invalid', async () => {
    const r = await run(
      inline([
        {
          id: 'main',
          steps: [
            trigger('book'),
            {
              id: 'signed',
              task: 'expect_webhook_signature_valid',
              triggered_by: 'book',
              require_tag: 'adcp/webhook-signing/v2',
              stateful: true,
            },
          ],
        },
      ]),
    );
    expect(codes(r.results.signed!)).toEqual(['webhook_signature_tag_invalid']);
  });

  it('a webhook step waits on its trigger: failed → prerequisite_failed; skipped → the same skip; never a timeout', async () => {
    const failedTrigger = await run(
      inline([
        {
          id: 'main',
          steps: [
            {
              ...trigger('book'),
              sample_request: {
                push_notification_config: { url: '{{runner.webhook_url:book}}' },
                idempotency_key: 'short',
              },
            },
            expectWebhook('hook'),
          ],
        },
      ]),
    );
    expect(failedTrigger.verdicts).toEqual({ book: 'failed', hook: 'skipped:prerequisite_failed' });
    expect(failedTrigger.results.hook!.skip!.detail).toBe(
      'prerequisite step "book" (phase main) failed, so the webhook it triggers cannot be graded',
    );

    const a = await fixture();
    const url = a.urlFor(['without@create_media_buy', `session_wh${++sessions}`]);
    const engine = openStoryboardRun(
      inline([{ id: 'main', steps: [trigger('book'), expectWebhook('hook')] }]),
      { agentUrl: url, authToken: TOKEN, timeoutMs: 5_000 },
      { env: {}, webhooks: await receiver() },
    );
    const outcomes = await engine.runAll();
    await engine.close();
    expect(outcomes.map((o) => o.result.skip?.reason)).toEqual(['missing_tool', 'missing_tool']);
    expect(outcomes[1]!.result.skip!.detail).toMatch(
      /^the webhook this step waits for is triggered by step "book", which was skipped \(missing_tool\)/,
    );
  });

  it('a filter that does not resolve fails the step with unresolved_substitution', async () => {
    const broken = { id: 'broken', task: 'create_media_buy', sample_request: { idempotency_key: 'short' } };
    const r = await run(
      inline([
        {
          id: 'main',
          steps: [
            broken,
            trigger('book'),
            expectWebhook('hook', { filter: { status: '{{prior_step.broken.status}}' } }),
          ],
        },
      ]),
    );
    expect(r.verdicts).toEqual({ broken: 'failed', book: 'passed', hook: 'failed' });
    expect(r.results.hook!.validations).toEqual([
      expect.objectContaining({ check: 'unresolved_substitution', expected: ['{{prior_step.broken.status}}'] }),
    ]);
  });

  it('{{runner.webhook_base}} resolves to the receiver base anywhere in a request', async () => {
    const a = await fixture();
    const r = await run(
      inline([
        {
          id: 'main',
          steps: [
            {
              ...trigger('book'),
              sample_request: {
                ...trigger('book').sample_request,
                ext: { base: '{{runner.webhook_base}}', note: 'at {{runner.webhook_base}}/x' },
              },
            },
          ],
        },
      ]),
    );
    expect(r.verdicts.book).toBe('passed');
    const session = new URL(r.url).pathname.match(/session_(\w+)/)![1];
    const sent = a.calls.filter((c) => c.session === session && c.tool === 'create_media_buy')[0]!.arguments as {
      ext: { base: string; note: string };
    };
    expect(sent.ext).toEqual({ base: r.receiver!.baseUrl, note: `at ${r.receiver!.baseUrl}/x` });
  });

  it('the record leaving the worker keeps allowlisted headers only and redacts the body; the failure text shows the deliveries, fenced', async () => {
    const r = await run(
      inline([
        {
          id: 'main',
          steps: [
            trigger('book', { token: 'push-token-0123456789abcdef' }),
            expectWebhook('hook', { filter: { status: 'failed' }, timeout_seconds: 0.5 }),
          ],
        },
      ]),
    );
    const redacted = redactStepResult(r.results.hook!);
    const delivery = redacted.webhook_deliveries![0]!;
    expect(Object.keys(delivery.headers).sort()).toEqual(['content-length', 'content-type']);
    expect(r.results.hook!.webhook_deliveries![0]!.headers['signature-input']).toMatch(
      /tag="adcp\/webhook-signing\/v1"/,
    );
    const text = formatStepFailure(redacted).message;
    expect(text).toMatch(
      /received 1 webhook delivery:\n {4}#1 POST http:\/\/127\.0\.0\.1:\d+\/step\/book\/[0-9a-f-]{36} at .*, answered 200 \(did not match the filter\)/,
    );
    expect(text).toMatch(/<<webhook body [0-9a-f]+>>/);
  });
});
