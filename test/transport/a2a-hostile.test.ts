/**
 * The A2A transport's own parsing of hostile answers (docs/security.md): a JSON-RPC answer whose `result` is not a
 * Task or a Message, a Task whose `status`, `artifacts` or `parts` are not what A2A says, an `error` that is not an
 * error object, `__proto__` in the data. Each is that step's one-line outcome — a transport error, or no data with a
 * note saying why — never a throw, and the answer is recorded as the agent sent it. test/e2e/hostile.test.ts runs the
 * whole-run cases over MCP; time and size bounds are transport/http.ts's, shared by both transports.
 *
 * The agent is a plain HTTP server on 127.0.0.1 answering the path's case to every JSON-RPC request, with the
 * request's id (but for `id_mismatch`), and an agent card naming that path's endpoint.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2aTransport } from '../../src/transport/a2a.js';
import { readJson } from '../helpers/read-json.js';

const completed = (more: Record<string, unknown>) => ({
  kind: 'task',
  id: 't1',
  status: { state: 'completed' },
  ...more,
});

/** Each case's JSON-RPC answer (the request's id is added to those that carry `id`). */
const ANSWERS: Record<string, unknown> = {
  result_null: { jsonrpc: '2.0', id: 0, result: null },
  result_string: { jsonrpc: '2.0', id: 0, result: 'hello' },
  result_array: { jsonrpc: '2.0', id: 0, result: [1, 2] },
  task_without_status: { jsonrpc: '2.0', id: 0, result: { kind: 'task', id: 't1' } },
  status_a_string: { jsonrpc: '2.0', id: 0, result: { kind: 'task', id: 't1', status: 'completed' } },
  state_an_object: { jsonrpc: '2.0', id: 0, result: { kind: 'task', id: 't1', status: { state: { x: 1 } } } },
  artifacts_a_string: { jsonrpc: '2.0', id: 0, result: completed({ artifacts: 'x' }) },
  artifacts_of_null: { jsonrpc: '2.0', id: 0, result: completed({ artifacts: [null, 5] }) },
  parts_a_string: { jsonrpc: '2.0', id: 0, result: completed({ artifacts: [{ parts: 'x' }] }) },
  parts_of_junk: {
    jsonrpc: '2.0',
    id: 0,
    result: completed({ artifacts: [{ parts: [null, 1, 'a', { kind: 'data' }] }] }),
  },
  message_parts_an_object: { jsonrpc: '2.0', id: 0, result: { kind: 'message', parts: { a: 1 } } },
  working_message_a_string: {
    jsonrpc: '2.0',
    id: 0,
    result: { kind: 'task', id: 't1', status: { state: 'working', message: 'x' } },
  },
  error_a_string: { jsonrpc: '2.0', id: 0, error: 'boom' },
  error_null: { jsonrpc: '2.0', id: 0, error: null },
  proto_in_data: JSON.parse(
    '{"jsonrpc":"2.0","id":0,"result":{"kind":"task","id":"t1","status":{"state":"completed"},"artifacts":[{"parts":[{"kind":"data","data":{"__proto__":{"polluted":true}}}]}]}}',
  ),
  id_mismatch: { jsonrpc: '2.0', id: 999, result: { kind: 'message', parts: [] } },
  not_json_rpc: { hello: 'world' },
  a_number: 42,
};

let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer(async (req, res) => {
    const name = req.url!.split('/')[1]!;
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          name: 'hostile',
          url: `${base}/${name}/rpc`,
          protocolVersion: '0.3.0',
          capabilities: {},
          skills: [{ id: 'get_products', name: 'get_products' }],
        }),
      );
      return;
    }
    const { id } = (await readJson(req)) as { id: unknown };
    const answer = ANSWERS[name];
    const withId =
      answer && typeof answer === 'object' && 'id' in answer && name !== 'id_mismatch' ? { ...answer, id } : answer;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(withId));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function call(name: string, timeoutMs = 3_000) {
  const t = new A2aTransport({ url: `${base}/${name}/rpc`, maxResponseBytes: 1 << 20 });
  return t.call('get_products', { buying_mode: 'brief', brief: 'x' }, { credentials: { kind: 'none' }, timeoutMs });
}

const NOT_A_TASK = 'the JSON-RPC result is neither an A2A Task nor a Message';
const NO_STATE = 'A2A Task without status.state';
const NO_DATA_PART = 'A2A task completed without a DataPart in artifacts[0] or status.message';
const NOT_JSON_RPC = 'no A2A answer: not a JSON-RPC response';

describe("hostile A2A answers: each is the step's own one-line outcome, never a throw", () => {
  it.each([
    ['result_null', NOT_A_TASK],
    ['result_string', NOT_A_TASK],
    ['result_array', NOT_A_TASK],
    ['task_without_status', NO_STATE],
    ['status_a_string', NO_STATE],
    ['state_an_object', NO_STATE],
    ['artifacts_a_string', NO_DATA_PART],
    ['artifacts_of_null', NO_DATA_PART],
    ['parts_a_string', NO_DATA_PART],
    ['parts_of_junk', NO_DATA_PART],
    ['message_parts_an_object', 'A2A Message without a DataPart'],
  ])('%s: no data, and the note says why; the answer recorded as sent', async (name, note) => {
    const exchange = await call(name);
    expect(exchange.transportError).toBeUndefined();
    expect(exchange.extraction).toEqual({ path: 'none', note });
    expect(exchange.data).toBeUndefined();
    expect(exchange.response?.payload).toEqual((ANSWERS[name] as { result: unknown }).result);
  });

  it.each([
    [
      'error_a_string',
      `the agent's answer is not a JSON-RPC response (HTTP 200: its "error" is not an object with a numeric "code")`,
    ],
    [
      'error_null',
      `the agent's answer is not a JSON-RPC response (HTTP 200: its "error" is not an object with a numeric "code")`,
    ],
    ['not_json_rpc', `the agent's answer is not a JSON-RPC response (HTTP 200: no "result" or "error")`],
    ['a_number', `the agent's answer is not a JSON-RPC response (HTTP 200: no "result" or "error")`],
  ])('%s: a transport error naming what is wrong', async (name, error) => {
    const exchange = await call(name);
    expect(exchange.transportError).toBe(error);
    expect(exchange.extraction).toEqual({ path: 'none', note: NOT_JSON_RPC });
  });

  it('an answer to another request id: a transport error naming both ids', async () => {
    const exchange = await call('id_mismatch');
    expect(exchange.transportError).toMatch(
      /^the agent answered another JSON-RPC request \(id 999, sent [0-9a-f-]{36}\)$/,
    );
  });

  it('a Task that stays working with a status.message that is not a Message: polled until the step timeout, then no data', async () => {
    const exchange = await call('working_message_a_string', 1_000);
    expect(exchange.transportError).toBeUndefined();
    expect(exchange.data).toBeUndefined();
    expect(exchange.extraction.path).toBe('none');
    expect(exchange.extraction.note).toMatch(
      /^the A2A task was still working when the step timeout ran out \(\d+ A2A tasks\/get poll\(s\)\); interim A2A state working without a DataPart in status\.message\.parts\[\]$/,
    );
  });

  it('`__proto__` in the data is an own key, never a prototype', async () => {
    const exchange = await call('proto_in_data');
    const data = exchange.data as Record<string, unknown>;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.hasOwn(data, '__proto__')).toBe(true);
    expect(data['__proto__']).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
