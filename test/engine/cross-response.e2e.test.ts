/**
 * AdCP 3.1's two runner contracts that produce response sets, against the real fixture agent over real sockets:
 * `parallel_dispatch_runner` (src/roles/parallel-dispatch/) and `rate_limit_trip_runner` (src/roles/rate-limit-trip/),
 * with the cross-response kinds they feed (src/checks/cross-response.ts). Each rule holds on a conformant endpoint and
 * fails on one that breaks it (fixtures/agent/idempotency-pressure.mjs); the not_applicable paths skip with the
 * contract's reason and detail. What the agent received is read from its call log for the run's session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent, type FixtureCall } from '../../fixtures/agent/server.mjs';
import type { StepOutcome, StepResult, ValidationResult } from '../../src/model/records.js';
import { phasedStoryboard, runInline, type InlineRunOptions, type InlineStep } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

interface Ran {
  steps: Record<string, StepOutcome>;
  /** The create_media_buy calls of the run's session, as the agent received them. */
  creates(): FixtureCall[];
}

let sessions = 0;

/** Runs the steps on a fresh sandbox of the agent exhibiting `behaviours`. */
async function run(
  steps: InlineStep[],
  options: InlineRunOptions & { behaviours?: string[]; phase?: Record<string, unknown> } = {},
): Promise<Ran> {
  const session = `xr${++sessions}`;
  const url = options.protocol === 'a2a' ? agent.a2aUrlFor : agent.urlFor;
  const outcomes = await runInline(
    phasedStoryboard([{ id: 'main', steps, ...options.phase }]),
    url.call(agent, [...(options.behaviours ?? []), `session_${session}`]),
    options,
  );
  return {
    steps: outcomes,
    creates: () => agent.calls.filter((c) => c.session === session && c.tool === 'create_media_buy'),
  };
}

const result = (r: Ran, id: string): StepResult => r.steps[id]!.result;
const check = (r: Ran, id: string, kind: string): ValidationResult | undefined =>
  result(r, id).validations.find((v) => v.check === kind);
const keysOf = (calls: FixtureCall[]) => calls.map((c) => c.arguments.idempotency_key);

/** A bookable create_media_buy request from the fixture catalogue. */
const MEDIA_BUY = {
  account: { brand: { domain: 'fixture-brand.example' }, operator: 'pinnacle-agency.example' },
  brand: { domain: 'fixture-brand.example' },
  start_time: 'asap',
  end_time: '2099-07-31T23:59:59Z',
  packages: [{ product_id: 'prod_display_ros', pricing_option_id: 'po_display_ros_cpm', budget: 5000 }],
};

/** universal/idempotency.yaml's create_media_buy_concurrent, as written there (count 2, one key). */
const concurrent = (extra: Partial<InlineStep> = {}): InlineStep => ({
  id: 'concurrent',
  task: 'create_media_buy',
  stateful: true,
  requires_contract: 'parallel_dispatch_runner',
  parallel_dispatch: { count: 2, same_idempotency_key: true, barrier_timeout_ms: 5000 },
  sample_request: {
    ...MEDIA_BUY,
    idempotency_key: '$generate:uuid_v4#concurrent_key',
    context: { correlation_id: 'idempotency--create_media_buy_concurrent' },
  },
  validations: [
    { check: 'cross_response_count_distinct', path: 'media_buy_id', allowed_values: [1] },
    { check: 'cross_response_field_equal', path: 'media_buy_id' },
  ],
  ...extra,
});

