/**
 * The `strict` behaviour (fixtures/agent/README.md > Strict seller), over real
 * sockets: every strict rule rejects on /x/strict/mcp and the same request is
 * accepted on the lenient /mcp; strict answers still validate against the AdCP
 * 3.0 schemas; idempotency is unchanged; and a complete strict create_media_buy
 * with push_notification_config delivers the signed, idempotency-keyed webhook
 * (retried on a 503) to a plain node:http receiver on 127.0.0.1, verified with
 * @adcp/sdk's own verifier. Waits are on deliveries, never on the clock.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  InMemoryReplayStore,
  InMemoryRevocationStore,
  StaticJwksResolver,
  verifyWebhookSignature,
} from '@adcp/sdk/signing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBehaviours } from '../../fixtures/agent/behaviours.mjs';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { schemaErrors } from './adcp-schemas.js';
import { bearer, callTool, DEMO_KEY, freshCredential, mediaBuyRequest, type ToolResult } from './helpers.js';

let agent: FixtureAgent;
let strictUrl: string;
beforeAll(async () => {
  agent = await startFixtureAgent();
  strictUrl = agent.urlFor(['strict']);
});
afterAll(async () => {
  await agent?.close();
});

const HOUR = 60 * 60 * 1000;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
/** The plain brief the reference runner sends when it has none (it matches no catalogue keyword). */
const PLAIN_BRIEF = 'Show me all available advertising products across all channels';

/** A complete, current request (a future start, so the strict clock checks pass). */
function request(overrides: Record<string, unknown> = {}, pkg: Record<string, unknown> = {}) {
  return { ...mediaBuyRequest(pkg), start_time: iso(HOUR), end_time: iso(30 * 24 * HOUR), ...overrides };
}

function adcpError(result: ToolResult) {
  expect(result.isError).toBe(true);
  return result.structuredContent!.adcp_error as { code: string; message: string; field?: string };
}

function accepted(result: ToolResult) {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  expect(schemaErrors('media-buy/create-media-buy-response.json', result.structuredContent)).toEqual([]);
  return result.structuredContent!;
}

/** The same request on /x/strict/mcp and on /mcp (one fresh principal each, so idempotency keys never meet). */
async function both(args: Record<string, unknown>) {
  const strict = await callTool(strictUrl, 'create_media_buy', args, freshCredential());
  const lenient = await callTool(agent.url, 'create_media_buy', args, freshCredential());
  return { strict, lenient };
}

describe('the strict token', () => {
  it('is an agent-wide behaviour of /mcp and /a2a: scoping it to a tool is refused', () => {
    expect(strictUrl).toMatch(/\/x\/strict\/mcp$/);
    expect(agent.a2aUrlFor(['strict'])).toMatch(/\/x\/strict\/a2a$/);
    expect(agent.urlFor(['strict', 'session_s1', 'webhook_no_retry@create_media_buy'])).toContain('/x/strict+');
    expect(parseBehaviours(['strict@create_media_buy'])).toMatchObject({
      ok: false,
      message: expect.stringContaining('whole endpoint'),
    });
  });
});

