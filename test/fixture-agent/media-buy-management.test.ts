/**
 * get_media_buys and update_media_buy (fixtures/agent/README.md > Managing media buys), over real sockets: each
 * validation rule accepts a good request and rejects a bad one with the AdCP error code and field the README names;
 * every success answer validates against the AdCP 3.0 response schema; the state machine, account scoping,
 * idempotency and the atomicity of a rejected update. Each test books on a fresh credential (an empty sandbox).
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
/** The account mediaBuyRequest books on. */
const ACCOUNT = { brand: { domain: 'fixture-brand.example' }, operator: 'pinnacle-agency.example' };

let keySeq = 0;
const freshKey = () => `mbm-test-key-${process.pid}-${String(++keySeq).padStart(6, '0')}`;

function ok(result: ToolResult, schema: string) {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  expect(schemaErrors(schema, result.structuredContent)).toEqual([]);
  return result.structuredContent!;
}

function adcpError(result: ToolResult) {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(true);
  return result.structuredContent!.adcp_error as { code: string; message: string; field?: string; recovery?: string };
}

/** A caller with a booked media buy (one prod_video_preroll package, budget 5000, minimum 2000) on its own sandbox. */
async function booked(create: Record<string, unknown> = {}, url?: string, auth = freshCredential()) {
  const endpoint = url ?? agent.url;
  const buy = ok(
    await callTool(endpoint, 'create_media_buy', { ...mediaBuyRequest(), ...create }, auth),
    'media-buy/create-media-buy-response.json',
  );
  const id = buy.media_buy_id as string;
  const packageId = buy.packages[0].package_id as string;
  const update = (args: Record<string, unknown>, key = freshKey()) =>
    callTool(endpoint, 'update_media_buy', { idempotency_key: key, account: ACCOUNT, media_buy_id: id, ...args }, auth);
  const get = (args: Record<string, unknown> = {}) =>
    callTool(endpoint, 'get_media_buys', { account: ACCOUNT, media_buy_ids: [id], ...args }, auth);
  const read = async () => ok(await get(), 'media-buy/get-media-buys-response.json').media_buys[0];
  return { auth, id, packageId, update, get, read, endpoint };
}

const updated = (result: ToolResult) => ok(result, 'media-buy/update-media-buy-response.json');

