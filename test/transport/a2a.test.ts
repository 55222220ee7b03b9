/**
 * The A2A transport against the real fixture agent's A2A endpoint (no mocked
 * transport): agent card discovery and skills, every extraction path of the
 * contract (final artifact, interim status message, failed task, JSON-RPC
 * error, HTTP 401), bounds (oversize body, timeout, a task that never ends),
 * credentials per call, and the AdCP async envelope. Then the extraction
 * algorithm on A2A 1.0 shapes the fixture does not send.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_TEST_KIT_PATH, startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { extractA2aResult } from '../../src/transport/a2a-extract.js';
import { agentCardUrls } from '../../src/transport/a2a-card.js';
import { A2aTransport } from '../../src/transport/a2a.js';
import type { CallOptions, Credentials } from '../../src/transport/types.js';

const KEY: Credentials = { kind: 'bearer', token: 'demo-a2a-transport' };
const MB = 1024 * 1024;
const BRIEF = { buying_mode: 'brief', brief: 'video', context: { correlation_id: 'a2a-transport' } };
const MEDIA_BUY = {
  idempotency_key: 'a2a-transport-create-0001',
  account: { brand: { domain: 'fixture-brand.example' }, operator: 'pinnacle-agency.example' },
  brand: { domain: 'fixture-brand.example' },
  start_time: 'asap',
  end_time: '2027-06-30T23:59:59Z',
  packages: [{ product_id: 'prod_video_preroll', pricing_option_id: 'po_video_preroll_cpm', budget: 5000 }],
  context: { correlation_id: 'a2a-transport-buy' },
};

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent({ hugeBytes: 5 * MB });
});
afterAll(() => agent?.close());

function transport(url: string, maxResponseBytes = 10 * MB): A2aTransport {
  return new A2aTransport({ url, maxResponseBytes });
}

const opts = (more: Partial<CallOptions> = {}): CallOptions => ({ credentials: KEY, timeoutMs: 5_000, ...more });

describe('discovery: the agent card', () => {
  it('finds the card under the endpoint; its skills are the tools and its url the JSON-RPC endpoint', async () => {
    const t = transport(agent.a2aUrl);
    expect(await t.listTools(opts())).toEqual({
      tools: [
        'get_adcp_capabilities',
        'get_products',
        'list_creative_formats',
        'list_creatives',
        'create_media_buy',
        'get_media_buys',
        'update_media_buy',
        'comply_test_controller',
        'tasks/get',
        'tasks_get',
      ],
    });
    const answer = await t.call('get_adcp_capabilities', {}, opts());
    expect(answer.request).toEqual({
      transport: 'a2a',
      operation: 'get_adcp_capabilities',
      payload: {},
      url: agent.a2aUrl,
    });
  });

  it('a skill the endpoint does not serve is not listed (missing_tool is graded from the card)', async () => {
    const listed = await transport(agent.a2aUrlFor(['without@comply_test_controller'])).listTools(opts());
    expect('tools' in listed && listed.tools).not.toContain('comply_test_controller');
    expect('tools' in listed && listed.tools).toContain('get_products');
  });

  it('looks for agent-card.json, then the older agent.json, under the URL and then at the origin root', async () => {
    expect(agentCardUrls('https://a.example/api/a2a/')).toEqual([
      'https://a.example/api/a2a/.well-known/agent-card.json',
      'https://a.example/api/a2a/.well-known/agent.json',
      'https://a.example/.well-known/agent-card.json',
      'https://a.example/.well-known/agent.json',
    ]);
    expect(agentCardUrls('https://a.example/.well-known/agent.json')).toEqual([
      'https://a.example/.well-known/agent.json',
    ]);
    // The origin alone: the root card names /a2a.
    const fromOrigin = await transport(agent.origin).call('get_products', BRIEF, opts());
    expect(fromOrigin.request.url).toBe(agent.a2aUrl);
    expect(fromOrigin.extraction.path).toBe('structured_content');
    // The (older) card URL itself.
    const fromCard = await transport(`${agent.a2aUrl}/.well-known/agent.json`).call('get_products', BRIEF, opts());
    expect(fromCard.extraction.path).toBe('structured_content');
  });

  it("does not send credentials where a card points off the agent's origin to a private address", async () => {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name: 'elsewhere', url: 'http://10.1.2.3/a2a', skills: [{ id: 'get_products' }] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/a2a`;
    try {
      const answer = await transport(url).call('get_products', BRIEF, opts());
      expect(answer.response).toBeUndefined();
      expect(answer.transportError).toMatch(
        /names its JSON-RPC endpoint http:\/\/10\.1\.2\.3\/a2a, which the runner does not call/,
      );
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('extraction: where the task data is', () => {
  it('a completed Task: the last DataPart of artifacts[0]; the state recorded beside the Task', async () => {
    const answer = await transport(agent.a2aUrl).call('get_products', BRIEF, opts());
    expect(answer.extraction).toEqual({
      path: 'structured_content',
      note: 'A2A task completed: artifacts[0].parts[] last DataPart',
    });
    expect(answer.response).toMatchObject({
      transport: 'a2a',
      status: 200,
      task_state: 'completed',
      payload: { kind: 'task', status: { state: 'completed' } },
    });
    const parts = (answer.response!.payload as any).artifacts[0].parts;
    expect(parts.map((p: any) => p.kind)).toEqual(['text', 'data']);
    expect(answer.data).toBe(parts[1].data);
    expect(answer.data).toMatchObject({ products: expect.any(Array), context: BRIEF.context });
  });

  it('an interim state (input-required): the first DataPart of status.message.parts', async () => {
    const answer = await transport(agent.a2aUrlFor(['a2a_input_required'])).call('get_products', BRIEF, opts());
    expect(answer.extraction).toEqual({
      path: 'structured_content',
      note: 'interim A2A state input-required: status.message.parts[] first DataPart',
    });
    expect(answer.response!.task_state).toBe('input-required');
    expect(answer.data).toEqual({
      status: 'input-required',
      message: expect.stringMatching(/needs a human decision/),
      context: BRIEF.context,
    });
  });

  it('a Task still working is polled with A2A tasks/get until it is final', async () => {
    const answer = await transport(agent.a2aUrlFor(['a2a_working'])).call('get_products', BRIEF, opts());
    expect(answer.extraction).toEqual({
      path: 'structured_content',
      note: 'A2A task completed: artifacts[0].parts[] last DataPart after 1 A2A tasks/get poll(s)',
    });
    expect(answer.response!.task_state).toBe('completed');
    expect(answer.data).toMatchObject({ products: expect.any(Array) });
  });

  it("a Task that never ends: bounded by the call's timeout, then graded on the interim status message", async () => {
    const started = performance.now();
    // Long enough for discovery and the first answer on a loaded machine; the stuck task then runs the clock out.
    const answer = await transport(agent.a2aUrlFor(['a2a_stuck'])).call(
      'get_products',
      BRIEF,
      opts({ timeoutMs: 2_000 }),
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(answer.transportError).toBeUndefined();
    expect(answer.response!.task_state).toBe('working');
    expect(answer.extraction.note).toMatch(
      /^the A2A task was still working when the step timeout ran out \(\d+ A2A tasks\/get poll\(s\)\); interim A2A state working: status\.message\.parts\[\] first DataPart$/,
    );
    expect(answer.data).toEqual({ status: 'working', message: 'Working on get_products.' });
  });

  it('a failed Task is an error answer: its adcp_error DataPart is the data', async () => {
    const answer = await transport(agent.a2aUrlFor(['error_response@get_products'])).call(
      'get_products',
      BRIEF,
      opts(),
    );
    expect(answer.extraction).toEqual({ path: 'error', note: 'A2A task failed: artifacts[0].parts[] last DataPart' });
    expect(answer.response!.task_state).toBe('failed');
    expect(answer.data).toMatchObject({ adcp_error: { code: 'INVALID_REQUEST' }, context: BRIEF.context });
    expect(answer.rpcError).toBeUndefined();
  });

  it('a natural task error fails the Task with its own code', async () => {
    const answer = await transport(agent.a2aUrl).call(
      'create_media_buy',
      { ...MEDIA_BUY, packages: [{ ...MEDIA_BUY.packages[0], product_id: 'prod_nope' }] },
      opts(),
    );
    expect(answer.extraction.path).toBe('error');
    expect(answer.data).toMatchObject({ adcp_error: { code: 'PRODUCT_NOT_FOUND' } });
  });

  it('a JSON-RPC error is an error answer: error.data is the data, the error is kept', async () => {
    const answer = await transport(agent.a2aUrlFor(['error_jsonrpc'])).call('get_products', BRIEF, opts());
    expect(answer.extraction).toEqual({ path: 'error', note: 'JSON-RPC error response' });
    expect(answer.rpcError).toMatchObject({
      code: -32602,
      data: { adcp_error: { code: 'INVALID_REQUEST' }, context: BRIEF.context },
    });
    expect(answer.data).toEqual(answer.rpcError!.data);
    expect(answer.response).toMatchObject({ status: 200, payload: { error: { code: -32602 } } });
    expect(answer.response!.task_state).toBeUndefined();
  });

  it('an unknown skill is a JSON-RPC error, like an unknown MCP tool', async () => {
    const answer = await transport(agent.a2aUrl).call('no_such_task', {}, opts());
    expect(answer.rpcError).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/Unknown skill "no_such_task"/),
    });
    expect(answer.extraction.path).toBe('error');
  });

  it("an HTTP 401 with a JSON-RPC error body is the agent's answer, with its status and WWW-Authenticate", async () => {
    const answer = await transport(agent.a2aUrl).call('get_products', BRIEF, opts({ credentials: { kind: 'none' } }));
    expect(answer.extraction).toEqual({ path: 'error', note: 'HTTP 401 with a JSON-RPC error body' });
    expect(answer.response!.status).toBe(401);
    expect(answer.response!.headers!['www-authenticate']).toMatch(
      /^Bearer realm="[^"]+\/a2a", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/a2a"/,
    );
    expect(answer.rpcError).toMatchObject({ code: -32028 });
    expect(answer.data).toMatchObject({ adcp_error: { code: 'AUTH_REQUIRED' }, context: BRIEF.context });
  });

  it('a Task without a DataPart (text_only) has nothing to extract: A2A reads DataParts only', async () => {
    const answer = await transport(agent.a2aUrlFor(['text_only'])).call('get_products', BRIEF, opts());
    expect(answer.extraction).toEqual({
      path: 'none',
      note: 'A2A task completed without a DataPart in artifacts[0] or status.message',
    });
    expect(answer.data).toBeUndefined();
  });
});

describe('bounds and credentials', () => {
  it('an oversized body: reading stops at maxResponseBytes', async () => {
    const answer = await transport(agent.a2aUrlFor(['huge']), MB).call('get_products', BRIEF, opts());
    expect(answer.transportError).toMatch(/exceeded 1048576 bytes/);
    expect(answer.extraction.path).toBe('none');
  });

  it('an agent that never answers: the call ends at its timeout', async () => {
    const started = performance.now();
    const answer = await transport(agent.a2aUrlFor(['hang'])).call('get_products', BRIEF, opts({ timeoutMs: 500 }));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(answer.transportError).toMatch(/^no answer within 500 ms/);
    expect(answer.response).toBeUndefined();
  });

  it('a body that is not JSON, or truncated JSON, is a transport error', async () => {
    for (const behaviour of ['garbage', 'garbage_json']) {
      const answer = await transport(agent.a2aUrlFor([behaviour])).call('get_products', BRIEF, opts());
      expect(answer.transportError, behaviour).toMatch(
        /the agent's answer is not JSON \(HTTP 200, content-type (text\/html|application\/json)/,
      );
      expect(answer.response!.status).toBe(200);
    }
  });

  it('an unreachable agent is a transport error naming the connection failure', async () => {
    const answer = await transport('http://127.0.0.1:9/a2a').call('get_products', BRIEF, opts({ timeoutMs: 2_000 }));
    expect(answer.transportError).toMatch(/ECONNREFUSED|fetch failed|connect/i);
  });

  it('credentials are per call on one transport: Basic, none, a wrong Basic, a bearer key', async () => {
    const { username, password } = parse(readFileSync(FIXTURE_TEST_KIT_PATH, 'utf8')).auth.basic;
    const t = transport(agent.a2aUrlFor(['session_a2a_credentials']));
    const sent: Credentials[] = [
      { kind: 'basic', username, password },
      { kind: 'none' },
      { kind: 'basic', username, password: `${password}-wrong` },
      KEY,
    ];
    const statuses = [];
    for (const credentials of sent)
      statuses.push((await t.call('list_creatives', {}, opts({ credentials }))).response!.status);
    expect(statuses).toEqual([200, 401, 401, 200]);
    expect(
      agent
        .callsFor('list_creatives')
        .filter((c) => c.session === 'a2a_credentials')
        .map((c) => c.auth),
    ).toEqual(['basic', 'none', 'invalid', 'api_key']);
  });
});

describe('the AdCP async envelope over A2A', () => {
  it('a submitted arm completes the A2A call; its AdCP task is polled through the tasks/get skill', async () => {
    const t = transport(agent.a2aUrlFor(['async_submitted@create_media_buy', 'session_a2a_async']));
    const answer = await t.call('create_media_buy', MEDIA_BUY, opts());
    expect(answer.response!.task_state).toBe('completed');
    expect(answer.data).toMatchObject({ status: 'submitted', task_id: expect.any(String), context: MEDIA_BUY.context });
    const taskId = (answer.data as any).task_id;
    expect((answer.response!.payload as any).artifacts[0].metadata).toEqual({ adcp_task_id: taskId });
    const polled = await t.call('tasks/get', { task_id: taskId, include_result: true }, opts());
    expect(polled.extraction.path).toBe('structured_content');
    expect(polled.data).toMatchObject({
      task_id: taskId,
      status: 'completed',
      result: { media_buy_id: expect.any(String) },
    });
  });
});

describe('the extraction algorithm on A2A 1.0 shapes (a2a-response-extraction.mdx)', () => {
  const done = (parts: unknown[], state = 'TASK_STATE_COMPLETED') => ({
    id: 't',
    contextId: 'c',
    status: { state },
    artifacts: [{ artifactId: 'a', parts }],
  });

  it('normalises TASK_STATE_* and reads parts without kind; the last DataPart wins', () => {
    expect(extractA2aResult(done([{ text: 'Found' }, { data: { progress: 25 } }, { data: { products: [] } }]))).toEqual(
      {
        extraction: { path: 'structured_content', note: 'A2A task completed: artifacts[0].parts[] last DataPart' },
        data: { products: [] },
        state: 'completed',
      },
    );
  });

  it('unwraps a StreamResponse once, and refuses a nested one', () => {
    expect(extractA2aResult({ task: done([{ data: { ok: true } }]) }).data).toEqual({ ok: true });
    expect(extractA2aResult({ task: { task: done([{ data: { ok: true } }]) } })).toMatchObject({
      extraction: { path: 'none', note: 'nested A2A stream envelope (malformed)' },
    });
  });

  it('rejects a { response: … } framework wrapper', () => {
    expect(extractA2aResult(done([{ data: { response: { products: [] } } }]))).toMatchObject({
      extraction: { path: 'none', note: expect.stringMatching(/framework wrapper/) },
      data: undefined,
    });
    expect(extractA2aResult(done([{ data: { response: {}, status: 'completed' } }])).extraction.path).toBe(
      'structured_content',
    );
  });

  it('a final Task without artifacts falls back to its status message; a rejected one is an error', () => {
    const task = {
      id: 't',
      contextId: 'c',
      status: {
        state: 'TASK_STATE_REJECTED',
        message: { parts: [{ data: { adcp_error: { code: 'POLICY_VIOLATION' } } }] },
      },
    };
    expect(extractA2aResult(task)).toMatchObject({
      extraction: { path: 'error' },
      data: { adcp_error: { code: 'POLICY_VIOLATION' } },
      state: 'rejected',
    });
  });

  it('an error-only DataPart on a completed Task takes the error path; an unknown state extracts nothing', () => {
    expect(extractA2aResult(done([{ data: { adcp_error: { code: 'X' }, context: {} } }])).extraction.path).toBe(
      'error',
    );
    expect(extractA2aResult(done([{ data: { a: 1 } }], 'TASK_STATE_PAUSED'))).toMatchObject({
      extraction: { path: 'none' },
      data: undefined,
      state: 'paused',
    });
  });

  it('a Message answered instead of a Task: its last DataPart', () => {
    expect(
      extractA2aResult({ kind: 'message', role: 'agent', parts: [{ kind: 'data', data: { a: 1 } }] }),
    ).toMatchObject({ extraction: { path: 'structured_content' }, data: { a: 1 } });
  });
});
