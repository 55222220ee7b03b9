/**
 * The create_media_buy request builder (src/engine/enrich/create-media-buy.ts):
 * what it fills, what it keeps as written, and the warning each fill becomes.
 * Against a strict seller, test/engine/enrich.e2e.test.ts shows each of these
 * is what makes the step pass.
 */
import { describe, expect, it } from 'vitest';
import { Discovery, enrichRequest, flightAnchor, type EnrichInput } from '../../src/engine/enrich/index.js';
import type { Step } from '../../src/model/storyboard.js';

const NOW = Date.parse('2026-12-01T10:00:00Z');
const ANCHOR = flightAnchor(NOW);
const products = {
  products: [
    {
      product_id: 'auction_only',
      pricing_options: [{ pricing_option_id: 'cpm_auction', pricing_model: 'cpm', currency: 'USD', floor_price: 5 }],
    },
    {
      product_id: 'guided',
      pricing_options: [
        {
          pricing_option_id: 'guided_auction',
          pricing_model: 'cpm',
          currency: 'USD',
          floor_price: 2,
          price_guidance: { p50: 3.5 },
        },
      ],
    },
    {
      product_id: 'mixed',
      pricing_options: [
        { pricing_option_id: 'mixed_auction', pricing_model: 'cpm', currency: 'USD' },
        {
          pricing_option_id: 'mixed_fixed',
          pricing_model: 'cpm',
          currency: 'USD',
          fixed_price: 12,
          min_spend_per_package: 2500,
        },
      ],
    },
    {
      product_id: 'blind_auction',
      pricing_options: [{ pricing_option_id: 'no_floor', pricing_model: 'cpm', currency: 'USD' }],
    },
  ],
};

/** What a run learnt from a get_products answer listing `listed` (by default the products above). */
function discovered(listed: { products: unknown[] } = products): Discovery {
  const discovery = new Discovery();
  discovery.observeAnswer('get_products', { data: listed, extraction: { path: 'structured_content' } });
  return discovery;
}

async function build(
  sample: Record<string, unknown>,
  extra: Omit<Partial<EnrichInput>, 'step'> & { step?: Partial<Step> } = {},
) {
  const { step: stepExtra, ...rest } = extra;
  const step = {
    id: 's',
    title: 's',
    task: 'create_media_buy',
    sample_request: sample,
    validations: [],
    loc: { line: 1, column: 1 },
    ...stepExtra,
  } as Step;
  const payload = structuredClone(sample);
  let asked = 0;
  const notes = await enrichRequest({
    task: 'create_media_buy',
    step,
    payload,
    discovery: discovered(),
    declared: new Set(),
    captured: new Map(),
    anchorMs: ANCHOR,
    nowMs: NOW,
    discover: async () => {
      asked++;
      return 'asked';
    },
    ...rest,
  });
  return { payload, notes, asked: () => asked };
}

/**
 * The builder on a request that differs from what the step wrote (ids fixture-ids.ts put in, values from a capture):
 * `written` is the step's sample_request, `payload` the request as it stands; changed in place.
 */
function enrichWritten(written: unknown, payload: Record<string, unknown>) {
  return enrichRequest({
    task: 'create_media_buy',
    step: { id: 's', task: 'create_media_buy', sample_request: written } as Step,
    payload,
    discovery: discovered(),
    declared: new Set(),
    captured: new Map(),
    anchorMs: ANCHOR,
    nowMs: NOW,
    discover: async () => 'asked',
  });
}

