/**
 * Which tools an endpoint serves (`without@<tool>`), what the capabilities
 * declare about the test controller, and the agent's call log — over real
 * sockets, through the MCP SDK client and raw JSON-RPC.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { TOOL_NAMES } from '../../fixtures/agent/behaviours.mjs';
import { schemaErrors } from './adcp-schemas.js';
import { BASIC, DEMO_KEY, NO_CREDENTIALS, basic, bearer, callTool, connect, rawToolCall } from './helpers.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(async () => {
  await agent?.close();
});

/** agent.test.ts pins the list itself. get_task_status is served only with the `get_task_status` behaviour. */
const ALL_TOOLS = TOOL_NAMES.filter((t) => t !== 'get_task_status');

async function toolNames(url: string): Promise<string[]> {
  const client = await connect(url);
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

describe('without@<tool>', () => {
  it('removes the tool from tools/list', async () => {
    expect(await toolNames(agent.url)).toEqual(ALL_TOOLS);
    expect(await toolNames(agent.urlFor(['without@comply_test_controller']))).toEqual(
      ALL_TOOLS.filter((t) => t !== 'comply_test_controller'),
    );
  });

  it('get_task_status: lists the AdCP 3.1 polling tool besides the 3.0 ones', async () => {
    expect(await toolNames(agent.urlFor(['get_task_status']))).toEqual(TOOL_NAMES);
  });

  it('combines: several tokens remove several tools, the rest still work', async () => {
    const url = agent.urlFor(['without@tasks/get', 'without@tasks_get', 'without@create_media_buy']);
    expect(await toolNames(url)).toEqual([
      'get_adcp_capabilities',
      'get_products',
      'list_creative_formats',
      'list_creatives',
      'get_media_buys',
      'update_media_buy',
      'comply_test_controller',
    ]);
    expect((await callTool(url, 'list_creatives')).structuredContent!.creatives).toHaveLength(3);
  });

  it('answers tools/call of a removed tool exactly like a tool that never existed (JSON-RPC -32602)', async () => {
    const url = agent.urlFor(['without@create_media_buy']);
    const hidden = await callTool(url, 'create_media_buy', {}).catch((e) => e);
    const unknown = await callTool(url, 'no_such_tool', {}).catch((e) => e);
    expect(hidden).toBeInstanceOf(McpError);
    expect(hidden.code).toBe(-32602);
    expect(hidden.message).toMatch(/Unknown tool "create_media_buy"/);
    expect(unknown.code).toBe(hidden.code);

    const headers = { authorization: bearer(DEMO_KEY) };
    const raw = (await (await rawToolCall(url, 'create_media_buy', {}, headers)).json()) as any;
    const rawUnknown = (await (await rawToolCall(url, 'no_such_tool', {}, headers)).json()) as any;
    expect(Object.keys(raw).sort()).toEqual(['error', 'id', 'jsonrpc']);
    expect(raw.error.code).toBe(rawUnknown.error.code);
    expect(raw.error.message.replace('create_media_buy', 'X')).toBe(
      rawUnknown.error.message.replace('no_such_tool', 'X'),
    );
  });

  it('removes the public discovery tool too, without asking for credentials first', async () => {
    const url = agent.urlFor(['without@get_adcp_capabilities']);
    const response = await rawToolCall(url, 'get_adcp_capabilities');
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).error.code).toBe(-32602);
  });

  it('must name a known tool', async () => {
    expect(() => agent.urlFor(['without'])).toThrow(/needs a tool: without@<tool>/);
    expect(() => agent.urlFor(['without@nope'])).toThrow(/unknown tool/);
    expect((await fetch(`${agent.origin}/x/without/mcp`, { method: 'POST', body: '{}' })).status).toBe(400);
  });
});