describe('parallel_dispatch_runner: N requests at once, graded on the resolved set', () => {
  it('an agent that books a key once (its concurrent retry gets the cached answer) passes both cross-response checks', async () => {
    const r = await run([concurrent()]);
    expect(r.steps.concurrent!.status).toBe('passed');
    // Two calls, one key: the rule-9 test, not two requests.
    expect(r.creates()).toHaveLength(2);
    expect(new Set(keysOf(r.creates())).size).toBe(1);
    const distinct = check(r, 'concurrent', 'cross_response_count_distinct')!;
    expect(distinct).toMatchObject({
      passed: true,
      json_pointer: '/media_buy_id',
      expected: { path: 'media_buy_id', allowed_values: [1] },
      actual: { observed_cardinality: 1, observed_values: [expect.stringMatching(/^mb_/)] },
    });
    const [id] = (distinct.actual as { observed_values: string[] }).observed_values;
    expect(check(r, 'concurrent', 'cross_response_field_equal')).toMatchObject({
      passed: true,
      expected: { path: 'media_buy_id' },
      actual: { observed_values: [id, id] },
    });
  });

  it('an agent that books the key twice under concurrency fails both, with what it answered', async () => {
    const r = await run([concurrent()], { behaviours: ['idempotency_race'] });
    expect(r.steps.concurrent!.status).toBe('failed');
    expect(new Set(keysOf(r.creates())).size).toBe(1);
    const distinct = check(r, 'concurrent', 'cross_response_count_distinct')!;
    expect(distinct.passed).toBe(false);
    expect(distinct.actual).toMatchObject({ observed_cardinality: 2 });
    expect(distinct.error).toMatch(/^2 distinct value\(s\) at "media_buy_id" across 2 dispatches/);
    const equal = check(r, 'concurrent', 'cross_response_field_equal')!;
    expect(equal.passed).toBe(false);
    expect(equal.error).toMatch(
      /^the dispatches answered different values at "media_buy_id": dispatch 1 "mb_\w+", dispatch 2 "mb_\w+"$/,
    );
    // A failed validation carries the request and response the contract requires.
    expect(equal.request).toMatchObject({ operation: 'create_media_buy' });
  });

  it('IDEMPOTENCY_IN_FLIGHT is resolved: the dispatch waits retry_after and resends the same key, then the set converges', async () => {
    const started = Date.now();
    const r = await run([concurrent()], { behaviours: ['in_flight_ms_300'] });
    expect(r.steps.concurrent!.status).toBe('passed');
    // Two dispatches and one resend of the one refused IDEMPOTENCY_IN_FLIGHT, all with one key.
    expect(r.creates()).toHaveLength(3);
    expect(new Set(keysOf(r.creates())).size).toBe(1);
    // retry_after: 1 (the least a seller may ask) was waited before the resend.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(check(r, 'concurrent', 'cross_response_count_distinct')!.actual).toMatchObject({ observed_cardinality: 1 });
  });

  it('over A2A too: the same role, the same resolution', async () => {
    const r = await run([concurrent()], { behaviours: ['in_flight_ms_300'], protocol: 'a2a' });
    expect(r.steps.concurrent!.status).toBe('passed');
    expect(r.creates()).toHaveLength(3);
  });

  it('by default the in-flight budget is 60 s, past a shorter step timeout (parallel-dispatch-runner.yaml: "default 60s")', async () => {
    // The second dispatch is asked to come back in 3 s, past the 3 s call timeout but within the 60 s budget.
    const r = await run([concurrent()], { behaviours: ['in_flight_ms_2500'], timeoutMs: 3000 });
    expect(r.steps.concurrent!.status).toBe('passed');
    expect(r.creates()).toHaveLength(3);
  });

  it('an in-flight answer whose retry_after runs past the budget grades step_timeout, not a rule-9 violation', async () => {
    // The agent holds the key 2.5 s; the budget is 2 s. The second dispatch is asked to come back in 2–3 s (the seconds
    // the hold has left when it arrives, however late the machine sends it), which cannot fit: no resend.
    const r = await run([concurrent()], { behaviours: ['in_flight_ms_2500'], timeoutMs: 3000, inFlightBudgetMs: 2000 });
    const step = result(r, 'concurrent');
    expect(r.steps.concurrent!.status).toBe('failed');
    expect(step.error).toMatch(/^step_timeout: the parallel dispatches did not resolve within the step's 2000 ms/);
    expect(step.validations.map((v) => v.check)).toEqual(['step_timeout']);
    expect(step.validations[0]).toMatchObject({ passed: false, expected: { resolved_within_ms: 2000 } });
    // Which dispatch the agent books and which it refuses is the agent's race, not the runner's order: one of the two
    // is refused, and its retry_after cannot fit.
    expect((step.validations[0]!.actual as { unresolved: string[] }).unresolved).toContainEqual(
      expect.stringMatching(
        /^dispatch [12]: still IDEMPOTENCY_IN_FLIGHT after 1 answer\(s\); its retry_after \([23] s\) runs past the step's 2000 ms$/,
      ),
    );
    // No resend: the wait it asked for could not fit in the step's budget.
    expect(r.creates()).toHaveLength(2);
  });

  it("the step's other validations and captures are graded on the first dispatch's answer", async () => {
    const r = await run(
      [
        concurrent({
          validations: [
            ...(concurrent().validations as object[]),
            // Not `replayed`: the default agent books whichever dispatch reaches it first and replays it to the other, a
            // race between the two requests that the runner's dispatch order does not decide.
            { check: 'field_value', path: 'context.correlation_id', value: 'idempotency--create_media_buy_concurrent' },
          ],
          context_outputs: [{ name: 'concurrent_buy', path: 'media_buy_id' }],
        }),
        {
          id: 'read_back',
          task: 'get_media_buys',
          sample_request: { media_buy_ids: ['$context.concurrent_buy'] },
          validations: [{ check: 'field_present', path: 'media_buys[0].media_buy_id' }],
        },
      ],
      {},
    );
    expect(r.steps.concurrent!.status).toBe('passed');
    expect(result(r, 'concurrent').validations.filter((v) => !v.passed)).toEqual([]);
    // The record is the first dispatch's exchange; its capture is what the next step reads back.
    expect(result(r, 'concurrent').request?.payload).toEqual(r.creates()[0]!.arguments);
    expect(r.steps.read_back!.status).toBe('passed');
  });

  it('same_idempotency_key: false sends each dispatch with a key of its own', async () => {
    const r = await run([
      concurrent({
        parallel_dispatch: { count: 3, same_idempotency_key: false },
        validations: [{ check: 'cross_response_count_distinct', path: 'media_buy_id', allowed_values: [3] }],
      }),
    ]);
    expect(r.steps.concurrent!.status).toBe('passed');
    expect(new Set(keysOf(r.creates())).size).toBe(3);
  });

  it('out of scope for the run, the step grades not_applicable naming the contract, and nothing is sent', async () => {
    const r = await run([concurrent()], { runnerContracts: { parallel_dispatch_runner: false } });
    expect(r.steps.concurrent!.status).toBe('skipped');
    expect(result(r, 'concurrent').skip).toEqual({
      reason: 'not_applicable',
      detail:
        'create_media_buy with parallel_dispatch requires the test-kit contract "parallel_dispatch_runner", which is not in scope for this run (run setting runnerContracts.parallel_dispatch_runner: false)',
    });
    expect(r.creates()).toHaveLength(0);
  });

  it('a step without the contract sends once, and its cross-response checks grade not_applicable (passed, with a note)', async () => {
    const r = await run([concurrent({ requires_contract: undefined, parallel_dispatch: undefined })]);
    expect(r.steps.concurrent!.status).toBe('passed');
    expect(r.creates()).toHaveLength(1);
    for (const kind of ['cross_response_count_distinct', 'cross_response_field_equal'])
      expect(check(r, 'concurrent', kind)).toMatchObject({
        passed: true,
        note: expect.stringMatching(/requires_contract: parallel_dispatch_runner with a parallel_dispatch block/),
      });
  });

  it('a step without same_idempotency_key fails before sending: the test kit requires it', async () => {
    const r = await run([concurrent({ parallel_dispatch: { count: 2 } })]);
    expect(r.steps.concurrent!.status).toBe('failed');
    expect(result(r, 'concurrent').error).toMatch(/^parallel_dispatch\.same_idempotency_key is required/);
    expect(r.creates()).toHaveLength(0);
  });
});

/** universal/idempotency.yaml's expect_rate_limit_not_replayed, as written there but for max_attempts. */
const trip = (extra: Partial<InlineStep> = {}, block: Record<string, unknown> = {}): InlineStep => ({
  id: 'trip',
  task: 'expect_rate_limit_not_replayed',
  requires_contract: 'rate_limit_trip_runner',
  rate_limit_trip: {
    trip_target_task: 'create_media_buy',
    max_attempts: 50,
    replay_max_wait_seconds: 30,
    trip_target_sample_request: { ...MEDIA_BUY, context: { correlation_id: 'idempotency--rate_limit_trip_request' } },
    ...block,
  },
  validations: [{ check: 'replay_not_cached_rate_limit' }],
  ...extra,
});

/** The run as open-run.ts makes it (its transport waits out RATE_LIMITED answers), the contract opted in. */
const inScope: InlineRunOptions = { rateLimited: true, runnerContracts: { rate_limit_trip_runner: true } };

describe('rate_limit_trip_runner: trip the limiter, replay the tripped key after retry_after', () => {
  it('an agent that does not cache the RATE_LIMITED answer passes: the replay books', async () => {
    const r = await run(
      [
        trip({
          validations: [
            { check: 'replay_not_cached_rate_limit' },
            // The test kit's structured result, which validations target.
            { check: 'field_value', path: 'trip_response.adcp_error.code', value: 'RATE_LIMITED' },
            { check: 'field_present', path: 'replay_response.media_buy_id' },
            { check: 'field_value', path: 'rate_limited_request.attempt', value: 4 },
          ],
        }),
      ],
      { ...inScope, behaviours: ['insert_limit_3'] },
    );
    expect(r.steps.trip!.status).toBe('passed');
    expect(check(r, 'trip', 'replay_not_cached_rate_limit')).toMatchObject({
      passed: true,
      json_pointer: '/replay_response',
    });
    // Three booked, the fourth tripped; the replay is the fourth's key and payload, with its own correlation id.
    // (Over the run's own transport the fourth would have been waited out and resent, and the trip never seen.)
    const creates = r.creates();
    expect(creates).toHaveLength(5);
    expect(new Set(keysOf(creates.slice(0, 4))).size).toBe(4);
    expect(creates[4]!.arguments.idempotency_key).toBe(creates[3]!.arguments.idempotency_key);
    expect(creates[4]!.arguments.context).toEqual({ correlation_id: 'idempotency--rate_limit_trip_request:replay' });
    const { context: _a, ...tripped } = creates[3]!.arguments;
    const { context: _b, ...replayed } = creates[4]!.arguments;
    expect(replayed).toEqual(tripped);
    expect(result(r, 'trip').request?.payload).toEqual(creates[4]!.arguments);
  });

  it("an agent that caches the RATE_LIMITED answer as the key's replay fails: rate_limit_response_cached_as_replay", async () => {
    const r = await run([trip()], { ...inScope, behaviours: ['insert_limit_3', 'insert_limit_cached'] });
    expect(r.steps.trip!.status).toBe('failed');
    const verdict = check(r, 'trip', 'replay_not_cached_rate_limit')!;
    expect(verdict).toMatchObject({
      passed: false,
      json_pointer: '/replay_response/adcp_error/code',
      actual: { trip_error_code: 'RATE_LIMITED', replay_error_code: 'RATE_LIMITED' },
    });
    expect(verdict.error).toMatch(/^rate_limit_response_cached_as_replay: /);
    // The step is graded by the check, not failed as an error answer: the replay's error is the check's to judge.
    expect(result(r, 'trip').error).toBeUndefined();
    expect(r.creates()).toHaveLength(5);
  });

  it('no trip within max_attempts: not_applicable, detail exactly rate_limit_not_triggered, no validations', async () => {
    const r = await run([trip()], inScope);
    expect(r.steps.trip!.status).toBe('skipped');
    const step = result(r, 'trip');
    expect(step.skip).toEqual({ reason: 'not_applicable', detail: 'rate_limit_not_triggered' });
    expect(step.validations).toEqual([]);
    expect(r.creates()).toHaveLength(50);
    expect(new Set(keysOf(r.creates())).size).toBe(50);
  });

  it('out of scope by default: not_applicable naming the contract, and nothing is sent', async () => {
    const r = await run([trip()], { rateLimited: true, behaviours: ['insert_limit_3'] });
    expect(r.steps.trip!.status).toBe('skipped');
    expect(result(r, 'trip').skip).toEqual({
      reason: 'not_applicable',
      detail:
        'expect_rate_limit_not_replayed requires the test-kit contract "rate_limit_trip_runner", which is not in scope for this run: it sends up to 50 create_media_buy requests to trip the agent\'s rate limiter, so it runs only when the operator names a sandbox endpoint for it (run setting runnerContracts.rate_limit_trip_runner: true)',
    });
    expect(r.creates()).toHaveLength(0);
  });

  it('a RATE_LIMITED answer without retry_after fails missing_retry_after, and no replay is sent', async () => {
    const r = await run([trip()], { ...inScope, behaviours: ['insert_limit_2', 'insert_limit_no_retry_after'] });
    expect(r.steps.trip!.status).toBe('failed');
    const step = result(r, 'trip');
    expect(step.error).toMatch(/^missing_retry_after: attempt 3's RATE_LIMITED answer carries no positive retry_after/);
    expect(step.validations).toMatchObject([
      { check: 'missing_retry_after', passed: false, json_pointer: '/adcp_error/retry_after', actual: null },
    ]);
    expect(r.creates()).toHaveLength(3);
  });

  it('a retry_after above replay_max_wait_seconds fails replay_wait_exceeded, and no replay is sent', async () => {
    const r = await run([trip()], { ...inScope, behaviours: ['insert_limit_2', 'insert_limit_retry_after_60'] });
    expect(r.steps.trip!.status).toBe('failed');
    const step = result(r, 'trip');
    expect(step.error).toMatch(/^replay_wait_exceeded: the RATE_LIMITED answer asks for 60 s, more than .* \(30 s\)/);
    expect(step.validations).toMatchObject([
      { check: 'replay_wait_exceeded', expected: { retry_after_at_most: 30 }, actual: 60 },
    ]);
    expect(r.creates()).toHaveLength(3);
  });

  it('a burst the agent refuses with another error stops there and fails the step', async () => {
    const r = await run([trip()], { ...inScope, behaviours: ['error_response@create_media_buy'] });
    expect(r.steps.trip!.status).toBe('failed');
    expect(result(r, 'trip').error).toMatch(
      /^attempt 1 of the burst: the agent answered create_media_buy with the error INVALID_REQUEST/,
    );
    expect(r.creates()).toHaveLength(1);
  });

  it('an agent without the target task: missing_tool citing it', async () => {
    const r = await run([trip()], { ...inScope, behaviours: ['without@create_media_buy'] });
    expect(result(r, 'trip').skip).toMatchObject({
      reason: 'missing_tool',
      detail: expect.stringMatching(/^the agent does not advertise the tool "create_media_buy" \(rate_limit_trip/),
    });
  });

  it("max_attempts outside the test kit's 50–500 fails before sending", async () => {
    const r = await run([trip({}, { max_attempts: 10 })], inScope);
    expect(result(r, 'trip').error).toMatch(/^rate_limit_trip\.max_attempts must be an integer from 50 to 500/);
    expect(r.creates()).toHaveLength(0);
  });

  it("the target request is built as a step's own: a placeholder that does not resolve fails the step, nothing sent", async () => {
    const r = await run(
      [
        // Its capture does not resolve, so the step fails and captures nothing.
        {
          id: 'account',
          task: 'get_adcp_capabilities',
          context_outputs: [{ name: 'account_id', path: 'no_such_field' }],
          validations: [],
        },
        trip({}, { trip_target_sample_request: { ...MEDIA_BUY, account: { account_id: '$context.account_id' } } }),
      ],
      // A warning the engine gathered for the step before the role ran it: on the record once.
      { ...inScope, phase: { skip_if: "agent.mode == 'x'" } },
    );
    const step = result(r, 'trip');
    expect(r.steps.trip!.status).toBe('failed');
    expect(step.warnings).toEqual([expect.stringMatching(/^phase "main": skip_if "agent.mode == 'x'" is not/)]);
    expect(step.validations).toMatchObject([{ check: 'unresolved_substitution', expected: ['$context.account_id'] }]);
    expect(step.request).toMatchObject({ operation: 'create_media_buy' });
    expect(r.creates()).toHaveLength(0);
  });

  it('replay_not_cached_rate_limit outside the trip step grades not_applicable', async () => {
    const r = await run([concurrent({ validations: [{ check: 'replay_not_cached_rate_limit' }] })]);
    expect(r.steps.concurrent!.status).toBe('passed');
    expect(check(r, 'concurrent', 'replay_not_cached_rate_limit')).toMatchObject({
      passed: true,
      note: expect.stringMatching(/requires_contract: rate_limit_trip_runner with a rate_limit_trip block/),
    });
  });
});
