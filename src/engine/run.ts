/**
 * Runs one storyboard against one agent, step by step, and says when each
 * step's verdict is final. Knows no test framework: the Vitest and Jest
 * adapters ask `settle(phase, step)` from inside their `it` and render the
 * outcome.
 *
 * Why "settle": a step's verdict is not always known when the step has run.
 * In an `any_of` branch set (storyboard-schema.yaml > "Branch sets") a failing
 * step in one branch becomes `peer_branch_taken` once a peer branch —
 * possibly a later one — contributes. So `settle` runs the storyboard forward
 * (in order, each step once) until nothing that runs later can change the
 * asked step's verdict, then returns it. Steps that a test filter skipped still
 * run, silently, when a later step needs their state: that is how running one
 * step from the IDE replays the steps it depends on.
 */
import type { Phase, Step, Storyboard, TestKit, Validation } from '../storyboard/types.js';
import { checks, type Exchange } from '../checks/index.js';
import type { SchemaRegistry } from '../schemas/registry.js';
import type { AgentTransport } from '../transport/types.js';
import { CredentialResolver, CredentialsError } from './credentials.js';
import { resolvePath, setPath } from './path.js';
import type { StepOutcome, StepResult, ValidationResult } from './records.js';
import { resolveTask, substitute } from './substitute.js';

export interface StoryboardRunOptions {
  /** Opens the transport lazily (first step that needs the agent). */
  transport: () => AgentTransport;
  schemas?: SchemaRegistry;
  testKit?: TestKit;
  /** Operator's Bearer token (option `auth.token` / ADCP_AUTH_TOKEN). */
  authToken?: string;
  /** Per-step bound on the call to the agent. */
  timeoutMs: number;
  /**
   * A configuration problem that makes every step fail before reaching the
   * agent (e.g. no agent URL). Reported on each step instead of a stack trace.
   */
  configurationError?: string;
}

interface Entry {
  index: number;
  phase: Phase;
  step: Step;
}

/** Tasks the runner answers itself instead of calling the agent. */
const LOCAL_TASKS = new Set(['assert_contribution']);

