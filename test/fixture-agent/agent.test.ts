/**
 * The fixture agent, over real sockets, through the MCP SDK client (and raw
 * HTTP where the client hides status codes and headers): conformant answers
 * validate against the AdCP 3.0 schemas, context is echoed, auth behaves like
 * a gateway, and each misbehaviour does exactly what it says.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { BEHAVIOURS } from '../../fixtures/agent/behaviours.mjs';
import { errorCodes, schemaErrors } from './adcp-schemas.js';
import {
  BASIC,
  DEMO_KEY,
  NO_CREDENTIALS,
  basic,
  bearer,
  callTool,
  connect,
  countBytes,
  freshCredential,
  mediaBuyRequest,
  rawToolCall,
  textJson,
  type ToolResult,
} from './helpers.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(async () => {
  await agent?.close();
});

/** Deliberately nested and ordered, so "verbatim" means more than one string. */
const CONTEXT = { correlation_id: 'fixture-agent-test', trace: { span: 7, tags: ['a', 'b'], sampled: true } };

const mediaBuy = mediaBuyRequest;

interface ToolCase {
  label: string;
  tool: string;
  args: () => Record<string, unknown>;
  schemas: string[];
}

const TOOL_CASES: ToolCase[] = [
  {
    label: 'get_adcp_capabilities',
    tool: 'get_adcp_capabilities',
    args: () => ({}),
    schemas: ['protocol/get-adcp-capabilities-response.json'],
  },
  {
    label: 'get_adcp_capabilities (protocols filter)',
    tool: 'get_adcp_capabilities',
    args: () => ({ protocols: ['media_buy'] }),
    schemas: ['protocol/get-adcp-capabilities-response.json'],
  },
  {
    label: 'get_products (brief)',
    tool: 'get_products',
    args: () => ({ buying_mode: 'brief', brief: 'video for hikers' }),
    schemas: ['media-buy/get-products-response.json'],
  },
  {
    label: 'get_products (wholesale)',
    tool: 'get_products',
    args: () => ({ buying_mode: 'wholesale' }),
    schemas: ['media-buy/get-products-response.json'],
  },
  {
    label: 'get_products (refine)',
    tool: 'get_products',
    args: () => ({
      buying_mode: 'refine',
      refine: [
        { scope: 'product', product_id: 'prod_ctv_premium', action: 'include' },
        { scope: 'product', product_id: 'prod_unknown' },
        { scope: 'request', ask: 'more video' },
        { scope: 'proposal', proposal_id: 'prop_1' },
      ],
    }),
    schemas: ['media-buy/get-products-response.json'],
  },
  {
    label: 'list_creative_formats',
    tool: 'list_creative_formats',
    args: () => ({}),
    // The manifest maps the tool to the media-buy schema; the creative protocol publishes its own copy.
    schemas: ['media-buy/list-creative-formats-response.json', 'creative/list-creative-formats-response.json'],
  },
  {
    label: 'list_creatives',
    tool: 'list_creatives',
    args: () => ({}),
    schemas: ['creative/list-creatives-response.json'],
  },
  {
    label: 'create_media_buy',
    tool: 'create_media_buy',
    args: () => mediaBuy({}),
    schemas: ['media-buy/create-media-buy-response.json'],
  },
  {
    label: 'get_media_buys',
    tool: 'get_media_buys',
    args: () => ({ status_filter: ['active', 'pending_creatives'] }),
    schemas: ['media-buy/get-media-buys-response.json'],
  },
];

function expectValid(schemas: string[], payload: unknown) {
  for (const schema of schemas) expect(schemaErrors(schema, payload), schema).toEqual([]);
}

