/**
 * Why a placeholder did not resolve, in words that name the step to look at:
 * "`$context.product_id` did not resolve: step "discover" (phase setup), which
 * captures it, failed — field_value at /products: …". A user who runs one step
 * with `-t` sees its prerequisites only through this sentence, so it must say
 * which step and why, not just that something upstream went wrong.
 */
import type { Phase, Step } from '../model/storyboard.js';
import type { StepResult } from '../model/records.js';

export interface EarlierStep {
  phase: Phase;
  step: Step;
  /** Its record, if it ran (or was skipped). */
  result?: StepResult;
}

/** The context name or prior step a placeholder reads, or undefined for other kinds. */
function sourceOf(token: string): { kind: 'context'; name: string } | { kind: 'prior_step'; id: string } | undefined {
  const context = /^\$context\.([^.[\s]+)/.exec(token);
  if (context) return { kind: 'context', name: context[1]! };
  const prior = /^\{\{\s*prior_step\.([\w-]+)/.exec(token);
  if (prior) return { kind: 'prior_step', id: prior[1]! };
  return undefined;
}

/** What became of a step, in a few words. */
function fate(earlier: EarlierStep): string {
  const label = `step "${earlier.step.id}" (phase ${earlier.phase.id})`;
  const result = earlier.result;
  if (!result) return `${label} has not run`;
  if (result.skip) return `${label} was skipped (${result.skip.reason}: ${result.skip.detail})`;
  if (!result.passed) {
    const failed = result.validations.find((v) => !v.passed);
    const why = failed
      ? `${failed.check}${failed.json_pointer ? ` at ${failed.json_pointer}` : ''} — ${failed.description}`
      : (result.error?.split('\n')[0] ?? 'no reason recorded');
    return `${label} failed (${why})`;
  }
  return `${label} passed, but what it captures was not in its answer`;
}

/** One sentence per placeholder: which earlier step should have provided it and what happened to that step. */
export function explainUnresolved(tokens: readonly string[], earlier: readonly EarlierStep[]): string {
  return tokens
    .map((token) => {
      const source = sourceOf(token);
      if (!source) return `${token} did not resolve`;
      if (source.kind === 'prior_step') {
        const step = earlier.find((e) => e.step.id === source.id);
        return `${token} did not resolve: ${step ? fate(step) : `no earlier step has the id "${source.id}"`}`;
      }
      const capturers = earlier.filter((e) => e.step.context_outputs?.some((o) => o.name === source.name));
      if (capturers.length === 0)
        return `${token} did not resolve: no earlier step captures "${source.name}" (context_outputs), and the storyboard's context does not set it`;
      return `${token} did not resolve: ${capturers.map(fate).join('; ')}`;
    })
    .join('\n');
}

/**
 * The record of a step whose request kept placeholders (storyboard-schema.yaml > "Unresolved substitution behavior":
 * never ship the token): a runner-provided value (the webhook receiver) this run does not have is not applicable — the
 * spec grades that as not applicable, not as the agent's failure —; anything else fails with the sentence that names
 * the step to look at. Untimed: the caller finishes it.
 */
export function unresolvedRecord(
  result: StepResult,
  request: StepResult['request'],
  tokens: string[],
  earlier: readonly EarlierStep[],
  source: { file: string; line: number; column: number },
): StepResult {
  const runnerTokens = tokens.filter((t) => /^\{\{\s*runner\./.test(t));
  if (runnerTokens.length === tokens.length) {
    return {
      ...result,
      passed: true,
      request,
      skip: {
        reason: 'not_applicable',
        detail: `unresolved_substitution: ${runnerTokens.join(', ')} needs the runner's webhook receiver, and this run hosts none (plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver)`,
      },
    };
  }
  return {
    ...result,
    request,
    validations: [
      {
        check: 'unresolved_substitution',
        passed: false,
        description: 'unresolved substitution',
        json_pointer: null,
        expected: tokens,
        actual: null,
        schema_id: null,
        schema_url: null,
        error: explainUnresolved(tokens, earlier),
        request,
        source,
      },
    ],
  };
}