describe('get_media_buys', () => {
  it('reads a created buy back by id, schema-valid, with its packages, budget, flight and actions', async () => {
    const { id, packageId, read } = await booked();
    const buy = await read();
    expect(buy).toMatchObject({
      media_buy_id: id,
      status: 'pending_creatives',
      currency: 'USD',
      total_budget: 5000,
      revision: 1,
      end_time: '2027-06-30T23:59:59.000Z',
    });
    expect(buy.packages).toEqual([
      expect.objectContaining({
        package_id: packageId,
        product_id: 'prod_video_preroll',
        pricing_option_id: 'po_video_preroll_cpm',
        budget: 5000,
        paused: false,
      }),
    ]);
    expect(buy.valid_actions).toEqual([
      'pause',
      'cancel',
      'update_budget',
      'update_dates',
      'update_packages',
      'sync_creatives',
    ]);
    expect(typeof buy.confirmed_at).toBe('string');
  });

  it('account: optional, but when sent an account-ref — and only the booking account sees the buy', async () => {
    const { id, auth, get } = await booked();
    expect((await get()).structuredContent!.media_buys).toHaveLength(1);
    const omitted = ok(
      await callTool(agent.url, 'get_media_buys', { media_buy_ids: [id] }, auth),
      'media-buy/get-media-buys-response.json',
    );
    expect(omitted.media_buys).toHaveLength(1);
    expect(adcpError(await get({ account: { brand: { domain: 'fixture-brand.example' } } }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'account',
    });
    for (const other of [
      { ...ACCOUNT, operator: 'other-agency.example' },
      { ...ACCOUNT, sandbox: true },
      { account_id: 'acct_other' },
    ]) {
      const answer = ok(await get({ account: other }), 'media-buy/get-media-buys-response.json');
      expect(answer.media_buys).toEqual([]);
      expect(answer.errors).toEqual([
        expect.objectContaining({ code: 'MEDIA_BUY_NOT_FOUND', field: 'media_buy_ids[0]' }),
      ]);
    }
  });

  it('media_buy_ids: a non-empty array of ids; an unknown id is a MEDIA_BUY_NOT_FOUND entry beside the buys found', async () => {
    const { id, get } = await booked();
    expect(adcpError(await get({ media_buy_ids: [] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'media_buy_ids',
    });
    expect(adcpError(await get({ media_buy_ids: [42] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'media_buy_ids[0]',
    });
    const answer = ok(await get({ media_buy_ids: [id, 'mb_nope'] }), 'media-buy/get-media-buys-response.json');
    expect(answer.media_buys.map((b: any) => b.media_buy_id)).toEqual([id]);
    expect(answer.errors).toEqual([
      expect.objectContaining({ code: 'MEDIA_BUY_NOT_FOUND', field: 'media_buy_ids[1]', recovery: 'correctable' }),
    ]);
  });

  it("another credential's sandbox never sees the buy", async () => {
    const { id } = await booked();
    const answer = ok(
      await callTool(agent.url, 'get_media_buys', { account: ACCOUNT, media_buy_ids: [id] }, freshCredential()),
      'media-buy/get-media-buys-response.json',
    );
    expect(answer.media_buys).toEqual([]);
    expect(answer.errors[0].code).toBe('MEDIA_BUY_NOT_FOUND');
  });

  it('status_filter: default active without ids; a status or a non-empty list of them; nothing else', async () => {
    const { auth, id, get } = await booked();
    const list = (args: Record<string, unknown>) =>
      callTool(agent.url, 'get_media_buys', { account: ACCOUNT, ...args }, auth);
    const byDefault = ok(await list({}), 'media-buy/get-media-buys-response.json');
    expect(byDefault.media_buys).toEqual([]);
    expect(byDefault.pagination).toMatchObject({ has_more: false });
    expect(
      ok(await list({ status_filter: 'pending_creatives' }), 'media-buy/get-media-buys-response.json').media_buys.map(
        (b: any) => b.media_buy_id,
      ),
    ).toEqual([id]);
    expect(
      ok(await list({ status_filter: ['active', 'pending_creatives'] }), 'media-buy/get-media-buys-response.json')
        .media_buys,
    ).toHaveLength(1);
    expect(adcpError(await list({ status_filter: 'approved' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'status_filter',
    });
    expect(adcpError(await list({ status_filter: [] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'status_filter',
    });
    // With ids, a filter still filters (no implicit one).
    expect(ok(await get({ status_filter: 'active' }), 'media-buy/get-media-buys-response.json').media_buys).toEqual([]);
  });

  it('include_history (0–1000) and include_snapshot (boolean)', async () => {
    const { get, update } = await booked();
    updated(await update({ paused: true }));
    const withHistory = ok(await get({ include_history: 1 }), 'media-buy/get-media-buys-response.json').media_buys[0];
    expect(withHistory.history).toEqual([expect.objectContaining({ revision: 2, action: 'paused', actor: 'buyer' })]);
    expect(
      ok(await get({ include_history: 5 }), 'media-buy/get-media-buys-response.json').media_buys[0].history,
    ).toHaveLength(2);
    expect(ok(await get(), 'media-buy/get-media-buys-response.json').media_buys[0].history).toBeUndefined();
    expect(adcpError(await get({ include_history: -1 }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'include_history',
    });
    expect(adcpError(await get({ include_history: 1001 }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'include_history',
    });
    const snapshot = ok(await get({ include_snapshot: true }), 'media-buy/get-media-buys-response.json').media_buys[0]
      .packages[0].snapshot;
    expect(snapshot).toMatchObject({ staleness_seconds: 0, impressions: 0, spend: 0 });
    expect(adcpError(await get({ include_snapshot: 'yes' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'include_snapshot',
    });
  });

  it('pagination: pages of max_results with a cursor; a foreign cursor is INVALID_REQUEST', async () => {
    const { auth } = await booked();
    ok(
      await callTool(agent.url, 'create_media_buy', mediaBuyRequest({}, freshKey()), auth),
      'media-buy/create-media-buy-response.json',
    );
    const list = (pagination: Record<string, unknown>) =>
      callTool(agent.url, 'get_media_buys', { account: ACCOUNT, status_filter: 'pending_creatives', pagination }, auth);
    const first = ok(await list({ max_results: 1 }), 'media-buy/get-media-buys-response.json');
    expect(first.media_buys).toHaveLength(1);
    expect(first.pagination).toMatchObject({ has_more: true, total_count: 2 });
    const second = ok(
      await list({ max_results: 1, cursor: first.pagination.cursor }),
      'media-buy/get-media-buys-response.json',
    );
    expect(second.media_buys[0].media_buy_id).not.toBe(first.media_buys[0].media_buy_id);
    expect(second.pagination.has_more).toBe(false);
    expect(adcpError(await list({ cursor: 'not-ours' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'pagination.cursor',
    });
  });

  it('seeded buys are readable, their packages named', async () => {
    const auth = freshCredential();
    const seeded = await callTool(
      agent.url,
      'comply_test_controller',
      {
        scenario: 'seed_media_buy',
        params: {
          media_buy_id: 'mb_seeded_1',
          fixture: { status: 'active', packages: [{ product_id: 'prod_display_ros', budget: 800 }] },
        },
      },
      auth,
    );
    expect(seeded.structuredContent).toMatchObject({ success: true });
    const answer = ok(
      await callTool(agent.url, 'get_media_buys', { account: ACCOUNT }, auth),
      'media-buy/get-media-buys-response.json',
    );
    expect(answer.media_buys).toEqual([
      expect.objectContaining({
        media_buy_id: 'mb_seeded_1',
        status: 'active',
        total_budget: 800,
        packages: [expect.objectContaining({ package_id: 'mb_seeded_1_pkg_1' })],
      }),
    ]);
  });
});

describe('update_media_buy: the request', () => {
  it('idempotency_key: required; a replay answers the first update without applying it again; another body conflicts', async () => {
    const { update, read } = await booked();
    expect(adcpError(await update({ paused: true }, ''))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'idempotency_key',
    });
    expect(adcpError(await update({ paused: true }, 'short'))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'idempotency_key',
    });
    const key = freshKey();
    const first = updated(
      await update({ packages: [{ package_id: (await read()).packages[0].package_id, budget: 6000 }] }, key),
    );
    expect(first).toMatchObject({ revision: 2 });
    const replay = updated(
      await update({ packages: [{ package_id: first.affected_packages[0].package_id, budget: 6000 }] }, key),
    );
    expect(replay).toMatchObject({ ...first, replayed: true });
    expect((await read()).revision).toBe(2);
    expect(adcpError(await update({ paused: true }, key)).code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('a create_media_buy key reused for an update is IDEMPOTENCY_CONFLICT (one ledger)', async () => {
    const auth = freshCredential();
    const key = freshKey();
    const buy = ok(
      await callTool(agent.url, 'create_media_buy', mediaBuyRequest({}, key), auth),
      'media-buy/create-media-buy-response.json',
    );
    const answer = await callTool(
      agent.url,
      'update_media_buy',
      { idempotency_key: key, account: ACCOUNT, media_buy_id: buy.media_buy_id, paused: true },
      auth,
    );
    expect(adcpError(answer).code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('account: required, an account-ref, the one the buy was booked on', async () => {
    const { update } = await booked();
    expect(adcpError(await update({ account: undefined, paused: true }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'account',
    });
    expect(adcpError(await update({ account: { operator: 'pinnacle-agency.example' }, paused: true }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'account',
    });
    expect(adcpError(await update({ account: { ...ACCOUNT, sandbox: true }, paused: true }))).toMatchObject({
      code: 'MEDIA_BUY_NOT_FOUND',
      field: 'media_buy_id',
    });
    updated(await update({ paused: true }));
  });

  it('media_buy_id: required; unknown → MEDIA_BUY_NOT_FOUND (correctable)', async () => {
    const { update } = await booked();
    expect(adcpError(await update({ media_buy_id: undefined, paused: true }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'media_buy_id',
    });
    expect(adcpError(await update({ media_buy_id: 'mb_does_not_exist', paused: true }))).toMatchObject({
      code: 'MEDIA_BUY_NOT_FOUND',
      field: 'media_buy_id',
      recovery: 'correctable',
    });
  });

  it('at least one change, and the schema shapes', async () => {
    const { update, packageId } = await booked();
    expect(adcpError(await update({}))).toMatchObject({ code: 'INVALID_REQUEST', field: 'media_buy_id' });
    expect(adcpError(await update({ paused: 'yes' }))).toMatchObject({ code: 'INVALID_REQUEST', field: 'paused' });
    expect(adcpError(await update({ canceled: false }))).toMatchObject({ code: 'INVALID_REQUEST', field: 'canceled' });
    expect(adcpError(await update({ canceled: true, paused: true }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'paused',
    });
    expect(adcpError(await update({ paused: true, cancellation_reason: 'why' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'cancellation_reason',
    });
    expect(adcpError(await update({ revision: 0, paused: true }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'revision',
    });
    expect(adcpError(await update({ end_time: 'next week' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'end_time',
    });
    expect(adcpError(await update({ packages: [] }))).toMatchObject({ code: 'INVALID_REQUEST', field: 'packages' });
    expect(adcpError(await update({ packages: [{ budget: 6000 }] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'packages[0].package_id',
    });
    expect(adcpError(await update({ packages: [{ package_id: packageId }] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'packages[0]',
    });
    expect(
      adcpError(
        await update({
          packages: [
            { package_id: packageId, budget: 6000 },
            { package_id: packageId, paused: true },
          ],
        }),
      ),
    ).toMatchObject({ code: 'INVALID_REQUEST', field: 'packages[1].package_id' });
    expect(adcpError(await update({ packages: [{ package_id: packageId, budget: -1 }] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'packages[0].budget',
    });
    expect(adcpError(await update({ packages: [{ package_id: packageId, pacing: 'fast' }] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'packages[0].pacing',
    });
    expect(adcpError(await update({ packages: [{ package_id: packageId, start_time: 'asap' }] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'packages[0].start_time',
    });
    expect(
      adcpError(await update({ packages: [{ package_id: packageId, creative_assignments: [{ weight: 50 }] }] })),
    ).toMatchObject({ code: 'INVALID_REQUEST', field: 'packages[0].creative_assignments[0].creative_id' });
    updated(await update({ packages: [{ package_id: packageId, pacing: 'even' }] }));
  });

  it('new_packages: UNSUPPORTED_FEATURE (and add_packages is never a valid action)', async () => {
    const { update, read } = await booked();
    expect(
      adcpError(
        await update({
          new_packages: [{ product_id: 'prod_display_ros', pricing_option_id: 'po_display_ros_cpm', budget: 1000 }],
        }),
      ),
    ).toMatchObject({ code: 'UNSUPPORTED_FEATURE', field: 'new_packages' });
    expect((await read()).valid_actions).not.toContain('add_packages');
  });

  it('revision: the current one applies, a stale one is CONFLICT (transient)', async () => {
    const { update } = await booked();
    expect(adcpError(await update({ revision: 2, paused: true }))).toMatchObject({
      code: 'CONFLICT',
      field: 'revision',
      recovery: 'transient',
    });
    expect(updated(await update({ revision: 1, paused: true }))).toMatchObject({ revision: 2 });
    expect(adcpError(await update({ revision: 1, paused: false })).code).toBe('CONFLICT');
  });
});

describe('update_media_buy: packages', () => {
  it('budget: raised, read back; under the pricing option minimum → BUDGET_TOO_LOW', async () => {
    const { update, read, packageId } = await booked();
    const answer = updated(await update({ packages: [{ package_id: packageId, budget: 6000 }] }));
    expect(answer.affected_packages).toEqual([expect.objectContaining({ package_id: packageId, budget: 6000 })]);
    expect(await read()).toMatchObject({ total_budget: 6000, packages: [expect.objectContaining({ budget: 6000 })] });
    expect(adcpError(await update({ packages: [{ package_id: packageId, budget: 1999 }] }))).toMatchObject({
      code: 'BUDGET_TOO_LOW',
      field: 'packages[0].budget',
      recovery: 'correctable',
    });
    updated(await update({ packages: [{ package_id: packageId, budget: 2000 }] }));
  });

  it('package_id: unknown → PACKAGE_NOT_FOUND, and the whole update is rejected (nothing applied)', async () => {
    const { update, read, packageId } = await booked();
    expect(
      adcpError(
        await update({
          packages: [
            { package_id: packageId, budget: 7000 },
            { package_id: 'pkg_nope', paused: true },
          ],
        }),
      ),
    ).toMatchObject({ code: 'PACKAGE_NOT_FOUND', field: 'packages[1].package_id' });
    expect(await read()).toMatchObject({ revision: 1, packages: [expect.objectContaining({ budget: 5000 })] });
  });

  it('a canceled package: re-cancel NOT_CANCELLABLE, any other change INVALID_STATE', async () => {
    const { update, read, packageId } = await booked();
    updated(await update({ packages: [{ package_id: packageId, canceled: true, cancellation_reason: 'not needed' }] }));
    expect((await read()).packages[0]).toMatchObject({
      canceled: true,
      cancellation: { canceled_by: 'buyer', reason: 'not needed' },
    });
    expect(adcpError(await update({ packages: [{ package_id: packageId, canceled: true }] }))).toMatchObject({
      code: 'NOT_CANCELLABLE',
      field: 'packages[0].canceled',
    });
    expect(adcpError(await update({ packages: [{ package_id: packageId, budget: 6000 }] }))).toMatchObject({
      code: 'INVALID_STATE',
    });
  });

  it('creative_assignments: a library creative moves pending_creatives on; an unknown one is CREATIVE_NOT_FOUND', async () => {
    const later = await booked({ start_time: iso(2 * DAY), end_time: iso(30 * DAY) });
    expect(
      adcpError(
        await later.update({
          packages: [{ package_id: later.packageId, creative_assignments: [{ creative_id: 'cr_nope' }] }],
        }),
      ),
    ).toMatchObject({
      code: 'CREATIVE_NOT_FOUND',
      field: 'packages[0].creative_assignments[0].creative_id',
    });
    const assigned = updated(
      await later.update({
        packages: [{ package_id: later.packageId, creative_assignments: [{ creative_id: 'cr_summit_preroll_15s' }] }],
      }),
    );
    expect(assigned.status).toBe('pending_start');
    expect((await later.read()).packages[0].creative_assignments).toEqual([{ creative_id: 'cr_summit_preroll_15s' }]);
    // start_time asap: the flight has begun, so the buy goes live.
    const now = await booked();
    expect(
      updated(
        await now.update({
          packages: [{ package_id: now.packageId, creative_assignments: [{ creative_id: 'cr_summit_preroll_15s' }] }],
        }),
      ).status,
    ).toBe('active');
  });

  it('targeting_overlay: replaced and read back', async () => {
    const { update, read, packageId } = await booked();
    const overlay = { property_list: { agent_url: 'https://lists.example', list_id: 'list_a' } };
    updated(await update({ packages: [{ package_id: packageId, targeting_overlay: overlay }] }));
    expect((await read()).packages[0].targeting_overlay).toEqual(overlay);
    expect(adcpError(await update({ packages: [{ package_id: packageId, targeting_overlay: 'all' }] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'packages[0].targeting_overlay',
    });
  });

  it('flight: end_time after start_time', async () => {
    const { update, read, packageId } = await booked({ start_time: iso(2 * DAY), end_time: iso(30 * DAY) });
    expect(adcpError(await update({ end_time: iso(DAY) }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'end_time',
    });
    expect(adcpError(await update({ packages: [{ package_id: packageId, end_time: iso(DAY) }] }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'packages[0].end_time',
    });
    const end = iso(40 * DAY);
    updated(await update({ end_time: end }));
    expect((await read()).end_time).toBe(end);
  });

  it('under strict: an auction bid under the floor, or a flight date in the past, is INVALID_REQUEST (accepted on /mcp)', async () => {
    const strictUrl = agent.urlFor(['strict']);
    const flight = { start_time: iso(DAY), end_time: iso(30 * DAY) };
    const auction = {
      packages: [
        { product_id: 'prod_display_ros', pricing_option_id: 'po_display_ros_auction', budget: 1000, bid_price: 6 },
      ],
    };
    const strict = await booked({ ...flight, ...auction }, strictUrl);
    expect(
      adcpError(await strict.update({ packages: [{ package_id: strict.packageId, bid_price: 4 }] })),
    ).toMatchObject({ code: 'INVALID_REQUEST', field: 'packages[0].bid_price' });
    updated(await strict.update({ packages: [{ package_id: strict.packageId, bid_price: 5 }] }));
    expect(adcpError(await strict.update({ start_time: iso(-DAY) }))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'start_time',
      message: 'start_time is in the past',
    });
    updated(await strict.update({ start_time: iso(2 * DAY) }));
    // A buy whose flight began three days ago (seeded): an end_time after its start but in the past is refused.
    const strictAuth = freshCredential();
    const started = {
      status: 'active',
      start_time: iso(-3 * DAY),
      end_time: iso(30 * DAY),
      packages: [{ package_id: 'pkg_1', product_id: 'prod_video_preroll', budget: 5000 }],
    };
    const seededBuy = await callTool(
      strictUrl,
      'comply_test_controller',
      { scenario: 'seed_media_buy', params: { media_buy_id: 'mb_started', fixture: started } },
      strictAuth,
    );
    expect(seededBuy.structuredContent).toMatchObject({ success: true });
    const endEarly = (url: string, auth: string) =>
      callTool(
        url,
        'update_media_buy',
        { idempotency_key: freshKey(), account: ACCOUNT, media_buy_id: 'mb_started', end_time: iso(-DAY) },
        auth,
      );
    expect(adcpError(await endEarly(strictUrl, strictAuth))).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'end_time',
      message: 'end_time is in the past',
    });
    const lenientAuth = freshCredential();
    await callTool(
      agent.url,
      'comply_test_controller',
      { scenario: 'seed_media_buy', params: { media_buy_id: 'mb_started', fixture: started } },
      lenientAuth,
    );
    updated(await endEarly(agent.url, lenientAuth));
    // /mcp sells no auction option: seed one, with the same floor.
    const auth = freshCredential();
    const option = {
      pricing_option_id: 'po_seeded_auction',
      pricing_model: 'cpm',
      currency: 'USD',
      floor_price: 5,
      min_spend_per_package: 500,
    };
    const seeded = await callTool(
      agent.url,
      'comply_test_controller',
      {
        scenario: 'seed_product',
        params: { product_id: 'prod_seeded_auction', fixture: { pricing_options: [option] } },
      },
      auth,
    );
    expect(seeded.structuredContent).toMatchObject({ success: true });
    const seededAuction = {
      packages: [
        { product_id: 'prod_seeded_auction', pricing_option_id: 'po_seeded_auction', budget: 1000, bid_price: 6 },
      ],
    };
    const lenient = await booked(
      { start_time: iso(-3 * DAY), end_time: iso(30 * DAY), ...seededAuction },
      agent.url,
      auth,
    );
    updated(await lenient.update({ packages: [{ package_id: lenient.packageId, bid_price: 4 }] }));
    updated(await lenient.update({ end_time: iso(-DAY) }));
  });
});

describe('update_media_buy: the state machine', () => {
  it('pause parks the buy, resume returns it to the status it left; each is a no-op when already so', async () => {
    const { update, read } = await booked();
    expect(updated(await update({ paused: false }))).toMatchObject({ status: 'pending_creatives' });
    const paused = updated(await update({ paused: true }));
    expect(paused).toMatchObject({
      status: 'paused',
      valid_actions: ['resume', 'cancel', 'update_budget', 'update_dates', 'update_packages', 'sync_creatives'],
    });
    expect(updated(await update({ paused: true })).status).toBe('paused');
    expect((await read()).status).toBe('paused');
    expect(updated(await update({ paused: false }))).toMatchObject({ status: 'pending_creatives' });
  });

  it('cancel is final: pause/resume/updates INVALID_STATE, re-cancel NOT_CANCELLABLE', async () => {
    const { update, read, packageId } = await booked();
    expect(updated(await update({ canceled: true, cancellation_reason: 'plans changed' }))).toMatchObject({
      status: 'canceled',
      valid_actions: [],
    });
    expect(await read()).toMatchObject({
      status: 'canceled',
      cancellation: { canceled_by: 'buyer', reason: 'plans changed' },
    });
    expect(adcpError(await update({ paused: true }))).toMatchObject({ code: 'INVALID_STATE', recovery: 'correctable' });
    expect(adcpError(await update({ paused: false })).code).toBe('INVALID_STATE');
    expect(adcpError(await update({ packages: [{ package_id: packageId, budget: 6000 }] })).code).toBe('INVALID_STATE');
    expect(adcpError(await update({ canceled: true }))).toMatchObject({
      code: 'NOT_CANCELLABLE',
      recovery: 'correctable',
    });
  });

  it('completed (forced by the controller) is final too', async () => {
    const { auth, id, update } = await booked();
    const forced = await callTool(
      agent.url,
      'comply_test_controller',
      { scenario: 'force_media_buy_status', params: { media_buy_id: id, status: 'completed' } },
      auth,
    );
    expect(forced.structuredContent).toMatchObject({ success: true });
    expect(adcpError(await update({ paused: true })).code).toBe('INVALID_STATE');
    expect(adcpError(await update({ canceled: true })).code).toBe('NOT_CANCELLABLE');
  });

  it('an idempotent replay of the create does not revive a canceled buy', async () => {
    const auth = freshCredential();
    const create = mediaBuyRequest({}, freshKey());
    const buy = ok(
      await callTool(agent.url, 'create_media_buy', create, auth),
      'media-buy/create-media-buy-response.json',
    );
    updated(
      await callTool(
        agent.url,
        'update_media_buy',
        { idempotency_key: freshKey(), account: ACCOUNT, media_buy_id: buy.media_buy_id, canceled: true },
        auth,
      ),
    );
    expect((await callTool(agent.url, 'create_media_buy', create, auth)).structuredContent).toMatchObject({
      replayed: true,
    });
    const read = ok(
      await callTool(agent.url, 'get_media_buys', { media_buy_ids: [buy.media_buy_id] }, auth),
      'media-buy/get-media-buys-response.json',
    );
    expect(read.media_buys[0].status).toBe('canceled');
  });
});