describe('conformant endpoint', () => {
  it('lists its tools without credentials and without outputSchema (text-only results must stay legal)', async () => {
    const client = await connect(agent.url);
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.map((t) => t.name)).toEqual([
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
    ]);
    expect(tools.every((t) => t.outputSchema === undefined)).toBe(true);
  });

  it.each(TOOL_CASES)(
    '$label validates against its AdCP schema and mirrors it in content text',
    async ({ tool, args, schemas }) => {
      const result = await callTool(agent.url, tool, { ...args(), context: CONTEXT });
      expect(result.isError).toBeFalsy();
      expectValid(schemas, result.structuredContent);
      expect(textJson(result)).toEqual(result.structuredContent);
    },
  );

  it.each(TOOL_CASES)('$label echoes context verbatim, key order included', async ({ tool, args }) => {
    const result = await callTool(agent.url, tool, { ...args(), context: CONTEXT });
    expect(JSON.stringify(result.structuredContent!.context)).toBe(JSON.stringify(CONTEXT));
  });

  it.each(TOOL_CASES)('$label does not invent a context when none was sent', async ({ tool, args }) => {
    const result = await callTool(agent.url, tool, args());
    expect(result.structuredContent).not.toHaveProperty('context');
  });

  it('answers a bad request with isError + adcp_error in structuredContent and text, echoing context', async () => {
    const result = await callTool(agent.url, 'get_products', { brief: 'anything', context: CONTEXT });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      adcp_error: expect.objectContaining({
        code: 'INVALID_REQUEST',
        field: 'buying_mode',
        recovery: 'correctable',
        message: expect.any(String),
      }),
      context: CONTEXT,
    });
    expect(errorCodes()).toContain(result.structuredContent!.adcp_error.code);
    expect(textJson(result)).toEqual(result.structuredContent);
    expectValid(['core/error.json'], result.structuredContent!.adcp_error);
  });

  it('uses only codes from the AdCP error-code enum', async () => {
    const codes = [
      (await callTool(agent.url, 'get_products', { brief: 'no buying_mode' })).structuredContent!.adcp_error.code,
      (await callTool(agent.url, 'create_media_buy', mediaBuy({ product_id: 'prod_nope' }))).structuredContent!
        .adcp_error.code,
      (await callTool(agent.url, 'create_media_buy', mediaBuy({ budget: 1 }))).structuredContent!.adcp_error.code,
      (await callTool(agent.url, 'list_creatives', { pagination: { cursor: 'not-a-cursor' } })).structuredContent!
        .adcp_error.code,
    ];
    expect(codes).toEqual(['INVALID_REQUEST', 'PRODUCT_NOT_FOUND', 'BUDGET_TOO_LOW', 'INVALID_REQUEST']);
    for (const code of codes) expect(errorCodes()).toContain(code);
  });

  it('points format ids at the URL the caller used', async () => {
    const url = agent.urlFor(['json_response']);
    const { structuredContent } = await callTool(url, 'list_creative_formats');
    expect(new Set(structuredContent!.formats.map((f: any) => f.format_id.agent_url))).toEqual(new Set([url]));
  });
});