export class StoryboardRun {
  private readonly entries: Entry[];
  private readonly results = new Map<number, StepResult>();
  private readonly context = new Map<string, unknown>();
  private readonly priorSteps = new Map<string, unknown>();
  /** Branch-set flag → the step that first contributed it. */
  private readonly contributions = new Map<string, { phase: string; step: string }>();
  private readonly credentials: CredentialResolver;
  private transport?: AgentTransport;
  private next = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly storyboard: Storyboard,
    private readonly options: StoryboardRunOptions,
  ) {
    this.entries = storyboard.phases.flatMap((phase) => phase.steps.map((step) => ({ phase, step, index: 0 })));
    this.entries.forEach((entry, index) => (entry.index = index));
    for (const [name, value] of Object.entries(storyboard.context ?? {})) this.context.set(name, value);
    this.credentials = new CredentialResolver({ defaultToken: options.authToken, testKit: options.testKit });
  }

  /** Secrets this run may put on the wire, for scrubbing rendered messages. */
  secrets(): string[] {
    return this.credentials.secrets();
  }

  /** Runs forward as far as needed, then returns the final verdict of one step. */
  async settle(phaseId: string, stepId: string): Promise<StepOutcome> {
    const entry = this.entries.find((e) => e.phase.id === phaseId && e.step.id === stepId);
    if (!entry) throw new Error(`storyboard "${this.storyboard.id}" has no step "${phaseId}/${stepId}"`);
    await this.runThrough(this.settlesAt(entry));
    return this.outcome(entry);
  }

  /** Runs every remaining step (for reporters or a plain CLI run). */
  async runAll(): Promise<StepOutcome[]> {
    await this.runThrough(this.entries.length - 1);
    return this.entries.map((entry) => this.outcome(entry));
  }

  async close(): Promise<void> {
    await this.queue.catch(() => {});
    await this.transport?.close();
  }

  /** Index of the last step whose result can still change this step's verdict. */
  private settlesAt(entry: Entry): number {
    const branchSet = entry.phase.branch_set?.id;
    if (!branchSet) return entry.index;
    let last = entry.index;
    for (const other of this.entries) if (other.phase.branch_set?.id === branchSet) last = Math.max(last, other.index);
    return last;
  }

  private runThrough(lastIndex: number): Promise<void> {
    this.queue = this.queue.then(async () => {
      while (this.next <= lastIndex && this.next < this.entries.length) {
        const entry = this.entries[this.next++]!;
        let result: StepResult;
        try {
          result = await this.execute(entry);
        } catch (error) {
          // A bug of ours must cost one step, not the run and its report.
          const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
          result = { ...this.base(entry, entry.step.task), error: `vitest-adcp internal error (please report it): ${message}` };
        }
        this.results.set(entry.index, result);
      }
    });
    return this.queue;
  }

  private outcome(entry: Entry): StepOutcome {
    const result = this.results.get(entry.index)!;
    if (result.skip) return { status: 'skipped', result };
    if (result.passed) return { status: 'passed', result };
    const branchSet = entry.phase.branch_set?.id;
    const contributor = branchSet ? this.contributions.get(branchSet) : undefined;
    if (contributor && contributor.phase !== entry.phase.id) {
      // storyboard-schema.yaml > Branch sets > Runner grading; detail shape from
      // runner-output-contract.yaml > skip_result.reasons.peer_branch_taken.
      const regraded: StepResult = {
        ...result,
        skip: { reason: 'peer_branch_taken', detail: `${branchSet} contributed by ${contributor.phase}.${contributor.step} — ${entry.phase.id} is moot` },
      };
      return { status: 'skipped', result: regraded };
    }
    return { status: 'failed', result };
  }

  private base(entry: Entry, task: string): StepResult {
    return {
      storyboard_id: this.storyboard.id,
      phase_id: entry.phase.id,
      step_id: entry.step.id,
      task,
      passed: false,
      duration_ms: 0,
      validations: [],
      extraction: { path: 'none' },
    };
  }

  private async execute(entry: Entry): Promise<StepResult> {
    const { step, phase } = entry;
    const started = performance.now();
    const task = resolveTask(step.task, step.task_default, this.options.testKit) ?? step.task;
    const result = this.base(entry, task);
    const finish = (r: StepResult) => ({ ...r, duration_ms: Math.round(performance.now() - started) });

    const skip = this.phaseSkip(phase);
    if (skip) return finish({ ...result, skip: { reason: 'not_applicable', detail: skip } });
    if (LOCAL_TASKS.has(task)) return finish(this.assertContribution(entry, result));
    if (this.options.configurationError) return finish({ ...result, error: this.options.configurationError });

    // Creating the transport is cheap (it connects on first call); it names the protocol in records.
    this.transport ??= this.options.transport();
    const substituted = substitute(step.sample_request ?? {}, { context: this.context, priorSteps: this.priorSteps, testKit: this.options.testKit });
    const request = { transport: this.transport.kind, operation: task, payload: substituted.value, url: this.transport.url };
    if (substituted.unresolved.length > 0) {
      // storyboard-schema.yaml > "Unresolved substitution behavior": never ship the token.
      return finish({
        ...result,
        request,
        validations: [
          this.runnerValidation(entry, 'unresolved_substitution', {
            passed: false,
            json_pointer: null,
            expected: substituted.unresolved,
            actual: null,
            error: `${substituted.unresolved.join(', ')} did not resolve: the step that captures it failed, was skipped, or never ran`,
            request,
          }),
        ],
      });
    }
    const payload = substituted.value as Record<string, unknown>;
    for (const input of step.context_inputs ?? []) {
      if (this.context.has(input.key) && payload && typeof payload === 'object') setPath(payload, input.inject_at, this.context.get(input.key));
    }

    let credentials;
    try {
      credentials = this.credentials.resolve(step.auth);
    } catch (error) {
      if (error instanceof CredentialsError) return finish({ ...result, request, error: error.message });
      throw error;
    }

    const exchange = await this.transport.call(task, payload, { credentials, timeoutMs: this.options.timeoutMs });
    const { result: graded, captures } = this.grade(entry, task, exchange);
    const final = finish(graded);
    if (final.passed) this.recordPass(entry, exchange, captures);
    return final;
  }

  private grade(entry: Entry, task: string, exchange: Exchange): { result: StepResult; captures: Map<string, unknown> } {
    const { step } = entry;
    const result: StepResult = {
      ...this.base(entry, task),
      request: exchange.request,
      response: exchange.response,
      extraction: exchange.extraction,
    };
    if (exchange.transportError) {
      // Contract > step_result.error: transport-level, no validations attempted.
      return { result: { ...result, error: exchange.transportError }, captures: new Map() };
    }
    const validations = step.validations.map((validation) => this.check(entry, task, validation, exchange));
    const gotError = exchange.extraction.path === 'error';
    if (step.expect_error && !gotError && !validations.some((v) => v.check === 'error_code')) {
      validations.push(
        this.runnerValidation(entry, 'expect_error', {
          passed: false,
          json_pointer: null,
          expected: 'an error response',
          actual: exchange.extraction.path,
          error: 'the step expects the agent to reject the request, but it answered with success',
          request: result.request,
          response: result.response,
        }),
      );
    }
    let error: string | undefined;
    if (gotError && !step.expect_error) {
      const code = (exchange.data as any)?.adcp_error?.code ?? exchange.rpcError?.code;
      const message = (exchange.data as any)?.adcp_error?.message ?? exchange.rpcError?.message ?? (exchange.data as any)?.message;
      error = `the agent returned an error${code !== undefined ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
    }
    const captured = this.capture(entry, exchange, result);
    validations.push(...captured.failures);
    const passed = !error && validations.every((v) => v.passed);
    return { result: { ...result, validations, passed, ...(error ? { error } : {}) }, captures: captured.values };
  }

  private check(entry: Entry, task: string, validation: Validation, exchange: Exchange): ValidationResult {
    const source = { file: this.storyboard.file, line: validation.loc.line, column: validation.loc.column };
    const description = validation.description ?? validation.check;
    const run = checks[validation.check];
    if (!run) {
      return {
        check: validation.check,
        passed: false,
        description,
        json_pointer: null,
        expected: null,
        actual: null,
        error: `check "${validation.check}" is not supported by this version of vitest-adcp yet`,
        source,
        request: exchange.request,
        response: exchange.response,
      };
    }
    let verdict;
    try {
      verdict = run({ validation, step: entry.step, task, exchange, schemas: this.options.schemas });
    } catch (error) {
      verdict = { passed: false, json_pointer: null, expected: null, actual: null, error: error instanceof Error ? error.message : String(error) };
    }
    const base: ValidationResult = { check: validation.check, description, ...verdict, source };
    if (validation.check !== 'response_schema') {
      base.schema_id ??= null;
      base.schema_url ??= null;
    }
    return verdict.passed ? base : { ...base, request: exchange.request, response: exchange.response };
  }

  /** A validation the runner adds itself (not written in the storyboard): placed at the step. */
  private runnerValidation(entry: Entry, check: string, fields: Omit<ValidationResult, 'check' | 'description' | 'source'>): ValidationResult {
    return {
      check,
      description: check.replace(/_/g, ' '),
      schema_id: null,
      schema_url: null,
      ...fields,
      source: { file: this.storyboard.file, line: entry.step.loc.line, column: entry.step.loc.column },
    };
  }

  /** `context_outputs`: only read here; written to the context only if the step passes. */
  private capture(entry: Entry, exchange: Exchange, result: StepResult): { failures: ValidationResult[]; values: Map<string, unknown> } {
    const failures: ValidationResult[] = [];
    const values = new Map<string, unknown>();
    for (const output of entry.step.context_outputs ?? []) {
      const found = resolvePath(exchange.data, output.path);
      if (found.found) values.set(output.name, found.value);
      else {
        failures.push(
          this.runnerValidation(entry, 'capture_path_not_resolvable', {
            passed: false,
            json_pointer: found.pointer,
            expected: output.path,
            actual: null,
            error: `context_outputs "${output.name}" reads "${output.path}", which is not in the response`,
            request: result.request,
            response: result.response,
          }),
        );
      }
    }
    return { failures, values };
  }

  /** storyboard-schema.yaml > context_outputs: a failed step MUST NOT populate the accumulator. */
  private recordPass(entry: Entry, exchange: Exchange, captures: Map<string, unknown>): void {
    for (const [name, value] of captures) this.context.set(name, value);
    this.priorSteps.set(entry.step.id, exchange.data);
    const flag = entry.step.contributes_to;
    if (flag && this.contributionAllowed(entry.step) && !this.contributions.has(flag)) {
      this.contributions.set(flag, { phase: entry.phase.id, step: entry.step.id });
    }
  }

  /** `contributes_if: "prior_step.<id>.passed"` — the only grammar the spec defines. */
  private contributionAllowed(step: Step): boolean {
    if (!step.contributes_if) return true;
    const match = /^prior_step\.([\w-]+)\.passed$/.exec(step.contributes_if.trim());
    if (!match) return false;
    return this.priorSteps.has(match[1]!);
  }

  private assertContribution(entry: Entry, result: StepResult): StepResult {
    const validations = entry.step.validations.map((validation) => {
      const allowed = (validation.allowed_values ?? []).map(String);
      const contributed = allowed.filter((flag) => this.contributions.has(flag));
      const passed = validation.check === 'any_of' && contributed.length > 0;
      const source = { file: this.storyboard.file, line: validation.loc.line, column: validation.loc.column };
      return passed
        ? { check: validation.check, passed, description: validation.description ?? validation.check, source, schema_id: null, schema_url: null }
        : {
            check: validation.check,
            passed,
            description: validation.description ?? validation.check,
            json_pointer: null,
            expected: validation.allowed_values ?? [],
            actual: [...this.contributions.keys()],
            error: 'no branch contributed any of the allowed flags',
            schema_id: null,
            schema_url: null,
            source,
          };
    });
    return { ...result, validations, passed: validations.every((v) => v.passed) };
  }

  /** `skip_if` on a phase: `test_kit.<path>` or `!test_kit.<path>` (the forms the corpus uses). */
  private phaseSkip(phase: Phase): string | undefined {
    if (!phase.skip_if) return undefined;
    const match = /^\s*(!?)\s*test_kit\.([\w.[\]-]+)\s*$/.exec(phase.skip_if);
    if (!match) return undefined;
    const found = resolvePath(this.options.testKit, match[2]!);
    const truthy = found.found && found.value !== null && found.value !== false && found.value !== '';
    const skip = match[1] ? !truthy : truthy;
    return skip ? `phase "${phase.id}" skipped: skip_if "${phase.skip_if}" is true for this test kit` : undefined;
  }
}
