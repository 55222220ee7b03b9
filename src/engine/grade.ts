/**
 * Grading policy for one executed step, as a pure function of what was sent
 * and what came back: the storyboard's validations (with `$context` /
 * `$generate` substituted into `value` and `allowed_values`), `expect_error`,
 * an error answer where none was expected, the run-wide invariants, and the
 * `context_outputs` captures (read here; written by the engine only if the
 * step passes). No I/O: the engine has already called the agent and, for
 * `task_completion.` captures, polled the task to its end.
 */
import { answerError, findErrorCode } from '../model/answer-error.js';
import { CHECK_KIND, checks, type CheckInput, type Exchange } from '../checks/index.js';
import type { SchemaRegistry } from '../schemas/registry.js';
import type { Step, Validation } from '../model/storyboard.js';
import { checkInvariants } from './invariants.js';
import { resolvePath } from '../model/path.js';
import { TASK_COMPLETION_PREFIX } from '../model/runner-tasks.js';
import type { TaskCompletion } from './polling.js';
import { failsStep, type ValidationResult } from '../model/records.js';
import { withSeverity } from './severity.js';
import { substitute, type SubstitutionScope } from './substitute.js';
import { explainUnresolved, type EarlierStep } from './unresolved.js';

export interface GradeInput {
  file: string;
  step: Step;
  /** The task actually invoked. */
  task: string;
  exchange: Exchange;
  schemas?: SchemaRegistry;
  /** Context, prior steps and `$generate` aliases as they were before this step. */
  scope: SubstitutionScope;
  agentUrl?: string;
  /** Where the async task ended, when the step captures `task_completion.` values. */
  completion?: TaskCompletion;
  /** Credentials the run may send (for the no-secret-echo invariant). */
  secrets?: readonly string[];
  /**
   * The storyboard's steps before this one, with their records so far (as engine/run.ts gives them to
   * explainUnresolved): a placeholder of an expected value that did not resolve is explained by naming the step that
   * should have captured it and what became of it. Absent: the message says only that such a step did not provide it.
   */
  earlier?: readonly EarlierStep[];
  /** What the checks that read beyond the answer get (checks/types.ts): earlier answers, the A2A context, upstream traffic, a response set. */
  observed?: Pick<CheckInput, 'history' | 'priorA2a' | 'upstream' | 'responses'>;
}

export interface Graded {
  validations: ValidationResult[];
  passed: boolean;
  /** Set when the agent answered with an error the step did not expect, or the transport failed. */
  error?: string;
  /** Values the step's `context_outputs` would capture. */
  captures: Map<string, unknown>;
}

export function gradeStep(input: GradeInput): Graded {
  const { step, exchange } = input;
  if (exchange.transportError) {
    // Contract > step_result.error: transport-level, no validations attempted.
    return { validations: [], passed: false, error: exchange.transportError, captures: new Map() };
  }
  const validations = step.validations.map((validation) => withSeverity(runCheck(input, validation), validation));
  // Whether the agent answered with an error: one rule (model/answer-error.ts), for expect_error and for an error the
  // step did not expect alike — a comply_test_controller `success: false` on a plain result counts, like an isError.
  const failure = answerError(exchange);
  // A failed error_code check already says the answer carried no error (or not that one): no second verdict on it.
  const errorCodeFailed = validations.some((v) => v.check === 'error_code' && failsStep(v));
  if (step.expect_error && !failure && !errorCodeFailed) {
    const advisory = findErrorCode(exchange);
    validations.push(
      runnerValidation(input, 'expect_error', {
        passed: false,
        json_pointer: null,
        expected: 'error',
        actual: 'success',
        error: `the step expects the agent to reject the request, but it answered with success${advisory ? ` (the code at ${advisory.location} sits beside a success payload: a warning, not a rejection)` : ''}`,
      }),
    );
  }
  for (const verdict of checkInvariants(exchange, input.secrets ?? [])) {
    const { id: _id, description, ...fields } = verdict;
    const source = { file: input.file, line: step.loc.line, column: step.loc.column };
    const record: ValidationResult = {
      check: 'invariant',
      description,
      schema_id: null,
      schema_url: null,
      ...fields,
      source,
    };
    validations.push(verdict.passed ? record : { ...record, request: exchange.request, response: exchange.response });
  }
  let error: string | undefined;
  if (failure && !step.expect_error) {
    const code = failure.code ?? exchange.rpcError?.code;
    error = `the agent returned an error${code !== undefined ? ` ${code}` : ''}${failure.message ? `: ${failure.message}` : ''}`;
  }
  const captured = capture(input);
  validations.push(...captured.failures);
  const passed = !error && !validations.some(failsStep);
  return { validations, passed, ...(error ? { error } : {}), captures: captured.values };
}

