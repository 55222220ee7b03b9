/**
 * A placeholder in an expected value (`value`, `allowed_values`) that did not resolve: gradeStep (src/engine/grade.ts)
 * fails the validation without comparing anything, and — given the run's earlier steps — its message names the step
 * that should have captured the value and what became of it (engine/unresolved.ts), as the request's
 * unresolved_substitution does; the headline (report/format.ts) reads that sentence.
 */
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/checks/index.js';
import { gradeStep, type GradeInput } from '../../src/engine/grade.js';
import type { StepResult } from '../../src/model/records.js';
import type { EarlierStep } from '../../src/engine/unresolved.js';
import { failureHeadline } from '../../src/report/format.js';
import type { Phase, Step } from '../../src/model/storyboard.js';

const loc = { line: 3, column: 5 };
const setup = { id: 'setup', title: 'Setup', steps: [], loc } as unknown as Phase;
const discover = {
  id: 'discover',
  task: 'get_products',
  validations: [],
  loc,
  context_outputs: [{ name: 'product_id', path: 'products[0].product_id' }],
} as unknown as Step;
const record = (over: Partial<StepResult>): StepResult => ({
  storyboard_id: 's',
  phase_id: 'setup',
  step_id: 'discover',
  task: 'get_products',
  passed: true,
  duration_ms: 1,
  validations: [],
  extraction: { path: 'none' },
  ...over,
});

const exchange: Exchange = {
  request: { transport: 'mcp', operation: 'get_products', payload: {} },
  response: { payload: { structuredContent: { products: [{ product_id: 'p1' }] } } },
  extraction: { path: 'structured_content' },
  data: { products: [{ product_id: 'p1' }] },
} as unknown as Exchange;

/** A step whose checks compare against `$context.product_id` (value) and `{{prior_step.discover.id}}` (allowed_values). */
function input(earlier?: EarlierStep[]): GradeInput {
  const step = {
    id: 'check',
    task: 'get_products',
    loc,
    validations: [
      {
        check: 'field_value',
        path: 'products[0].product_id',
        value: '$context.product_id',
        loc: { line: 12, column: 9 },
      },
      {
        check: 'field_value',
        path: 'products[0].product_id',
        allowed_values: ['{{prior_step.discover.id}}'],
        loc: { line: 14, column: 9 },
      },
    ],
  } as unknown as Step;
  return {
    file: '/sb.yaml',
    step,
    task: 'get_products',
    exchange,
    scope: { context: new Map(), priorSteps: new Map() },
    ...(earlier ? { earlier } : {}),
  };
}

describe('gradeStep: an expected value whose placeholder did not resolve', () => {
  it('names the step that captures it and why it did not (failed)', () => {
    const failed = record({
      passed: false,
      validations: [
        { check: 'field_present', passed: false, description: 'products are listed', json_pointer: '/products' },
      ],
    });
    const graded = gradeStep(input([{ phase: setup, step: discover, result: failed }]));
    expect(graded.passed).toBe(false);
    const [byValue, byAllowed] = graded.validations;
    expect(byValue).toMatchObject({
      check: 'field_value',
      passed: false,
      expected: ['$context.product_id'],
      actual: null,
      error:
        '$context.product_id in the expected value did not resolve: step "discover" (phase setup) failed (field_present at /products — products are listed)',
      source: { file: '/sb.yaml', line: 12, column: 9 },
    });
    expect(byAllowed!.error).toBe(
      '{{prior_step.discover.id}} in the expected value did not resolve: step "discover" (phase setup) failed (field_present at /products — products are listed)',
    );
  });

  it('names it when it was skipped or has not run, and says when no earlier step captures the name', () => {
    const skipped = gradeStep(
      input([
        {
          phase: setup,
          step: discover,
          result: record({ skip: { reason: 'missing_tool', detail: 'no get_products' } }),
        },
      ]),
    );
    expect(skipped.validations[0]!.error).toBe(
      '$context.product_id in the expected value did not resolve: step "discover" (phase setup) was skipped (missing_tool: no get_products)',
    );
    const notRun = gradeStep(input([{ phase: setup, step: discover }]));
    expect(notRun.validations[0]!.error).toBe(
      '$context.product_id in the expected value did not resolve: step "discover" (phase setup) has not run',
    );
    const none = gradeStep(input([]));
    expect(none.validations[0]!.error).toBe(
      '$context.product_id in the expected value did not resolve: no earlier step captures "product_id" (context_outputs), and the storyboard\'s context does not set it',
    );
    expect(none.validations[1]!.error).toBe(
      '{{prior_step.discover.id}} in the expected value did not resolve: no earlier step has the id "discover"',
    );
  });

  it("puts the step's name in the failure headline", () => {
    const graded = gradeStep(
      input([{ phase: setup, step: discover, result: record({ passed: false, error: 'connect ECONNREFUSED' }) }]),
    );
    const result = record({ step_id: 'check', passed: false, validations: graded.validations });
    expect(failureHeadline(result, { cwd: '/' })).toContain(
      'placeholder $context.product_id in the expected value did not resolve: step "discover" (phase setup) failed (connect ECONNREFUSED)',
    );
  });

  it('without the earlier steps, still fails the check and says what did not resolve', () => {
    const graded = gradeStep(input());
    expect(graded.validations[0]).toMatchObject({
      passed: false,
      error: expect.stringMatching(/^\$context\.product_id in the expected value did not resolve: /),
    });
  });
});
