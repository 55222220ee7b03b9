/**
 * Verdicts of comply_test_controller calls that decide the rest of a
 * storyboard (src/roles/controller-seeding/controller.ts), on hand-made exchanges. The
 * fixture-agent runs in grading-model.e2e.test.ts (controller seeding,
 * UNKNOWN_SCENARIO) show the same rules on the wire.
 */
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/model/exchange.js';
import { scenarioVerdict, seedVerdict } from '../../src/roles/controller-seeding/controller.js';
import type { StepResult, ValidationResult } from '../../src/model/records.js';
import type { SeedStep } from '../../src/plan/seeding.js';

const seed = {
  id: 'seed_product.p1',
  title: 't',
  task: 'comply_test_controller',
  validations: [],
  loc: { line: 4, column: 3 },
  seed: { scenario: 'seed_product', key: 'products' },
} as SeedStep;
const exchange = (data: unknown, payload: unknown = { scenario: 'seed_product' }): Exchange => ({
  request: { transport: 'mcp', operation: 'comply_test_controller', payload },
  response: { transport: 'mcp', payload: { structuredContent: data } },
  extraction: { path: 'structured_content' },
  data,
});
const kept: ValidationResult = {
  check: 'response_schema',
  passed: true,
  description: 'd',
  json_pointer: null,
  schema_id: null,
  schema_url: null,
  source: { file: 'f', line: 1, column: 1 },
} as ValidationResult;
const graded = (extra: Partial<StepResult> = {}): StepResult => ({
  storyboard_id: 'sb',
  phase_id: '__controller_seeding__',
  step_id: seed.id,
  task: 'comply_test_controller',
  passed: true,
  duration_ms: 1,
  validations: [kept],
  extraction: { path: 'structured_content' },
  ...extra,
});

describe('seedVerdict', () => {
  it('a seed acknowledged with success: true passes and halts nothing', () => {
    const g = graded();
    expect(seedVerdict(seed, exchange({ success: true }), g, 'x.yaml')).toEqual({ result: g });
  });

  it('UNKNOWN_SCENARIO (adcp_error.code or the controller error) makes the rest not_applicable', () => {
    const detail =
      "fixture_seed_unsupported: the agent's comply_test_controller does not implement seed_product (UNKNOWN_SCENARIO), so this storyboard's fixtures cannot be seeded";
    for (const data of [{ adcp_error: { code: 'UNKNOWN_SCENARIO' } }, { success: false, error: 'UNKNOWN_SCENARIO' }]) {
      const verdict = seedVerdict(seed, exchange(data), graded({ passed: false }), 'x.yaml');
      expect(verdict).toEqual({
        result: { ...graded(), passed: true, skip: { reason: 'not_applicable', detail } },
        halt: { reason: 'not_applicable', detail },
      });
    }
  });

  it('a seed that failed its grading halts the rest prerequisite_failed, with the reason', () => {
    const g = graded({ passed: false, error: 'connection refused' });
    expect(seedVerdict(seed, exchange(undefined), g, 'x.yaml')).toEqual({
      result: g,
      halt: {
        reason: 'prerequisite_failed',
        detail: 'controller seeding failed at seed_product.p1: connection refused',
      },
    });
    const detailed = seedVerdict(
      seed,
      exchange({ success: false, error: 'NOT_FOUND', error_detail: 'p1 is not seeded' }),
      graded({ passed: false }),
      'x.yaml',
    );
    expect(detailed.halt!.detail).toBe('controller seeding failed at seed_product.p1: p1 is not seeded');
    expect(detailed.result.validations).toEqual([kept]);
  });

  it('an answer without success: true fails the seed step with seed_acknowledged', () => {
    for (const [data, actual] of [
      [{ success: 'yes' }, 'yes'],
      [{}, null],
      [{ success: false, error_detail: 42 }, false],
    ] as const) {
      const e = exchange(data);
      const verdict = seedVerdict(seed, e, graded(), 'x.yaml');
      const reason = 'the controller did not answer success: true';
      expect(verdict.halt).toEqual({
        reason: 'prerequisite_failed',
        detail: `controller seeding failed at seed_product.p1: ${reason}`,
      });
      expect(verdict.result.passed).toBe(false);
      expect(verdict.result.validations).toEqual([
        kept,
        {
          check: 'seed_acknowledged',
          passed: false,
          description: 'the controller acknowledges the seed with success: true',
          json_pointer: '/success',
          expected: true,
          actual,
          schema_id: null,
          schema_url: null,
          error: reason,
          request: e.request,
          response: e.response,
          source: { file: 'x.yaml', line: 4, column: 3 },
        },
      ]);
    }
    const silent = seedVerdict(seed, exchange(undefined), graded(), 'x.yaml');
    expect(silent.result.validations[1]).toMatchObject({
      check: 'seed_acknowledged',
      actual: null,
      error: 'the controller did not answer success: true',
    });
    const withDetail = seedVerdict(seed, exchange({ success: false, error_detail: 'quota' }), graded(), 'x.yaml');
    expect(withDetail.result.validations[1]!.error).toBe('quota');
  });
});

describe('scenarioVerdict', () => {
  it('UNKNOWN_SCENARIO makes the step and the rest not_applicable, naming the scenario', () => {
    const g = graded({ passed: false });
    const detail = `the agent's comply_test_controller does not implement scenario "force_x" (UNKNOWN_SCENARIO), so this storyboard does not apply to it`;
    for (const data of [{ adcp_error: { code: 'UNKNOWN_SCENARIO' } }, { success: false, error: 'UNKNOWN_SCENARIO' }]) {
      expect(scenarioVerdict(exchange(data, { scenario: 'force_x' }), g)).toEqual({
        result: { ...g, passed: true, skip: { reason: 'not_applicable', detail } },
        halt: { reason: 'not_applicable', detail },
      });
    }
  });

  it('names no scenario when the request carried no payload', () => {
    const e = exchange({ adcp_error: { code: 'UNKNOWN_SCENARIO' } });
    e.request.payload = undefined;
    expect(scenarioVerdict(e, graded()).halt!.detail).toContain('does not implement scenario undefined');
  });

  it('any other answer keeps the graded result and halts nothing', () => {
    const g = graded({ passed: false });
    for (const data of [
      { success: false, error: 'INVALID_TRANSITION' },
      { adcp_error: { code: 'NOT_FOUND' } },
      { success: true },
      undefined,
    ]) {
      expect(scenarioVerdict(exchange(data, { scenario: 'force_x' }), g)).toEqual({ result: g });
    }
  });
});
