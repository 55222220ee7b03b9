/**
 * A tool's `outputSchema`, as the MCP SDK's client enforces it (src/transport/mcp.ts `validatorOnFirstUse`): the
 * client checks a result's structuredContent against the schema `tools/list` declared, and a result that breaks it
 * never reaches grading as data. Our transport hands the client its validator made on first use rather than with every
 * connection; these tests pin that the check still happens, and happens per tool.
 *
 * The agent is the SDK's low-level Server over stateless Streamable HTTP on 127.0.0.1: its McpServer would check its
 * own output first and answer an error result, so the client's check would never be reached.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpTransport } from '../../src/transport/mcp.js';
import type { CallOptions } from '../../src/transport/types.js';

const PRODUCTS_SCHEMA = {
  type: 'object',
  properties: { products: { type: 'array' } },
  required: ['products'],
} as const;

/** What get_products answers, by the `shape` argument; get_adcp_capabilities declares no schema and answers anything. */
const ANSWERS: Record<string, unknown> = { good: { products: [] }, bad: { products: 'none' } };

let server: HttpServer;
let url: string;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const mcp = new Server({ name: 'output-schema-agent', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        { name: 'get_products', inputSchema: { type: 'object' }, outputSchema: PRODUCTS_SCHEMA },
        { name: 'get_adcp_capabilities', inputSchema: { type: 'object' } },
      ],
    }));
    mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
      const shape = String(request.params.arguments?.shape ?? 'good');
      const structuredContent = (request.params.name === 'get_products' ? ANSWERS[shape] : { products: 7 }) as Record<
        string,
        unknown
      >;
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await mcp.connect(transport);
    res.on('close', () => void transport.close());
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const options: CallOptions = { credentials: { kind: 'none' }, timeoutMs: 5_000 };

describe("a tool's outputSchema, checked by the MCP client", () => {
  it('a result that matches the declared schema is the data graded', async () => {
    const t = new McpTransport({ url, maxResponseBytes: 1 << 20 });
    expect(await t.listTools(options)).toEqual({ tools: ['get_products', 'get_adcp_capabilities'] });
    const exchange = await t.call('get_products', { shape: 'good' }, options);
    await t.close();
    expect(exchange.transportError).toBeUndefined();
    expect(exchange.extraction.path).toBe('structured_content');
    expect(exchange.data).toEqual({ products: [] });
  });

  it('a result that breaks it is refused before grading, naming the field', async () => {
    const t = new McpTransport({ url, maxResponseBytes: 1 << 20 });
    await t.listTools(options);
    const exchange = await t.call('get_products', { shape: 'bad' }, options);
    await t.close();
    // The SDK throws it as a JSON-RPC error (-32602) of its own, which the transport records as the agent's error
    // answer: the agent's structuredContent is not the data graded.
    expect(exchange.extraction.path).toBe('error');
    expect(exchange.data).not.toEqual(ANSWERS.bad);
    expect(exchange.rpcError?.message).toMatch(/does not match the tool's output schema: data\/products must be array/);
  });

  it('a tool that declares none is not checked, whatever it answers', async () => {
    const t = new McpTransport({ url, maxResponseBytes: 1 << 20 });
    await t.listTools(options);
    const exchange = await t.call('get_adcp_capabilities', {}, options);
    await t.close();
    expect(exchange.transportError).toBeUndefined();
    expect(exchange.data).toEqual({ products: 7 });
  });
});
