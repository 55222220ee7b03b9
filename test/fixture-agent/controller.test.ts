/**
 * comply_test_controller over real sockets: answers valid against the SDK's
 * ComplyTestControllerResponse schema, seeds that the other tools see at once
 * (in the caller's sandbox only), foreign keys that make a wrong seeding order
 * fail, and the force_* / simulate_* scenarios the corpus uses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComplyTestControllerResponseSchema } from '@adcp/sdk/types';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { schemaErrors } from './adcp-schemas.js';
import { NO_CREDENTIALS, callTool, freshCredential, mediaBuyRequest, textJson, type ToolResult } from './helpers.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(async () => {
  await agent?.close();
});

const CONTEXT = { correlation_id: 'controller-test' };

/** A controller call; asserts the answer is a valid ComplyTestControllerResponse mirrored in the text. */
async function control(
  scenario: string,
  params: Record<string, unknown> | undefined,
  auth: string,
  url = agent.url,
): Promise<ToolResult & { payload: any }> {
  const result = await callTool(
    url,
    'comply_test_controller',
    { scenario, ...(params ? { params } : {}), context: CONTEXT },
    auth,
  );
  const parsed = ComplyTestControllerResponseSchema.safeParse(result.structuredContent);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  expect(textJson(result)).toEqual(result.structuredContent);
  expect(result.structuredContent!.context).toEqual(CONTEXT);
  expect(Boolean(result.isError)).toBe(result.structuredContent!.success === false);
  return { ...result, payload: result.structuredContent };
}

/** The product / pricing option fixtures of the corpus's create_media_buy_async storyboard. */
const PRODUCT = { delivery_type: 'guaranteed', channels: ['olv'], format_ids: [{ id: 'video_30s' }] };
const PRICING = { pricing_model: 'cpm', currency: 'USD', fixed_price: 18 };

async function seedProduct(auth: string, productId = 'seeded_video', optionId = 'cpm_seeded') {
  expect((await control('seed_product', { product_id: productId, fixture: PRODUCT }, auth)).payload.success).toBe(true);
  expect(
    (
      await control(
        'seed_pricing_option',
        { product_id: productId, pricing_option_id: optionId, fixture: PRICING },
        auth,
      )
    ).payload.success,
  ).toBe(true);
}

describe('scenario discovery and errors', () => {
  it('list_scenarios names every supported scenario', async () => {
    const { payload } = await control('list_scenarios', undefined, freshCredential());
    expect(payload.scenarios).toEqual([
      'force_creative_status',
      'force_media_buy_status',
      'simulate_delivery',
      'simulate_budget_spend',
      'force_create_media_buy_arm',
      'force_task_completion',
      'seed_product',
      'seed_pricing_option',
      'seed_creative',
      'seed_plan',
      'seed_media_buy',
      'seed_creative_format',
    ]);
  });

  it.each(['nonexistent_scenario', 'force_account_status', 'force_session_status', 'query_upstream_traffic'])(
    'answers %s with UNKNOWN_SCENARIO (isError)',
    async (scenario) => {
      const { payload, isError } = await control(scenario, {}, freshCredential());
      expect(isError).toBe(true);
      expect(payload).toMatchObject({ success: false, error: 'UNKNOWN_SCENARIO', error_detail: expect.any(String) });
    },
  );

  it.each([
    ['force_creative_status', {}],
    ['seed_product', {}],
    ['seed_product', { product_id: 'p', fixture: [] }],
    ['seed_product', { product_id: 'p', fixture: JSON.parse('{"__proto__": {"x": 1}}') }],
    ['force_create_media_buy_arm', { arm: 'submitted' }],
    ['force_create_media_buy_arm', { arm: 'input-required' }],
    ['simulate_budget_spend', { media_buy_id: 'mb', spend_percentage: 140 }],
  ])('answers %s with bad params %j as INVALID_PARAMS', async (scenario, params) => {
    const { payload } = await control(scenario, params, freshCredential());
    expect(payload).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
  });

  it('answers an unknown entity with NOT_FOUND and current_state null', async () => {
    const { payload } = await control(
      'force_creative_status',
      { creative_id: 'comply-test-nonexistent-000000000000', status: 'approved' },
      freshCredential(),
    );
    expect(payload).toMatchObject({ success: false, error: 'NOT_FOUND', current_state: null });
  });

  it('needs credentials like every protected tool', async () => {
    const error = await callTool(
      agent.url,
      'comply_test_controller',
      { scenario: 'list_scenarios' },
      NO_CREDENTIALS,
    ).catch((e) => e);
    expect(error.code).toBe(401);
  });
});

