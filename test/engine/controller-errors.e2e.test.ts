/**
 * comply_test_controller error answers delivered as a seller sends them: the ControllerError arm `{ success: false,
 * error, error_detail }` on a plain MCP result (no isError) — the fixture agent's `strict` behaviour. They are error
 * answers by the runner's one rule (src/model/answer-error.ts): an `expect_error` step passes on them, `error_code`
 * reads their `error`, a step that does not expect them fails naming the code, and the failure headline never says
 * "success" and "error" about the same answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import type { StepOutcome, StepResult } from '../../src/model/records.js';
import { formatStepFailure } from '../../src/report/format.js';
import { phasedStoryboard, runInline, type InlineStep } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

let sessions = 0;

/** Runs the steps (one phase) on a fresh sandbox of the agent; `strict` answers controller failures without isError. */
async function run(steps: InlineStep[], behaviours = ['strict']): Promise<Record<string, StepOutcome>> {
  return runInline(
    phasedStoryboard([{ id: 'main', steps }]),
    agent.urlFor([...behaviours, `session_ctlerr${++sessions}`]),
  );
}

/** A scenario the fixture controller does not implement: it answers UNKNOWN_SCENARIO. */
const unknownScenario = { scenario: 'force_account_status', params: { account_id: 'acct_x', status: 'suspended' } };
/** A scenario it implements, on a media buy that does not exist: NOT_FOUND. */
const notFound = { scenario: 'force_media_buy_status', params: { media_buy_id: 'mb_never_created', status: 'active' } };
const controller = (id: string, sample_request: unknown, extra: Partial<InlineStep> = {}): InlineStep => ({
  id,
  task: 'comply_test_controller',
  sample_request,
  ...extra,
});

/** What the agent sent: the MCP result as the transport recorded it. */
const answer = (outcome: StepOutcome) =>
  outcome.result.response!.payload as { isError: boolean; structuredContent: Record<string, unknown> };

