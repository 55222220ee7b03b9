/**
 * The Vitest adapter: what a compiled storyboard module calls at run time.
 * The only place (with the compiler's generated code) that knows Vitest's
 * test context; the engine below it is framework-agnostic.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { inject, type TestContext } from 'vitest';
import type { RuntimeConfig } from '../config.js';
import type { StepOutcome } from '../model/records.js';
import type { StoryboardRun } from '../engine/run.js';
import { ReplayedSteps } from '../adapter/replayed.js';
import {
  loadFailureText,
  noPhasesSkip,
  retryRefusal,
  skipText,
  stepErrorStack,
  stepFailureText,
  type FailingValidation,
} from '../adapter/step-failure.js';
import { openStoryboardRun } from '../open-run.js';
import { escapeControl, neutraliseCommands, sanitizeOutput } from '../model/redact.js';
import { redactStepResult, stepKey } from '../report/record.js';
import type { Diagnostic, Storyboard } from '../model/storyboard.js';
import { runTarget } from '../report/envelope.js';
import type { AdcpPlannedStep, AdcpStepMeta, AdcpStoryboardMeta, StoryboardInfo } from '../model/step-meta.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by the adcpStoryboards() plugin. */
    vitestAdcp: RuntimeConfig;
  }
}

function providedConfig(): RuntimeConfig {
  try {
    return (inject('vitestAdcp') as RuntimeConfig | undefined) ?? {};
  } catch {
    return {};
  }
}

/**
 * An error whose stack points at the step's `it(` in the compiled module — i.e. at the YAML line.
 *
 * `message` is one line (the headline): Vitest's JUnit reporter writes `message` into `<failure message=…>`, and CI
 * pages show that attribute as the failure's title. The details (failed checks, sent, received, and Vitest's own diff
 * of expected/actual) travel in `diff`, which Vitest prints right under the message in the terminal, in the JUnit
 * `<failure>` body and in `github-actions` annotations (vitest 4.1.12 `printErrorInner`: message, `diff`, stack).
 * `showDiff: false` keeps Vitest's error serialisation from replacing `diff` with its own; `expected`/`actual` stay on
 * the error for IDE diff views.
 */
class StoryboardStepError extends Error {
  expected?: unknown;
  actual?: unknown;
  showDiff?: boolean;
  diff?: string;
  constructor(message: string, at: Error, validation?: FailingValidation, details?: string) {
    // The output sanitiser on everything Vitest prints of it (terminal, JUnit, github-actions annotations): agent text
    // in it is escaped already, and this holds for any text that is not. `details` may carry Vitest's coloured diff:
    // callers sanitise their own text, and only CI-command line starts are neutralised here.
    message = sanitizeOutput(message);
    super(message);
    this.name = 'StoryboardStepError';
    this.stack = stepErrorStack(this.name, message, at, validation);
    if (details) {
      this.diff = neutraliseCommands(details);
      this.showDiff = false;
    }
  }
}

type PrintDiff = (actual: unknown, expected: unknown) => string | undefined;
let printDiff: Promise<PrintDiff | undefined> | undefined;
/**
 * Vitest's own expected/actual diff (`@vitest/utils/diff`, resolved from the installed vitest so the versions match
 * and strict installs resolve it): with the details in `diff`, Vitest no longer renders it for us.
 */
function vitestDiff(): Promise<PrintDiff | undefined> {
  printDiff ??= (async () => {
    try {
      const fromVitest = createRequire(createRequire(import.meta.url).resolve('vitest/package.json'));
      const mod = (await import(pathToFileURL(fromVitest.resolve('@vitest/utils/diff')).href)) as {
        printDiffOrStringify: PrintDiff;
      };
      return mod.printDiffOrStringify;
    } catch {
      return undefined; // the details still print expected and actual
    }
  })();
  return printDiff;
}

export interface StoryboardSuite {
  /**
   * The step test's meta at collection time (`it(title, { meta })`): a test that never runs (filtered by `-t`, a
   * cancelled run) still tells reporters which step it was, so the report can say "not run" instead of dropping it.
   */
  planned(phaseId: string, stepId: string): { adcpPlanned: AdcpPlannedStep };
  step(ctx: TestContext, phaseId: string, stepId: string): Promise<void>;
  /** Vitest's timeout for a step test (and the close): above anything the engine's own bounds allow. */
  timeout(): number;
  noPhases(ctx: TestContext): void;
  close(): Promise<void>;
}