describe('seeding', () => {
  it('makes seeded products visible to get_products (schema-valid) and bookable by create_media_buy in the same sandbox', async () => {
    const auth = freshCredential();
    await seedProduct(auth);
    const { structuredContent } = await callTool(agent.url, 'get_products', { buying_mode: 'wholesale' }, auth);
    const seeded = structuredContent!.products.find((p: any) => p.product_id === 'seeded_video');
    expect(structuredContent!.products).toHaveLength(5);
    expect(seeded).toMatchObject({
      delivery_type: 'guaranteed',
      channels: ['olv'],
      format_ids: [{ agent_url: agent.url, id: 'video_30s' }],
      pricing_options: [{ pricing_option_id: 'cpm_seeded', pricing_model: 'cpm', currency: 'USD', fixed_price: 18 }],
    });
    expect(schemaErrors('media-buy/get-products-response.json', structuredContent)).toEqual([]);

    const brief = await callTool(agent.url, 'get_products', { buying_mode: 'brief', brief: 'seeded video' }, auth);
    expect(brief.structuredContent!.products[0].product_id).toBe('seeded_video');

    const buy = await callTool(
      agent.url,
      'create_media_buy',
      mediaBuyRequest({ product_id: 'seeded_video', pricing_option_id: 'cpm_seeded', budget: 3000 }),
      auth,
    );
    expect(buy.isError).toBeFalsy();
    expect(buy.structuredContent!.packages[0]).toMatchObject({
      product_id: 'seeded_video',
      pricing_option_id: 'cpm_seeded',
      budget: 3000,
    });
  });

  it('keeps seeds in the seeding sandbox: another credential, or another session_<key>, does not see them', async () => {
    const auth = freshCredential();
    await seedProduct(auth, 'private_product', 'po_private');
    const ids = async (url: string, credential: string) =>
      (await callTool(url, 'get_products', { buying_mode: 'wholesale' }, credential)).structuredContent!.products.map(
        (p: any) => p.product_id,
      );
    expect(await ids(agent.url, auth)).toContain('private_product');
    // Same credential on another behaviour URL: same sandbox.
    expect(await ids(agent.urlFor(['json_response']), auth)).toContain('private_product');
    expect(await ids(agent.url, freshCredential())).not.toContain('private_product');
    expect(await ids(agent.urlFor(['session_other']), auth)).not.toContain('private_product');

    // A session is its own sandbox for the same credential.
    const session = agent.urlFor(['session_s1']);
    await control('seed_product', { product_id: 'session_product', fixture: PRODUCT }, auth, session);
    expect(await ids(session, auth)).toContain('session_product');
    expect(await ids(agent.url, auth)).not.toContain('session_product');
  });

  it('makes seeded creatives the library of list_creatives and seeded formats the list of list_creative_formats (schema-valid)', async () => {
    const auth = freshCredential();
    await control(
      'seed_creative',
      {
        creative_id: 'pagination_integrity_creative_1',
        fixture: { status: 'approved', format_id: { id: 'display_static' } },
      },
      auth,
    );
    await control(
      'seed_creative_format',
      {
        format_id: 'pagination_integrity_format_1',
        fixture: { name: 'Pagination Integrity Format A', type: 'display' },
      },
      auth,
    );
    const creatives = (
      await callTool(
        agent.url,
        'list_creatives',
        { filters: { creative_ids: ['pagination_integrity_creative_1'] } },
        auth,
      )
    ).structuredContent!;
    expect(creatives.creatives).toEqual([
      expect.objectContaining({
        creative_id: 'pagination_integrity_creative_1',
        status: 'approved',
        format_id: { agent_url: agent.url, id: 'display_static' },
      }),
    ]);
    expect(schemaErrors('creative/list-creatives-response.json', creatives)).toEqual([]);
    const formats = (await callTool(agent.url, 'list_creative_formats', { type: 'display' }, auth)).structuredContent!;
    // Once seeded, the sandbox's formats (and creatives) are the seeded set, not the demo catalogue plus it:
    // pagination_integrity* count what they seeded (total_matching / total_count).
    expect(formats.formats.map((f: any) => f.format_id.id)).toEqual(['pagination_integrity_format_1']);
    const library = (await callTool(agent.url, 'list_creatives', {}, auth)).structuredContent!;
    expect(library.creatives.map((c: any) => c.creative_id)).toEqual(['pagination_integrity_creative_1']);
    expect(library.query_summary).toMatchObject({ total_matching: 1, returned: 1 });
    expect(schemaErrors('media-buy/list-creative-formats-response.json', formats)).toEqual([]);
  });

  it('is idempotent per id: an equivalent fixture again succeeds, a different one is INVALID_PARAMS', async () => {
    const auth = freshCredential();
    const first = await control(
      'seed_product',
      { product_id: 'p_idem', fixture: { channels: ['display'], delivery_type: 'guaranteed' } },
      auth,
    );
    const again = await control(
      'seed_product',
      { product_id: 'p_idem', fixture: { delivery_type: 'guaranteed', channels: ['display'] } },
      auth,
    );
    const diverged = await control('seed_product', { product_id: 'p_idem', fixture: { channels: ['ctv'] } }, auth);
    expect(first.payload).toMatchObject({ success: true, message: expect.any(String) });
    expect(again.payload.success).toBe(true);
    expect(diverged.payload).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
  });

  describe('foreign keys (seeding order)', () => {
    it('refuses a pricing option whose product is not seeded yet', async () => {
      const auth = freshCredential();
      const early = await control(
        'seed_pricing_option',
        { product_id: 'later_product', pricing_option_id: 'po', fixture: PRICING },
        auth,
      );
      expect(early.payload).toMatchObject({ success: false, error: 'NOT_FOUND', current_state: null });
      expect(early.payload.error_detail).toMatch(/seed_product must come before seed_pricing_option/);
      // Pricing options attach to seeded products only, not to the fixed catalogue.
      expect(
        (
          await control(
            'seed_pricing_option',
            { product_id: 'prod_display_ros', pricing_option_id: 'po', fixture: PRICING },
            auth,
          )
        ).payload.error,
      ).toBe('NOT_FOUND');
    });

    it('refuses a plan or media buy naming an unseeded product, pricing option, creative or plan', async () => {
      const auth = freshCredential();
      const refused = async (scenario: string, params: Record<string, unknown>) =>
        (await control(scenario, params, auth)).payload;
      expect(await refused('seed_plan', { plan_id: 'plan_1', fixture: { product_ids: ['nope'] } })).toMatchObject({
        error: 'NOT_FOUND',
      });
      expect(
        await refused('seed_media_buy', {
          media_buy_id: 'mb_1',
          fixture: { packages: [{ product_id: 'nope', budget: 1 }] },
        }),
      ).toMatchObject({ error: 'NOT_FOUND' });
      expect(
        await refused('seed_media_buy', { media_buy_id: 'mb_1', fixture: { plan_id: 'plan_later' } }),
      ).toMatchObject({ error: 'NOT_FOUND' });
      expect(
        await refused('seed_media_buy', {
          media_buy_id: 'mb_1',
          fixture: {
            packages: [{ product_id: 'prod_display_ros', creative_assignments: [{ creative_id: 'cr_later' }] }],
          },
        }),
      ).toMatchObject({
        error: 'NOT_FOUND',
      });
      expect(
        await refused('seed_media_buy', {
          media_buy_id: 'mb_1',
          fixture: { packages: [{ product_id: 'prod_display_ros', pricing_option_id: 'po_nope' }] },
        }),
      ).toMatchObject({
        error: 'NOT_FOUND',
      });

      // In DAG order the same references resolve (catalogue products count as existing).
      await seedProduct(auth, 'p_dag', 'po_dag');
      await control('seed_creative', { creative_id: 'cr_later' }, auth);
      expect(
        (
          await control(
            'seed_plan',
            {
              plan_id: 'plan_later',
              fixture: { product_ids: ['p_dag', 'prod_display_ros'], budget: { total: 30000, currency: 'USD' } },
            },
            auth,
          )
        ).payload.success,
      ).toBe(true);
      const buy = await control(
        'seed_media_buy',
        {
          media_buy_id: 'mb_1',
          fixture: {
            status: 'active',
            plan_id: 'plan_later',
            packages: [
              {
                product_id: 'p_dag',
                pricing_option_id: 'po_dag',
                budget: 4000,
                creative_assignments: [{ creative_id: 'cr_later' }],
              },
            ],
          },
        },
        auth,
      );
      expect(buy.payload.success).toBe(true);
    });
  });

  it('no_seed answers every seed_* with UNKNOWN_SCENARIO and lists none, while force_* still works', async () => {
    const auth = freshCredential();
    const url = agent.urlFor(['no_seed@comply_test_controller']);
    const listed = (await control('list_scenarios', undefined, auth, url)).payload.scenarios;
    expect(listed.some((s: string) => s.startsWith('seed_'))).toBe(false);
    expect(listed).toContain('force_creative_status');
    for (const scenario of [
      'seed_product',
      'seed_pricing_option',
      'seed_creative',
      'seed_plan',
      'seed_media_buy',
      'seed_creative_format',
    ]) {
      expect((await control(scenario, { product_id: 'p' }, auth, url)).payload).toMatchObject({
        success: false,
        error: 'UNKNOWN_SCENARIO',
      });
    }
    expect(
      (await control('force_creative_status', { creative_id: 'cr_trail_hero_300x250', status: 'archived' }, auth, url))
        .payload.success,
    ).toBe(true);
    expect(() => agent.urlFor(['no_seed@get_products'])).toThrow(/can only be scoped to: comply_test_controller/);
  });
});

