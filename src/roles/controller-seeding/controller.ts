/**
 * Verdicts of `comply_test_controller` calls that decide more than their own
 * step (storyboard-schema.yaml > prerequisites.controller_seeding, fixtures):
 *
 * - a seed whose scenario the controller does not implement (UNKNOWN_SCENARIO)
 *   is a coverage gap: `not_applicable` for it and the rest of the storyboard
 *   (`fixture_seed_unsupported`);
 * - a seed that fails otherwise — or answers without `success: true` — fails,
 *   and the storyboard's own steps skip `prerequisite_failed`: the state they
 *   need was never made;
 * - any other controller step that does not expect an error and gets
 *   UNKNOWN_SCENARIO is the same coverage gap (e.g.
 *   protocols/media-buy/scenarios/create_media_buy_async.yaml: "return
 *   UNKNOWN_SCENARIO and the runner grades this storyboard not_applicable").
 *
 * Pure: the engine applies `halt` to every later step.
 */
import { answerError, CONTROLLER_TASK } from '../../model/answer-error.js';
import type { Exchange } from '../../model/exchange.js';
import type { SkipResult, StepResult } from '../../model/records.js';
import type { SeedStep } from '../../plan/seeding.js';

export interface ControllerVerdict {
  result: StepResult;
  /** What every later step of the storyboard becomes. */
  halt?: SkipResult;
}

interface ControllerAnswer {
  success?: unknown;
  error?: unknown;
  error_detail?: unknown;
}

/** The code of the controller's error answer — isError, adcp_error or its own `success: false` alike (model/answer-error.ts). */
function errorCodeOf(exchange: Exchange): string | undefined {
  return answerError(exchange)?.code;
}

export function seedVerdict(step: SeedStep, exchange: Exchange, graded: StepResult, file: string): ControllerVerdict {
  const data = exchange.data as ControllerAnswer | undefined;
  if (errorCodeOf(exchange) === 'UNKNOWN_SCENARIO') {
    const skip: SkipResult = {
      reason: 'not_applicable',
      detail: `fixture_seed_unsupported: the agent's ${CONTROLLER_TASK} does not implement ${step.seed.scenario} (UNKNOWN_SCENARIO), so this storyboard's fixtures cannot be seeded`,
    };
    return { result: { ...graded, passed: true, skip }, halt: skip };
  }
  if (graded.passed && data?.success === true) return { result: graded };
  const reason =
    graded.error ??
    (typeof data?.error_detail === 'string' ? data.error_detail : undefined) ??
    'the controller did not answer success: true';
  const halt: SkipResult = {
    reason: 'prerequisite_failed',
    detail: `controller seeding failed at ${step.id}: ${reason}`,
  };
  if (!graded.passed) return { result: graded, halt };
  return {
    result: {
      ...graded,
      passed: false,
      validations: [
        ...graded.validations,
        {
          check: 'seed_acknowledged',
          passed: false,
          description: 'the controller acknowledges the seed with success: true',
          json_pointer: '/success',
          expected: true,
          actual: data?.success ?? null,
          schema_id: null,
          schema_url: null,
          error: reason,
          request: exchange.request,
          response: exchange.response,
          source: { file, line: step.loc.line, column: step.loc.column },
        },
      ],
    },
    halt,
  };
}

export function scenarioVerdict(exchange: Exchange, graded: StepResult): ControllerVerdict {
  if (errorCodeOf(exchange) !== 'UNKNOWN_SCENARIO') return { result: graded };
  const scenario = (exchange.request.payload as { scenario?: unknown } | undefined)?.scenario;
  const skip: SkipResult = {
    reason: 'not_applicable',
    detail: `the agent's ${CONTROLLER_TASK} does not implement scenario ${JSON.stringify(scenario)} (UNKNOWN_SCENARIO), so this storyboard does not apply to it`,
  };
  return { result: { ...graded, passed: true, skip }, halt: skip };
}