/** `loadWarnings`: the loader's warnings for this file, shown with the run's first step (its record, its annotations). */
export function storyboardSuite(storyboard: Storyboard, loadWarnings: readonly string[] = []): StoryboardSuite {
  let run: StoryboardRun | undefined;
  const getRun = () => (run ??= openStoryboardRun(storyboard, providedConfig(), { shareSessions: true, loadWarnings }));
  const info: StoryboardInfo = {
    id: storyboard.id,
    title: storyboard.title,
    version: storyboard.version,
    track: storyboard.track,
    file: storyboard.file,
    ...runTarget(providedConfig()),
  };
  const replays = new ReplayedSteps(info);
  const plannedStep = (phaseId: string, stepId: string): AdcpPlannedStep => {
    const task = storyboard.phases.find((p) => p.id === phaseId)?.steps.find((s) => s.id === stepId)?.task;
    return { storyboard: info, phase_id: phaseId, step_id: stepId, ...(task ? { task } : {}) };
  };

  return {
    planned(phaseId, stepId) {
      return { adcpPlanned: plannedStep(phaseId, stepId) };
    },
    timeout() {
      // A margin for the worker itself (module load, the first connection) on a busy machine.
      return getRun().worstCaseMs() + 10_000;
    },
    async step(ctx, phaseId, stepId) {
      // Captured synchronously, while the compiled module's frame is on the stack.
      const at = new Error();
      (ctx.task.meta as { adcpPlanned?: AdcpPlannedStep }).adcpPlanned = plannedStep(phaseId, stepId);
      const current = getRun();
      const outcome: StepOutcome = await current.settle(phaseId, stepId);
      const retry = (ctx.task.result as { retryCount?: number } | undefined)?.retryCount ?? 0;
      if (retry > 0) {
        // Not re-run, on purpose: a storyboard is a stateful sequence. A second call would be graded against state its
        // own first attempt may have changed (a half-made media buy), and later steps were already decided by the first
        // verdict. The first attempt's verdict stands; say so instead of pretending to retry.
        throw new StoryboardStepError(retryRefusal(outcome, current.secrets(), retry), at);
      }
      const result = redactStepResult(outcome.result, current.secrets());
      const meta: AdcpStepMeta = { id: stepKey(result), status: outcome.status, result, storyboard: info };
      (ctx.task.meta as { adcp?: AdcpStepMeta }).adcp = meta;
      const replayed = replays.take(current, phaseId, stepId, current.secrets());
      if (replayed.length > 0) (ctx.task.meta as { adcpReplayed?: AdcpStepMeta[] }).adcpReplayed = replayed;
      // Rules this run could not apply are shown with the step (test annotations, Vitest ≥ 3.2), never dropped.
      // Warnings and skip details can quote agent-supplied names (its tool list, ids): escaped for the terminal.
      for (const warning of result.warnings ?? [])
        await (ctx as { annotate?: (message: string, type?: string) => Promise<unknown> }).annotate?.(
          escapeControl(warning),
          'warning',
        );
      if (outcome.status === 'skipped') ctx.skip(skipText(result));
      if (outcome.status === 'failed') {
        const failure = stepFailureText(result, current.secrets());
        let details = sanitizeOutput(failure.details);
        if (failure.expected !== undefined) {
          const diff = (await vitestDiff())?.(failure.actual, failure.expected);
          if (diff) details += `\n\n${diff}`; // StoryboardStepError neutralises the whole of `details`
        }
        const error = new StoryboardStepError(failure.headline, at, failure.validation, details);
        if (failure.expected !== undefined) {
          error.expected = failure.expected;
          error.actual = failure.actual;
        }
        throw error;
      }
    },
    noPhases(ctx) {
      const skip = noPhasesSkip(storyboard);
      (ctx.task.meta as { adcpStoryboard?: AdcpStoryboardMeta }).adcpStoryboard = { storyboard: info, skip };
      ctx.skip(sanitizeOutput(`${skip.reason}: ${skip.detail}`));
    },
    async close() {
      await run?.close();
    },
  };
}

/** A storyboard file that failed to load: one failing test at the error's position. */
export function loadFailureSuite(diagnostics: Diagnostic[]) {
  return {
    fail(): never {
      const at = new Error();
      // One line for JUnit's message= (the first error, where the test is placed); every error with its fix below it.
      const { headline, details } = loadFailureText(diagnostics);
      throw new StoryboardStepError(headline, at, undefined, sanitizeOutput(details));
    },
  };
}