describe('strict create_media_buy: the request', () => {
  it('a complete, current request is booked as on /mcp', async () => {
    const { strict, lenient } = await both(request());
    expect(accepted(strict).packages).toEqual([
      expect.objectContaining({
        product_id: 'prod_video_preroll',
        pricing_option_id: 'po_video_preroll_cpm',
        budget: 5000,
      }),
    ]);
    accepted(lenient);
  });

  it('no packages — the push_notification_config-only request /mcp takes as a notification probe — is "packages array is required"', async () => {
    const probe = {
      idempotency_key: 'strict-probe-key-000001',
      push_notification_config: { url: 'http://127.0.0.1:9/probe' },
    };
    const { strict, lenient } = await both(probe);
    expect(adcpError(strict)).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'packages array is required',
      field: 'packages',
    });
    expect(accepted(lenient).packages).toEqual([]);
  });

  it('an empty packages array is "packages array is required" too (/mcp rejects it in its own words)', async () => {
    const { strict, lenient } = await both(request({ packages: [] }));
    expect(adcpError(strict)).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'packages array is required',
      field: 'packages',
    });
    expect(adcpError(lenient)).toMatchObject({ code: 'INVALID_REQUEST', field: 'packages' });
  });

  it.each([
    ['account', { account: { name: 'not an account-ref' } }, 'account'],
    [
      'account (operator not a domain)',
      { account: { brand: { domain: 'fixture-brand.example' }, operator: 'Not A Domain' } },
      'account',
    ],
    ['brand', { brand: { domain: '' } }, 'brand.domain'],
    ['push_notification_config', { push_notification_config: { url: 'not a url' } }, 'push_notification_config.url'],
  ])('a malformed %s is rejected (field %s); /mcp accepts it', async (_label, overrides, field) => {
    const { strict, lenient } = await both(request(overrides));
    expect(adcpError(strict)).toMatchObject({ code: 'INVALID_REQUEST', field: field });
    accepted(lenient);
  });

  it.each([
    ['account', 'account'],
    ['brand', 'brand'],
    ['start_time', 'start_time'],
    ['end_time', 'end_time'],
  ])('a request without %s is rejected (field %s)', async (missing, field) => {
    const args: Record<string, unknown> = request();
    delete args[missing];
    const { strict } = await both(args);
    expect(adcpError(strict)).toMatchObject({ code: 'INVALID_REQUEST', message: `${missing} is required`, field });
  });

  it('a start_time in the past is "start_time is in the past"; /mcp books it', async () => {
    const { strict, lenient } = await both(request({ start_time: '2020-01-01T00:00:00Z' }));
    expect(adcpError(strict)).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'start_time is in the past',
      field: 'start_time',
    });
    accepted(lenient);
  });

  it('an end_time in the past is "end_time is in the past"; /mcp books it', async () => {
    const { strict, lenient } = await both(
      request({ start_time: '2020-01-01T00:00:00Z', end_time: '2020-06-30T00:00:00Z' }),
    );
    // start_time is checked first; with asap, end_time's own rule shows.
    expect(adcpError(strict)).toMatchObject({ field: 'start_time' });
    const asap = await both(request({ start_time: 'asap', end_time: '2020-06-30T00:00:00Z' }));
    expect(adcpError(asap.strict)).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'end_time is in the past',
      field: 'end_time',
    });
    accepted(lenient);
    accepted(asap.lenient);
  });

  it('tolerates 5 minutes of clock skew and takes asap', async () => {
    accepted(
      await callTool(strictUrl, 'create_media_buy', request({ start_time: iso(-2 * 60_000) }), freshCredential()),
    );
    accepted(await callTool(strictUrl, 'create_media_buy', request({ start_time: 'asap' }), freshCredential()));
    const stale = await callTool(
      strictUrl,
      'create_media_buy',
      request({ start_time: iso(-10 * 60_000) }),
      freshCredential(),
    );
    expect(adcpError(stale)).toMatchObject({ field: 'start_time' });
  });

  it('checks package shapes before the catalogue: a negative budget on an unknown product is INVALID_REQUEST on the budget (/mcp: PRODUCT_NOT_FOUND)', async () => {
    const { strict, lenient } = await both(
      request({}, { product_id: 'test-product', pricing_option_id: 'test-pricing', budget: -500 }),
    );
    expect(adcpError(strict)).toMatchObject({ code: 'INVALID_REQUEST', field: 'packages[0].budget' });
    expect(adcpError(lenient)).toMatchObject({ code: 'PRODUCT_NOT_FOUND' });
    const noBudget = request();
    delete (noBudget.packages as Record<string, unknown>[])[0]!.budget;
    const missing = await callTool(strictUrl, 'create_media_buy', noBudget, freshCredential());
    expect(adcpError(missing)).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'packages[0].budget is required',
      field: 'packages[0].budget',
    });
  });

  it('end_time must come after start_time', async () => {
    const result = await callTool(
      strictUrl,
      'create_media_buy',
      request({ start_time: iso(2 * HOUR), end_time: iso(HOUR) }),
      freshCredential(),
    );
    expect(adcpError(result)).toMatchObject({ code: 'INVALID_REQUEST', field: 'end_time' });
  });
});

