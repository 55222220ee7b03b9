/**
 * gradeStep (src/engine/grade.ts) as a pure function: the runner's own expect_error verdict (with the advisory code
 * beside a success), the error sentence of an answer the step did not expect to be an error, the invariant records'
 * placement, a check that throws, several unresolved placeholders in one expected value, and the context_outputs
 * failures of an async task (completed without the value, timed out, failed).
 */
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/checks/index.js';
import { gradeStep, type GradeInput } from '../../src/engine/grade.js';
import type { TaskCompletion } from '../../src/engine/polling.js';
import type { SchemaRegistry } from '../../src/schemas/registry.js';
import type { Step } from '../../src/model/storyboard.js';

const loc = { line: 7, column: 3 };
const request = { transport: 'mcp', operation: 'get_products', payload: {} } as const;

function exchange(data: unknown, over: Partial<Exchange> = {}): Exchange {
  return {
    request,
    response: { transport: 'mcp', payload: { structuredContent: data } },
    extraction: { path: 'structured_content' },
    data,
    ...over,
  } as Exchange;
}

function input(step: Partial<Step>, ex: Exchange, over: Partial<GradeInput> = {}): GradeInput {
  return {
    file: '/sb.yaml',
    step: { id: 's', task: 'get_products', loc, validations: [], ...step } as Step,
    task: 'get_products',
    exchange: ex,
    scope: { context: new Map(), priorSteps: new Map() },
    ...over,
  };
}

describe('gradeStep: expect_error answered with success', () => {
  it("fails the step with the runner's expect_error validation, at the step", () => {
    const ex = exchange({ products: [] });
    const graded = gradeStep(input({ expect_error: true } as Partial<Step>, ex));
    expect(graded.passed).toBe(false);
    expect(graded.validations.find((v) => v.check === 'expect_error')).toEqual({
      check: 'expect_error',
      description: 'expect error',
      schema_id: null,
      schema_url: null,
      passed: false,
      json_pointer: null,
      expected: 'error',
      actual: 'success',
      error: 'the step expects the agent to reject the request, but it answered with success',
      source: { file: '/sb.yaml', line: 7, column: 3 },
      request: ex.request,
      response: ex.response,
    });
  });

  it('says where the code beside a success payload sits (a warning, not a rejection)', () => {
    const graded = gradeStep(
      input(
        { expect_error: true } as Partial<Step>,
        exchange({
          products: [{ product_id: 'p' }],
          errors: [{ code: 'PRODUCT_LIMITED', message: 'some products hidden' }],
        }),
      ),
    );
    expect(graded.validations.find((v) => v.check === 'expect_error')!.error).toBe(
      'the step expects the agent to reject the request, but it answered with success (the code at errors[0].code sits beside a success payload: a warning, not a rejection)',
    );
  });
});

describe('gradeStep: an error answer the step did not expect', () => {
  it('names the code and the message when the answer has them', () => {
    expect(
      gradeStep(input({}, exchange({ adcp_error: { code: 'INVALID_REQUEST', message: 'bad budget' } }))).error,
    ).toBe('the agent returned an error INVALID_REQUEST: bad budget');
    const rpc = exchange({ message: 'Invalid params' }, {
      extraction: { path: 'error' },
      rpcError: { code: -32602, message: 'Invalid params' },
    } as Partial<Exchange>);
    expect(gradeStep(input({}, rpc)).error).toBe('the agent returned an error -32602: Invalid params');
  });

  it('leaves out what it does not have', () => {
    const noCode = exchange({ message: 'it broke' }, { extraction: { path: 'error' } } as Partial<Exchange>);
    const graded = gradeStep(input({}, noCode));
    expect(graded).toMatchObject({ passed: false, error: 'the agent returned an error: it broke' });
    expect(gradeStep(input({}, exchange({}, { extraction: { path: 'error' } } as Partial<Exchange>))).error).toBe(
      'the agent returned an error',
    );
  });
});

describe('gradeStep: invariants', () => {
  it('records each invariant verdict at the step, with the exchange only when it failed', () => {
    const ex = exchange({ products: [], context: { trace: 't' } }, {
      request: { ...request, payload: { context: { trace: 't' } } },
    } as Partial<Exchange>);
    const invariants = gradeStep(input({}, ex)).validations.filter((v) => v.check === 'invariant');
    expect(invariants).toEqual([
      {
        check: 'invariant',
        passed: true,
        description: 'context.echo: the answer echoes the request context verbatim and never invents one',
        json_pointer: '/context',
        schema_id: null,
        schema_url: null,
        source: { file: '/sb.yaml', line: 7, column: 3 },
      },
      {
        check: 'invariant',
        passed: true,
        description:
          'context.no_secret_echo: the answer carries no credential of the run and no credential-named field',
        json_pointer: null,
        schema_id: null,
        schema_url: null,
        source: { file: '/sb.yaml', line: 7, column: 3 },
      },
    ]);
  });
});