describe('force_* and simulate_*', () => {
  it('force_creative_status transitions a catalogue creative, visible in list_creatives for this sandbox only', async () => {
    const auth = freshCredential();
    const { payload } = await control(
      'force_creative_status',
      { creative_id: 'cr_trail_hero_728x90', status: 'rejected', rejection_reason: 'test' },
      auth,
    );
    expect(payload).toMatchObject({ success: true, previous_state: 'pending_review', current_state: 'rejected' });
    const status = async (credential: string) =>
      (await callTool(agent.url, 'list_creatives', { filters: { creative_ids: ['cr_trail_hero_728x90'] } }, credential))
        .structuredContent!.creatives[0].status;
    expect(await status(auth)).toBe('rejected');
    expect(await status(freshCredential())).toBe('pending_review');
  });

  it('force_media_buy_status needs an existing buy, moves it, and refuses to leave a final status', async () => {
    const auth = freshCredential();
    expect(
      (await control('force_media_buy_status', { media_buy_id: 'mb_missing', status: 'active' }, auth)).payload.error,
    ).toBe('NOT_FOUND');
    const created = (await callTool(agent.url, 'create_media_buy', mediaBuyRequest(), auth)).structuredContent!;
    const id = created.media_buy_id;
    expect(
      (await control('force_media_buy_status', { media_buy_id: id, status: 'active' }, auth)).payload,
    ).toMatchObject({
      success: true,
      previous_state: 'pending_creatives',
      current_state: 'active',
    });
    expect(
      (await control('force_media_buy_status', { media_buy_id: id, status: 'completed' }, auth)).payload.current_state,
    ).toBe('completed');
    expect(
      (await control('force_media_buy_status', { media_buy_id: id, status: 'active' }, auth)).payload,
    ).toMatchObject({
      success: false,
      error: 'INVALID_TRANSITION',
      current_state: 'completed',
    });
    expect(
      (await control('force_media_buy_status', { media_buy_id: id, status: 'approved' }, auth)).payload.error,
    ).toBe('INVALID_PARAMS');
  });

  it('simulate_delivery accumulates; simulate_budget_spend computes against the seeded budget', async () => {
    const auth = freshCredential();
    await control(
      'seed_media_buy',
      { media_buy_id: 'mb_acme_q2_2026', fixture: { status: 'active', budget: { total: 40000, currency: 'USD' } } },
      auth,
    );
    const delivery = {
      media_buy_id: 'mb_acme_q2_2026',
      impressions: 5000,
      clicks: 150,
      reported_spend: { amount: 250, currency: 'USD' },
    };
    await control('simulate_delivery', delivery, auth);
    const second = (await control('simulate_delivery', delivery, auth)).payload;
    expect(second).toMatchObject({
      success: true,
      simulated: { impressions: 5000, clicks: 150, reported_spend: { amount: 250, currency: 'USD' } },
      cumulative: { impressions: 10000, clicks: 300, conversions: 0, reported_spend: { amount: 500, currency: 'USD' } },
    });
    const spend = (
      await control('simulate_budget_spend', { media_buy_id: 'mb_acme_q2_2026', spend_percentage: 95 }, auth)
    ).payload;
    expect(spend).toMatchObject({
      success: true,
      simulated: { spend_percentage: 95, computed_spend: 38000, budget: 40000, currency: 'USD' },
    });
    expect(
      (await control('simulate_budget_spend', { account_id: 'acct_1', spend_percentage: 10 }, auth)).payload.error,
    ).toBe('NOT_FOUND');
  });
});
