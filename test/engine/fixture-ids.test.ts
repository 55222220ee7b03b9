/**
 * Unseeded literal fixture ids (src/engine/fixture-ids.ts): which literals are
 * replaced by a captured id, and which are kept. The fixture-agent run in
 * grading-model.e2e.test.ts shows the replacement on the wire.
 */
import { describe, expect, it } from 'vitest';
import { declaredFixtureIds, useCapturedFixtureIds, type CapturedValue } from '../../src/engine/fixture-ids.js';
import type { Step, Storyboard } from '../../src/storyboard/types.js';

const step = (extra: Partial<Step> = {}) => ({ id: 's', title: 's', task: 'create_media_buy', validations: [], loc: { line: 1, column: 1 }, ...extra }) as Step;
const captured = new Map<string, CapturedValue>([
  ['product_id', { value: 'real-prod', by: 'discover' }],
  ['media_buy_id', { value: 'real-mb', by: 'book' }],
  ['creative_id', { value: 7, by: 'creatives' }],
  ['brand', { value: 'real-brand', by: 'discover' }],
]);

function apply(written: unknown, declared: Iterable<string> = [], s: Step = step()) {
  const payload = structuredClone(written);
  const notes = useCapturedFixtureIds(written, payload, s, new Set(declared), captured);
  return { payload, notes };
}

describe('unseeded literal fixture ids', () => {
  it('replaces an unseeded literal under a fixture id key, at any depth, and says so', () => {
    const { payload, notes } = apply({ packages: [{ product_id: 'test-product', budget: 1 }], media_buy_id: 'mb-literal' });
    expect(payload).toEqual({ packages: [{ product_id: 'real-prod', budget: 1 }], media_buy_id: 'real-mb' });
    expect(notes).toEqual([
      '/packages/0/product_id: sample_request hard-codes product_id "test-product", which no fixtures: entry seeds; sent "real-prod", captured by step "discover"',
      '/media_buy_id: sample_request hard-codes media_buy_id "mb-literal", which no fixtures: entry seeds; sent "real-mb", captured by step "book"',
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
    const negative = apply({ product_id: 'test-product' }, [], step({ expect_error: true }));
    expect(negative).toEqual({ payload: { product_id: 'test-product' }, notes: [] });
    expect(apply({ product_id: 'test-product' }, [], step({ expect_error: false })).payload).toEqual({ product_id: 'real-prod' });
  });

  it('walks only where the sent payload has the same shape, and not forever', () => {
    expect(apply('product_id').notes).toEqual([]);
    const written = { wrap: { product_id: 'test-product' } };
    expect(useCapturedFixtureIds(written, { wrap: null }, step(), new Set(), captured)).toEqual([]);
    expect(useCapturedFixtureIds(written, { wrap: 'text' }, step(), new Set(), captured)).toEqual([]);
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
