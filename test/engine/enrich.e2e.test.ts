/**
 * Requests as the storyboards mean them (src/engine/enrich/), against the
 * fixture agent's `strict` seller (fixtures/agent/README.md), which refuses
 * what production sellers refuse: a create_media_buy without packages, a past
 * flight, an auction package without bid_price. Each enrichment is what makes
 * a corpus step pass there; with `requests: 'as-written'` the same step fails
 * on the agent's own INVALID_REQUEST, with no enrichment warning and the
 * authored request on the wire.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { resolveCorpus } from '../../src/corpus.js';
import type { StepResult } from '../../src/model/records.js';
import { openStoryboardRun } from '../../src/open-run.js';
import { loadStoryboard, loadStoryboardFile } from '../../src/storyboard/load.js';
import type { Storyboard } from '../../src/model/storyboard.js';
import { WebhookReceiver } from '../../src/webhooks/receiver.js';
import { phasedStoryboard } from '../helpers/inline-run.js';

const TOKEN = 'demo-enrich-e2e';
const corpus = resolveCorpus(undefined);
let agent: FixtureAgent | undefined;
const receivers: WebhookReceiver[] = [];
let sessions = 0;
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await agent?.close();
});

function corpusStoryboard(path: string): Storyboard {
  const loaded = loadStoryboardFile(join(corpus.root, path), { corpusRoot: corpus.root });
  if (!loaded.ok) throw new Error(`${path} does not load`);
  return loaded.storyboard;
}

type Mode = 'enriched' | 'as-written';
/** A run on a fresh strict sandbox; step id → result. */
async function run(storyboard: Storyboard, requests: Mode, withReceiver = false): Promise<Record<string, StepResult>> {
  agent ??= await startFixtureAgent();
  const url = agent.urlFor(['strict', `session_enrich${++sessions}`]);
  let webhooks: WebhookReceiver | undefined;
  if (withReceiver) receivers.push((webhooks = await WebhookReceiver.start({})));
  const engine = openStoryboardRun(
    storyboard,
    { agentUrl: url, authToken: TOKEN, corpusRoot: corpus.root, timeoutMs: 10_000, requests },
    { env: {}, ...(webhooks ? { webhooks } : {}) },
  );
  try {
    return Object.fromEntries((await engine.runAll()).map((o) => [o.result.step_id, o.result]));
  } finally {
    await engine.close();
  }
}

const verdict = (r: StepResult) => (r.skip ? `skipped:${r.skip.reason}` : r.passed ? 'passed' : 'failed');
const verdicts = (results: Record<string, StepResult>) =>
  Object.fromEntries(Object.entries(results).map(([id, r]) => [id, verdict(r)]));
const agentError = (r: StepResult) => r.error ?? '';
/** The step's enrichment warnings (`<path> = <value> added|replaced …`), not its other warnings (a skip_if the runner cannot evaluate). */
const enrichments = (r: StepResult) => (r.warnings ?? []).filter((w) => /^\S+ = .+ (added|replaced .+?): /.test(w));

