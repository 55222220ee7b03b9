/** Talking to the fixture agent in tests: the real MCP SDK client, and raw HTTP for what the client hides. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const DEMO_KEY = 'demo-fixture-brand-v1';
export const BASIC = { username: 'fixture-brand', password: 'fixture-brand-basic-v1' };
/** callTool's `authorization` for "send no credentials" (undefined falls back to the demo key). */
export const NO_CREDENTIALS = '';

export function bearer(token: string): string {
  return `Bearer ${token}`;
}

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

let credentialSeq = 0;
/** A demo API key no other test uses: a principal of its own, so an empty sandbox (seeds, directives, tasks). */
export function freshCredential(): string {
  return bearer(`demo-fresh-${process.pid}-${++credentialSeq}`);
}

let keySeq = 0;
/** A create_media_buy request for one package (prod_video_preroll unless overridden); a fresh idempotency key unless given. */
export function mediaBuyRequest(
  pkg: Record<string, unknown> = {},
  key = `fixture-test-key-${String(++keySeq).padStart(6, '0')}`,
) {
  return {
    idempotency_key: key,
    account: { brand: { domain: 'fixture-brand.example' }, operator: 'pinnacle-agency.example' },
    brand: { domain: 'fixture-brand.example' },
    start_time: 'asap',
    end_time: '2027-06-30T23:59:59Z',
    packages: [{ product_id: 'prod_video_preroll', pricing_option_id: 'po_video_preroll_cpm', budget: 5000, ...pkg }],
  };
}

export interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, any>;
  content?: { type: string; text?: string }[];
}

/** An initialized MCP client; `authorization` goes on every request. */
export async function connect(url: string, authorization?: string): Promise<Client> {
  const client = new Client({ name: 'fixture-agent-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: authorization ? { headers: { authorization } } : undefined,
  });
  await client.connect(transport);
  return client;
}

/** One tools/call on a fresh client, closed afterwards. */
export async function callTool(
  url: string,
  name: string,
  args: Record<string, unknown> = {},
  authorization: string | undefined = bearer(DEMO_KEY),
): Promise<ToolResult> {
  const client = await connect(url, authorization);
  try {
    return (await client.callTool({ name, arguments: args })) as ToolResult;
  } finally {
    await client.close();
  }
}

/** The JSON in content[0].text. */
export function textJson(result: ToolResult): any {
  const text = result.content?.find((c) => c.type === 'text')?.text;
  if (text === undefined) throw new Error('no text content');
  return JSON.parse(text);
}

let rpcId = 0;

/**
 * A bare JSON-RPC tools/call over HTTP, accepting only JSON (as raw probes do),
 * so status, headers and body are all observable.
 */
export async function rawToolCall(
  url: string,
  name: string,
  args: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  signal?: AbortSignal,
) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: args } }),
    signal,
  });
}

/** Reads a body to the end counting bytes, without keeping it. */
export async function countBytes(response: Response): Promise<number> {
  let total = 0;
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return total;
    total += value.byteLength;
  }
}