function runCheck(input: GradeInput, written: Validation): ValidationResult {
  const { exchange, step, file } = input;
  const source = { file, line: written.loc.line, column: written.loc.column };
  const description = written.description ?? written.check;
  const fail = (error: string, fields: Partial<ValidationResult> = {}): ValidationResult => ({
    check: written.check,
    passed: false,
    description,
    json_pointer: null,
    expected: null,
    actual: null,
    schema_id: null,
    schema_url: null,
    ...fields,
    error,
    source,
    request: exchange.request,
    response: exchange.response,
  });
  const run = checks[written.check];
  if (!run && CHECK_KIND.has(written.check)) {
    // A kind the engine grades elsewhere (any_of reads the run's contributions, on an assert_contribution step).
    return fail(
      `check "${written.check}" grades only an assert_contribution step, where the run's branch-set contributions are read`,
    );
  }
  if (!run) {
    // runner-output-contract.yaml 2.6.0 > validation_result > Forward compatibility: a kind this runner does not
    // implement (a newer format's) passes with a note on the coverage gap, and is counted not applicable. The loader
    // let it through only in a newer format's storyboard or with strictKeys: false, with a warning.
    return {
      check: written.check,
      passed: true,
      description,
      note: `runner does not implement check type '${written.check}' — graded as not_applicable to preserve forward compatibility`,
      source,
    };
  }
  // storyboard-schema.yaml > Substitution: `value` / `allowed_values` may name captured context.
  const substituted = substitute({ value: written.value, allowed_values: written.allowed_values }, input.scope);
  if (substituted.unresolved.length > 0) {
    return fail(unresolvedExpected(substituted.unresolved, input.earlier), { expected: substituted.unresolved });
  }
  const validation: Validation = {
    ...written,
    value: substituted.value.value,
    allowed_values: substituted.value.allowed_values,
  };
  if (written.value === undefined) delete validation.value;
  if (written.allowed_values === undefined) delete validation.allowed_values;
  let verdict;
  try {
    verdict = run({
      validation,
      step,
      task: input.task,
      exchange,
      schemas: input.schemas,
      context: input.scope.context,
      agentUrl: input.agentUrl,
      ...input.observed,
    });
  } catch (error) {
    verdict = {
      passed: false,
      json_pointer: null,
      expected: null,
      actual: null,
      error: error instanceof Error ? error.message : String(error),
    };
  }
  const { request, response, ...fields } = verdict;
  const base: ValidationResult = { check: written.check, description, ...fields, source };
  if (written.check !== 'response_schema') {
    base.schema_id ??= null;
    base.schema_url ??= null;
  }
  return verdict.passed
    ? base
    : { ...base, request: request ?? exchange.request, response: response ?? exchange.response };
}

/**
 * Why placeholders of an expected value did not resolve: one sentence per placeholder, starting with it (report/format.ts
 * reads the first as the headline), naming the earlier step that should have captured it and its fate
 * (`$context.x in the expected value did not resolve: step "discover" (phase setup) failed (…)`).
 */
function unresolvedExpected(tokens: readonly string[], earlier: readonly EarlierStep[] | undefined): string {
  if (!earlier)
    return `${tokens.join(', ')} in the expected value did not resolve: the step that captures it failed, was skipped, or never ran`;
  return tokens
    .map((token) => {
      const said = explainUnresolved([token], earlier);
      return said.startsWith(`${token} did not resolve`)
        ? `${token} in the expected value${said.slice(token.length)}`
        : said;
    })
    .join('\n');
}

/** A validation the runner adds itself (not written in the storyboard): placed at the step. */
function runnerValidation(
  input: GradeInput,
  check: string,
  fields: Omit<ValidationResult, 'check' | 'description' | 'source'>,
): ValidationResult {
  const { step, exchange } = input;
  const record: ValidationResult = {
    check,
    description: check.replace(/_/g, ' '),
    schema_id: null,
    schema_url: null,
    ...fields,
    source: { file: input.file, line: step.loc.line, column: step.loc.column },
  };
  return fields.passed ? record : { ...record, request: exchange.request, response: exchange.response };
}

/** `context_outputs`: values read from the answer (or, for `task_completion.`, from the finished task). */
function capture(input: GradeInput): { failures: ValidationResult[]; values: Map<string, unknown> } {
  const failures: ValidationResult[] = [];
  const values = new Map<string, unknown>();
  for (const output of input.step.context_outputs ?? []) {
    let root = input.exchange.data;
    const written = output.path;
    if (typeof written !== 'string') continue; // `generate:` outputs are minted by the engine at run start
    let path = written;
    if (path.startsWith(TASK_COMPLETION_PREFIX)) {
      path = path.slice(TASK_COMPLETION_PREFIX.length);
      const completion = input.completion;
      if (completion) {
        if (completion.outcome !== 'completed') {
          failures.push(completionFailure(input, output.name, written, completion));
          continue;
        }
        root = completion.data;
      }
    }
    const found = resolvePath(root, path);
    if (found.found && found.value !== null && found.value !== '') values.set(output.name, found.value);
    else {
      failures.push(
        runnerValidation(input, 'capture_path_not_resolvable', {
          passed: false,
          json_pointer: found.pointer,
          expected: written,
          actual: found.found ? found.value : null,
          error: `context_outputs "${output.name}" reads "${written}", which is not in the ${input.completion ? 'completed task' : 'response'}`,
        }),
      );
    }
  }
  return { failures, values };
}

function completionFailure(
  input: GradeInput,
  name: string,
  path: string,
  completion: Exclude<TaskCompletion, { outcome: 'completed' }>,
): ValidationResult {
  switch (completion.outcome) {
    case 'timeout':
      return runnerValidation(input, 'capture_poll_timeout', {
        passed: false,
        json_pointer: null,
        expected: path,
        actual: completion.lastStatus ?? null,
        error: `context_outputs "${name}": the task was still ${completion.lastStatus ?? 'pending'} after ${completion.polls} poll(s) over ${completion.waitedMs} ms (${completion.tool}); raise timeoutMs if the agent is just slow`,
      });
    case 'failed':
      return runnerValidation(input, 'capture_task_failed', {
        passed: false,
        json_pointer: null,
        expected: path,
        actual: completion.status,
        error: `context_outputs "${name}": the task ended ${completion.status}, so "${path}" has no value`,
      });
    default:
      return runnerValidation(input, 'capture_task_failed', {
        passed: false,
        json_pointer: null,
        expected: path,
        actual: null,
        error: `context_outputs "${name}": polling the task failed: ${completion.error}`,
      });
  }
}
