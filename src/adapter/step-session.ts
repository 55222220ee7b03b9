/**
 * The step protocol, once for every test framework: a step test asks the engine to settle its step, and the session
 * turns the outcome plus what the framework says of the test (how many times it ran before) into one neutral step
 * report — the redacted record, the records of the steps the settle replayed silently, the warnings, and either the
 * contract's skip text or the failure (headline, details, the expected/actual diff). The framework shims
 * (src/vitest/suite.ts, src/jest/suite.ts) only register tests and carry that report to their framework: meta or
 * records, annotations or console lines, `skip()` or a passing test, the error they throw.
 */
import type { StoryboardRun } from '../engine/run.js';
import { sanitizeOutput } from '../model/redact.js';
import type { StepOutcome } from '../model/records.js';
import type { AdcpPlannedStep, AdcpStepMeta, AdcpStoryboardMeta, StoryboardInfo } from '../model/step-meta.js';
import type { Phase, Step, Storyboard } from '../model/storyboard.js';
import { redactStepResult, stepKey } from '../report/record.js';
import { stepDiff } from './diff.js';
import { planOf, plannedSteps } from './planned-steps.js';
import { ReplayedSteps } from './replayed.js';
import { noPhasesSkip, retryRefusal, skipText, stepFailureText, type FailingValidation } from './step-failure.js';

/** A failed step as the framework shows it. Runner and agent text in it is sanitised for the terminal already. */
export interface StepFailure {
  /** One line: JUnit's `message=`, a CI annotation's title. */
  headline: string;
  /** The failed checks, what was sent and received, then the diff when there is one. */
  details: string;
  /** The diff alone (also at the end of `details`). */
  diff?: string;
  /** For IDE diff views. */
  expected?: unknown;
  actual?: unknown;
  /** The first failed check with a YAML position: the error's first stack frame. */
  validation?: FailingValidation;
  /** The run's configuration is what failed (no call was made): the framework may say it once, not per step. */
  configuration?: boolean;
}

/** What one step test reports, whatever the framework. */
export type StepReport =
  | {
      kind: 'verdict';
      /** The step's own record (redacted): Vitest's `task.meta.adcp`, a Jest file's records. */
      meta: AdcpStepMeta;
      /** Earlier steps this settle ran while their own tests were filtered out, with the verdict they had. */
      replayed: AdcpStepMeta[];
      /** Rules the run could not apply, one terminal-safe line each. */
      warnings: string[];
      /** The contract's skip reason and detail (one terminal-safe line) when the step was skipped. */
      skip?: string;
      failure?: StepFailure;
    }
  /** The framework ran the test again: refused, naming the first attempt's verdict (no new record). */
  | { kind: 'retry_refused'; message: string };

/** What the framework says of the test that asks. */
export interface StepTestState {
  /** How many times this test ran before (a retry option). */
  retry: number;
  /** The framework's retry option, named in the refusal. @default '--retry / retry' */
  retryOption?: string;
}

/**
 * What a step session needs of a storyboard run: the engine's `StoryboardRun` itself, or a run the plugin's main
 * process drives (adapter/hosted-run.ts), whose outcomes the session reads instead.
 */
export type SettlingRun = Pick<StoryboardRun, 'settle' | 'secrets' | 'ranBefore' | 'worstCaseMs' | 'close' | 'stop'>;

export interface StepSessionOptions {
  storyboard: Storyboard;
  info: StoryboardInfo;
  /** Opens the run on first use (collection never needs the agent). */
  openRun: () => SettlingRun;
  /** The compliance tree, for the signed_requests vector steps (the run's own). */
  corpusRoot?: string;
  /**
   * The run's configuration error said the framework's way (which option to set where), or undefined: a step that
   * failed on it, before calling anything, carries that text in its record and its failure.
   */
  configurationError?: () => string | undefined;
  /** The log of the agent the run started (`agent.start`), named by each failed step's record and failure. */
  agentLog?: string;
}

export class StepSession {
  private run: SettlingRun | undefined;
  private plan: { phase: Phase; step: Step }[] | undefined;
  private planned: AdcpPlannedStep[] | undefined;
  private readonly replays: ReplayedSteps;

  constructor(private readonly options: StepSessionOptions) {
    this.replays = new ReplayedSteps(options.info);
  }

  private current(): SettlingRun {
    return (this.run ??= this.options.openRun());
  }