describe('strict pricing: an auction first', () => {
  it('get_products (wholesale and a plain brief) leads with prod_display_ros and its auction option; the other products stay fixed-price', async () => {
    for (const args of [{ buying_mode: 'wholesale' }, { buying_mode: 'brief', brief: PLAIN_BRIEF }]) {
      const result = await callTool(strictUrl, 'get_products', args);
      expect(schemaErrors('media-buy/get-products-response.json', result.structuredContent)).toEqual([]);
      const [first, ...others] = result.structuredContent!.products;
      expect(first.product_id).toBe('prod_display_ros');
      expect(first.pricing_options[0]).toEqual({
        pricing_option_id: 'po_display_ros_auction',
        pricing_model: 'cpm',
        currency: 'USD',
        floor_price: 5,
        min_spend_per_package: 500,
      });
      expect(first.pricing_options[1]).toMatchObject({ pricing_option_id: 'po_display_ros_cpm', fixed_price: 4.5 });
      for (const product of others)
        for (const option of product.pricing_options) expect(option, product.product_id).toHaveProperty('fixed_price');
    }
  });

  it('/mcp offers no auction: its first product is fixed-price only', async () => {
    const result = await callTool(agent.url, 'get_products', { buying_mode: 'wholesale' });
    expect(result.structuredContent!.products[0].pricing_options).toEqual([
      expect.objectContaining({ pricing_option_id: 'po_display_ros_cpm', fixed_price: 4.5 }),
    ]);
  });

  const auction = { product_id: 'prod_display_ros', pricing_option_id: 'po_display_ros_auction', budget: 1000 };

  it('booking the auction without bid_price is "bid_price is required for auction pricing"', async () => {
    const result = await callTool(strictUrl, 'create_media_buy', request({}, auction), freshCredential());
    expect(adcpError(result)).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'bid_price is required for auction pricing',
      field: 'packages[0].bid_price',
    });
  });

  it('a bid below floor_price is rejected; a bid at or above it is booked (a budget of 1000 meets the minimum) and echoed', async () => {
    const low = await callTool(
      strictUrl,
      'create_media_buy',
      request({}, { ...auction, bid_price: 4.99 }),
      freshCredential(),
    );
    expect(adcpError(low)).toMatchObject({ code: 'INVALID_REQUEST', field: 'packages[0].bid_price' });
    const notANumber = await callTool(
      strictUrl,
      'create_media_buy',
      request({}, { ...auction, bid_price: '7.5' }),
      freshCredential(),
    );
    expect(adcpError(notANumber)).toMatchObject({ code: 'INVALID_REQUEST', field: 'packages[0].bid_price' });
    for (const bid of [5, 7.5]) {
      const booked = accepted(
        await callTool(strictUrl, 'create_media_buy', request({}, { ...auction, bid_price: bid }), freshCredential()),
      );
      expect(booked.packages).toEqual([
        expect.objectContaining({ pricing_option_id: 'po_display_ros_auction', budget: 1000, bid_price: bid }),
      ]);
    }
  });

  it('a fixed-price option needs no bid', async () => {
    accepted(
      await callTool(
        strictUrl,
        'create_media_buy',
        request({}, { product_id: 'prod_display_ros', pricing_option_id: 'po_display_ros_cpm', budget: 1000 }),
        freshCredential(),
      ),
    );
  });

  it('a seeded auction option (no fixed_price) needs a bid under strict only; /mcp books it without one', async () => {
    const credential = freshCredential();
    const seed = async (scenario: string, params: Record<string, unknown>) => {
      const answer = await callTool(agent.url, 'comply_test_controller', { scenario, params }, credential);
      expect(answer.structuredContent).toMatchObject({ success: true });
    };
    await seed('seed_product', {
      product_id: 'prod_seeded_auction',
      fixture: { name: 'Seeded auction', delivery_type: 'non_guaranteed' },
    });
    await seed('seed_pricing_option', {
      product_id: 'prod_seeded_auction',
      pricing_option_id: 'po_seeded_auction',
      fixture: { floor_price: 2 },
    });
    const pkg = { product_id: 'prod_seeded_auction', pricing_option_id: 'po_seeded_auction', budget: 100 };
    const strict = await callTool(strictUrl, 'create_media_buy', request({}, pkg), credential);
    expect(adcpError(strict)).toMatchObject({
      message: 'bid_price is required for auction pricing',
      field: 'packages[0].bid_price',
    });
    accepted(await callTool(agent.url, 'create_media_buy', request({}, pkg), credential));
  });
});

describe('strict idempotency', () => {
  it('is unchanged: the same key and body replay the answer, a different body is IDEMPOTENCY_CONFLICT', async () => {
    const credential = freshCredential();
    const args = request();
    const first = accepted(await callTool(strictUrl, 'create_media_buy', args, credential));
    const replay = accepted(await callTool(strictUrl, 'create_media_buy', args, credential));
    expect(replay).toEqual({ ...first, replayed: true });
    const conflict = await callTool(
      strictUrl,
      'create_media_buy',
      { ...args, packages: [{ ...(args.packages as object[])[0], budget: 6000 }] },
      credential,
    );
    expect(adcpError(conflict)).toEqual({ code: 'IDEMPOTENCY_CONFLICT', message: expect.any(String) });
  });
});

