/**
 * Unseeded literal fixture ids (src/engine/enrich/fixture-ids.ts): which literals are
 * replaced by a captured id, and which are kept. The fixture-agent run in
 * grading-model.e2e.test.ts shows the replacement on the wire.
 */
import { describe, expect, it } from 'vitest';
import { declaredFixtureIds, useCapturedFixtureIds, type CapturedValue } from '../../src/engine/enrich/fixture-ids.js';
import { Discovery, enrichRequest } from '../../src/engine/enrich/index.js';
import { describeEnrichment } from '../../src/engine/enrich/note.js';
import type { Step, Storyboard } from '../../src/model/storyboard.js';

const step = (extra: Partial<Step> = {}) =>
  ({ id: 's', title: 's', task: 'create_media_buy', validations: [], loc: { line: 1, column: 1 }, ...extra }) as Step;
const captured = new Map<string, CapturedValue>([
  ['product_id', { value: 'real-prod', by: 'discover' }],
  ['media_buy_id', { value: 'real-mb', by: 'book' }],
  ['creative_id', { value: 7, by: 'creatives' }],
  ['brand', { value: 'real-brand', by: 'discover' }],
]);

function apply(written: unknown, declared: Iterable<string> = []) {
  const payload = structuredClone(written);
  const notes = useCapturedFixtureIds(written, payload, new Set(declared), captured).map(describeEnrichment);
  return { payload, notes };
}

/** Through the request builder, as the run calls it (a task without an enricher of its own). */
async function enriched(written: Record<string, unknown>, s: Step) {
  const payload = structuredClone(written);
  const noDiscovery = async () => undefined;
  const notes = await enrichRequest({
    task: 'get_media_buys',
    step: { ...s, sample_request: written },
    payload,
    discovery: new Discovery(),
    declared: new Set(),
    captured,
    anchorMs: 0,
    nowMs: 0,
    discover: noDiscovery,
  });
  return { payload, notes };
}