  /**
   * The storyboard's plan (planned-steps.ts planOf), made once: its tests' meta and, for a hosted run, the bound of a
   * settle (open-run.ts settleBoundOf) are read from it.
   */
  planOf(): { phase: Phase; step: Step }[] {
    return (this.plan ??= planOf(this.options.storyboard, { corpusRoot: this.options.corpusRoot }));
  }

  /** Every step the storyboard's tests stand for, injected ones included, in run order. */
  plannedSteps(): AdcpPlannedStep[] {
    return (this.planned ??= plannedSteps(this.planOf(), this.options.info));
  }

  /** One step's plan (collection-time meta); a step the plan does not know still names itself. */
  plannedStep(phaseId: string, stepId: string): AdcpPlannedStep {
    return (
      this.plannedSteps().find((p) => p.phase_id === phaseId && p.step_id === stepId) ?? {
        storyboard: this.options.info,
        phase_id: phaseId,
        step_id: stepId,
      }
    );
  }

  /** The framework's timeout for a step test (and the close): above anything the engine's own bounds allow. */
  timeout(): number {
    // A margin for the worker itself (module load, the first connection) on a busy machine.
    return this.current().worstCaseMs() + 10_000;
  }

  /** A storyboard without phases: its skip (the contract's `no_phases`) and that skip as one terminal-safe line. */
  noPhases(): { meta: AdcpStoryboardMeta; text: string } {
    const skip = noPhasesSkip(this.options.storyboard);
    return { meta: { storyboard: this.options.info, skip }, text: sanitizeOutput(`${skip.reason}: ${skip.detail}`) };
  }

  async step(phaseId: string, stepId: string, test: StepTestState): Promise<StepReport> {
    const run = this.current();
    const outcome: StepOutcome = await run.settle(phaseId, stepId);
    const secrets = run.secrets();
    if (test.retry > 0) {
      // Not re-run, on purpose: a storyboard is a stateful sequence. A second call would be graded against state its
      // own first attempt may have changed (a half-made media buy), and later steps were already decided by the first
      // verdict. The first attempt's verdict stands; say so instead of pretending to retry.
      return { kind: 'retry_refused', message: retryRefusal(outcome, secrets, test.retry, test.retryOption) };
    }
    const configurationError =
      outcome.status === 'failed' && !outcome.result.request ? this.options.configurationError?.() : undefined;
    const redacted = redactStepResult(
      configurationError ? { ...outcome.result, error: configurationError } : outcome.result,
      secrets,
    );
    const agentLog = outcome.status === 'failed' && !configurationError ? this.options.agentLog : undefined;
    const result = agentLog ? { ...redacted, agent_log: agentLog } : redacted;
    const meta: AdcpStepMeta = { id: stepKey(result), status: outcome.status, result, storyboard: this.options.info };
    const replayed = this.replays.take(run, phaseId, stepId, secrets);
    // Warnings and skip details can quote agent-supplied names (its tool list, ids): escaped for the terminal.
    const warnings = (result.warnings ?? []).map(sanitizeOutput);
    const report = { kind: 'verdict' as const, meta, replayed, warnings };
    if (outcome.status === 'skipped') return { ...report, skip: skipText(result) };
    if (outcome.status !== 'failed') return report;
    if (configurationError)
      return { ...report, failure: { headline: configurationError, details: '', configuration: true } };
    const text = stepFailureText(result, secrets);
    const diff = text.expected !== undefined ? stepDiff(text.expected, text.actual) : undefined;
    // The agent's own account of the failure is in its log: named last, where the eye lands after the diff.
    const checks = diff ? `${text.details}\n\n${diff}` : text.details;
    const details = agentLog ? `${checks}\n\nagent log: ${agentLog}` : checks;
    const failure: StepFailure = {
      headline: sanitizeOutput(text.headline),
      details: sanitizeOutput(details),
      ...(diff ? { diff: sanitizeOutput(diff) } : {}),
      ...(text.expected !== undefined ? { expected: text.expected, actual: text.actual } : {}),
      ...(text.validation ? { validation: text.validation } : {}),
    };
    return { ...report, failure };
  }

  /**
   * The test run was cancelled: the run's call under way is aborted and no later step starts — the file's close then
   * waits for no agent (a run this worker drives itself; the host's runs hear the cancel in the main process).
   */
  stop(): void {
    this.run?.stop();
  }

  async close(): Promise<void> {
    await this.run?.close();
  }
}
