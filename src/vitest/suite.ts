/**
 * The Vitest shim: what a compiled storyboard module calls at run time. The step protocol is
 * adapter/step-session.ts's, as under Jest; here only Vitest's side of it: the test's meta, annotations, `ctx.skip()`,
 * the error Vitest prints. The only place (with the compiler's generated code) that knows Vitest's test context.
 */
import { inject, type TestContext } from 'vitest';
import type { RuntimeConfig } from '../config.js';
import { StepSession, type StepFailure } from '../adapter/step-session.js';
import { loadFailureText, stepErrorStack, type FailingValidation } from '../adapter/step-failure.js';
import { HostedRun } from '../adapter/hosted-run.js';
import { showEndedNext } from './worker-order.js';
import { openStoryboardRun, settleBoundOf } from '../open-run.js';
import { sanitizeOutput } from '../model/redact.js';
import type { Diagnostic, Storyboard } from '../model/storyboard.js';
import { useMainCacheRoot } from '../cache/disk-cache.js';
import { StoredStoryboards, storedStoryboardsDir } from '../cache/stored-storyboards.js';
import { storyboardInfo } from '../adapter/storyboard-info.js';
import type { AdcpPlannedStep, AdcpStepMeta, AdcpStoryboardMeta } from '../model/step-meta.js';

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
 * pages show that attribute as the failure's title. The details (failed checks, sent, received, and the step
 * session's expected/actual diff) travel in `diff`, which Vitest prints right under the message in the terminal, in the JUnit
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
    // in it is escaped already (the step session's), and this holds for any text that is not.
    message = sanitizeOutput(message);
    super(message);
    this.name = 'StoryboardStepError';
    this.stack = stepErrorStack(this.name, message, at, validation);
    if (details) {
      this.diff = sanitizeOutput(details);
      this.showDiff = false;
    }
  }
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

/** The storyboard a compiled module embeds (no store for it): base64 of its JSON (compile/compile.ts says why). */
export function storyboardData(base64: string): Storyboard {
  return JSON.parse(Buffer.from(base64, 'base64').toString('utf8')) as Storyboard;
}

let store: StoredStoryboards | undefined;

/**
 * The storyboard a compiled module names by digest, from this user's store (cache/stored-storyboards.ts), where the
 * main process put it as it handed Vite the module: in the cache directory it names (`userCacheRoot`), whatever this
 * worker's environment says (`test.env` may set `XDG_CACHE_HOME` or `HOME` for the tests alone). Missing only when
 * something removed it since.
 */
export function storyboardStored(digest: string): Storyboard {
  if (!store) {
    useMainCacheRoot(providedConfig().userCacheRoot);
    store = StoredStoryboards.open();
  }
  const json = store?.read(digest);
  if (json === undefined)
    throw new Error(
      `vitest-adcp: the compiled storyboard ${digest} is not in ${store?.dir ?? storedStoryboardsDir()} — something removed it after the run compiled it. Run again; if it persists, clear that directory.`,
    );
  return JSON.parse(json) as Storyboard;
}

/** `loadWarnings`: the loader's warnings for this file, shown with the run's first step (its record, its annotations). */
export function storyboardSuite(storyboard: Storyboard, loadWarnings: readonly string[] = []): StoryboardSuite {
  // Before anything here opens a cache: the main process's user cache directory, not the tests' own.
  useMainCacheRoot(providedConfig().userCacheRoot);
  const openLocal = () => openStoryboardRun(storyboard, providedConfig(), { shareSessions: true, loadWarnings });
  const host = providedConfig().runHost;
  const session: StepSession = new StepSession({
    storyboard,
    info: storyboardInfo(storyboard, providedConfig()),
    // With the plugin's run host, the main process runs this storyboard (with the others, at once) and the steps read
    // its outcomes; without one (or for a file it does not run), this worker runs it.
    openRun: () =>
      host
        ? new HostedRun(host, storyboard, openLocal, () =>
            // The plan the session made for the tests (the built-in roles, the provided corpus), not made again.
            settleBoundOf(storyboard, providedConfig(), { steps: session.planOf().map(({ step }) => step) }),
          )
        : openLocal(),
    corpusRoot: providedConfig().corpusRoot,
    agentLog: providedConfig().agentLog,
  });
  type Meta = { adcpPlanned?: AdcpPlannedStep; adcp?: AdcpStepMeta; adcpReplayed?: AdcpStepMeta[] };

  return {
    planned(phaseId, stepId) {
      return { adcpPlanned: session.plannedStep(phaseId, stepId) };
    },
    timeout() {
      return session.timeout();
    },
    async step(ctx, phaseId, stepId) {
      // Captured synchronously, while the compiled module's frame is on the stack.
      const at = new Error();
      const meta = ctx.task.meta as Meta;
      meta.adcpPlanned = session.plannedStep(phaseId, stepId);
      const retry = (ctx.task.result as { retryCount?: number } | undefined)?.retryCount ?? 0;
      stopOnRunCancel(ctx.signal, session);
      const report = await session.step(phaseId, stepId, { retry });
      if (report.kind === 'retry_refused') throw new StoryboardStepError(report.message, at);
      meta.adcp = report.meta;
      if (report.replayed.length > 0) meta.adcpReplayed = report.replayed;
      // Rules this run could not apply are shown with the step (test annotations, Vitest ≥ 3.2), never dropped.
      for (const warning of report.warnings)
        await (ctx as { annotate?: (message: string, type?: string) => Promise<unknown> }).annotate?.(
          warning,
          'warning',
        );
      if (report.skip !== undefined) ctx.skip(report.skip);
      if (report.failure) throw stepError(report.failure, at);
    },
    noPhases(ctx) {
      const { meta, text } = session.noPhases();
      (ctx.task.meta as { adcpStoryboard?: AdcpStoryboardMeta }).adcpStoryboard = meta;
      ctx.skip(text);
    },
    async close() {
      await session.close();
      // The worker's next file: one whose run the host has ended, when one is further on in its order.
      if (host) await showEndedNext(host);
    },
  };
}

/**
 * Vitest ends a test at once when its run is cancelled (its cancel key, the bin's SIGINT/SIGTERM), aborting the test's
 * signal with a TestRunAbortError, but the settle under way would go on: the run is stopped too, so the agent's call is
 * aborted and the file's close does not wait it out. A test's own timeout aborts the signal too: that stops nothing.
 */
function stopOnRunCancel(signal: AbortSignal | undefined, session: { stop(): void }): void {
  signal?.addEventListener(
    'abort',
    () => {
      if ((signal.reason as { name?: unknown } | undefined)?.name === 'TestRunAbortError') session.stop();
    },
    { once: true },
  );
}

function stepError(failure: StepFailure, at: Error): StoryboardStepError {
  const error = new StoryboardStepError(failure.headline, at, failure.validation, failure.details || undefined);
  if (failure.expected !== undefined) {
    error.expected = failure.expected;
    error.actual = failure.actual;
  }
  return error;
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
