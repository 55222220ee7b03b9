/**
 * The one rule for "did the agent answer with an error" (src/model/answer-error.ts), on each shape an answer takes:
 * MCP results and A2A tasks go through the transports' own extraction (extractMcpResult / extractA2aResult), JSON-RPC
 * errors are built as transport/mcp.ts builds them. The e2e side — a controller `success: false` on a plain result,
 * graded — is test/engine/controller-errors.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { answerError, type AnswerLike } from '../../src/model/answer-error.js';
import type { Exchange } from '../../src/model/exchange.js';
import { extractA2aResult } from '../../src/transport/a2a-extract.js';
import { extractMcpResult } from '../../src/transport/mcp-extract.js';

const refusal = { code: 'INVALID_REQUEST', message: 'brief is required' };

/** An answer to `task` whose extraction and data are `extracted` (a transport's extraction, or hand-written task data). */
function answered(task: string, extracted: Pick<Exchange, 'extraction' | 'data'> & Partial<Exchange>): Exchange {
  return { request: { transport: 'mcp', operation: task, payload: {} }, ...extracted };
}
const mcp = (result: Parameters<typeof extractMcpResult>[0], task = 'get_products') =>
  answered(task, extractMcpResult(result));
const a2a = (result: unknown, task = 'get_products') => answered(task, extractA2aResult(result));
const data = (body: unknown, task = 'get_products') =>
  answered(task, { extraction: { path: 'structured_content' }, data: body });
const dataPart = (body: unknown) => ({ kind: 'data', data: body });

describe('answerError: the transport took the error path', () => {
  it('MCP isError: true, with structuredContent or only text', () => {
    expect(answerError(mcp({ isError: true, structuredContent: { adcp_error: refusal, context: { a: 1 } } }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'brief is required',
      where: 'isError: true with structuredContent',
    });
    expect(answerError(mcp({ isError: true, content: [{ type: 'text', text: 'upstream exploded' }] }))).toEqual({
      message: 'upstream exploded',
      where: 'isError: true without a JSON body',
    });
  });

  it('the error-only adcp_error shape without isError, in structuredContent or text content', () => {
    expect(answerError(mcp({ structuredContent: { adcp_error: refusal } }))).toMatchObject({
      code: 'INVALID_REQUEST',
      where: 'structuredContent contained only adcp_error — treated as error',
    });
    expect(
      answerError(mcp({ content: [{ type: 'text', text: JSON.stringify({ adcp_error: refusal }) }] })),
    ).toMatchObject({ code: 'INVALID_REQUEST', where: 'error envelope in content[].text (no structuredContent)' });
  });

  it('an A2A task that failed (with or without a DataPart), or completed with an error-only DataPart', () => {
    const failed = {
      kind: 'task',
      id: 't1',
      status: { state: 'failed' },
      artifacts: [{ parts: [dataPart({ adcp_error: refusal })] }],
    };
    expect(answerError(a2a(failed))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'brief is required',
      where: 'A2A task failed: artifacts[0].parts[] last DataPart',
    });
    expect(
      answerError(
        a2a({
          kind: 'task',
          id: 't1',
          status: { state: 'TASK_STATE_REJECTED', message: { parts: [{ kind: 'text', text: 'no' }] } },
        }),
      ),
    ).toEqual({ message: 'no', where: 'A2A task rejected without a DataPart' });
    expect(
      answerError(
        a2a({
          kind: 'task',
          id: 't1',
          status: { state: 'completed' },
          artifacts: [{ parts: [dataPart({ adcp_error: refusal })] }],
        }),
      ),
    ).toMatchObject({ code: 'INVALID_REQUEST' });
  });

  it('a JSON-RPC error: its code when the data carries none', () => {
    const rpcError = { code: -32602, message: 'Invalid params', data: { adcp_error: refusal } };
    expect(
      answerError(
        answered('get_products', {
          extraction: { path: 'error', note: 'JSON-RPC error response' },
          data: rpcError.data,
          rpcError,
        }),
      ),
    ).toEqual({
      code: 'INVALID_REQUEST',
      message: 'brief is required',
      where: 'JSON-RPC error response',
    });
    // A record that kept the error but not the extraction's verdict is an error all the same.
    const bare = { code: -32601, message: 'Tool not found' };
    expect(
      answerError(answered('get_products', { extraction: { path: 'structured_content' }, data: {}, rpcError: bare })),
    ).toEqual({ message: 'Tool not found', where: 'JSON-RPC error -32601' });
  });
});