describe('a controller success: false on a plain result is an error answer', () => {
  it('an expect_error step passes on it', async () => {
    const { unknown } = await run([
      controller('unknown', unknownScenario, {
        expect_error: true,
        validations: [{ check: 'field_value', path: 'success', value: false }],
      }),
    ]);
    // The shape under test: not isError, the ControllerError arm in structuredContent.
    expect(answer(unknown!)).toMatchObject({
      isError: false,
      structuredContent: { success: false, error: 'UNKNOWN_SCENARIO' },
    });
    expect(unknown!.result.extraction.path).toBe('structured_content');
    expect(unknown!.status, JSON.stringify(unknown!.result.validations, null, 1)).toBe('passed');
    expect(unknown!.result.validations.map((v) => v.check)).not.toContain('expect_error');
  });

  it("error_code reads the controller's error", async () => {
    const { right, wrong } = await run([
      controller('right', unknownScenario, {
        expect_error: true,
        validations: [{ check: 'error_code', value: 'UNKNOWN_SCENARIO' }],
      }),
      controller('wrong', unknownScenario, {
        expect_error: true,
        validations: [{ check: 'error_code', value: 'NOT_FOUND' }],
      }),
    ]);
    expect(right!.status).toBe('passed');
    expect(right!.result.validations[0]).toMatchObject({ check: 'error_code', passed: true, json_pointer: '/error' });
    expect(wrong!.status).toBe('failed');
    expect(wrong!.result.validations.filter((v) => !v.passed).map((v) => v.check)).toEqual(['error_code']);
    expect(wrong!.result.validations[0]).toMatchObject({
      passed: false,
      json_pointer: '/error',
      expected: 'NOT_FOUND',
      actual: 'UNKNOWN_SCENARIO',
    });
    const { headline } = formatStepFailure(wrong!.result, { cwd: '/virtual' });
    expect(headline).toBe(
      'error_code at /error: expected "NOT_FOUND", got "UNKNOWN_SCENARIO" — inline.storyboard.yaml:23:13',
    );
  });

  it('an expect_error step fails on success: true, and its headline says success only', async () => {
    const { listed } = await run([controller('listed', { scenario: 'list_scenarios' }, { expect_error: true })]);
    expect(answer(listed!).structuredContent).toMatchObject({ success: true });
    expect(listed!.status).toBe('failed');
    expect(listed!.result.validations.find((v) => v.check === 'expect_error')).toMatchObject({
      passed: false,
      json_pointer: null,
      expected: 'error',
      actual: 'success',
      error: 'the step expects the agent to reject the request, but it answered with success',
    });
    const { headline } = formatStepFailure(listed!.result, { cwd: '/virtual' });
    expect(headline).toBe('expect_error: expected "error", got "success" — inline.storyboard.yaml:7:9');
  });

  it('a controller step that does not expect it fails naming the code; UNKNOWN_SCENARIO there is a coverage gap', async () => {
    const { missing } = await run([controller('missing', notFound)]);
    expect(answer(missing!)).toMatchObject({
      isError: false,
      structuredContent: { success: false, error: 'NOT_FOUND' },
    });
    expect(missing!.status).toBe('failed');
    expect(missing!.result.error).toBe(
      `the agent returned an error NOT_FOUND: ${answer(missing!).structuredContent.error_detail}`,
    );
    // controller.ts's UNKNOWN_SCENARIO verdict reads the same rule: the storyboard does not apply to this agent.
    const { unknown, after } = await run([
      controller('unknown', unknownScenario),
      controller('after', { scenario: 'list_scenarios' }),
    ]);
    expect([unknown!.status, unknown!.result.skip?.reason, after!.status, after!.result.skip?.reason]).toEqual([
      'skipped',
      'not_applicable',
      'skipped',
      'not_applicable',
    ]);
  });

  it('graded the same as the isError form the fixture agent sends without strict', async () => {
    const steps = [
      controller('expected', unknownScenario, {
        expect_error: true,
        validations: [{ check: 'error_code', value: 'UNKNOWN_SCENARIO' }],
      }),
      controller('listed', { scenario: 'list_scenarios' }, { expect_error: true }),
      controller('missing', notFound),
    ];
    const plain = await run(steps);
    const isError = await run(steps, []);
    expect(answer(isError.missing!).isError).toBe(true);
    const graded = (r: Record<string, StepOutcome>) =>
      Object.fromEntries(
        Object.entries(r).map(([id, o]) => [
          id,
          [o.status, o.result.error ?? null, o.result.validations.filter((v) => !v.passed).map((v) => v.check)],
        ]),
      );
    expect(graded(plain)).toEqual(graded(isError));
  });
});

describe('the failure headline', () => {
  it('never adds "the agent answered with error X" to a failed expect_error, whatever the record carries', () => {
    const record: StepResult = {
      storyboard_id: 'sb',
      phase_id: 'main',
      step_id: 'probe',
      task: 'comply_test_controller',
      passed: false,
      duration_ms: 1,
      extraction: { path: 'structured_content' },
      response: {
        transport: 'mcp',
        payload: { isError: false, structuredContent: { success: false, error: 'UNKNOWN_SCENARIO' } },
      },
      validations: [
        {
          check: 'expect_error',
          passed: false,
          description: 'expect error',
          json_pointer: null,
          expected: 'error',
          actual: 'success',
          schema_id: null,
          schema_url: null,
          source: { file: '/virtual/sb.yaml', line: 3, column: 5 },
        },
      ],
    };
    expect(formatStepFailure(record, { cwd: '/virtual' }).headline).toBe(
      'expect_error: expected "error", got "success" — sb.yaml:3:5',
    );
    // A check that fails on an error answer the step did not expect names the code the same rule found.
    const missing = {
      ...record.validations[0]!,
      check: 'field_present',
      json_pointer: '/scenarios',
      expected: undefined,
      actual: null,
    };
    expect(formatStepFailure({ ...record, validations: [missing] }, { cwd: '/virtual' }).headline).toBe(
      'field_present at /scenarios: not present (the agent answered with error UNKNOWN_SCENARIO) — sb.yaml:3:5',
    );
    // The same shape from another task is that task's field, not an error.
    expect(
      formatStepFailure(
        { ...record, task: 'provide_performance_feedback', validations: [missing] },
        { cwd: '/virtual' },
      ).headline,
    ).toBe('field_present at /scenarios: not present — sb.yaml:3:5');
  });
});
