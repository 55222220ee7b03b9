/**
 * A tool's `outputSchema`, as an MCP client holds its results to it (src/transport/mcp-output-schema.ts): a result
 * whose structuredContent breaks the schema its tool declared in tools/list, or that has none, is refused — recorded as
 * the agent sent it, with the refusal as the step's transport-level error, not as a JSON-RPC error the agent never
 * sent (what the SDK's callTool throws). A tool that declares none is not checked; an error result is not either.
 *
 * The agent is the SDK's low-level Server over stateless Streamable HTTP on 127.0.0.1 (its McpServer would check its
 * own output first and answer an error result instead). Its tools/list comes in two pages when asked (`?paged`): the
 * SDK's own cache of schemas keeps only the last page's.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';
import { McpTransport } from '../../src/transport/mcp.js';
import {
  MAX_CHECK_MS,
  MAX_CHECKED_SCHEMA_BYTES,
  MAX_KEPT_CHECKS,
  OutputSchemas,
  SchemaChecks,
} from '../../src/transport/mcp-output-schema.js';
import type { CallOptions } from '../../src/transport/types.js';
import { readJson } from '../helpers/read-json.js';

const PRODUCTS_SCHEMA = {
  type: 'object',
  properties: { products: { type: 'array' } },
  required: ['products'],
} as const;

/** What a tool named `broken_<n>` declares: schemas Ajv cannot compile. */
const BROKEN = [
  { type: 'object', properties: { a: { type: 'nonsense' } } },
  { type: 'object', properties: { a: { $ref: '#/nowhere' } } },
];

/** get_products' answers, by the `shape` argument. get_adcp_capabilities declares no schema and answers anything. */
const ANSWERS: Record<string, { structuredContent?: Record<string, unknown>; isError?: true }> = {
  good: { structuredContent: { products: [] } },
  bad: { structuredContent: { products: 'none' } },
  none: {},
  error: { isError: true },
};

let server: HttpServer;
let base: string;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body: unknown = await readJson(req);
    const paged = req.url?.includes('paged') === true;
    const mcp = new Server({ name: 'output-schema-agent', version: '1.0.0' }, { capabilities: { tools: {} } });
    const products = { name: 'get_products', inputSchema: { type: 'object' as const }, outputSchema: PRODUCTS_SCHEMA };
    const capabilities = { name: 'get_adcp_capabilities', inputSchema: { type: 'object' as const } };
    const broken = BROKEN.map((outputSchema, n) => ({
      name: `broken_${n}`,
      inputSchema: { type: 'object' as const },
      outputSchema: outputSchema as { type: 'object' },
    }));
    mcp.setRequestHandler(ListToolsRequestSchema, async (request) =>
      req.url?.includes('broken')
        ? { tools: broken }
        : !paged
          ? { tools: [products, capabilities] }
          : request.params?.cursor === 'two'
            ? { tools: [capabilities] }
            : { tools: [products], nextCursor: 'two' },
    );
    mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
      const answer =
        request.params.name === 'get_products'
          ? ANSWERS[String(request.params.arguments?.shape ?? 'good')]!
          : { structuredContent: { products: 7 } };
      return {
        content: [{ type: 'text', text: JSON.stringify(answer.structuredContent ?? 'no structured content') }],
        ...answer,
      };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await mcp.connect(transport);
    res.on('close', () => void transport.close());
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const options: CallOptions = { credentials: { kind: 'none' }, timeoutMs: 5_000 };

/** get_products with `shape`, after tools/list, on the agent's one-page or two-page listing. */
async function products(shape: string, path = '/mcp') {
  const t = new McpTransport({ url: `${base}${path}`, maxResponseBytes: 1 << 20 });
  expect(await t.listTools(options)).toEqual({ tools: ['get_products', 'get_adcp_capabilities'] });
  const exchange = await t.call('get_products', { shape }, options);
  await t.close();
  return exchange;
}