describe('gradeStep: a check that throws', () => {
  it("fails that validation with the thrown message, and keeps response_schema's schema identity unset", () => {
    const schemas = {
      responseSchemaFor() {
        throw new Error('the schema index is unreadable');
      },
    } as unknown as SchemaRegistry;
    const ex = exchange({ products: [] });
    const graded = gradeStep(
      input({ validations: [{ check: 'response_schema', loc: { line: 9, column: 5 } }] } as Partial<Step>, ex, {
        schemas,
      }),
    );
    expect(graded.passed).toBe(false);
    expect(graded.validations[0]).toEqual({
      check: 'response_schema',
      description: 'response_schema',
      passed: false,
      json_pointer: null,
      expected: null,
      actual: null,
      error: 'the schema index is unreadable',
      source: { file: '/sb.yaml', line: 9, column: 5 },
      request: ex.request,
      response: ex.response,
    });
    expect('schema_id' in graded.validations[0]!).toBe(false);
    const thrownString = {
      responseSchemaFor: () => {
        throw 'no index';
      },
    } as unknown as SchemaRegistry;
    expect(
      gradeStep(
        input({ validations: [{ check: 'response_schema', loc }] } as Partial<Step>, ex, { schemas: thrownString }),
      ).validations[0]!.error,
    ).toBe('no index');
  });
});

describe('gradeStep: several unresolved placeholders in one expected value', () => {
  const step = {
    validations: [
      {
        check: 'field_value',
        path: 'products[0].product_id',
        allowed_values: ['$context.first_id', '$context.second_id'],
        loc,
      },
    ],
  } as Partial<Step>;

  it('without the earlier steps: one sentence naming them all', () => {
    expect(gradeStep(input(step, exchange({ products: [] }))).validations[0]!.error).toBe(
      '$context.first_id, $context.second_id in the expected value did not resolve: the step that captures it failed, was skipped, or never ran',
    );
  });

  it('with them: one line per placeholder', () => {
    expect(gradeStep(input(step, exchange({ products: [] }), { earlier: [] })).validations[0]!.error).toBe(
      [
        '$context.first_id in the expected value did not resolve: no earlier step captures "first_id" (context_outputs), and the storyboard\'s context does not set it',
        '$context.second_id in the expected value did not resolve: no earlier step captures "second_id" (context_outputs), and the storyboard\'s context does not set it',
      ].join('\n'),
    );
  });
});

describe('gradeStep: context_outputs of an async task', () => {
  const outputs = {
    context_outputs: [{ name: 'media_buy_id', path: 'task_completion.media_buy_id' }],
  } as Partial<Step>;
  const grade = (completion: TaskCompletion) =>
    gradeStep(input(outputs, exchange({ status: 'submitted', task_id: 't1' }), { completion }));
  const failure = (completion: TaskCompletion) =>
    grade(completion).validations.find((v) => v.check.startsWith('capture_'))!;

  it('reads the value from the completed task, and says so when it is not there', () => {
    expect(grade({ outcome: 'completed', data: { media_buy_id: 'mb1' }, polls: 2 }).captures.get('media_buy_id')).toBe(
      'mb1',
    );
    expect(failure({ outcome: 'completed', data: { status: 'completed' }, polls: 2 })).toMatchObject({
      check: 'capture_path_not_resolvable',
      description: 'capture path not resolvable',
      error: 'context_outputs "media_buy_id" reads "task_completion.media_buy_id", which is not in the completed task',
    });
  });

  it('names the last status a timed-out task had, else pending', () => {
    expect(
      failure({ outcome: 'timeout', lastStatus: 'working', polls: 3, waitedMs: 1500, tool: 'tasks/get' }),
    ).toMatchObject({
      check: 'capture_poll_timeout',
      actual: 'working',
      error:
        'context_outputs "media_buy_id": the task was still working after 3 poll(s) over 1500 ms (tasks/get); raise timeoutMs if the agent is just slow',
    });
    expect(failure({ outcome: 'timeout', polls: 1, waitedMs: 100, tool: 'get_task_status' })).toMatchObject({
      actual: null,
      error:
        'context_outputs "media_buy_id": the task was still pending after 1 poll(s) over 100 ms (get_task_status); raise timeoutMs if the agent is just slow',
    });
  });

  it('says how a failed task ended, and why polling broke', () => {
    expect(failure({ outcome: 'failed', status: 'rejected', data: {}, polls: 1 })).toMatchObject({
      check: 'capture_task_failed',
      actual: 'rejected',
      error: 'context_outputs "media_buy_id": the task ended rejected, so "task_completion.media_buy_id" has no value',
    });
    expect(failure({ outcome: 'error', error: 'tasks/get answered 500', polls: 1 })).toMatchObject({
      check: 'capture_task_failed',
      error: 'context_outputs "media_buy_id": polling the task failed: tasks/get answered 500',
    });
  });
});
