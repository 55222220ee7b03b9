/**
 * The cross-response kinds (src/checks/cross-response.ts) on hand-made response sets: the edges the fixture agent
 * does not reach (null values, answers without one, wildcard paths, cardinalities other than 1, a set of the other
 * contract), and what the roles read of an answer (`retryAfterOf`, `dispatchOf`). Over the wire, produced by the
 * roles against the fixture agent: test/engine/cross-response.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { checks, type CheckInput, type Exchange, type ResponseSet } from '../../src/checks/index.js';
import { dispatchOf, retryAfterOf, tripResult } from '../../src/checks/cross-response.js';
import type { Step, Validation } from '../../src/model/storyboard.js';

const at = { line: 1, column: 1 };
const STEP: Step = { id: 'step', task: 'create_media_buy', validations: [], loc: at };

function exchange(data: unknown, overrides: Partial<Exchange> = {}): Exchange {
  return {
    request: { transport: 'mcp', operation: 'create_media_buy', payload: {} },
    response: { transport: 'mcp', payload: {}, status: 200 },
    extraction: { path: 'structured_content' },
    data,
    ...overrides,
  };
}

function grade(written: { check: string; [key: string]: unknown }, responses?: ResponseSet) {
  const run = checks[written.check]!;
  const input: CheckInput = {
    validation: { loc: at, ...written } as Validation,
    step: STEP,
    task: STEP.task,
    exchange: exchange({}),
    ...(responses ? { responses } : {}),
  };
  return run(input);
}

const parallel = (...dispatches: ResponseSet['dispatches']): ResponseSet => ({
  contract: 'parallel_dispatch_runner',
  dispatches,
});
const buy = (id: unknown) => ({ data: { media_buy_id: id, status: 'pending_creatives' } });
const EQUAL = { check: 'cross_response_field_equal', path: 'media_buy_id' };
const DISTINCT = (allowed: unknown[]) => ({
  check: 'cross_response_count_distinct',
  path: 'media_buy_id',
  allowed_values: allowed,
});

describe('cross_response_field_equal', () => {
  it('passes when every answer carries the same value, reporting them in dispatch order', () => {
    expect(grade(EQUAL, parallel(buy('mb_1'), buy('mb_1'), buy('mb_1')))).toEqual({
      passed: true,
      json_pointer: '/media_buy_id',
      expected: { path: 'media_buy_id' },
      actual: { observed_values: ['mb_1', 'mb_1', 'mb_1'] },
    });
  });

  it('compares deeply: equal objects pass, a different one fails naming both', () => {
    const pkg = (budget: number) => ({ data: { packages: [{ package_id: 'p', budget }] } });
    const path = { check: 'cross_response_field_equal', path: 'packages[0]' };
    expect(grade(path, parallel(pkg(5), pkg(5))).passed).toBe(true);
    expect(grade(path, parallel(pkg(5), pkg(6)))).toMatchObject({
      passed: false,
      json_pointer: '/packages/0',
      error:
        'the dispatches answered different values at "packages[0]": dispatch 1 {"package_id":"p","budget":5}, dispatch 2 {"package_id":"p","budget":6}',
    });
  });

  it('an answer without the value fails, whatever the others agree on: absent, null, an error, no answer', () => {
    for (const [missing, said] of [
      [{ data: { status: 'pending_creatives' } }, 'answered without it'],
      [buy(null), 'answered without it'],
      [
        { data: { adcp_error: { code: 'IDEMPOTENCY_CONFLICT' } }, errorCode: 'IDEMPOTENCY_CONFLICT' },
        'answered IDEMPOTENCY_CONFLICT',
      ],
      [{ error: 'connection refused' }, 'got no answer: connection refused'],
    ] as const) {
      expect(grade(EQUAL, parallel(buy('mb_1'), missing))).toEqual({
        passed: false,
        json_pointer: '/media_buy_id',
        expected: { path: 'media_buy_id' },
        actual: { observed_values: ['mb_1'] },
        error: `dispatch 2 of 2 carries no "media_buy_id" (it ${said}), so the 2 dispatches do not converge on one value`,
      });
    }
  });
});

describe('cross_response_count_distinct', () => {
  it('counts the distinct values (deep equality) and passes on an allowed cardinality', () => {
    expect(grade(DISTINCT([1]), parallel(buy('mb_1'), buy('mb_1')))).toEqual({
      passed: true,
      json_pointer: '/media_buy_id',
      expected: { path: 'media_buy_id', allowed_values: [1] },
      actual: { observed_cardinality: 1, observed_values: ['mb_1'] },
    });
    expect(grade(DISTINCT([2, 3]), parallel(buy('mb_1'), buy('mb_2'), buy('mb_1'))).passed).toBe(true);
  });

  it('fails on another cardinality: two media buys where one is allowed', () => {
    expect(grade(DISTINCT([1]), parallel(buy('mb_1'), buy('mb_2')))).toEqual({
      passed: false,
      json_pointer: '/media_buy_id',
      expected: { path: 'media_buy_id', allowed_values: [1] },
      actual: { observed_cardinality: 2, observed_values: ['mb_1', 'mb_2'] },
      error: '2 distinct value(s) at "media_buy_id" across 2 dispatches, where [1] are allowed',
    });
  });

  it('answers without a value add none: no value at all is cardinality 0', () => {
    expect(grade(DISTINCT([1]), parallel(buy('mb_1'), { error: 'timeout' })).passed).toBe(true);
    expect(grade(DISTINCT([1]), parallel({ error: 'timeout' }, buy(null)))).toMatchObject({
      passed: false,
      actual: { observed_cardinality: 0, observed_values: [] },
    });
  });

  it('a wildcard path counts the list each answer carries as one value', () => {
    const ids = (...list: string[]) => ({ data: { packages: list.map((package_id) => ({ package_id })) } });
    const written = { check: 'cross_response_count_distinct', path: 'packages[*].package_id', allowed_values: [1] };
    expect(grade(written, parallel(ids('a', 'b'), ids('a', 'b')))).toMatchObject({
      passed: true,
      json_pointer: '/packages',
    });
    expect(grade(written, parallel(ids('a', 'b'), ids('a'))).passed).toBe(false);
  });
});

describe('replay_not_cached_rate_limit', () => {
  const RATE_LIMITED = { adcp_error: { code: 'RATE_LIMITED', retry_after: 1 } };
  const trip = (replay: { data: unknown; errorCode?: string }): ResponseSet => ({
    contract: 'rate_limit_trip_runner',
    dispatches: [],
    trip: { data: RATE_LIMITED, errorCode: 'RATE_LIMITED' },
    replay,
  });
  const WRITTEN = { check: 'replay_not_cached_rate_limit' };

  it('passes when the replay is a success, or another error (the handler re-executed)', () => {
    expect(grade(WRITTEN, trip({ data: { media_buy_id: 'mb_1' } }))).toEqual({
      passed: true,
      json_pointer: '/replay_response',
    });
    expect(
      grade(WRITTEN, trip({ data: { errors: [{ code: 'BUDGET_EXHAUSTED' }] }, errorCode: 'BUDGET_EXHAUSTED' })),
    ).toEqual({ passed: true, json_pointer: '/replay_response/errors/0/code' });
  });

  it('fails when the replay is RATE_LIMITED again: the rate-limited answer was cached as the replay', () => {
    expect(grade(WRITTEN, trip({ data: RATE_LIMITED, errorCode: 'RATE_LIMITED' }))).toEqual({
      passed: false,
      json_pointer: '/replay_response/adcp_error/code',
      expected: { replay_error_code: 'not RATE_LIMITED: the handler re-executed (a success, or another error)' },
      actual: { trip_error_code: 'RATE_LIMITED', replay_error_code: 'RATE_LIMITED' },
      error:
        'rate_limit_response_cached_as_replay: the replay of the rate-limited idempotency_key, sent after its retry_after, answered RATE_LIMITED again — the rate-limited answer was cached as the replay for the key (security.mdx#idempotency rule 3: only successful responses are cached)',
    });
  });

  it('fails a set whose trip is not RATE_LIMITED: there was no rate-limited key to replay', () => {
    const set: ResponseSet = { ...trip({ data: {} }), trip: { data: { media_buy_id: 'mb_1' } } };
    expect(grade(WRITTEN, set)).toEqual({
      passed: false,
      json_pointer: '/trip_response',
      expected: { trip_error_code: 'RATE_LIMITED' },
      actual: { trip_error_code: null, replay_error_code: null },
      error: 'the trip answer is not RATE_LIMITED (no error code), so there is no rate-limited key to replay',
    });
    const other: ResponseSet = {
      ...trip({ data: {} }),
      trip: { data: { errors: [{ code: 'BUDGET_EXHAUSTED' }] }, errorCode: 'BUDGET_EXHAUSTED' },
    };
    expect(grade(WRITTEN, other)).toMatchObject({
      passed: false,
      json_pointer: '/trip_response/errors/0/code',
      error: 'the trip answer is not RATE_LIMITED (BUDGET_EXHAUSTED), so there is no rate-limited key to replay',
    });
  });
});

describe('outside the step of their contract', () => {
  it('each kind grades not_applicable: passed, with a note naming the contract and its block', () => {
    const sets: (ResponseSet | undefined)[] = [
      undefined,
      { contract: 'rate_limit_trip_runner', dispatches: [buy('mb_1'), buy('mb_2')] },
    ];
    for (const set of sets)
      for (const written of [EQUAL, DISTINCT([1])])
        expect(grade(written, set)).toEqual({
          passed: true,
          note: `${written.check} grades the response set of a step declaring requires_contract: parallel_dispatch_runner with a parallel_dispatch block, which the runner produced for this step; there is none — graded as not_applicable (storyboard-schema.yaml > Cross-response assertions)`,
        });
    for (const set of [undefined, parallel(buy('mb_1'), buy('mb_1'))])
      expect(grade({ check: 'replay_not_cached_rate_limit' }, set)).toMatchObject({
        passed: true,
        note: expect.stringContaining('requires_contract: rate_limit_trip_runner with a rate_limit_trip block'),
      });
  });
});

describe('what the roles read of an answer', () => {
  it('retry_after beside the error code wherever the code is, else at the top; not a number: none', () => {
    expect(retryAfterOf(exchange({ adcp_error: { code: 'RATE_LIMITED', retry_after: 2 } }))).toBe(2);
    expect(retryAfterOf(exchange({ errors: [{ code: 'IDEMPOTENCY_IN_FLIGHT', retry_after: 0.5 }] }))).toBe(0.5);
    expect(retryAfterOf(exchange({ adcp_error: { code: 'RATE_LIMITED' }, retry_after: 3 }))).toBe(3);
    expect(retryAfterOf(exchange({ adcp_error: { code: 'RATE_LIMITED', retry_after: '2' } }))).toBeUndefined();
    expect(retryAfterOf(exchange({ adcp_error: { code: 'RATE_LIMITED' } }))).toBeUndefined();
    // Infinity or NaN is no wait; a code found outside any object (no error at all) leaves the top of the data.
    expect(retryAfterOf(exchange({ adcp_error: { code: 'RATE_LIMITED', retry_after: Infinity } }))).toBeUndefined();
    expect(retryAfterOf(exchange({ adcp_error: { code: 'RATE_LIMITED', retry_after: Number.NaN } }))).toBeUndefined();
    expect(retryAfterOf(exchange({ retry_after: 4 }))).toBe(4);
    expect(retryAfterOf(exchange(undefined))).toBeUndefined();
    // The retry_after beside the code, not another one at the same depth elsewhere.
    expect(
      retryAfterOf(exchange({ errors: [{ code: 'X', retry_after: 1 }, { retry_after: 9 }], retry_after: 7 })),
    ).toBe(1);
  });

  it('a dispatch is its data and error code, or the transport failure', () => {
    expect(dispatchOf(exchange({ adcp_error: { code: 'RATE_LIMITED' } }))).toEqual({
      data: { adcp_error: { code: 'RATE_LIMITED' } },
      errorCode: 'RATE_LIMITED',
    });
    expect(dispatchOf(exchange(undefined, { transportError: 'timeout' }), true)).toEqual({
      error: 'timeout',
      timedOut: true,
    });
    expect(dispatchOf(exchange(undefined, { transportError: 'reset' }))).toEqual({ error: 'reset' });
    expect(dispatchOf(exchange({ media_buy_id: 'mb_1' }))).toEqual({ data: { media_buy_id: 'mb_1' } });
    expect(dispatchOf(exchange({ media_buy_id: 'mb_1' }), true)).toEqual({
      data: { media_buy_id: 'mb_1' },
      timedOut: true,
    });
  });

  it("the trip's structured result names the test kit's three objects, with the replay's context echo", () => {
    expect(tripResult({ a: 1 }, { b: 2, context: { c: 3 } }, { task: 't', attempt: 4, idempotency_key: 'k' })).toEqual({
      trip_response: { a: 1 },
      replay_response: { b: 2, context: { c: 3 } },
      rate_limited_request: { task: 't', attempt: 4, idempotency_key: 'k' },
      context: { c: 3 },
    });
    // No context echo in the replay (or no replay object at all): no context key.
    for (const replay of [{ b: 2 }, 'text', undefined])
      expect(tripResult({ a: 1 }, replay, { task: 't', attempt: 1, idempotency_key: 'k' })).not.toHaveProperty(
        'context',
      );
  });
});
