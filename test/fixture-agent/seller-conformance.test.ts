/**
 * The fixture agent as a conformant seller for what it implements, in every mode (fixtures/agent/README.md): the
 * protocol envelope's `status`, `adcp_major_version` negotiation, the empty get_products as a browse, seeded channels
 * in the AdCP enum, seeded sets as the whole of a seeded listing, measurement_terms negotiation (TERMS_REJECTED) and
 * proposals (brief → refine / finalize → create_media_buy { proposal_id, total_budget }). Each answer is checked
 * against the AdCP 3.0 response schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { schemaErrors } from './adcp-schemas.js';
import { callTool, freshCredential, mediaBuyRequest, type ToolResult } from './helpers.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(async () => {
  await agent?.close();
});

const DAY = 24 * 60 * 60 * 1000;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

function adcpError(result: ToolResult) {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(true);
  return result.structuredContent!.adcp_error as {
    code: string;
    message: string;
    field?: string;
    recovery?: string;
    details?: any;
  };
}

function ok(result: ToolResult, schema: string) {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  expect(schemaErrors(schema, result.structuredContent)).toEqual([]);
  return result.structuredContent!;
}

async function control(url: string, auth: string, scenario: string, params: Record<string, unknown>) {
  const result = await callTool(url, 'comply_test_controller', { scenario, params }, auth);
  expect(result.structuredContent, JSON.stringify(result.structuredContent)).toMatchObject({ success: true });
}

describe('protocol envelope', () => {
  it('carries status "completed" at the root of a synchronous answer; a task with its own status keeps it', async () => {
    const auth = freshCredential();
    for (const [tool, args, schema] of [
      ['get_adcp_capabilities', {}, 'protocol/get-adcp-capabilities-response.json'],
      ['get_products', { buying_mode: 'wholesale' }, 'media-buy/get-products-response.json'],
      ['list_creative_formats', {}, 'media-buy/list-creative-formats-response.json'],
      ['list_creatives', {}, 'creative/list-creatives-response.json'],
    ] as const) {
      const answer = ok(await callTool(agent.url, tool, args, auth), schema);
      expect(answer.status, tool).toBe('completed');
    }
    const buy = ok(
      await callTool(agent.url, 'create_media_buy', mediaBuyRequest(), auth),
      'media-buy/create-media-buy-response.json',
    );
    expect(buy.status).toBe('pending_creatives');
    const controller = await callTool(agent.url, 'comply_test_controller', { scenario: 'list_scenarios' }, auth);
    expect(controller.structuredContent).not.toHaveProperty('status');
  });
});

describe('adcp_major_version', () => {
  it('rejects an unsupported major version with VERSION_UNSUPPORTED naming the supported ones, on every task and in every mode', async () => {
    for (const url of [agent.url, agent.urlFor(['strict'])]) {
      const error = adcpError(
        await callTool(url, 'get_products', {
          adcp_major_version: 99,
          buying_mode: 'brief',
          brief: 'video',
          context: { k: 1 },
        }),
      );
      expect(error).toMatchObject({
        code: 'VERSION_UNSUPPORTED',
        field: 'adcp_major_version',
        recovery: 'correctable',
        details: { requested_version: 99, supported_versions: [3] },
      });
      expect(error.message).toMatch(/99.*3/);
      expect(adcpError(await callTool(url, 'get_adcp_capabilities', { adcp_major_version: 2 })).code).toBe(
        'VERSION_UNSUPPORTED',
      );
    }
  });

  it('accepts 3 and rejects a non-integer as INVALID_REQUEST', async () => {
    ok(
      await callTool(agent.url, 'get_products', { adcp_major_version: 3, buying_mode: 'wholesale' }),
      'media-buy/get-products-response.json',
    );
    expect(
      adcpError(await callTool(agent.url, 'get_products', { adcp_major_version: '3', buying_mode: 'wholesale' })),
    ).toMatchObject({ code: 'INVALID_REQUEST', field: 'adcp_major_version' });
  });
});

describe('get_products without buying_mode', () => {
  it('answers an empty request (no buying_mode, brief or refine) as a catalogue browse, strict or not', async () => {
    for (const url of [agent.url, agent.urlFor(['strict'])]) {
      const answer = ok(
        await callTool(url, 'get_products', {
          account: { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' },
        }),
        'media-buy/get-products-response.json',
      );
      expect(answer.products.map((p: any) => p.product_id)).toEqual([
        'prod_display_ros',
        'prod_video_preroll',
        'prod_ctv_premium',
        'prod_podcast_midroll',
      ]);
      expect(answer).not.toHaveProperty('proposals');
    }
  });

  it('rejects a brief without buying_mode: a v3 client must say which intent it carries', async () => {
    expect(adcpError(await callTool(agent.url, 'get_products', { brief: 'video' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'buying_mode',
    });
  });
});

describe('seeded products, creatives and formats', () => {
  it('answers seeded channels in the AdCP channel enum: aliases translated (video → olv), unknown ones dropped', async () => {
    const auth = freshCredential();
    const pricing_options = [{ pricing_option_id: 'cpm', pricing_model: 'cpm', currency: 'USD', fixed_price: 10 }];
    await control(agent.url, auth, 'seed_product', {
      product_id: 'sports_preroll_q2',
      fixture: {
        delivery_type: 'guaranteed',
        channels: ['video', 'olv', 'hologram'],
        format_ids: [{ id: 'video_30s' }],
        pricing_options,
      },
    });
    await control(agent.url, auth, 'seed_product', {
      product_id: 'odd_channels',
      fixture: { channels: ['hologram'], pricing_options },
    });
    const all = ok(
      await callTool(agent.url, 'get_products', { buying_mode: 'wholesale' }, auth),
      'media-buy/get-products-response.json',
    );
    const byId = new Map(all.products.map((p: any) => [p.product_id, p]));
    expect(byId.get('sports_preroll_q2')).toMatchObject({ channels: ['olv'] });
    expect(byId.get('odd_channels')).toBeDefined();
    expect(byId.get('odd_channels')).not.toHaveProperty('channels');
    // A brief still finds the product by the channel it was seeded with.
    const brief = ok(
      await callTool(agent.url, 'get_products', { buying_mode: 'brief', brief: 'sports video' }, auth),
      'media-buy/get-products-response.json',
    );
    expect(brief.products[0].product_id).toBe('sports_preroll_q2');
  });

  it('lists exactly the seeded creatives once any is seeded, so counts are the seeded set', async () => {
    const auth = freshCredential();
    for (const n of [1, 2, 3])
      await control(agent.url, auth, 'seed_creative', {
        creative_id: `seeded_${n}`,
        fixture: { status: 'approved', format_id: { id: 'display_static' } },
      });
    const first = ok(
      await callTool(agent.url, 'list_creatives', { pagination: { max_results: 2 } }, auth),
      'creative/list-creatives-response.json',
    );
    expect(first.query_summary).toEqual({ total_matching: 3, returned: 2 });
    expect(first.pagination).toMatchObject({ has_more: true, total_count: 3 });
    const last = ok(
      await callTool(
        agent.url,
        'list_creatives',
        { pagination: { max_results: 2, cursor: first.pagination.cursor } },
        auth,
      ),
      'creative/list-creatives-response.json',
    );
    expect(last.creatives.map((c: any) => c.creative_id)).toEqual(['seeded_3']);
    expect(last.pagination).toEqual({ has_more: false, total_count: 3 });
    // An unseeded sandbox still has the demo library.
    expect(
      (await callTool(agent.url, 'list_creatives', {}, freshCredential())).structuredContent!.query_summary
        .total_matching,
    ).toBe(3);
  });
});

describe('measurement_terms', () => {
  /** What measurement_terms_rejected proposes: a window the product does not offer and a zero variance. */
  const AGGRESSIVE = {
    billing_measurement: { vendor: { domain: 'videoamp.example' }, measurement_window: 'c30', max_variance_percent: 0 },
    makegood_policy: { available_remedies: ['credit'] },
  };
  const RELAXED = {
    billing_measurement: { vendor: { domain: 'videoamp.example' }, measurement_window: 'c7', max_variance_percent: 10 },
    makegood_policy: { available_remedies: ['additional_delivery', 'credit'] },
  };

  it('products declare their default terms and measurement windows', async () => {
    const answer = ok(
      await callTool(agent.url, 'get_products', { buying_mode: 'wholesale' }),
      'media-buy/get-products-response.json',
    );
    const video = answer.products.find((p: any) => p.product_id === 'prod_video_preroll');
    expect(video.measurement_terms).toEqual({
      billing_measurement: {
        vendor: { domain: 'streamhaus.example' },
        measurement_window: 'c7',
        max_variance_percent: 10,
      },
      makegood_policy: { available_remedies: ['additional_delivery', 'credit'] },
    });
    expect(video.reporting_capabilities.measurement_windows.map((w: any) => w.window_id)).toEqual(['live', 'c3', 'c7']);
  });

  it("rejects terms outside the product's with TERMS_REJECTED naming each one — under strict even on a stale flight", async () => {
    const lenient = adcpError(
      await callTool(
        agent.url,
        'create_media_buy',
        mediaBuyRequest({ measurement_terms: AGGRESSIVE }),
        freshCredential(),
      ),
    );
    expect(lenient).toMatchObject({
      code: 'TERMS_REJECTED',
      recovery: 'correctable',
      field: 'packages[0].measurement_terms.billing_measurement.measurement_window',
    });
    expect(lenient.details.rejected_terms.map((t: any) => t.term)).toEqual([
      'billing_measurement.measurement_window',
      'billing_measurement.max_variance_percent',
    ]);
    expect(lenient.message).toMatch(/c30.*max_variance_percent 0/);
    const stale = {
      ...mediaBuyRequest({ measurement_terms: AGGRESSIVE }),
      start_time: '2026-05-01T00:00:00Z',
      end_time: '2026-05-31T23:59:59Z',
    };
    expect(adcpError(await callTool(agent.urlFor(['strict']), 'create_media_buy', stale, freshCredential())).code).toBe(
      'TERMS_REJECTED',
    );
    const remedies = { makegood_policy: { available_remedies: ['invoice_adjustment'] } };
    expect(
      adcpError(
        await callTool(
          agent.url,
          'create_media_buy',
          mediaBuyRequest({ measurement_terms: remedies }),
          freshCredential(),
        ),
      ),
    ).toMatchObject({
      code: 'TERMS_REJECTED',
      field: 'packages[0].measurement_terms.makegood_policy.available_remedies',
    });
  });

  it("books terms inside the product's and confirms them on the package", async () => {
    const request = {
      ...mediaBuyRequest({ measurement_terms: RELAXED }),
      start_time: iso(DAY),
      end_time: iso(30 * DAY),
    };
    for (const url of [agent.url, agent.urlFor(['strict'])]) {
      const buy = ok(
        await callTool(url, 'create_media_buy', request, freshCredential()),
        'media-buy/create-media-buy-response.json',
      );
      expect(buy.packages[0].measurement_terms).toEqual(RELAXED);
    }
  });
});

