/**
 * Why a placeholder did not resolve, in words that name the step to look at:
 * "`$context.product_id` did not resolve: step "discover" (phase setup), which
 * captures it, failed — field_value at /products: …". A user who runs one step
 * with `-t` sees its prerequisites only through this sentence, so it must say
 * which step and why, not just that something upstream went wrong.
 */
import type { Phase, Step } from '../model/storyboard.js';
import type { SkipResult, StepResult } from '../model/records.js';
import { runnerTokens, type RunnerToken } from './substitute.js';

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
 * never ship the token). A runner-provided value is not the agent's failure: it is not applicable. The run's preflight
 * (`runnerPreflightSkip`) already skipped every storyboard with a `{{runner.*}}` token known to be unresolvable, so one
 * reaches a step only when the run's receiver could not give it a value there. Anything else fails with the sentence
 * that names the step to look at. Untimed: the caller finishes it.
 */
export function unresolvedRecord(
  result: StepResult,
  request: StepResult['request'],
  tokens: string[],
  earlier: readonly EarlierStep[],
  source: { file: string; line: number; column: number },
): StepResult {
  const fromRunner = tokens.filter((t) => /^\{\{\s*runner\./.test(t));
  if (fromRunner.length === tokens.length) {
    return {
      ...result,
      passed: true,
      request,
      skip: {
        reason: 'not_applicable',
        detail: `unresolved_substitution: ${fromRunner.join(', ')} did not resolve: the runner's webhook receiver gives no value for it at this step`,
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

/** The requests a step sends: its `sample_request`, and a rate_limit_trip's target request. */
export function requestsOf(step: Step): unknown[] {
  return [step.sample_request, step.rate_limit_trip?.trip_target_sample_request];
}

/** How to get the runner's webhook receiver, as the messages about it say. */
const ENABLE_RECEIVER = "plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver";

/**
 * storyboard-schema.yaml > Unresolved substitution behavior (3.0.6 and 3.1 alike), preflight 1: "Before the storyboard
 * run starts — if any step references an unresolvable substitution, grade the storyboard as not_applicable with
 * `unresolved_substitution` as the reason, and skip execution entirely. This is the preferred behavior for absent
 * webhook receivers." A `{{runner.*}}` placeholder is the kind known to be unresolvable before the run, since no step
 * can supply it: every one when the run hosts no webhook receiver (`receiver`), else one naming a variable no runner
 * provides. Graded step by step, the storyboard's other steps would run on state it did not mean (its webhook-carrying
 * booking never made). `steps`: the run's planned steps. The skip of every step, naming each such token, the steps
 * that write it and how to enable the receiver; undefined when every token can resolve.
 */
export function runnerPreflightSkip(steps: readonly { step: Step }[], receiver: boolean): SkipResult | undefined {
  const writers = new Map<string, { token: RunnerToken; steps: string[] }>();
  for (const { step } of steps)
    for (const token of runnerTokens(requestsOf(step)))
      if (!receiver || !token.provided) {
        const entry = writers.get(token.token) ?? { token, steps: [] };
        writers.set(token.token, { token, steps: [...entry.steps, step.id] });
      }
  if (writers.size === 0) return undefined;
  const named = (provided: boolean) =>
    [...writers.values()]
      .filter((w) => w.token.provided === provided)
      .map((w) => `${w.token.token} (${w.steps.map((id) => `step "${id}"`).join(', ')})`)
      .join(', ');
  const [needsReceiver, unknown] = [named(true), named(false)];
  const reasons = [
    needsReceiver &&
      `${needsReceiver} needs the runner's webhook receiver, and this run hosts none (${ENABLE_RECEIVER})`,
    unknown &&
      `${unknown} names no runner variable vitest-adcp provides ({{runner.webhook_base}}, {{runner.webhook_url:<step_id>}})`,
  ].filter(Boolean);
  return {
    reason: 'not_applicable',
    detail: `unresolved_substitution: ${reasons.join('; ')} — so no step of this storyboard runs`,
  };
}