describe('get_products and create_media_buy answer from the request', () => {
  it('ranks products by brief keywords', async () => {
    const video = await callTool(agent.url, 'get_products', {
      buying_mode: 'brief',
      brief: 'Video inventory for outdoor enthusiasts this summer',
    });
    expect(video.structuredContent!.products[0].product_id).toBe('prod_video_preroll');
    const podcast = await callTool(agent.url, 'get_products', { buying_mode: 'brief', brief: 'podcast audio' });
    expect(podcast.structuredContent!.products.map((p: any) => p.product_id)).toEqual(['prod_podcast_midroll']);
  });

  it('returns exactly the product ids a refine request names', async () => {
    const { structuredContent } = await callTool(agent.url, 'get_products', {
      buying_mode: 'refine',
      refine: [{ scope: 'product', product_id: 'prod_ctv_premium', action: 'include' }],
    });
    expect(structuredContent!.products.map((p: any) => p.product_id)).toEqual(['prod_ctv_premium']);
    expect(structuredContent!.pagination.total_count).toBe(1);
    expect(structuredContent!.refinement_applied).toEqual([
      { scope: 'product', product_id: 'prod_ctv_premium', status: 'applied' },
    ]);
  });

  it('honours channel and delivery-type filters', async () => {
    const { structuredContent } = await callTool(agent.url, 'get_products', {
      buying_mode: 'wholesale',
      filters: { channels: ['olv', 'ctv'], delivery_type: 'guaranteed' },
    });
    expect(structuredContent!.products.map((p: any) => p.product_id)).toEqual([
      'prod_video_preroll',
      'prod_ctv_premium',
    ]);
  });

  it('honours filters.product_ids (an extension the 3.0 filters schema permits)', async () => {
    const { structuredContent } = await callTool(agent.url, 'get_products', {
      buying_mode: 'wholesale',
      filters: { product_ids: ['prod_podcast_midroll'] },
    });
    expect(structuredContent!.products.map((p: any) => p.product_id)).toEqual(['prod_podcast_midroll']);
    expectValid(['media-buy/get-products-request.json'], {
      buying_mode: 'wholesale',
      filters: { product_ids: ['prod_podcast_midroll'] },
    });
  });

  it('books the product and pricing option it was sent', async () => {
    const { structuredContent } = await callTool(
      agent.url,
      'create_media_buy',
      mediaBuy({ product_id: 'prod_display_ros', pricing_option_id: 'po_display_ros_cpm', budget: 800 }),
    );
    expect(structuredContent).toMatchObject({
      media_buy_id: expect.stringMatching(/^mb_[0-9a-f]{12}$/),
      status: 'pending_creatives',
      packages: [{ product_id: 'prod_display_ros', pricing_option_id: 'po_display_ros_cpm', budget: 800 }],
    });
  });

  it('replays an idempotent create with the same id and flags it; a different payload under the key conflicts', async () => {
    const request = mediaBuy({}, 'fixture-test-idempotent-0001');
    const first = await callTool(agent.url, 'create_media_buy', { ...request, context: { correlation_id: 'first' } });
    const replay = await callTool(agent.url, 'create_media_buy', { ...request, context: { correlation_id: 'second' } });
    expect(first.structuredContent).not.toHaveProperty('replayed');
    expect(replay.structuredContent).toMatchObject({
      media_buy_id: first.structuredContent!.media_buy_id,
      replayed: true,
      context: { correlation_id: 'second' },
    });
    expectValid(['media-buy/create-media-buy-response.json'], replay.structuredContent);

    const conflict = await callTool(
      agent.url,
      'create_media_buy',
      mediaBuy({ budget: 9999 }, 'fixture-test-idempotent-0001'),
    );
    expect(conflict.structuredContent!.adcp_error).toEqual({
      code: 'IDEMPOTENCY_CONFLICT',
      message: expect.any(String),
    });

    // Keys are scoped to the caller: another credential gets its own buy.
    const other = await callTool(agent.url, 'create_media_buy', request, bearer('demo-another-principal'));
    expect(other.structuredContent!.media_buy_id).not.toBe(first.structuredContent!.media_buy_id);
    expect(other.structuredContent).not.toHaveProperty('replayed');
  });

  it('pages through formats with a stable cursor', async () => {
    const first = (await callTool(agent.url, 'list_creative_formats', { pagination: { max_results: 2 } }))
      .structuredContent!;
    expect(first.formats.map((f: any) => f.format_id.id)).toEqual(['display_300x250', 'display_728x90']);
    expect(first.pagination).toMatchObject({ has_more: true, cursor: expect.any(String), total_count: 5 });
    const second = (
      await callTool(agent.url, 'list_creative_formats', {
        pagination: { max_results: 2, cursor: first.pagination.cursor },
      })
    ).structuredContent!;
    expect(second.formats.map((f: any) => f.format_id.id)).toEqual(['video_15s', 'video_30s']);
    const last = (
      await callTool(agent.url, 'list_creative_formats', {
        pagination: { max_results: 2, cursor: second.pagination.cursor },
      })
    ).structuredContent!;
    expect(last.formats.map((f: any) => f.format_id.id)).toEqual(['audio_30s']);
    expect(last.pagination).toEqual({ has_more: false, total_count: 5 });
  });
});

