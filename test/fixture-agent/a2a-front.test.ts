/**
 * The fixture agent's A2A front on the wire, with raw HTTP (no A2A client):
 * the agent card, the AdCP-over-A2A invocation (`{ skill, parameters }` and
 * `{ skill, input }`), the Task shapes, A2A tasks/get, and the JSON-RPC errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { bearer, DEMO_KEY, freshCredential, mediaBuyRequest, NO_CREDENTIALS } from './helpers.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

let ids = 0;

/** One JSON-RPC POST to an A2A endpoint; the HTTP status and parsed body. */
async function rpc(
  url: string,
  method: string,
  params: unknown,
  authorization = bearer(DEMO_KEY),
): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++ids, method, params }),
  });
  return { status: response.status, body: await response.json() };
}

const send = (skill: string, args: Record<string, unknown>, key: 'parameters' | 'input' = 'parameters') => ({
  message: {
    kind: 'message',
    messageId: `m${++ids}`,
    role: 'user',
    parts: [{ kind: 'data', data: { skill, [key]: args } }],
  },
});

describe('the agent card', () => {
  it('is served under each A2A endpoint (agent-card.json and agent.json) and, for /a2a, at the origin root', async () => {
    for (const path of [
      '/a2a/.well-known/agent-card.json',
      '/a2a/.well-known/agent.json',
      '/.well-known/agent-card.json',
      '/.well-known/agent.json',
    ]) {
      const card: any = await (await fetch(agent.origin + path)).json();
      expect(card, path).toMatchObject({
        protocolVersion: '0.3.0',
        url: agent.a2aUrl,
        preferredTransport: 'JSONRPC',
        capabilities: { streaming: false },
      });
    }
    const card: any = await (
      await fetch(`${agent.a2aUrlFor(['without@tasks_get'])}/.well-known/agent-card.json`)
    ).json();
    expect(card.url).toBe(agent.a2aUrlFor(['without@tasks_get']));
    expect(card.skills.map((s: any) => s.id)).toEqual([
      'get_adcp_capabilities',
      'get_products',
      'list_creative_formats',
      'list_creatives',
      'create_media_buy',
      'get_media_buys',
      'update_media_buy',
      'comply_test_controller',
      'tasks/get',
    ]);
    expect((await fetch(`${agent.url}/.well-known/agent-card.json`)).status).toBe(404);
  });
});

describe('message/send', () => {
  it("runs the skill with `parameters` (AdCP 3.0 a2a-guide) or `input`: a completed Task, the result in the artifact's DataPart", async () => {
    for (const key of ['parameters', 'input'] as const) {
      const { status, body } = await rpc(
        agent.a2aUrl,
        'message/send',
        send('get_products', { buying_mode: 'wholesale', context: { k: key } }, key),
      );
      expect(status).toBe(200);
      expect(body.result).toMatchObject({
        kind: 'task',
        id: expect.any(String),
        contextId: expect.any(String),
        status: { state: 'completed' },
      });
      expect(body.result.artifacts[0].parts).toEqual([
        { kind: 'text', text: 'get_products completed' },
        { kind: 'data', data: expect.objectContaining({ products: expect.any(Array), context: { k: key } }) },
      ]);
    }
  });

  it('an AdCP error fails the Task with the adcp_error DataPart', async () => {
    const { body } = await rpc(agent.a2aUrl, 'message/send', send('get_products', { brief: 'no buying_mode' }));
    expect(body.result.status.state).toBe('failed');
    expect(body.result.artifacts[0]).toMatchObject({
      name: 'error',
      parts: [{ kind: 'text' }, { kind: 'data', data: { adcp_error: { code: 'INVALID_REQUEST' } } }],
    });
  });

  it('a submitted arm completes the Task, with adcp_task_id on the artifact metadata', async () => {
    const { body } = await rpc(
      agent.a2aUrlFor(['async_submitted@create_media_buy']),
      'message/send',
      send('create_media_buy', mediaBuyRequest()),
      freshCredential(),
    );
    const data = body.result.artifacts[0].parts[1].data;
    expect(body.result.status.state).toBe('completed');
    expect(data).toMatchObject({ status: 'submitted', task_id: expect.any(String) });
    expect(body.result.artifacts[0]).toMatchObject({ name: 'submitted', metadata: { adcp_task_id: data.task_id } });
  });

  it('rejects what is not one { skill, parameters } DataPart, and unknown skills, with JSON-RPC -32602', async () => {
    const two = {
      message: {
        messageId: 'x',
        role: 'user',
        parts: [
          { kind: 'data', data: { skill: 'get_products' } },
          { kind: 'data', data: { skill: 'list_creatives' } },
        ],
      },
    };
    const text = { message: { messageId: 'y', role: 'user', parts: [{ kind: 'text', text: 'find me video' }] } };
    // On an endpoint without list_creatives: a removed skill is answered like one that never existed.
    for (const params of [two, text, send('no_such_skill', {}), send('list_creatives', {})]) {
      const { body } = await rpc(agent.a2aUrlFor(['without@list_creatives']), 'message/send', params);
      expect(body.error, JSON.stringify(params)).toMatchObject({ code: -32602 });
    }
  });
});

describe('A2A tasks/get and the other methods', () => {
  it('a2a_working: message/send answers `working`; the first tasks/get answers the final Task — to its caller only', async () => {
    const url = agent.a2aUrlFor(['a2a_working']);
    const { body } = await rpc(url, 'message/send', send('get_products', { buying_mode: 'wholesale' }));
    expect(body.result.status).toMatchObject({
      state: 'working',
      message: { role: 'agent', parts: [{ kind: 'text' }, { kind: 'data', data: { status: 'working' } }] },
    });
    expect(body.result.artifacts).toBeUndefined();
    expect((await rpc(url, 'tasks/get', { id: body.result.id }, freshCredential())).body.error).toMatchObject({
      code: -32001,
    });
    const polled = await rpc(url, 'tasks/get', { id: body.result.id });
    expect(polled.body.result).toMatchObject({
      id: body.result.id,
      status: { state: 'completed' },
      artifacts: [{ name: 'result' }],
    });
  });

  it('a2a_stuck never completes; unknown methods and streaming are JSON-RPC errors', async () => {
    const url = agent.a2aUrlFor(['a2a_stuck']);
    const { body } = await rpc(url, 'message/send', send('get_products', { buying_mode: 'wholesale' }));
    for (let i = 0; i < 3; i++)
      expect((await rpc(url, 'tasks/get', { id: body.result.id })).body.result.status.state).toBe('working');
    expect((await rpc(agent.a2aUrl, 'message/stream', send('get_products', {}))).body.error).toMatchObject({
      code: -32004,
    });
    expect((await rpc(agent.a2aUrl, 'tasks/list', {})).body.error).toMatchObject({ code: -32601 });
  });

  it('protected skills need credentials (401 + WWW-Authenticate, JSON-RPC -32028); capabilities do not', async () => {
    const denied = await rpc(agent.a2aUrl, 'message/send', send('list_creatives', {}), NO_CREDENTIALS);
    expect(denied.status).toBe(401);
    expect(denied.body.error).toMatchObject({ code: -32028, data: { adcp_error: { code: 'AUTH_REQUIRED' } } });
    const open = await rpc(agent.a2aUrl, 'message/send', send('get_adcp_capabilities', {}), NO_CREDENTIALS);
    expect(open.body.result.status.state).toBe('completed');
    expect(agent.callsFor('list_creatives').at(-1)).toMatchObject({ auth: 'none', rejected: true, served: true });
  });
});