describe('unseeded literal fixture ids', () => {
  it('replaces an unseeded literal under a fixture id key, at any depth, and says so', () => {
    const { payload, notes } = apply({
      packages: [{ product_id: 'test-product', budget: 1 }],
      media_buy_id: 'mb-literal',
    });
    expect(payload).toEqual({ packages: [{ product_id: 'real-prod', budget: 1 }], media_buy_id: 'real-mb' });
    expect(notes).toEqual([
      'packages[0].product_id = "real-prod" replaced "test-product": the storyboard hard-codes product_id "test-product", which no fixtures: entry seeds; step "discover" captured the agent\'s own',
      'media_buy_id = "real-mb" replaced "mb-literal": the storyboard hard-codes media_buy_id "mb-literal", which no fixtures: entry seeds; step "book" captured the agent\'s own',
    ]);
  });

  it('keeps placeholders, declared ids, equal values, non-string captures, other keys, and negative tests', () => {
    const written = {
      a: { product_id: '$context.product_id' },
      b: { product_id: 'x {{prior_step.p.id}}' },
      c: { product_id: 'seeded-prod' },
      d: { product_id: 'real-prod' },
      e: { creative_id: 'cr-literal' },
      f: { brand: 'brand-literal' },
      g: { plan_id: 'no-capture' },
      h: { product_id: 42 },
    };
    const { payload, notes } = apply(written, ['seeded-prod']);
    expect(payload).toEqual(written);
    expect(notes).toEqual([]);
  });

  it('through the request builder: negative tests keep their literals', async () => {
    expect(await enriched({ product_id: 'test-product' }, step({ expect_error: true }))).toEqual({
      payload: { product_id: 'test-product' },
      notes: [],
    });
    const positive = await enriched({ product_id: 'test-product' }, step({ expect_error: false }));
    expect(positive.payload).toEqual({ product_id: 'real-prod' });
    expect(positive.notes).toHaveLength(1);
  });

  it("never replaces an id the step is creating: the own id of an item of a <things> array, create_<thing>'s top-level <thing>_id", () => {
    const ids = new Map<string, CapturedValue>([
      ['creative_id', { value: 'comply-state-test-creative', by: 'sync_creative' }],
      ['plan_id', { value: 'old-plan', by: 'plans' }],
      ['media_buy_id', { value: 'real-mb', by: 'book' }],
      ['product_id', { value: 'real-prod', by: 'discover' }],
      ['pricing_option_id', { value: 'real-po', by: 'discover' }],
    ]);
    const send = (task: string, written: unknown) => {
      const payload = structuredClone(written);
      const notes = useCapturedFixtureIds(written, payload, new Set(), ids, task).map(describeEnrichment);
      return { payload, paths: notes.map((n) => n.split(' = ')[0]) };
    };
    // deterministic-testing.yaml > sync_fresh_creative_for_rejection: a fresh creative, not the archived one.
    const fresh = {
      creatives: [{ creative_id: 'deterministic-rejection-probe', name: 'probe' }],
      assignments: [{ creative_id: 'assigned-literal', package_id: 'pkg' }],
    };
    expect(send('sync_creatives', fresh)).toEqual({
      payload: { ...fresh, assignments: [{ creative_id: 'comply-state-test-creative', package_id: 'pkg' }] },
      paths: ['assignments[0].creative_id'],
    });
    expect(send('sync_plans', { plans: [{ plan_id: 'new-plan' }] }).paths).toEqual([]);
    // Inline uploads are created; the assignments and the package's product are references.
    const buy = {
      media_buy_id: 'new-buy',
      packages: [
        {
          product_id: 'test-product',
          creatives: [{ creative_id: 'inline-upload' }],
          creative_assignments: [{ creative_id: 'assigned-literal' }],
        },
      ],
    };
    expect(send('create_media_buy', buy).paths).toEqual([
      'packages[0].product_id',
      'packages[0].creative_assignments[0].creative_id',
    ]);
    // update_media_buy's media_buy_id names the buy it changes; its inline creatives are still uploads.
    expect(send('update_media_buy', buy).paths).toEqual([
      'media_buy_id',
      'packages[0].product_id',
      'packages[0].creative_assignments[0].creative_id',
    ]);
    // A controller's force_task_completion result defines the products the agent will return.
    const result = {
      params: {
        result: { products: [{ product_id: 'async_curated', pricing_options: [{ pricing_option_id: 'po' }] }] },
      },
    };
    expect(send('comply_test_controller', result).paths).toEqual([]);
    // A bare object, or an item of an array not named <things> for its id: references.
    expect(send('get_products', { refine: [{ product_id: 'p' }], product: { product_id: 'p' } }).paths).toEqual([
      'refine[0].product_id',
      'product.product_id',
    ]);
    expect(send('create_media_buy', { nested: { media_buy_id: 'deep' } }).paths).toEqual(['nested.media_buy_id']);
  });

  it('walks only where the sent payload has the same shape, and not forever', () => {
    expect(apply('product_id').notes).toEqual([]);
    const written = { wrap: { product_id: 'test-product' } };
    expect(useCapturedFixtureIds(written, { wrap: null }, new Set(), captured)).toEqual([]);
    expect(useCapturedFixtureIds(written, { wrap: 'text' }, new Set(), captured)).toEqual([]);
    let deep: Record<string, unknown> = { product_id: 'test-product' };
    for (let i = 0; i < 33; i++) deep = { d: deep };
    expect(apply(deep).notes).toEqual([]);
    let shallow: Record<string, unknown> = { product_id: 'test-product' };
    for (let i = 0; i < 32; i++) shallow = { d: shallow };
    expect(apply(shallow).notes).toHaveLength(1);
  });

  it('declared ids: string values under fixture id keys of every fixtures: entry', () => {
    const storyboard = {
      fixtures: {
        products: [{ product_id: 'p1', name: 'not-an-id' }, null, 'junk', { product_id: 3 }],
        pricing_options: [{ product_id: 'p1', pricing_option_id: 'po1' }],
        media_buys: [{ media_buy_id: 'mb1', creative_id: 'c1', plan_id: 'pl1' }],
        notes: 'not a list',
      },
    } as unknown as Storyboard;
    expect([...declaredFixtureIds(storyboard)].sort()).toEqual(['c1', 'mb1', 'p1', 'pl1', 'po1']);
    expect(declaredFixtureIds({} as Storyboard).size).toBe(0);
  });
});