describe('auth', () => {
  it('rejects a protected tool without credentials at the HTTP layer: 401, Bearer + Basic challenges, AUTH_REQUIRED body', async () => {
    const response = await rawToolCall(agent.url, 'list_creatives', { context: CONTEXT });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate');
    expect(challenge).toContain(`Bearer realm="${agent.url}"`);
    expect(challenge).toContain(`resource_metadata="${agent.origin}/.well-known/oauth-protected-resource/mcp"`);
    expect(challenge).toContain(`Basic realm="${agent.url}"`);
    expect(challenge).not.toContain('invalid_token');
    expect(await response.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32028, data: { adcp_error: { code: 'AUTH_REQUIRED' }, context: CONTEXT } },
    });
  });

  it('rejects a random bearer token with error="invalid_token"', async () => {
    const response = await rawToolCall(
      agent.url,
      'list_creatives',
      {},
      { authorization: bearer('invalid-0123456789abcdef') },
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(
      /Bearer [^,]*realm="[^"]+", resource_metadata="[^"]+", error="invalid_token"/,
    );
  });

  it.each([
    ['the kit API key', bearer(DEMO_KEY), 200],
    ['any other demo- key', bearer('demo-acme-outdoor-v1'), 200],
    ['a bare "demo-"', bearer('demo-'), 401],
    ['the kit Basic credential', basic(BASIC.username, BASIC.password), 200],
    ['a wrong Basic password', basic(BASIC.username, 'nope'), 401],
    ['an unknown scheme', 'Digest username="x"', 401],
  ])('answers %s with %i', async (_label, authorization, status) => {
    const response = await rawToolCall(agent.url, 'list_creatives', {}, { authorization });
    expect(response.status).toBe(status);
  });

  it('serves capabilities and tools/list without credentials', async () => {
    expect((await rawToolCall(agent.url, 'get_adcp_capabilities')).status).toBe(200);
    const result = await callTool(agent.url, 'get_adcp_capabilities', {}, NO_CREDENTIALS);
    expect(result.structuredContent!.supported_protocols).toEqual(['media_buy', 'creative']);
  });

  it('surfaces 401 to the MCP SDK client as StreamableHTTPError code 401 (status only; headers are lost)', async () => {
    const client = await connect(agent.url);
    const error = await client.callTool({ name: 'list_creatives', arguments: {} }).catch((e) => e);
    await client.close();
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect(error.code).toBe(401);
  });

  it('advertises RFC 9728 metadata whose resource is the exact endpoint URL, and RFC 8414 issuer metadata', async () => {
    for (const url of [agent.url, agent.urlFor(['drop_context'])]) {
      const path = new URL(url).pathname;
      const prm = await fetch(`${agent.origin}/.well-known/oauth-protected-resource${path}`);
      expect(prm.status).toBe(200);
      expect(await prm.json()).toMatchObject({
        resource: url,
        authorization_servers: [agent.origin],
        bearer_methods_supported: ['header'],
      });
    }
    const as = await fetch(`${agent.origin}/.well-known/oauth-authorization-server`);
    expect(await as.json()).toMatchObject({
      issuer: agent.origin,
      token_endpoint: `${agent.origin}/oauth/token`,
      grant_types_supported: ['client_credentials'],
    });
  });

  it('issues client_credentials tokens bound to the requested resource', async () => {
    const token = await fetch(`${agent.origin}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(BASIC.username, BASIC.password),
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: agent.url }),
    });
    expect(token.status).toBe(200);
    const { access_token: accessToken, token_type: tokenType } = (await token.json()) as any;
    expect(tokenType).toBe('Bearer');
    expect((await rawToolCall(agent.url, 'list_creatives', {}, { authorization: bearer(accessToken) })).status).toBe(
      200,
    );
    // Same token, another resource (audience): rejected.
    expect(
      (await rawToolCall(agent.urlFor(['text_only']), 'list_creatives', {}, { authorization: bearer(accessToken) }))
        .status,
    ).toBe(401);
  });

  it('refuses tokens to unknown clients and unsupported grants', async () => {
    const post = (body: Record<string, string>, authorization?: string) =>
      fetch(`${agent.origin}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
        body: new URLSearchParams(body),
      });
    expect((await post({ grant_type: 'client_credentials', client_id: 'who', client_secret: 'me' })).status).toBe(401);
    expect((await post({ grant_type: 'password' }, basic(BASIC.username, BASIC.password))).status).toBe(400);
  });
});

/** Calls `tool` on the behaviour URL with the demo key and the standard context. */
function callWith(behaviours: string[], tool: string, args: Record<string, unknown>): Promise<ToolResult> {
  return callTool(agent.urlFor(behaviours), tool, { ...args, context: CONTEXT });
}

