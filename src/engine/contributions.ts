/**
 * Branch-set contributions (storyboard-schema.yaml > "Branch sets"): which flag a passing step contributes, and the
 * `assert_contribution` step that grades whether any branch did.
 */
import { failsStep, type SkipResult, type StepResult, type ValidationResult } from '../model/records.js';
import type { Phase, Step } from '../model/storyboard.js';

/** Branch-set flag → the step that first contributed it. */
export type Contributions = Map<string, { phase: string; step: string }>;

/** `contributes_if: "prior_step.<id>.passed"` — the only grammar the spec defines. */
export function contributionAllowed(step: Step, priorSteps: ReadonlyMap<string, unknown>): boolean {
  if (!step.contributes_if) return true;
  const match = /^prior_step\.([\w-]+)\.passed$/.exec(step.contributes_if.trim());
  if (!match) return false;
  return priorSteps.has(match[1]!);
}

/** An `assert_contribution` step's record: each `any_of` validation passes when one of its flags was contributed. */
export function assertContribution(
  step: Step,
  result: StepResult,
  contributions: ReadonlyMap<string, unknown>,
  file: string,
): StepResult {
  const validations = step.validations.map((validation): ValidationResult => {
    const expected = validation.allowed_values ?? [];
    const contributed = expected.map(String).filter((flag) => contributions.has(flag));
    const passed = validation.check === 'any_of' && contributed.length > 0;
    const source = { file, line: validation.loc.line, column: validation.loc.column };
    const description = validation.description ?? validation.check;
    if (passed) return { check: validation.check, passed, description, source, schema_id: null, schema_url: null };
    return {
      check: validation.check,
      passed,
      description,
      json_pointer: null,
      expected,
      actual: [...contributions.keys()],
      error:
        validation.check === 'any_of'
          ? 'no branch contributed any of the allowed flags'
          : `check "${validation.check}" cannot grade an assert_contribution step (only any_of does)`,
      schema_id: null,
      schema_url: null,
      source,
    };
  });
  return { ...result, validations, passed: !validations.some(failsStep) };
}

/**
 * A failed step of a branch set whose flag a peer branch (another phase) contributed is moot.
 * storyboard-schema.yaml > Branch sets > Runner grading; detail shape from
 * runner-output-contract.yaml > skip_result.reasons.peer_branch_taken.
 */
export function peerBranchTaken(phase: Phase, contributions: Contributions): SkipResult | undefined {
  const branchSet = phase.branch_set?.id;
  const contributor = branchSet ? contributions.get(branchSet) : undefined;
  if (!contributor || contributor.phase === phase.id) return undefined;
  return {
    reason: 'peer_branch_taken',
    detail: `${branchSet} contributed by ${contributor.phase}.${contributor.step} — ${phase.id} is moot`,
  };
}