describe('capabilities', () => {
  it('declare compliance_testing (not a protocol) when comply_test_controller is served, with scenarios from the capabilities enum', async () => {
    const { structuredContent } = await callTool(agent.url, 'get_adcp_capabilities', {}, NO_CREDENTIALS);
    expect(structuredContent!.supported_protocols).toEqual(['media_buy', 'creative']);
    expect(structuredContent!.compliance_testing).toEqual({
      scenarios: ['force_creative_status', 'force_media_buy_status', 'simulate_delivery', 'simulate_budget_spend'],
    });
    expect(structuredContent).not.toHaveProperty('specialisms');
    expect(schemaErrors('protocol/get-adcp-capabilities-response.json', structuredContent)).toEqual([]);
  });

  it('keep compliance_testing under a protocols filter, and drop it with without@comply_test_controller', async () => {
    const filtered = await callTool(agent.url, 'get_adcp_capabilities', { protocols: ['creative'] }, NO_CREDENTIALS);
    expect(filtered.structuredContent).toHaveProperty('compliance_testing');
    const without = await callTool(
      agent.urlFor(['without@comply_test_controller']),
      'get_adcp_capabilities',
      {},
      NO_CREDENTIALS,
    );
    expect(without.structuredContent).not.toHaveProperty('compliance_testing');
    expect(schemaErrors('protocol/get-adcp-capabilities-response.json', without.structuredContent)).toEqual([]);
  });
});

describe('call log', () => {
  beforeEach(() => agent.resetCalls());

  it('records every tools/call in order with arguments, behaviours, credential kind and principal', async () => {
    const url = agent.urlFor(['wrong_value@list_creatives', 'session_log-1']);
    await callTool(url, 'list_creatives', { filters: { statuses: ['approved'] } });
    await callTool(agent.url, 'get_adcp_capabilities', {}, NO_CREDENTIALS);
    await callTool(agent.url, 'list_creatives', {}, basic(BASIC.username, BASIC.password));
    expect(agent.calls).toEqual([
      {
        seq: expect.any(Number),
        tool: 'list_creatives',
        arguments: { filters: { statuses: ['approved'] } },
        behaviours: ['wrong_value@list_creatives', 'session_log-1'],
        auth: 'api_key',
        principal: `key:${DEMO_KEY}`,
        session: 'log-1',
        served: true,
        rejected: false,
      },
      expect.objectContaining({
        tool: 'get_adcp_capabilities',
        behaviours: [],
        auth: 'none',
        principal: 'anonymous',
        rejected: false,
      }),
      expect.objectContaining({ tool: 'list_creatives', auth: 'basic', principal: `basic:${BASIC.username}` }),
    ]);
    const seqs = agent.calls.map((c) => c.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(agent.calls[0]).not.toHaveProperty('context');
  });

  it('records calls answered 401 (rejected) and calls of tools the endpoint does not serve', async () => {
    await rawToolCall(agent.url, 'list_creatives', {}, { authorization: bearer('not-a-demo-key') });
    await rawToolCall(agent.url, 'list_creatives');
    await callTool(agent.urlFor(['without@tasks/get']), 'tasks/get', { task_id: 't' }).catch(() => undefined);
    expect(agent.calls.map(({ tool, auth, rejected, served }) => ({ tool, auth, rejected, served }))).toEqual([
      { tool: 'list_creatives', auth: 'invalid', rejected: true, served: true },
      { tool: 'list_creatives', auth: 'none', rejected: true, served: true },
      { tool: 'tasks/get', auth: 'api_key', rejected: false, served: false },
    ]);
  });

  it('callsFor counts one tool; the log is a copy, and resetCalls empties it', async () => {
    for (let i = 0; i < 3; i++) await callTool(agent.url, 'list_creative_formats', { pagination: { max_results: 1 } });
    await callTool(agent.url, 'list_creatives');
    expect(agent.callsFor('list_creative_formats')).toHaveLength(3);
    expect(agent.callsFor('list_creatives')).toHaveLength(1);
    expect(agent.callsFor('create_media_buy')).toEqual([]);
    const snapshot = agent.calls;
    (snapshot as unknown[]).length = 0;
    expect(agent.calls).toHaveLength(4);
    agent.resetCalls();
    expect(agent.calls).toEqual([]);
  });

  it('is per agent instance', async () => {
    const other = await startFixtureAgent();
    try {
      await callTool(other.url, 'list_creatives');
      expect(other.callsFor('list_creatives')).toHaveLength(1);
      expect(agent.callsFor('list_creatives')).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('does not log tools/list or the handshake', async () => {
    await toolNames(agent.url);
    expect(agent.calls).toEqual([]);
  });
});