describe('behaviours', () => {
  it('documents every behaviour with what it does and what it breaks', () => {
    for (const [name, info] of Object.entries(BEHAVIOURS)) {
      expect(info.does, name).toMatch(/\w/);
      expect(info.breaks, name).toMatch(/\w/);
      expect(['tool', 'http', 'metadata', 'listing', 'state', 'a2a']).toContain(info.layer);
    }
  });

  it('wrong_value alters every leaf of the context echo, and only that', async () => {
    const result = await callWith(['wrong_value'], 'list_creatives', {});
    expect(result.structuredContent!.context).toEqual({
      correlation_id: 'fixture-agent-test-mutated',
      trace: { span: 8, tags: ['a-mutated', 'b-mutated'], sampled: false },
    });
    expectValid(['creative/list-creatives-response.json'], result.structuredContent);
  });

  it('drop_context omits the echo on success and on error', async () => {
    const ok = await callWith(['drop_context'], 'get_adcp_capabilities', {});
    const error = await callWith(['drop_context'], 'get_products', { brief: 'no buying_mode' });
    expect(ok.structuredContent).not.toHaveProperty('context');
    expect(error.isError).toBe(true);
    expect(error.structuredContent).toEqual({ adcp_error: expect.objectContaining({ code: 'INVALID_REQUEST' }) });
  });

  it.each([
    ['get_adcp_capabilities', {}, 'protocol/get-adcp-capabilities-response.json', /major_versions must be array/],
    [
      'get_products',
      { buying_mode: 'wholesale' },
      'media-buy/get-products-response.json',
      /required property 'reporting_capabilities'/,
    ],
    ['list_creative_formats', {}, 'media-buy/list-creative-formats-response.json', /required property 'name'/],
    ['list_creatives', {}, 'creative/list-creatives-response.json', /returned must be integer/],
    [
      'create_media_buy',
      mediaBuy({}),
      'media-buy/create-media-buy-response.json',
      /status must be equal to one of the allowed values/,
    ],
  ])('schema_invalid breaks the %s response schema (and nothing else)', async (tool, args, schema, violation) => {
    const result = await callWith(['schema_invalid'], tool, args as Record<string, unknown>);
    expect(result.isError).toBeFalsy();
    expect(schemaErrors(schema, result.structuredContent).join('\n')).toMatch(violation);
    expect(result.structuredContent!.context).toEqual(CONTEXT);
  });

  it('unknown_declarations adds a real specialism and names no corpus knows to the capabilities, and breaks only their schema', async () => {
    const result = await callWith(['unknown_declarations'], 'get_adcp_capabilities', {});
    expect(result.structuredContent).toMatchObject({
      supported_protocols: ['media_buy', 'creative', 'telepathy'],
      specialisms: ['sales-guaranteed', 'holographic-ads'],
      context: CONTEXT,
    });
    expect(schemaErrors('protocol/get-adcp-capabilities-response.json', result.structuredContent).join('\n')).toMatch(
      /must be equal to one of the allowed values/,
    );
    expect((await callWith(['unknown_declarations'], 'list_creatives', {})).structuredContent).not.toHaveProperty(
      'specialisms',
    );
  });

  it('schema_invalid still breaks the schema when a page is empty', async () => {
    const result = await callWith(['schema_invalid'], 'list_creative_formats', { type: 'dooh' });
    expect(result.structuredContent!.formats).toEqual([]);
    expect(schemaErrors('media-buy/list-creative-formats-response.json', result.structuredContent).join('\n')).toMatch(
      /has_more must be boolean/,
    );
  });

  it('error_response fails calls that would succeed with INVALID_REQUEST in structuredContent.adcp_error', async () => {
    const result = await callWith(['error_response'], 'list_creatives', {});
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      adcp_error: expect.objectContaining({ code: 'INVALID_REQUEST' }),
      context: CONTEXT,
    });
    expect(textJson(result)).toEqual(result.structuredContent);
  });

  it('error_* behaviours keep a natural error code and only move it', async () => {
    const request = mediaBuy({ product_id: 'prod_nope' });
    const structured = await callWith(['error_response'], 'create_media_buy', request);
    const text = await callWith(['error_text_only'], 'create_media_buy', request);
    const payload = await callWith(['error_errors_array'], 'create_media_buy', request);
    const rpc = await callWith(['error_jsonrpc'], 'create_media_buy', request).catch((e) => e);
    expect(structured.structuredContent!.adcp_error.code).toBe('PRODUCT_NOT_FOUND');
    expect(textJson(text).adcp_error.code).toBe('PRODUCT_NOT_FOUND');
    expect(payload.structuredContent!.errors[0].code).toBe('PRODUCT_NOT_FOUND');
    expect(rpc.data.adcp_error.code).toBe('PRODUCT_NOT_FOUND');
  });

  it('error_text_only puts the adcp_error JSON only in content text', async () => {
    const result = await callWith(['error_text_only'], 'get_products', { buying_mode: 'wholesale' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(textJson(result)).toEqual({
      adcp_error: expect.objectContaining({ code: 'INVALID_REQUEST' }),
      context: CONTEXT,
    });
  });

  it.each([
    ['get_products', { buying_mode: 'wholesale' }, 'media-buy/get-products-response.json'],
    ['list_creatives', {}, 'creative/list-creatives-response.json'],
    ['list_creative_formats', {}, 'media-buy/list-creative-formats-response.json'],
    ['create_media_buy', mediaBuy({}), 'media-buy/create-media-buy-response.json'],
  ])('error_errors_array reports %s errors only in a schema-valid payload errors[]', async (tool, args, schema) => {
    const result = await callWith(['error_errors_array'], tool, args as Record<string, unknown>);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent!.errors).toEqual([
      expect.objectContaining({ code: 'INVALID_REQUEST', message: expect.any(String) }),
    ]);
    expect(result.structuredContent).not.toHaveProperty('adcp_error');
    expect(result.structuredContent!.context).toEqual(CONTEXT);
    expectValid([schema], result.structuredContent);
  });

  it('error_jsonrpc answers with a JSON-RPC error whose data carries adcp_error and context', async () => {
    const error = await callWith(['error_jsonrpc'], 'get_products', { buying_mode: 'wholesale' }).catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error.code).toBe(-32602);
    expect(error.data).toEqual({ adcp_error: expect.objectContaining({ code: 'INVALID_REQUEST' }), context: CONTEXT });
    // On the wire, too (no MCP client in between).
    const raw = await rawToolCall(
      agent.urlFor(['error_jsonrpc']),
      'list_creatives',
      {},
      { authorization: bearer(DEMO_KEY) },
    );
    expect(raw.status).toBe(200);
    expect(((await raw.json()) as any).error).toMatchObject({
      code: -32602,
      data: { adcp_error: { code: 'INVALID_REQUEST' } },
    });
  });

  it('text_only omits structuredContent but keeps a schema-valid payload in content text', async () => {
    const result = await callWith(['text_only'], 'get_products', { buying_mode: 'wholesale' });
    expect(result.structuredContent).toBeUndefined();
    expect(result.isError).toBeFalsy();
    expectValid(['media-buy/get-products-response.json'], textJson(result));
    expect(textJson(result).context).toEqual(CONTEXT);
  });

  it('json_response answers with application/json, still a valid MCP exchange', async () => {
    const url = agent.urlFor(['json_response']);
    const raw = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: bearer(DEMO_KEY),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_creatives', arguments: {} },
      }),
    });
    expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await raw.json()) as any).result.structuredContent.creatives).toHaveLength(3);
    expect((await callTool(url, 'list_creatives')).structuredContent!.creatives).toHaveLength(3);
  });

  it('the conformant endpoint streams SSE to clients that accept it', async () => {
    const raw = await fetch(agent.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_adcp_capabilities', arguments: {} },
      }),
    });
    expect(raw.headers.get('content-type')).toBe('text/event-stream');
    expect(await raw.text()).toMatch(/^event: message\ndata: \{"result":/m);
  });

  it('missing_auth_check serves protected tools to anyone', async () => {
    const response = await rawToolCall(agent.urlFor(['missing_auth_check']), 'list_creatives');
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).result.structuredContent.creatives).toHaveLength(3);
  });

  it('no_www_authenticate still answers 401, without the header', async () => {
    const response = await rawToolCall(agent.urlFor(['no_www_authenticate']), 'list_creatives');
    expect(response.status).toBe(401);
    expect(response.headers.has('www-authenticate')).toBe(false);
  });

  it('wrong_resource advertises the origin as the protected resource', async () => {
    const prm = await fetch(`${agent.origin}/.well-known/oauth-protected-resource/x/wrong_resource/mcp`);
    expect(((await prm.json()) as any).resource).toBe(agent.origin);
  });

  it('no_oauth serves no protected-resource metadata and drops resource_metadata from the challenge', async () => {
    expect((await fetch(`${agent.origin}/.well-known/oauth-protected-resource/x/no_oauth/mcp`)).status).toBe(404);
    const response = await rawToolCall(agent.urlFor(['no_oauth']), 'list_creatives');
    expect(response.headers.get('www-authenticate')).not.toContain('resource_metadata');
  });

  it('hang accepts tools/call and never answers, after a normal handshake', async () => {
    const client = await connect(agent.urlFor(['hang']), bearer(DEMO_KEY));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await expect(
      client.callTool({ name: 'get_adcp_capabilities', arguments: {} }, undefined, {
        signal: AbortSignal.timeout(200),
      }),
    ).rejects.toThrow(/abort|timeout/i);
    await client.close();
  });

  it('huge streams a > 10 MB body with no content-length', async () => {
    const response = await rawToolCall(agent.urlFor(['huge']), 'get_adcp_capabilities');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBeNull();
    const bytes = await countBytes(response);
    expect(bytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(bytes).toBeGreaterThan(50 * 1024 * 1024);
  });

  it('garbage answers 200 text/html, which the MCP client rejects', async () => {
    const raw = await rawToolCall(agent.urlFor(['garbage']), 'get_adcp_capabilities');
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toMatch(/^text\/html/);
    const text = await raw.text();
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    const error = await callTool(agent.urlFor(['garbage']), 'get_adcp_capabilities').catch((e) => e);
    expect(String(error)).toMatch(/Unexpected content type: text\/html/);
  });

  it('garbage_json answers 200 application/json with a truncated document', async () => {
    const raw = await rawToolCall(agent.urlFor(['garbage_json']), 'get_adcp_capabilities');
    expect(raw.headers.get('content-type')).toBe('application/json');
    await expect(raw.json()).rejects.toThrow(SyntaxError);
    await expect(callTool(agent.urlFor(['garbage_json']), 'get_adcp_capabilities')).rejects.toThrow(/JSON/);
  });

  it('slow_ms_<n> answers correctly, but only after n ms', async () => {
    // Slow: a client that gives up well before n ms gets no answer…
    const client = await connect(agent.urlFor(['slow_ms_5000']), bearer(DEMO_KEY));
    await expect(
      client.callTool({ name: 'get_adcp_capabilities', arguments: {} }, undefined, {
        signal: AbortSignal.timeout(100),
      }),
    ).rejects.toThrow(/abort|timeout/i);
    await client.close();
    // …and a patient one gets the right answer.
    const result = await callWith(['slow_ms_50'], 'get_adcp_capabilities', {});
    expect(result.structuredContent!.context).toEqual(CONTEXT);
  });

  it('rate_limited_<n> refuses the first n calls with RATE_LIMITED (retry_after 1, the task not run), then answers', async () => {
    const credential = freshCredential();
    const url = agent.urlFor(['rate_limited_2']);
    for (let i = 0; i < 2; i++) {
      const refused = (await callTool(url, 'create_media_buy', { ...mediaBuy(), context: CONTEXT }, credential))!;
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toEqual({
        adcp_error: {
          code: 'RATE_LIMITED',
          message: expect.stringMatching(/rate_limited_<n>.*retry after 1 s/),
          recovery: 'transient',
          retry_after: 1,
        },
        context: CONTEXT,
      });
      expect(textJson(refused)).toEqual(refused.structuredContent);
      expect(errorCodes()).toContain('RATE_LIMITED');
      expect(schemaErrors('core/error.json', refused.structuredContent!.adcp_error)).toEqual([]);
    }
    // Refused calls booked nothing; the third call is answered as usual.
    const listed = await callTool(agent.url, 'get_media_buys', {}, credential);
    expect(listed.structuredContent!.media_buys).toEqual([]);
    const booked = await callTool(url, 'create_media_buy', { ...mediaBuy(), context: CONTEXT }, credential);
    expect(booked.isError).toBeFalsy();
    expect(booked.structuredContent).toMatchObject({ media_buy_id: expect.any(String), context: CONTEXT });
  });

  it('rate_limited_<n> is counted per behaviour segment and per scoped tool, after auth, at the error location in force', async () => {
    // Another segment (session_<key>) counts afresh; an unauthenticated call is rejected before it counts.
    const [a, b] = ['rl-a', 'rl-b'].map((key) => agent.urlFor(['rate_limited_1', `session_${key}`]));
    expect((await rawToolCall(a!, 'list_creatives', {})).status).toBe(401);
    for (const url of [a!, b!]) {
      expect((await callTool(url, 'list_creatives')).structuredContent!.adcp_error.code).toBe('RATE_LIMITED');
      expect((await callTool(url, 'list_creatives')).isError).toBeFalsy();
    }
    // Scoped: other tools neither fail nor count.
    const scoped = agent.urlFor(['rate_limited_1@get_products']);
    expect((await callTool(scoped, 'get_adcp_capabilities')).isError).toBeFalsy();
    expect((await callTool(scoped, 'get_products', { buying_mode: 'wholesale' })).isError).toBe(true);
    expect((await callTool(scoped, 'get_products', { buying_mode: 'wholesale' })).isError).toBeFalsy();
    // Combined with an error location: RATE_LIMITED rides where that behaviour puts errors.
    const inArray = await callTool(agent.urlFor(['rate_limited_1', 'error_errors_array']), 'list_creatives');
    expect(inArray.structuredContent!.errors).toEqual([
      expect.objectContaining({ code: 'RATE_LIMITED', retry_after: 1 }),
    ]);
  });

  it('http_429_<n> answers the first n calls 429 + Retry-After: 1 + a JSON-RPC error, then answers; the MCP client sees the 429', async () => {
    const url = agent.urlFor(['http_429_2']);
    expect((await rawToolCall(url, 'list_creatives', {})).status).toBe(401); // rejected before it counts
    const refused = await rawToolCall(url, 'list_creatives', {}, { authorization: bearer(DEMO_KEY) });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('content-type')).toBe('application/json');
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: expect.any(Number),
      error: { code: -32000, message: expect.stringMatching(/Too Many Requests.*retry after 1 s/) },
    });
    const thrown = await callTool(url, 'list_creatives').catch((e) => e);
    expect(thrown).toBeInstanceOf(StreamableHTTPError);
    expect(thrown.code).toBe(429);
    const answered = await rawToolCall(url, 'list_creatives', {}, { authorization: bearer(DEMO_KEY) });
    expect(answered.status).toBe(200);
    // With rate_limited_<n>: a 429'd call does not count towards it.
    const both = agent.urlFor(['http_429_1', 'rate_limited_1']);
    expect((await rawToolCall(both, 'get_adcp_capabilities')).status).toBe(429);
    expect((await callTool(both, 'get_adcp_capabilities')).structuredContent!.adcp_error.code).toBe('RATE_LIMITED');
    expect((await callTool(both, 'get_adcp_capabilities')).isError).toBeFalsy();
  });

  it('@<tool> scopes a behaviour to one tool', async () => {
    const url = agent.urlFor(['error_response@get_products', 'wrong_value@list_creatives']);
    expect((await callTool(url, 'get_adcp_capabilities', { context: CONTEXT })).structuredContent!.context).toEqual(
      CONTEXT,
    );
    expect((await callTool(url, 'get_products', { buying_mode: 'wholesale' })).isError).toBe(true);
    expect(
      (await callTool(url, 'list_creatives', { context: CONTEXT })).structuredContent!.context.correlation_id,
    ).toBe('fixture-agent-test-mutated');
  });

  it('combines behaviours', async () => {
    const result = await callWith(['text_only', 'wrong_value', 'slow_ms_10'], 'list_creatives', {});
    expect(result.structuredContent).toBeUndefined();
    expect(textJson(result).context.correlation_id).toBe('fixture-agent-test-mutated');
  });

  it('rejects unknown behaviours with 400 and a list of known ones; urlFor throws', async () => {
    const response = await fetch(`${agent.origin}/x/no_such_thing/mcp`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body.message).toMatch(/Unknown fixture behaviour "no_such_thing"/);
    expect(body.message).toContain('slow_ms_<n>');
    expect((await fetch(`${agent.origin}/x/hang@no_tool/mcp`, { method: 'POST', body: '{}' })).status).toBe(400);
    expect((await fetch(`${agent.origin}/x/slow_ms_abc/mcp`, { method: 'POST', body: '{}' })).status).toBe(400);
    expect(() => agent.urlFor(['nope'])).toThrow(/Unknown fixture behaviour/);
    expect(() => agent.urlFor(['wrong_resource@get_products'])).toThrow(/cannot be scoped/);
  });

  it('answers GET on the endpoint with 405 (stateless: no standalone SSE stream) and unknown paths with 404', async () => {
    expect((await fetch(agent.url)).status).toBe(405);
    expect((await fetch(`${agent.origin}/elsewhere`)).status).toBe(404);
  });
});