describe('strict comply_test_controller', () => {
  it("answers failures as the response schema's error arm without isError; /mcp sets isError", async () => {
    const strict = await callTool(strictUrl, 'comply_test_controller', {
      scenario: 'force_account_status',
      context: { k: 1 },
    });
    expect(strict.isError).toBeUndefined();
    expect(strict.structuredContent).toEqual({
      success: false,
      error: 'UNKNOWN_SCENARIO',
      error_detail: expect.any(String),
      context: { k: 1 },
    });
    expect(JSON.parse(strict.content![0]!.text!)).toEqual(strict.structuredContent);
    const notFound = await callTool(strictUrl, 'comply_test_controller', {
      scenario: 'force_media_buy_status',
      params: { media_buy_id: 'mb_nope', status: 'active' },
    });
    expect(notFound.isError).toBeUndefined();
    expect(notFound.structuredContent).toMatchObject({ success: false, error: 'NOT_FOUND', current_state: null });
    const lenient = await callTool(agent.url, 'comply_test_controller', { scenario: 'force_account_status' });
    expect(lenient.isError).toBe(true);
    expect(lenient.structuredContent).toMatchObject({ success: false, error: 'UNKNOWN_SCENARIO' });
  });

  it('over A2A the failure is a completed Task carrying the error arm', async () => {
    const response = await fetch(agent.a2aUrlFor(['strict']), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: bearer(DEMO_KEY) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'strict-a2a-1',
            role: 'user',
            parts: [
              {
                kind: 'data',
                data: { skill: 'comply_test_controller', parameters: { scenario: 'force_account_status' } },
              },
            ],
          },
        },
      }),
    });
    const body: any = await response.json();
    expect(body.result.status.state).toBe('completed');
    expect(body.result.artifacts[0].parts[1].data).toMatchObject({ success: false, error: 'UNKNOWN_SCENARIO' });
  });
});

interface Delivery {
  url: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
  answered: number;
}

/** A bare node:http webhook receiver: answers `failFirst` deliveries 503, then 200; `wait(n)` resolves once n arrived. */
async function startReceiver(failFirst: number) {
  const deliveries: Delivery[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answered = deliveries.length < failFirst ? 503 : 200;
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
      deliveries.push({
        url: `http://${req.headers.host}${req.url}`,
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
        answered,
      });
      res.writeHead(answered).end();
      for (const waiter of waiters.filter((w) => deliveries.length >= w.count)) waiter.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/strict-op-1`,
    deliveries,
    wait: (count: number) =>
      deliveries.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('strict webhooks', () => {
  it('a complete create_media_buy with push_notification_config delivers the signed, idempotency-keyed webhook, retried with the same key after 503s', async () => {
    const receiver = await startReceiver(2);
    try {
      const answer = accepted(
        await callTool(
          strictUrl,
          'create_media_buy',
          request({ push_notification_config: { url: receiver.url } }),
          freshCredential(),
        ),
      );
      await receiver.wait(3);
      expect(receiver.deliveries.map((d) => d.answered)).toEqual([503, 503, 200]);
      expect(new Set(receiver.deliveries.map((d) => d.body)).size).toBe(1);
      const payload = JSON.parse(receiver.deliveries[0]!.body);
      expect(schemaErrors('core/mcp-webhook-payload.json', payload)).toEqual([]);
      expect(payload).toMatchObject({
        idempotency_key: expect.stringMatching(/^whk_[0-9a-f]{32}$/),
        operation_id: 'strict-op-1',
        task_type: 'create_media_buy',
        status: 'completed',
      });
      expect(payload.result.media_buy_id).toBe(answer.media_buy_id);

      const brand = (await (await fetch(`${agent.origin}/.well-known/brand.json`)).json()) as {
        agents: { url: string; jwks_uri: string }[];
      };
      expect(brand.agents.map((a) => a.url)).toContain(strictUrl);
      const jwks = (await (await fetch(brand.agents.find((a) => a.url === strictUrl)!.jwks_uri)).json()) as {
        keys: any[];
      };
      const replayStore = new InMemoryReplayStore();
      for (const d of receiver.deliveries) {
        const verdict = await verifyWebhookSignature(
          { method: 'POST', url: d.url, headers: d.headers, body: d.body },
          {
            jwks: new StaticJwksResolver(jwks.keys),
            replayStore,
            revocationStore: new InMemoryRevocationStore(),
            now: () => Math.floor(d.receivedAt / 1000),
          },
        );
        expect(verdict).toMatchObject({ status: 'verified', keyid: 'fixture-webhook-ed25519' });
      }
    } finally {
      await receiver.close();
    }
  });
});