describe('answerError: what the task data says', () => {
  it('an adcp_error object beside other fields (top-level or under payload)', () => {
    expect(answerError(data({ adcp_error: refusal, products: [{ product_id: 'p' }] }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'brief is required',
      where: 'adcp_error in the task data',
    });
    expect(answerError(data({ payload: { adcp_error: refusal } }))).toMatchObject({
      code: 'INVALID_REQUEST',
      where: 'adcp_error in payload',
    });
    expect(answerError(data({ adcp_error: 'INVALID_REQUEST' }))).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>]>([
    ["create_media_buy's error arm", { errors: [refusal] }],
    [
      'the error arm with its envelope',
      {
        errors: [refusal],
        context: { correlation_id: 'c' },
        ext: {},
        status: 'failed',
        message: 'rejected',
        adcp_version: '3.0',
      },
    ],
    [
      "get_products' empty result (products is required; the flat schema has no error arm)",
      { products: [], errors: [refusal] },
    ],
    [
      "list_creatives' empty result",
      {
        query_summary: { total_matching: 0, returned: 0 },
        pagination: { has_more: false },
        creatives: [],
        errors: [refusal],
      },
    ],
    [
      "update_content_standards' error arm (success: false)",
      { success: false, errors: [refusal], conflicting_standards_id: 'cs_1' },
    ],
    ['a payload nested under payload', { payload: { errors: [refusal] } }],
  ])('errors[] with no success payload is an error: %s', (_, body) => {
    expect(answerError(data(body))).toMatchObject({ code: 'INVALID_REQUEST', message: 'brief is required' });
  });

  it.each<[string, Record<string, unknown>]>([
    [
      'products beside warnings',
      { products: [{ product_id: 'p' }], errors: [{ code: 'PARTIAL', message: 'one filter ignored' }] },
    ],
    ['a created media buy with warnings', { media_buy_id: 'mb_1', packages: [], errors: [refusal] }],
    [
      "create_media_buy's submitted arm with advisory errors",
      { status: 'submitted', task_id: 'task_1', errors: [refusal] },
    ],
    ['a working task with advisory errors', { status: 'working', errors: [refusal] }],
    [
      'a delivery report with a currency',
      { reporting_period: { start: 'a', end: 'b' }, currency: 'USD', media_buy_deliveries: [], errors: [refusal] },
    ],
    ['an empty errors[]', { errors: [] }],
  ])('errors[] beside a success payload are warnings, not an error: %s', (_, body) => {
    expect(answerError(data(body))).toBeUndefined();
  });

  it('a plain success is no error', () => {
    expect(answerError(mcp({ structuredContent: { products: [] } }))).toBeUndefined();
    expect(answerError(data(undefined))).toBeUndefined();
  });

  it('a transport failure is no answer, so no error answer', () => {
    expect(
      answerError(
        answered('get_products', {
          extraction: { path: 'none' },
          data: undefined,
          transportError: 'connect ECONNREFUSED',
        }),
      ),
    ).toBeUndefined();
  });
});

describe("answerError: comply_test_controller's success: false", () => {
  const controllerError = {
    success: false,
    error: 'UNKNOWN_SCENARIO',
    error_detail: 'Scenario not supported by this agent: force_x',
  };

  it('on a plain (non-isError) result of the controller task it is an error, its `error` the code', () => {
    expect(answerError(mcp({ structuredContent: controllerError }, 'comply_test_controller'))).toEqual({
      code: 'UNKNOWN_SCENARIO',
      message: 'Scenario not supported by this agent: force_x',
      where: 'comply_test_controller answered success: false',
    });
    // A non-code error string still makes it an error; there is just no AdCP code to name.
    expect(
      answerError(data({ success: false, error: 'broken', error_detail: 'details' }, 'comply_test_controller')),
    ).toEqual({ message: 'details', where: 'comply_test_controller answered success: false' });
    expect(answerError(data({ success: true, scenarios: ['seed_product'] }, 'comply_test_controller'))).toBeUndefined();
    expect(answerError(data({ success: false }, 'comply_test_controller'))).toBeUndefined();
  });

  it('on another task it is that task’s own field, not an error', () => {
    expect(answerError(mcp({ structuredContent: controllerError }, 'provide_performance_feedback'))).toBeUndefined();
  });

  it('when the task is not known (a bare CallToolResult handed to a matcher) the controller shape counts', () => {
    const unknownTask: AnswerLike = { ...extractMcpResult({ structuredContent: controllerError }) };
    expect(answerError(unknownTask)).toMatchObject({ code: 'UNKNOWN_SCENARIO' });
    expect(answerError({ ...unknownTask, request: { operation: '' } })).toMatchObject({ code: 'UNKNOWN_SCENARIO' });
  });

  it('isError on the controller task is an error by the transport, with the same code', () => {
    expect(
      answerError(mcp({ isError: true, structuredContent: controllerError }, 'comply_test_controller')),
    ).toMatchObject({ code: 'UNKNOWN_SCENARIO', where: 'isError: true with structuredContent' });
  });
});

describe('answerError: the edges of the success-payload rule, one field at a time', () => {
  const errors = [{ code: 'INVALID_REQUEST', message: 'no' }];
  it('every protocol-envelope key and error-arm key beside errors[] leaves it an error; any other holding key makes it a success', () => {
    for (const key of [
      'status',
      'task_id',
      'context_id',
      'context',
      'message',
      'timestamp',
      'ext',
      'adcp_version',
      'progress',
      'push_notification_config',
      'replayed',
      'conflicting_standards_id',
    ]) {
      const value = key === 'status' ? 'completed' : key === 'replayed' ? true : key === 'progress' ? 50 : 'x';
      expect(answerError(data({ errors, [key]: value })), key).toMatchObject({
        where: 'errors[] in the task data without a success payload',
      });
    }
    expect(answerError(data({ errors, media_buy_id: 'mb1' }))).toBeUndefined();
  });

  it('what holds something: a non-empty string or array, a non-zero number, true, an object holding one (to a depth), not their empty forms', () => {
    for (const empty of ['', 0, false, null, [], {}, { total: 0 }, { a: { b: '' } }])
      expect(answerError(data({ errors, result: empty })), JSON.stringify(empty)).toBeDefined();
    for (const full of ['x', 1, -1, true, [0], { a: 1 }, { a: { b: 'x' } }])
      expect(answerError(data({ errors, result: full })), JSON.stringify(full)).toBeUndefined();
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 9; i++) deep = { d: deep };
    // Past 8 levels an object is taken as holding something (the walk is bounded), so the answer is a success.
    expect(answerError(data({ errors, result: deep }))).toBeUndefined();
    let shallow: Record<string, unknown> = {};
    for (let i = 0; i < 6; i++) shallow = { d: shallow };
    expect(answerError(data({ errors, result: shallow }))).toBeDefined();
  });

  it('an in-flight status makes errors[] advisory; a finished one does not; an empty errors[] is no error', () => {
    for (const status of ['submitted', 'working', 'input-required'])
      expect(answerError(data({ status, task_id: 't', errors })), status).toBeUndefined();
    for (const status of ['completed', 'failed', 'canceled'])
      expect(answerError(data({ status, errors })), status).toBeDefined();
    expect(answerError(data({ errors: [] }))).toBeUndefined();
    expect(answerError(data({ errors: 'not a list' }))).toBeUndefined();
  });

  it('rules 3 and 4 under payload; adcp_error must be an object', () => {
    expect(answerError(data({ payload: { errors } }))).toMatchObject({
      code: 'INVALID_REQUEST',
      where: 'errors[] in payload without a success payload',
    });
    expect(answerError(data({ payload: { adcp_error: refusal }, other: 1 }))).toMatchObject({
      code: 'INVALID_REQUEST',
      where: 'adcp_error in payload',
    });
    expect(answerError(data({ adcp_error: refusal, products: [1] }))).toMatchObject({
      where: 'adcp_error in the task data',
    });
    expect(answerError(data({ adcp_error: 'not an object', products: [1] }))).toBeUndefined();
    expect(answerError(data({ payload: 'text' }))).toBeUndefined();
  });

  it("the controller's arm: only with a string error, on comply_test_controller or an unknown task; its error_detail is the message", () => {
    const controller = { success: false, error: 'NOT_FOUND', error_detail: 'no such buy' };
    expect(answerError(data(controller, 'comply_test_controller'))).toEqual({
      code: 'NOT_FOUND',
      message: 'no such buy',
      where: 'comply_test_controller answered success: false',
    });
    expect(answerError(data(controller, ''))).toMatchObject({ code: 'NOT_FOUND' });
    expect(answerError({ data: controller })).toMatchObject({ code: 'NOT_FOUND' });
    expect(answerError(data(controller, 'provide_performance_feedback'))).toBeUndefined();
    expect(answerError(data({ success: false, error: 7 }, 'comply_test_controller'))).toBeUndefined();
    expect(answerError(data({ success: true, error: 'X' }, 'comply_test_controller'))).toBeUndefined();
    expect(
      answerError(data({ success: false, error: 'GONE_AWAY', error_detail: '' }, 'comply_test_controller')),
    ).toEqual({ code: 'GONE_AWAY', where: 'comply_test_controller answered success: false' });
  });

  it('a transport failure is not an error answer; a JSON-RPC error is, with its message; the extraction note names the path', () => {
    expect(answerError({ ...data({ adcp_error: refusal }), transportError: 'socket hang up' })).toBeUndefined();
    expect(answerError({ data: undefined, rpcError: { code: -32602, message: 'Unknown tool' } })).toEqual({
      message: 'Unknown tool',
      where: 'JSON-RPC error -32602',
    });
    expect(answerError({ data: undefined, extraction: { path: 'error' } })).toEqual({
      where: 'the transport took the error path',
    });
    expect(answerError({ data: { message: 'plain words' }, extraction: { path: 'error', note: 'n' } })).toEqual({
      message: 'plain words',
      where: 'n',
    });
    expect(answerError({ data: { message: '' }, extraction: { path: 'error', note: 'n' } })).toEqual({ where: 'n' });
  });
});