describe("a tool's outputSchema, as an MCP client holds its results to it", () => {
  it('a result that matches the declared schema is the data graded', async () => {
    const exchange = await products('good');
    expect(exchange.transportError).toBeUndefined();
    expect(exchange.extraction.path).toBe('structured_content');
    expect(exchange.data).toEqual({ products: [] });
  });

  it.each(['/mcp', '/mcp?paged'])(
    'a result that breaks it: recorded as the agent sent it, refused as a transport-level error naming the field (%s)',
    async (path) => {
      const exchange = await products('bad', path);
      expect(exchange.transportError).toBe(
        "get_products's structuredContent does not match the outputSchema it declares in tools/list (data/products must be array): an MCP client refuses the result",
      );
      // What came back is what the agent sent: its result, not a JSON-RPC error of the client's making.
      expect(exchange.rpcError).toBeUndefined();
      expect(exchange.response?.payload).toMatchObject({ isError: false, structuredContent: { products: 'none' } });
      expect(exchange.response?.status).toBe(200);
    },
  );

  it('a result without structuredContent is refused too; an error result is not checked', async () => {
    const none = await products('none');
    expect(none.transportError).toMatch(
      /^get_products declares an outputSchema in tools\/list but its result has no structuredContent: an MCP client refuses it/,
    );
    expect(none.response?.payload).toMatchObject({ isError: false, content: [{ type: 'text' }] });
    const error = await products('error');
    expect(error.transportError).toBeUndefined();
    expect(error.response?.payload).toMatchObject({ isError: true });
  });

  it('a declared schema Ajv cannot compile: its results are refused, naming why, and the session goes on', async () => {
    const t = new McpTransport({ url: `${base}/mcp?broken`, maxResponseBytes: 1 << 20 });
    expect(await t.listTools(options)).toEqual({ tools: ['broken_0', 'broken_1'] });
    const exchanges = [await t.call('broken_0', {}, options), await t.call('broken_1', {}, options)];
    await t.close();
    expect(exchanges.map((e) => e.transportError)).toEqual([
      "broken_0's outputSchema in tools/list does not compile (type must be JSONType or JSONType[]: nonsense): an MCP client cannot take its results",
      "broken_1's outputSchema in tools/list does not compile (can't resolve reference #/nowhere from id #): an MCP client cannot take its results",
    ]);
  });

  it('a tool that declares none is not checked, whatever it answers', async () => {
    const t = new McpTransport({ url: `${base}/mcp`, maxResponseBytes: 1 << 20 });
    await t.listTools(options);
    const exchange = await t.call('get_adcp_capabilities', {}, options);
    await t.close();
    expect(exchange.transportError).toBeUndefined();
    expect(exchange.data).toEqual({ products: 7 });
  });
});