describe('lifecycle', () => {
  it('serves many sequential clients', async () => {
    for (let i = 0; i < 25; i++) {
      const result = await callTool(agent.url, 'list_creatives', { context: { correlation_id: `seq-${i}` } });
      expect(result.structuredContent!.context).toEqual({ correlation_id: `seq-${i}` });
    }
  });

  it('serves concurrent clients on different behaviour URLs', async () => {
    const urls = [
      agent.url,
      agent.urlFor(['text_only']),
      agent.urlFor(['wrong_value']),
      agent.urlFor(['json_response']),
      agent.urlFor(['slow_ms_50']),
    ];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        callTool(urls[i % urls.length]!, 'get_products', {
          buying_mode: 'wholesale',
          context: { correlation_id: `c${i}` },
        }),
      ),
    );
    results.forEach((result, i) => {
      const payload = result.structuredContent ?? textJson(result);
      expect(payload.products).toHaveLength(4);
      expect(payload.context.correlation_id).toMatch(new RegExp(`^c${i}(-mutated)?$`));
    });
  });

  it('close() cuts a hanging request and resolves promptly', async () => {
    const own = await startFixtureAgent();
    const hanging = rawToolCall(own.urlFor(['hang']), 'list_creatives', {}, { authorization: bearer(DEMO_KEY) }).then(
      () => 'answered',
      () => 'cut',
    );
    // Close only once the server holds the request (it logs a call before hanging).
    await vi.waitUntil(() => own.callsFor('list_creatives').length === 1, { timeout: 10_000, interval: 10 });
    await own.close(); // resolving at all proves the hanging socket was cut (the test would time out otherwise)
    expect(await hanging).toBe('cut');
    await own.close(); // idempotent
  });

  it('close() cuts an SSE stream whose tool call is still sleeping', async () => {
    const own = await startFixtureAgent();
    const response = await fetch(own.urlFor(['slow_ms_600000']), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: bearer(DEMO_KEY),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_creatives', arguments: {} },
      }),
    });
    // SSE headers are flushed at once; the body waits for the tool.
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const body = response.text().then(
      () => 'complete',
      () => 'cut',
    );
    await own.close(); // resolving at all proves the sleeping stream was cut
    expect(await body).toBe('cut');
  });
});