describe('proposals', () => {
  const BRIEF = 'Premium video and display across outdoor lifestyle and sports. Q2 flight, $50K budget.';
  const account = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' };
  const execute = (extra: Record<string, unknown> = {}) => ({
    idempotency_key: `proposal-buy-${Math.random().toString(36).slice(2)}-0001`,
    account,
    brand: { domain: 'acmeoutdoor.example' },
    start_time: iso(DAY),
    end_time: iso(60 * DAY),
    ...extra,
  });

  it('a brief answers a ready-to-buy proposal over its best matches; wholesale answers none', async () => {
    const auth = freshCredential();
    const answer = ok(
      await callTool(agent.url, 'get_products', { buying_mode: 'brief', brief: BRIEF, account }, auth),
      'media-buy/get-products-response.json',
    );
    expect(answer.proposals).toHaveLength(1);
    const [proposal] = answer.proposals;
    expect(proposal).toMatchObject({
      proposal_id: 'balanced_reach_q2',
      expires_at: expect.any(String),
      total_budget_guidance: { currency: 'USD' },
    });
    expect(proposal).not.toHaveProperty('proposal_status');
    expect(proposal.allocations.map((a: any) => [a.product_id, a.pricing_option_id])).toEqual([
      ['prod_display_ros', 'po_display_ros_cpm'],
      ['prod_video_preroll', 'po_video_preroll_cpm'],
      ['prod_ctv_premium', 'po_ctv_premium_cpm'],
    ]);
    expect(proposal.allocations.reduce((sum: number, a: any) => sum + a.allocation_percentage, 0)).toBe(100);
    const ids = new Set(answer.products.map((p: any) => p.product_id));
    for (const a of proposal.allocations) expect(ids.has(a.product_id)).toBe(true);
    expect(
      (await callTool(agent.url, 'get_products', { buying_mode: 'wholesale' }, auth)).structuredContent,
    ).not.toHaveProperty('proposals');
    // Without a quarter in the brief, the plan is not named for a flight.
    const plain = (await callTool(agent.url, 'get_products', { buying_mode: 'brief', brief: 'video' }, auth))
      .structuredContent!;
    expect(plain.proposals[0].proposal_id).toBe('balanced_reach');
  });

  it('refine answers the named proposal (asks acknowledged, not interpreted), finalize commits it, an unknown id is unable', async () => {
    const auth = freshCredential();
    const url = agent.urlFor(['strict']);
    await callTool(url, 'get_products', { buying_mode: 'brief', brief: BRIEF }, auth);
    const refined = ok(
      await callTool(
        url,
        'get_products',
        {
          buying_mode: 'refine',
          refine: [
            { scope: 'proposal', proposal_id: 'balanced_reach_q2', ask: 'More CTV.' },
            { scope: 'request', ask: 'Frequency caps.' },
            { scope: 'proposal', proposal_id: 'nope' },
          ],
        },
        auth,
      ),
      'media-buy/get-products-response.json',
    );
    expect(refined.refinement_applied.map((r: any) => r.status)).toEqual(['partial', 'partial', 'unable']);
    expect(refined.proposals.map((p: any) => p.proposal_id)).toEqual(['balanced_reach_q2']);
    expect(refined.products.map((p: any) => p.product_id)).toEqual([
      'prod_display_ros',
      'prod_video_preroll',
      'prod_ctv_premium',
    ]);

    const finalized = ok(
      await callTool(
        url,
        'get_products',
        {
          buying_mode: 'refine',
          refine: [{ scope: 'proposal', proposal_id: 'balanced_reach_q2', action: 'finalize' }],
        },
        auth,
      ),
      'media-buy/get-products-response.json',
    );
    expect(finalized.proposals[0]).toMatchObject({ proposal_id: 'balanced_reach_q2', proposal_status: 'committed' });
    const hold = Date.parse(finalized.proposals[0].expires_at) - Date.now();
    expect(hold).toBeGreaterThan(23 * 60 * 60 * 1000);
    expect(hold).toBeLessThanOrEqual(DAY);

    // A new brief for the flight does not reissue the committed proposal uncommitted.
    const again = (await callTool(url, 'get_products', { buying_mode: 'brief', brief: BRIEF }, auth))
      .structuredContent!;
    expect(again.proposals[0].proposal_id).toBe('balanced_reach_q2_2');
  });

  it('create_media_buy { proposal_id, total_budget } books the allocations as packages, strict or not', async () => {
    for (const url of [agent.url, agent.urlFor(['strict'])]) {
      const auth = freshCredential();
      await callTool(url, 'get_products', { buying_mode: 'brief', brief: BRIEF }, auth);
      const buy = ok(
        await callTool(
          url,
          'create_media_buy',
          execute({ proposal_id: 'balanced_reach_q2', total_budget: { amount: 50000, currency: 'USD' } }),
          auth,
        ),
        'media-buy/create-media-buy-response.json',
      );
      expect(buy.packages.map((p: any) => [p.product_id, p.pricing_option_id, p.budget])).toEqual([
        ['prod_display_ros', 'po_display_ros_cpm', 17000],
        ['prod_video_preroll', 'po_video_preroll_cpm', 16500],
        ['prod_ctv_premium', 'po_ctv_premium_cpm', 16500],
      ]);
    }
  });

  it('refuses an unknown proposal (REFERENCE_NOT_FOUND), a missing total_budget, and a total below a package minimum', async () => {
    const auth = freshCredential();
    expect(
      adcpError(
        await callTool(
          agent.url,
          'create_media_buy',
          execute({ proposal_id: 'nope', total_budget: { amount: 50000, currency: 'USD' } }),
          auth,
        ),
      ),
    ).toMatchObject({
      code: 'REFERENCE_NOT_FOUND',
      field: 'proposal_id',
      recovery: 'correctable',
    });
    await callTool(agent.url, 'get_products', { buying_mode: 'brief', brief: BRIEF }, auth);
    expect(
      adcpError(await callTool(agent.url, 'create_media_buy', execute({ proposal_id: 'balanced_reach_q2' }), auth)),
    ).toMatchObject({ code: 'INVALID_REQUEST', field: 'total_budget' });
    expect(
      adcpError(
        await callTool(
          agent.url,
          'create_media_buy',
          execute({ proposal_id: 'balanced_reach_q2', total_budget: { amount: 1000, currency: 'USD' } }),
          auth,
        ),
      ).code,
    ).toBe('BUDGET_TOO_LOW');
  });
});