describe('OutputSchemas: what a session compiles, and when', () => {
  /** OutputSchemas over the SDK's validator, counting validators made, schemas compiled and results checked. */
  function counted(maxCheckMs?: number) {
    const made = { validators: 0, compiled: 0 };
    const results = { checked: 0 };
    const checks = new SchemaChecks(() => {
      made.validators++;
      const ajv = new AjvJsonSchemaValidator();
      return {
        getValidator: <T>(schema: JsonSchemaType) => {
          made.compiled++;
          const check = ajv.getValidator<T>(schema);
          return (input: unknown) => (results.checked++, check(input));
        },
      };
    }, maxCheckMs);
    return { schemas: new OutputSchemas(checks), checks, made, results };
  }

  it('no validator while no listed tool declares a schema; each schema compiled once, when first needed', () => {
    const { schemas, made } = counted();
    schemas.listed([{ name: 'get_adcp_capabilities' }]);
    expect(schemas.refusal('get_adcp_capabilities', { structuredContent: {} })).toBeUndefined();
    schemas.listed([{ name: 'get_products', outputSchema: PRODUCTS_SCHEMA }]);
    expect(made).toEqual({ validators: 0, compiled: 0 });
    expect(schemas.refusal('get_products', { structuredContent: { products: [] } })).toBeUndefined();
    expect(schemas.refusal('get_products', { structuredContent: { products: 1 } })).toMatch(/must be array/);
    expect(schemas.refusal('get_products', { structuredContent: { products: 2 } })).toMatch(/must be array/);
    expect(made).toEqual({ validators: 1, compiled: 1 });
  });

  it('a schema over the bound is not compiled, and its results not checked: the agent sets its size', () => {
    const { schemas, made } = counted();
    const at = (bytes: number) => ({
      ...PRODUCTS_SCHEMA,
      description: 'x'.repeat(bytes - JSON.stringify({ ...PRODUCTS_SCHEMA, description: '' }).length),
    });
    expect(JSON.stringify(at(MAX_CHECKED_SCHEMA_BYTES)).length).toBe(MAX_CHECKED_SCHEMA_BYTES);
    schemas.listed([
      { name: 'at_the_bound', outputSchema: at(MAX_CHECKED_SCHEMA_BYTES) },
      { name: 'over_it', outputSchema: at(MAX_CHECKED_SCHEMA_BYTES + 1) },
    ]);
    expect(schemas.refusal('over_it', { structuredContent: { products: 1 } })).toBeUndefined();
    expect(made).toEqual({ validators: 0, compiled: 0 });
    expect(schemas.refusal('at_the_bound', { structuredContent: { products: 1 } })).toMatch(/must be array/);
  });

  it("each session's listing is a new object: a schema of the same text is compiled once for every session", () => {
    const { schemas, checks, made } = counted();
    const next = new OutputSchemas(checks);
    schemas.listed([{ name: 'get_products', outputSchema: structuredClone(PRODUCTS_SCHEMA) }]);
    next.listed([{ name: 'get_products', outputSchema: structuredClone(PRODUCTS_SCHEMA) }]);
    expect(schemas.refusal('get_products', { structuredContent: { products: 1 } })).toMatch(/must be array/);
    expect(next.refusal('get_products', { structuredContent: { products: 1 } })).toMatch(/must be array/);
    expect(made).toEqual({ validators: 1, compiled: 1 });
    // Another text is another schema.
    next.listed([{ name: 'get_products', outputSchema: { ...PRODUCTS_SCHEMA, required: [] } }]);
    expect(next.refusal('get_products', { structuredContent: {} })).toBeUndefined();
    expect(made).toEqual({ validators: 1, compiled: 2 });
  });

  it('past MAX_KEPT_CHECKS distinct schemas starts over with a new validator: the agent sets how many it lists', () => {
    const { schemas, made } = counted();
    const numbered = (n: number) => ({ ...PRODUCTS_SCHEMA, title: `schema ${n}` });
    const check = (n: number) => {
      schemas.listed([{ name: 'get_products', outputSchema: numbered(n) }]);
      return schemas.refusal('get_products', { structuredContent: { products: 1 } });
    };
    for (let n = 0; n < MAX_KEPT_CHECKS; n++) expect(check(n)).toMatch(/must be array/);
    expect(made).toEqual({ validators: 1, compiled: MAX_KEPT_CHECKS });
    expect(check(MAX_KEPT_CHECKS)).toMatch(/must be array/);
    expect(made).toEqual({ validators: 2, compiled: MAX_KEPT_CHECKS + 1 });
    check(MAX_KEPT_CHECKS);
    check(0);
    expect(made).toEqual({ validators: 2, compiled: MAX_KEPT_CHECKS + 2 });
  });

  it("a schema with the agent's patterns: checked as any other, and a check that runs past its bound refuses the result, then every later one without running", () => {
    // Nested quantifiers that backtrack through every split of a string that fails them: on this project's machine 16
    // characters take 0.2 s, 18 about 2 s (so, unbounded, this test fails rather than hangs), 20 characters 21 s.
    const backtracking = { type: 'object', properties: { id: { type: 'string', pattern: '^((.+)+)+!$' } } };
    const plain = { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z]+$' } } };
    const { schemas, checks, results } = counted(100);
    schemas.listed([
      { name: 'plain', outputSchema: plain },
      { name: 'backtracking', outputSchema: backtracking },
    ]);
    expect(schemas.refusal('plain', { structuredContent: { id: 'abc' } })).toBeUndefined();
    expect(schemas.refusal('plain', { structuredContent: { id: 'ABC' } })).toMatch(
      /^plain's structuredContent does not match the outputSchema it declares in tools\/list \(data\/id must match pattern "\^\[a-z\]\+\$"\)/,
    );
    // A short string fails the pattern before it can backtrack far: an ordinary refusal.
    expect(schemas.refusal('backtracking', { structuredContent: { id: 'short' } })).toMatch(/must match pattern/);
    expect(results.checked).toBe(3);
    const unbounded =
      "backtracking's outputSchema in tools/list cannot be checked in bounded time (a result took over 0.1 s: a `pattern` there backtracks without bound): an MCP client cannot take its results";
    expect(schemas.refusal('backtracking', { structuredContent: { id: 'display_premium_sp' } })).toBe(unbounded);
    expect(results.checked).toBe(4);
    // Not run again, whatever the result: every session of the process takes the schema as unusable.
    expect(schemas.refusal('backtracking', { structuredContent: { id: 'short' } })).toBe(unbounded);
    const next = new OutputSchemas(checks);
    next.listed([{ name: 'backtracking', outputSchema: structuredClone(backtracking) }]);
    expect(next.refusal('backtracking', { structuredContent: {} })).toBe(unbounded);
    expect(results.checked).toBe(4);
    // The plain schema's check goes on.
    expect(schemas.refusal('plain', { structuredContent: { id: 'xyz' } })).toBeUndefined();
    expect(results.checked).toBe(5);
  });

  it('a check that throws (a recursive schema on data nested past the stack) refuses that result only, naming the error', () => {
    const recursive = (pattern?: string) => ({
      type: 'object',
      additionalProperties: { $ref: '#/definitions/value' },
      definitions: {
        value: {
          if: { type: 'string' },
          then: pattern ? { pattern } : {},
          else: { additionalProperties: { $ref: '#/definitions/value' }, items: { $ref: '#/definitions/value' } },
        },
      },
    });
    let deep: unknown = [];
    for (let n = 0; n < 20_000; n++) deep = [deep];
    const schemas = new OutputSchemas(new SchemaChecks(() => new AjvJsonSchemaValidator(), 1_000));
    // With a pattern (the check runs in the vm context) and without one.
    schemas.listed([
      { name: 'with_pattern', outputSchema: recursive('^[a-z]*$') },
      { name: 'without', outputSchema: recursive() },
    ]);
    for (const tool of ['with_pattern', 'without']) {
      expect(schemas.refusal(tool, { structuredContent: { a: deep } })).toBe(
        `${tool}'s structuredContent could not be checked against the outputSchema it declares in tools/list (RangeError: Maximum call stack size exceeded): an MCP client cannot take the result`,
      );
      expect(schemas.refusal(tool, { structuredContent: { a: [['ok']] } })).toBeUndefined();
    }
    expect(schemas.refusal('with_pattern', { structuredContent: { a: [['OK']] } })).toMatch(/must match pattern/);
  });

  it('the default bound is 2 s', () => {
    expect(MAX_CHECK_MS).toBe(2_000);
  });

  it('a later listing of a tool replaces what an earlier one declared', () => {
    const { schemas } = counted();
    schemas.listed([{ name: 'get_products', outputSchema: PRODUCTS_SCHEMA }]);
    schemas.listed([{ name: 'get_products' }]);
    expect(schemas.refusal('get_products', { structuredContent: { products: 1 } })).toBeUndefined();
  });

  it("the SDK client's own checks compile nothing and refuse to run: the transport never calls callTool", () => {
    const check = OutputSchemas.forClient().getValidator(PRODUCTS_SCHEMA);
    expect(() => check({ products: [] })).toThrow(
      'vitest-adcp: tool results are checked by the transport (mcp-output-schema.ts), not by callTool',
    );
  });
});