describe('universal/webhook-emission.yaml on a strict seller', () => {
  const steps = [
    'get_capabilities',
    'trigger_webhook_operation',
    'expect_webhook_presence',
    'trigger_retry_scenario',
    'expect_key_stable_across_retries',
    'trigger_signed_webhook',
    'expect_signature_valid',
  ];

  it('enriched: every step passes; each trigger says what was added, and the record is what was sent', async () => {
    const results = await run(corpusStoryboard('universal/webhook-emission.yaml'), 'enriched', true);
    expect(verdicts(results)).toEqual(Object.fromEntries(steps.map((id) => [id, 'passed'])));
    const trigger = results.trigger_webhook_operation!;
    const sent = trigger.request!.payload as Record<string, any>;
    // The first listed product's fixed-price option: no bid to invent where the seller offers a fixed price.
    expect(sent.packages).toEqual([
      { product_id: 'prod_display_ros', pricing_option_id: 'po_display_ros_cpm', budget: 1000 },
    ]);
    expect(Object.keys(sent).sort()).toEqual([
      'account',
      'brand',
      'context',
      'end_time',
      'idempotency_key',
      'packages',
      'push_notification_config',
      'start_time',
    ]);
    const added = enrichments(trigger).map((w) => w.split(' ')[0]);
    expect(added).toEqual([
      'brand',
      'account',
      'start_time',
      'end_time',
      'packages[0].product_id',
      'packages[0].pricing_option_id',
      'packages[0].budget',
    ]);
    expect(trigger.warnings!.find((w) => w.startsWith('packages[0].product_id'))).toContain(
      'the runner asked get_products itself',
    );
    // Every value a warning names is the value on the wire.
    for (const warning of enrichments(trigger)) {
      const [, path, value] = /^(\S+) = (.+?) added: /.exec(warning)!;
      const at = path
        .replace(/\[(\d+)\]/g, '.$1')
        .split('.')
        .reduce<any>((o, k) => o?.[k], sent);
      expect(JSON.stringify(at), warning).toBe(value);
    }
  });

  it('as written: the seller refuses each bare trigger, and the webhook steps behind them cannot pass', async () => {
    const results = await run(corpusStoryboard('universal/webhook-emission.yaml'), 'as-written', true);
    for (const id of ['trigger_webhook_operation', 'trigger_retry_scenario', 'trigger_signed_webhook']) {
      expect(verdict(results[id]!), id).toBe('failed');
      expect(agentError(results[id]!)).toContain('packages array is required');
      expect(enrichments(results[id]!)).toEqual([]);
      expect(Object.keys(results[id]!.request!.payload as object).sort()).toEqual([
        'context',
        'idempotency_key',
        'push_notification_config',
      ]);
    }
    for (const id of ['expect_webhook_presence', 'expect_key_stable_across_retries', 'expect_signature_valid'])
      expect(verdict(results[id]!), id).not.toBe('passed');
  });
});

describe('past flights and auction bids', () => {
  it('media_buy_state_machine: the past corpus flight is moved forward enriched, refused as written', async () => {
    const storyboard = corpusStoryboard('protocols/media-buy/state-machine.yaml');
    const enriched = await run(storyboard, 'enriched');
    expect(verdict(enriched.create_buy!)).toBe('passed');
    expect(enriched.create_buy!.warnings!.filter((w) => /^(start|end)_time /.test(w))).toHaveLength(2);
    const written = await run(storyboard, 'as-written');
    expect(verdict(written.create_buy!)).toBe('failed');
    expect(agentError(written.create_buy!)).toContain('start_time is in the past');
  });

  const auction = phasedStoryboard([
    {
      id: 'buy',
      steps: [
        {
          id: 'discover',
          task: 'get_products',
          sample_request: { buying_mode: 'brief', brief: 'display', brand: { domain: 'acmeoutdoor.example' } },
          context_outputs: [
            { key: 'product_id', path: 'products[0].product_id' },
            { key: 'pricing_option_id', path: 'products[0].pricing_options[0].pricing_option_id' },
          ],
        },
        {
          id: 'book',
          task: 'create_media_buy',
          sample_request: {
            brand: { domain: 'acmeoutdoor.example' },
            account: { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' },
            start_time: '2099-01-01T00:00:00Z',
            end_time: '2099-02-01T00:00:00Z',
            packages: [
              { product_id: '$context.product_id', pricing_option_id: '$context.pricing_option_id', budget: 5000 },
            ],
            idempotency_key: '$generate:uuid_v4#book',
          },
        },
      ],
    },
  ]);

  it('a discovered auction option gets a bid enriched, and is refused without one as written', async () => {
    const loaded = loadStoryboard(auction, '/virtual/auction.storyboard.yaml');
    if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('\n'));
    const enriched = await run(loaded.storyboard, 'enriched');
    expect(verdict(enriched.book!)).toBe('passed');
    expect(enriched.book!.warnings).toEqual([
      'packages[0].bid_price = 5 added: pricing option "po_display_ros_auction" is an auction (no fixed_price) and the storyboard authored no bid_price; its floor_price (the lowest bid it accepts)',
    ]);
    expect((enriched.book!.request!.payload as any).packages[0].bid_price).toBe(5);
    const written = await run(loaded.storyboard, 'as-written');
    expect(verdict(written.book!)).toBe('failed');
    expect(agentError(written.book!)).toContain('bid_price is required for auction pricing');
    expect((written.book!.request!.payload as any).packages[0]).not.toHaveProperty('bid_price');
  });
});
