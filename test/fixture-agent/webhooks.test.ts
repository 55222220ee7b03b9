/**
 * The fixture agent's push-notification webhooks (fixtures/agent/webhooks.mjs)
 * checked with the reference implementation, not ours: each delivery verifies
 * under @adcp/sdk's own `verifyWebhookSignature` with the key the agent
 * publishes through brand.json, and its payload validates against
 * core/mcp-webhook-payload.json. Deliveries land on a real receiver on
 * 127.0.0.1; tests wait for them, never on the clock.
 */
import {
  InMemoryReplayStore,
  InMemoryRevocationStore,
  StaticJwksResolver,
  verifyWebhookSignature,
} from '@adcp/sdk/signing';
import { afterAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { WebhookReceiver, type WebhookDelivery } from '../../src/webhooks/receiver.js';
import { schemaErrors } from './adcp-schemas.js';
import { callTool, freshCredential, mediaBuyRequest } from './helpers.js';

let agent: FixtureAgent | undefined;
let receiver: WebhookReceiver | undefined;
afterAll(async () => {
  await receiver?.close();
  await agent?.close();
});
async function setup() {
  agent ??= await startFixtureAgent();
  receiver ??= await WebhookReceiver.start();
  return { agent, receiver };
}

let urls = 0;
/** A fresh receiver URL, registered (with a retry policy, if any). */
async function hookUrl(policy?: { count: number; httpStatus: number }) {
  const { receiver } = await setup();
  const op = `op-${++urls}`;
  await receiver.open('fixture', op, policy);
  return { url: receiver.urlFor('fixture', op), next: (after = 0) => receiver.next('fixture', op, after, 30_000) };
}

/** Waits until `count` deliveries have arrived at the URL. */
async function deliveries(
  next: (after?: number) => Promise<WebhookDelivery[]>,
  count: number,
): Promise<WebhookDelivery[]> {
  const all: WebhookDelivery[] = [];
  while (all.length < count) {
    const batch = await next(all.at(-1)?.seq ?? 0);
    if (batch.length === 0) break;
    all.push(...batch);
  }
  return all;
}

async function verifyWithSdk(d: WebhookDelivery, store = new InMemoryReplayStore()) {
  const { agent } = await setup();
  const brand = (await (await fetch(`${agent.origin}/.well-known/brand.json`)).json()) as {
    agents: { url: string; jwks_uri: string }[];
  };
  const jwks = (await (await fetch(brand.agents[0]!.jwks_uri)).json()) as { keys: any[] };
  const headers: Record<string, string> = {};
  for (const [name, value] of d.headers) headers[name] = value;
  return verifyWebhookSignature(
    { method: d.method, url: d.url, headers, body: d.body.toString('utf8') },
    {
      jwks: new StaticJwksResolver(jwks.keys),
      replayStore: store,
      revocationStore: new InMemoryRevocationStore(),
      now: () => Math.floor(d.receivedAt / 1000),
    },
  );
}

describe('fixture agent webhooks', () => {
  it('a create_media_buy with push_notification_config sends one signed webhook that @adcp/sdk verifies and the payload schema accepts', async () => {
    const { agent } = await setup();
    const hook = await hookUrl();
    const answer = await callTool(
      agent.url,
      'create_media_buy',
      { ...mediaBuyRequest(), push_notification_config: { url: hook.url } },
      freshCredential(),
    );
    const [d] = await deliveries(hook.next, 1);
    const body = JSON.parse(d!.body.toString('utf8'));
    expect(schemaErrors('core/mcp-webhook-payload.json', body)).toEqual([]);
    expect(body).toMatchObject({
      idempotency_key: expect.stringMatching(/^whk_[0-9a-f]{32}$/),
      operation_id: hook.url.split('/').pop(),
      task_type: 'create_media_buy',
      status: 'completed',
    });
    expect(body.result.media_buy_id).toBe(answer.structuredContent!.media_buy_id);
    expect(await verifyWithSdk(d!)).toMatchObject({ status: 'verified', keyid: 'fixture-webhook-ed25519' });
  });

  it('retries a 5xx with the same body and key, a fresh nonce each time (each attempt verifies against one shared replay store)', async () => {
    const { agent } = await setup();
    const hook = await hookUrl({ count: 2, httpStatus: 503 });
    await callTool(
      agent.url,
      'create_media_buy',
      { ...mediaBuyRequest(), push_notification_config: { url: hook.url } },
      freshCredential(),
    );
    const all = await deliveries(hook.next, 3);
    expect(all.map((d) => d.answered)).toEqual([503, 503, 200]);
    expect(new Set(all.map((d) => d.body.toString('utf8'))).size).toBe(1);
    const store = new InMemoryReplayStore();
    for (const d of all) expect(await verifyWithSdk(d, store)).toMatchObject({ status: 'verified' });
  });

  it('an idempotent replay sends nothing; webhook_duplicate_on_replay sends it again with a new key', async () => {
    const { agent } = await setup();
    const credential = freshCredential();
    const hook = await hookUrl();
    const request = { ...mediaBuyRequest(), push_notification_config: { url: hook.url } };
    await callTool(agent.url, 'create_media_buy', request, credential);
    await callTool(agent.url, 'create_media_buy', request, credential);
    const duplicating = agent.urlFor(['webhook_duplicate_on_replay@create_media_buy']);
    await callTool(duplicating, 'create_media_buy', request, credential);
    const all = await deliveries(hook.next, 2);
    expect(all).toHaveLength(2);
    const keys = all.map((d) => JSON.parse(d.body.toString('utf8')).idempotency_key);
    expect(keys[0]).not.toBe(keys[1]);
    // Emission starts before the answer returns: the plain replay's webhook, had there been one, came first.
    expect(await receiver!.next('fixture', hook.url.split('/').pop()!, all[1]!.seq, 0)).toEqual([]);
  });

  it('brand.json lists each endpoint the agent answered on, and the JWKS declares the key for webhook signing only', async () => {
    const { agent } = await setup();
    const endpoint = agent.urlFor(['webhook_never@create_media_buy']);
    await callTool(
      endpoint,
      'create_media_buy',
      { ...mediaBuyRequest(), push_notification_config: { url: 'http://127.0.0.1:9/none' } },
      freshCredential(),
    );
    const brand = (await (await fetch(`${agent.origin}/.well-known/brand.json`)).json()) as {
      agents: { url: string }[];
    };
    expect(brand.agents.map((a) => a.url)).toEqual(expect.arrayContaining([agent.url, endpoint]));
    const jwks = (await (await fetch(`${agent.origin}/.well-known/jwks.json`)).json()) as { keys: any[] };
    expect(jwks.keys).toEqual([
      expect.objectContaining({
        kid: 'fixture-webhook-ed25519',
        kty: 'OKP',
        crv: 'Ed25519',
        alg: 'EdDSA',
        use: 'sig',
        key_ops: ['verify'],
        adcp_use: 'webhook-signing',
      }),
    ]);
    expect(jwks.keys[0]).not.toHaveProperty('d');
    expect(agent.webhookAttempts.filter((a) => a.url === 'http://127.0.0.1:9/none')).toEqual([]);
  });

  it('keeps the connection brand.json is fetched on alive with no idle timeout of its own, so a pooled fetch never races the agent closing it', async () => {
    // The agent runs in this process: a synchronous stretch longer than a server idle timeout (the first
    // schemaErrors() compile, on a loaded machine) let the next fetch go out on a pooled socket the agent's
    // overdue timer then destroyed: "fetch failed: ECONNRESET". Only the client closes idle connections now.
    const { agent } = await setup();
    const response = await fetch(`${agent.origin}/.well-known/brand.json`);
    await response.arrayBuffer();
    expect(response.headers.get('connection')).toBe('keep-alive');
    expect(response.headers.get('keep-alive')).toBeNull();
  });
});