const complete = {
  brand: { domain: 'acmeoutdoor.example' },
  account: { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' },
  start_time: '2027-02-01T00:00:00Z',
  end_time: '2027-02-28T23:59:59Z',
  idempotency_key: 'k-0123456789abcdef',
};

describe('create_media_buy request builder', () => {
  it('adds bid_price to a package on an auction option: the floor, or the guidance median when it is above the floor', async () => {
    const { payload, notes } = await build({
      ...complete,
      packages: [
        { product_id: 'auction_only', pricing_option_id: 'cpm_auction', budget: 5000 },
        { product_id: 'guided', pricing_option_id: 'guided_auction', budget: 5000 },
      ],
    });
    expect(payload.packages).toEqual([
      { product_id: 'auction_only', pricing_option_id: 'cpm_auction', budget: 5000, bid_price: 5 },
      { product_id: 'guided', pricing_option_id: 'guided_auction', budget: 5000, bid_price: 3.5 },
    ]);
    expect(notes).toEqual([
      'packages[0].bid_price = 5 added: pricing option "cpm_auction" is an auction (no fixed_price) and the storyboard authored no bid_price; its floor_price (the lowest bid it accepts)',
      'packages[1].bid_price = 3.5 added: pricing option "guided_auction" is an auction (no fixed_price) and the storyboard authored no bid_price; its price_guidance median (p50)',
    ]);
  });

  it('keeps an authored bid, a fixed-price option, and says so when an auction gives nothing to bid from', async () => {
    const { payload, notes } = await build({
      ...complete,
      packages: [
        { product_id: 'auction_only', pricing_option_id: 'cpm_auction', budget: 10, bid_price: 0.5 },
        { product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 10 },
        { product_id: 'blind_auction', pricing_option_id: 'no_floor', budget: 10 },
      ],
    });
    expect(payload.packages).toEqual([
      { product_id: 'auction_only', pricing_option_id: 'cpm_auction', budget: 10, bid_price: 0.5 },
      { product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 10 },
      { product_id: 'blind_auction', pricing_option_id: 'no_floor', budget: 10 },
    ]);
    expect(notes).toEqual([
      'packages[2].bid_price not added: pricing option "no_floor" is an auction but gives neither floor_price nor price_guidance to bid from',
    ]);
  });

  it('moves a past flight to the next UTC day keeping its length, and leaves a future one', async () => {
    const past = await build({
      ...complete,
      start_time: '2026-04-01T00:00:00Z',
      end_time: '2026-06-30T23:59:59Z',
      packages: [{ product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 3000 }],
    });
    expect(past.payload.start_time).toBe('2026-12-02T00:00:00Z');
    expect(past.payload.end_time).toBe(
      new Date(ANCHOR + Date.parse('2026-06-30T23:59:59Z') - Date.parse('2026-04-01T00:00:00Z'))
        .toISOString()
        .replace('.000Z', 'Z'),
    );
    expect(past.notes[0]).toBe(
      'start_time = "2026-12-02T00:00:00Z" replaced "2026-04-01T00:00:00Z": the authored flight starts in the past (the corpus dates were future when written) and a seller may refuse a past flight; moved to the start of the next UTC day',
    );
    expect(past.notes[1]).toMatch(
      /^end_time = "2027-03-02T23:59:59Z" replaced "2026-06-30T23:59:59Z": moved with start_time/,
    );
    const future = await build({
      ...complete,
      packages: [{ product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 3000 }],
    });
    expect(future).toMatchObject({
      payload: { start_time: complete.start_time, end_time: complete.end_time },
      notes: [],
    });
    const asap = await build({
      ...complete,
      start_time: 'asap',
      packages: [{ product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 3000 }],
    });
    expect(asap.notes).toEqual([]);
  });

  it('sends the dates of a temporal_validation step and of a negative test as written', async () => {
    const sample = {
      ...complete,
      start_time: '2020-01-01T00:00:00Z',
      packages: [{ product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 3000 }],
    };
    expect((await build(sample, { step: { comply_scenario: 'temporal_validation' } })).payload.start_time).toBe(
      '2020-01-01T00:00:00Z',
    );
    const negative = await build({ start_time: '2020-01-01T00:00:00Z' }, { step: { expect_error: true } });
    expect(negative).toMatchObject({ payload: { start_time: '2020-01-01T00:00:00Z' }, notes: [] });
    expect(negative.payload).not.toHaveProperty('packages');
  });

  it('completes a webhook trigger (push_notification_config only): identity, flight, one package on the first listed product', async () => {
    const trigger = {
      push_notification_config: { url: 'https://r.example/step/t/op' },
      idempotency_key: 'k-0123456789abcdef',
      context: { correlation_id: 'c' },
    };
    const { payload, notes } = await build(trigger, { kitBrandDomain: 'kit-brand.example' });
    expect(payload).toEqual({
      ...trigger,
      brand: { domain: 'kit-brand.example' },
      account: { brand: { domain: 'kit-brand.example' }, operator: 'kit-brand.example' },
      start_time: '2026-12-02T00:00:00Z',
      end_time: '2026-12-09T00:00:00Z',
      packages: [{ product_id: 'auction_only', pricing_option_id: 'cpm_auction', budget: 1000, bid_price: 5 }],
    });
    expect(notes.map((n) => n.split(' ')[0])).toEqual([
      'brand',
      'account',
      'start_time',
      'end_time',
      'packages[0].product_id',
      'packages[0].pricing_option_id',
      'packages[0].budget',
      'packages[0].bid_price',
    ]);
    expect(notes[4]).toContain('the storyboard authored no packages; the first product the agent listed in this run');
  });

  it('prefers the brand and account the storyboard sent earlier, and the corpus buyer when nothing names one', async () => {
    const discovery = discovered();
    discovery.observeRequest({ brand: { domain: 'sent.example' }, account: { account_id: 'acc_1' } });
    const sent = await build(
      { packages: [{ product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 3000 }] },
      { discovery },
    );
    expect(sent.payload).toMatchObject({ brand: { domain: 'sent.example' }, account: { account_id: 'acc_1' } });
    const none = await build({ packages: [{ product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 3000 }] });
    expect(none.payload).toMatchObject({
      brand: { domain: 'acmeoutdoor.example' },
      account: { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' },
    });
    expect(none.notes[0]).toContain("the corpus's fictional buyer");
  });

  it('asks the agent for products once when the run discovered none, and says when it found none', async () => {
    const empty = new Discovery();
    const trigger = { ...complete, push_notification_config: { url: 'https://r.example/x' } };
    const built = await build(trigger, { discovery: empty });
    expect(built.asked()).toBe(1);
    expect(built.payload).not.toHaveProperty('packages');
    expect(built.notes).toEqual([
      'packages not added: the storyboard authored no packages and the agent listed no product with a pricing option (asked)',
    ]);
  });

  it('replaces a placeholder product the agent never listed, keeps a seeded one and one it listed; picks a fixed-price option', async () => {
    const { payload, notes } = await build(
      {
        ...complete,
        packages: [
          { product_id: 'test-product', pricing_option_id: 'test-pricing', budget: 3000 },
          { product_id: 'seeded', pricing_option_id: 'p', budget: 1 },
          { product_id: 'mixed', pricing_option_id: 'gone', budget: 3000 },
        ],
      },
      { declared: new Set(['seeded']) },
    );
    expect(payload.packages).toEqual([
      { product_id: 'auction_only', pricing_option_id: 'cpm_auction', budget: 3000, bid_price: 5 },
      { product_id: 'seeded', pricing_option_id: 'p', budget: 1 },
      { product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 3000 },
    ]);
    expect(notes).toEqual([
      'packages[0].product_id = "auction_only" replaced "test-product": the agent listed no product "test-product" in this run and no fixtures: entry seeds it; the first product it listed',
      'packages[0].pricing_option_id = "cpm_auction" replaced "test-pricing": product "auction_only"\'s first pricing option',
      'packages[0].bid_price = 5 added: pricing option "cpm_auction" is an auction (no fixed_price) and the storyboard authored no bid_price; its floor_price (the lowest bid it accepts)',
      'packages[2].pricing_option_id = "mixed_fixed" replaced "gone": product "mixed" has no pricing option "gone"; its first fixed-price option',
    ]);
  });

  it('a budget from the option minimum spend where the package has none', async () => {
    const { payload } = await build({
      ...complete,
      packages: [{ product_id: 'mixed', pricing_option_id: 'mixed_fixed' }],
    });
    expect(payload.packages).toEqual([{ product_id: 'mixed', pricing_option_id: 'mixed_fixed', budget: 2500 }]);
  });

  it('other tasks get no create_media_buy enrichment', async () => {
    const payload = { start_time: '2020-01-01T00:00:00Z' };
    const notes = await enrichRequest({
      task: 'update_media_buy',
      step: { id: 's', task: 'update_media_buy', sample_request: payload } as Step,
      payload,
      discovery: discovered(),
      declared: new Set(),
      captured: new Map(),
      anchorMs: ANCHOR,
      nowMs: NOW,
      discover: async () => undefined,
    });
    expect(notes).toEqual([]);
  });
});

/** What the builder did to one request, by path: the value sent and the reason it gave (Stryker's survivors, pinned). */
const byPath = (notes: string[]) => notes.map((n) => n.slice(0, n.indexOf(' ')));
const fixed = (extra: Record<string, unknown> = {}) => ({
  product_id: 'mixed',
  pricing_option_id: 'mixed_fixed',
  budget: 3000,
  ...extra,
});

describe('create_media_buy request builder: each decision', () => {
  it('a buy by proposal_id gets no identity and no package of ours, only its flight; its authored packages are still completed', async () => {
    const bare = await build({ proposal_id: 'prop_1', start_time: complete.start_time, end_time: complete.end_time });
    expect(bare.payload).toEqual({
      proposal_id: 'prop_1',
      start_time: complete.start_time,
      end_time: complete.end_time,
    });
    expect(bare.notes).toEqual([]);
    expect(bare.asked()).toBe(0);
    const withPackages = await build({
      proposal_id: 'prop_1',
      ...complete,
      packages: [{ product_id: 'auction_only', pricing_option_id: 'cpm_auction', budget: 10 }],
    });
    expect(byPath(withPackages.notes)).toEqual(['packages[0].bid_price']);
  });

  it('an empty packages array is no packages: one on the first listed product; packages that are not objects are left alone', async () => {
    const empty = await build({ ...complete, packages: [] });
    expect(empty.payload.packages).toEqual([
      { product_id: 'auction_only', pricing_option_id: 'cpm_auction', budget: 1000, bid_price: 5 },
    ]);
    expect(empty.notes[0]).toBe(
      'packages[0].product_id = "auction_only" added: the storyboard authored no packages; the first product the agent listed in this run',
    );
    const odd = await build({ ...complete, packages: ['not-an-object', fixed()] });
    expect(odd.payload.packages).toEqual(['not-an-object', fixed()]);
    expect(odd.notes).toEqual([]);
  });

  it('a package without product_id gets the first listed product, and a pricing option it already names on that product is kept', async () => {
    const { payload, notes } = await build({
      ...complete,
      packages: [{ pricing_option_id: 'cpm_auction', budget: 10 }],
    });
    expect(payload.packages).toEqual([
      { pricing_option_id: 'cpm_auction', budget: 10, product_id: 'auction_only', bid_price: 5 },
    ]);
    expect(notes).toEqual([
      'packages[0].product_id = "auction_only" added: the package names no product; the first product the agent listed in this run',
      'packages[0].bid_price = 5 added: pricing option "cpm_auction" is an auction (no fixed_price) and the storyboard authored no bid_price; its floor_price (the lowest bid it accepts)',
    ]);
  });

  it('keeps a product or pricing option an earlier step captured (not the authored literal), and every literal when the run listed no product', async () => {
    const written = {
      ...complete,
      packages: [{ product_id: 'test-product', pricing_option_id: 'test-pricing', budget: 10 }],
    };
    // fixture-ids.ts put captured ids in the request: they are not the authored literal, so they stay.
    const payload = structuredClone(written);
    payload.packages[0] = { product_id: 'captured-product', pricing_option_id: 'captured-pricing', budget: 10 };
    const notes = await enrichWritten(written, payload);
    expect(payload.packages).toEqual([
      { product_id: 'captured-product', pricing_option_id: 'captured-pricing', budget: 10 },
    ]);
    expect(notes).toEqual([]);
    // On a listed product, a captured pricing option it does not have stays too.
    const onListed = structuredClone(written);
    onListed.packages[0] = { product_id: 'mixed', pricing_option_id: 'captured-pricing', budget: 10 };
    await enrichWritten(
      { ...written, packages: [{ product_id: 'mixed', pricing_option_id: 'test-pricing' }] },
      onListed,
    );
    expect(onListed.packages[0]).toEqual({ product_id: 'mixed', pricing_option_id: 'captured-pricing', budget: 10 });
    // No product listed in the run: nothing to replace a literal with.
    const none = await build(written, { discovery: new Discovery() });
    expect(none.payload.packages).toEqual(written.packages);
    expect(none.notes).toEqual([]);
  });

  it("a package naming no pricing option gets the product's first fixed-price one, or its first when all are auctions", async () => {
    const { notes } = await build({
      ...complete,
      packages: [
        { product_id: 'mixed', budget: 3000 },
        { product_id: 'guided', budget: 3000, bid_price: 4 },
      ],
    });
    expect(notes).toEqual([
      'packages[0].pricing_option_id = "mixed_fixed" added: product "mixed" has no pricing option named in the package; its first fixed-price option',
      'packages[1].pricing_option_id = "guided_auction" added: product "guided" has no pricing option named in the package; its first option',
    ]);
  });

  it('budgets: the default above a smaller minimum spend, the minimum spend above the default, each saying which', async () => {
    const small = await build({
      ...complete,
      packages: [{ product_id: 'guided', pricing_option_id: 'guided_auction', bid_price: 3 }],
    });
    expect(small.notes).toEqual([
      'packages[0].budget = 1000 added: the package has no budget; 1000, above pricing option "guided_auction"\'s minimum spend',
    ]);
    const large = await build({ ...complete, packages: [{ product_id: 'mixed', pricing_option_id: 'mixed_fixed' }] });
    expect(large.notes).toEqual([
      'packages[0].budget = 2500 added: the package has no budget; pricing option "mixed_fixed"\'s min_spend_per_package',
    ]);
  });

  it('bids: the floor when the guidance median is under it, the median when there is no floor', async () => {
    const discovery = discovered({
      products: [
        {
          product_id: 'under',
          pricing_options: [
            {
              pricing_option_id: 'o1',
              pricing_model: 'cpm',
              currency: 'USD',
              floor_price: 4,
              price_guidance: { p50: 3 },
            },
          ],
        },
        {
          product_id: 'open',
          pricing_options: [
            { pricing_option_id: 'o2', pricing_model: 'cpm', currency: 'USD', price_guidance: { p50: 2.5 } },
          ],
        },
        {
          product_id: 'equal',
          pricing_options: [
            {
              pricing_option_id: 'o3',
              pricing_model: 'cpm',
              currency: 'USD',
              floor_price: 3,
              price_guidance: { p50: 3 },
            },
          ],
        },
      ],
    });
    const { payload, notes } = await build(
      {
        ...complete,
        packages: [
          { product_id: 'under', pricing_option_id: 'o1', budget: 10 },
          { product_id: 'open', pricing_option_id: 'o2', budget: 10 },
          { product_id: 'equal', pricing_option_id: 'o3', budget: 10 },
        ],
      },
      { discovery },
    );
    expect((payload.packages as { bid_price: number }[]).map((p) => p.bid_price)).toEqual([4, 2.5, 3]);
    expect(notes.map((n) => n.slice(n.lastIndexOf(';') + 2))).toEqual([
      'its floor_price (the lowest bid it accepts)',
      'its price_guidance median (p50)',
      'its price_guidance median (p50)',
    ]);
  });

  it("identity reasons: the brand and the account sent earlier, the test kit's brand as brand and operator", async () => {
    const discovery = discovered();
    discovery.observeRequest({ brand: { domain: 'sent.example' }, account: { account_id: 'acc_1' } });
    const sent = await build(
      { packages: [fixed()], start_time: complete.start_time, end_time: complete.end_time },
      { discovery },
    );
    expect(sent.notes).toEqual([
      'brand = {"domain":"sent.example"} added: the request schema requires brand and the storyboard authored none; the brand this storyboard sent earlier in the run',
      'account = {"account_id":"acc_1"} added: the request schema requires account and the storyboard authored none; the account this storyboard sent earlier in the run',
    ]);
    const kit = await build(
      { packages: [fixed()], start_time: complete.start_time, end_time: complete.end_time },
      { kitBrandDomain: 'kit.example' },
    );
    expect(kit.notes).toEqual([
      'brand = {"domain":"kit.example"} added: the request schema requires brand and the storyboard authored none; the test kit\'s brand',
      'account = {"brand":{"domain":"kit.example"},"operator":"kit.example"} added: the request schema requires account and the storyboard authored none; the test kit\'s brand, as a natural-key account',
    ]);
    const authored = await build({ ...complete, packages: [fixed()] }, { kitBrandDomain: 'kit.example' });
    expect(authored.payload).toMatchObject({ brand: complete.brand, account: complete.account });
  });

  it('flights: an end a week after an authored start, a start alone added, an end kept when it is not after the past start', async () => {
    const startOnly = await build({ ...complete, end_time: undefined, packages: [fixed()] });
    expect(startOnly.payload.end_time).toBe('2027-02-08T00:00:00Z');
    expect(startOnly.notes).toEqual([
      'end_time = "2027-02-08T00:00:00Z" added: the request schema requires end_time and the storyboard authored none; a week after start_time',
    ]);
    const endOnly = await build({ ...complete, start_time: undefined, packages: [fixed()] });
    expect(endOnly.payload).toMatchObject({ start_time: '2026-12-02T00:00:00Z', end_time: complete.end_time });
    expect(endOnly.notes).toEqual([
      'start_time = "2026-12-02T00:00:00Z" added: the request schema requires start_time and the storyboard authored none; the start of the next UTC day',
    ]);
    const inverted = await build({
      ...complete,
      start_time: '2026-04-01T00:00:00Z',
      end_time: '2026-03-01T00:00:00Z',
      packages: [fixed()],
    });
    expect(inverted.payload).toMatchObject({ start_time: '2026-12-02T00:00:00Z', end_time: '2026-03-01T00:00:00Z' });
    expect(byPath(inverted.notes)).toEqual(['start_time']);
    const asapNoEnd = await build({ ...complete, start_time: 'asap', end_time: undefined, packages: [fixed()] });
    expect(asapNoEnd.payload.end_time).toBe('2026-12-09T00:00:00Z');
    // A start the request got from elsewhere (a capture), not authored as a date: sent as it is.
    const payload = { ...complete, start_time: '2026-04-01T00:00:00Z', packages: [fixed()] };
    const notes = await enrichWritten({ ...complete, start_time: { from: 'context' }, packages: [fixed()] }, payload);
    expect(payload.start_time).toBe('2026-04-01T00:00:00Z');
    expect(notes).toEqual([]);
  });
});

describe('create_media_buy request builder: the edges', () => {
  it("names a fixed-price first option as such, and says nothing more when the agent's own discovery found nothing", async () => {
    const discovery = discovered({ products: [products.products[2]] });
    const { notes } = await build({ ...complete, packages: [] }, { discovery });
    expect(notes[1]).toBe(
      'packages[0].pricing_option_id = "mixed_fixed" added: product "mixed"\'s first fixed-price pricing option',
    );
    const nothing = await build(
      { ...complete, push_notification_config: { url: 'https://r.example/x' } },
      {
        discovery: new Discovery(),
        discover: async () => undefined,
      },
    );
    expect(nothing.notes).toEqual([
      'packages not added: the storyboard authored no packages and the agent listed no product with a pricing option',
    ]);
  });

  it('keeps packages the request got from elsewhere (none written): their product ids are not the authored literals', async () => {
    const written = { ...complete };
    const payload: Record<string, unknown> = {
      ...complete,
      packages: [{ product_id: 'test-product', pricing_option_id: 'test-pricing', budget: 10 }],
    };
    const notes = await enrichWritten(written, payload);
    expect(payload.packages).toEqual([{ product_id: 'test-product', pricing_option_id: 'test-pricing', budget: 10 }]);
    expect(notes).toEqual([]);
  });

  it('a minimum spend equal to the default budget is the default; a floor that is not a number is no floor', async () => {
    const discovery = discovered({
      products: [
        {
          product_id: 'p',
          pricing_options: [
            {
              pricing_option_id: 'at_default',
              pricing_model: 'cpm',
              currency: 'USD',
              fixed_price: 1,
              min_spend_per_package: 1000,
            },
            {
              pricing_option_id: 'text_floor',
              pricing_model: 'cpm',
              currency: 'USD',
              floor_price: '5',
              price_guidance: 'high',
            },
          ],
        },
      ],
    });
    const { payload, notes } = await build(
      {
        ...complete,
        packages: [
          { product_id: 'p', pricing_option_id: 'at_default' },
          { product_id: 'p', pricing_option_id: 'text_floor', budget: 10 },
        ],
      },
      { discovery },
    );
    expect(notes).toEqual([
      'packages[0].budget = 1000 added: the package has no budget; 1000, above pricing option "at_default"\'s minimum spend',
      'packages[1].bid_price not added: pricing option "text_floor" is an auction but gives neither floor_price nor price_guidance to bid from',
    ]);
    expect((payload.packages as Record<string, unknown>[])[1]).not.toHaveProperty('bid_price');
  });

  it('a flight starting now is not past; an end equal to a past start is not moved with it; a dated step changes nothing', async () => {
    const now = new Date(NOW).toISOString();
    const atNow = await build({ ...complete, start_time: now, packages: [fixed()] });
    expect(atNow.notes).toEqual([]);
    const zeroLength = await build({
      ...complete,
      start_time: '2026-04-01T00:00:00Z',
      end_time: '2026-04-01T00:00:00Z',
      packages: [fixed()],
    });
    expect(zeroLength.payload.end_time).toBe('2026-04-01T00:00:00Z');
    expect(byPath(zeroLength.notes)).toEqual(['start_time']);
    const dated = await build(
      { ...complete, start_time: '2020-01-01T00:00:00Z', packages: [fixed()] },
      { step: { comply_scenario: 'temporal_validation' } },
    );
    expect(dated.notes).toEqual([]);
  });
});

describe('enrichment warnings', () => {
  it('quote values through the record redaction: a secret under a redacted key never reaches the warning', async () => {
    const { describeEnrichment } = await import('../../src/engine/enrich/note.js');
    const line = describeEnrichment({
      path: 'account',
      value: { account_id: 'a', authorization: 'Bearer s3cr3t-token' },
      reason: 'r',
    });
    expect(line).not.toContain('s3cr3t');
    expect(line).toMatch(/^account = \{"account_id":"a","authorization":"\[redacted\]"\} added: r$/);
  });
});
