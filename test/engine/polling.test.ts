/**
 * Recognising an async answer (src/engine/polling.ts): which answers are an
 * async envelope worth following, and which carry nothing but the envelope.
 * The polling itself runs against the fixture agent in
 * grading-model.e2e.test.ts (task_completion captures) and settle.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/model/exchange.js';
import { isEnvelopeOnly, pendingTask } from '../../src/engine/polling.js';

const answer = (data: unknown, extra: Partial<Exchange> = {}): Exchange => ({
  request: { transport: 'mcp', operation: 'create_media_buy', payload: {} },
  extraction: { path: 'structured_content' },
  data,
  ...extra,
});

describe('pendingTask', () => {
  it('follows submitted, working and input-required answers that carry a task id', () => {
    for (const status of ['submitted', 'working', 'input-required']) {
      expect(pendingTask(answer({ status, task_id: 't-1' }), true)).toEqual({ taskId: 't-1', status });
    }
    expect(pendingTask(answer({ status: 'working', task_id: 'x'.repeat(256) }), true)).toEqual({
      taskId: 'x'.repeat(256),
      status: 'working',
    });
  });

  it('not when unwanted, on a transport error, a terminal or missing status, or a task id that is not a bounded printable token', () => {
    expect(pendingTask(answer({ status: 'working', task_id: 't-1' }), false)).toBeUndefined();
    expect(
      pendingTask(answer({ status: 'working', task_id: 't-1' }, { transportError: 'timeout' }), true),
    ).toBeUndefined();
    for (const data of [
      null,
      'working',
      { status: 'completed', task_id: 't-1' },
      { status: 'failed', task_id: 't-1' },
      { task_id: 't-1' },
      { status: 'working' },
      { status: 'working', task_id: '' },
      { status: 'working', task_id: 7 },
      { status: 'working', task_id: 'x'.repeat(257) },
      { status: 'working', task_id: 'a\nb' },
      { status: 'working', task_id: 'a\u0000b' },
      { status: 'working', task_id: 'a\u007fb' },
      { status: 'working', task_id: 'a\u001fb' },
    ]) {
      expect(pendingTask(answer(data), true), JSON.stringify(data)).toBeUndefined();
    }
  });
});

describe('isEnvelopeOnly', () => {
  it('true when every key belongs to the protocol envelope', () => {
    expect(isEnvelopeOnly({})).toBe(true);
    expect(
      isEnvelopeOnly({
        status: 'submitted',
        task_id: 't',
        context_id: 'c',
        context: {},
        message: 'm',
        timestamp: 'now',
        ext: {},
        adcp_version: '3',
        progress: {},
        push_notification_config: {},
        replayed: false,
      }),
    ).toBe(true);
  });

  it('false when the answer carries a result, or is not an object', () => {
    expect(isEnvelopeOnly({ status: 'submitted', task_id: 't', media_buy_id: 'mb' })).toBe(false);
    for (const data of [null, undefined, 'x', 3, [], ['status']]) expect(isEnvelopeOnly(data)).toBe(false);
  });
});
