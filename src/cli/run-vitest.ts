/**
 * The run itself: Vitest through its Node API (`createVitest` + `start`) with `config: false` and the plugin inline,
 * its reporters and timeouts, and the exit status it ends with.
 */
import { resolve } from 'node:path';
import type { Reporter } from 'vitest/node';
import { DEFAULT_TIMEOUT_MS } from '../config.js';
import type { AdcpStoryboardsOptions } from '../plugin/plugin.js';
import { configurationFailure, isConfigurationError } from './failure.js';
import { importVitest } from './import-vitest.js';
import { Interruption } from './interruption.js';
import type { Invocation } from './invocation.js';

type Vitest = Awaited<ReturnType<typeof import('vitest/node').createVitest>>;

/**
 * A test waits for its step's calls to the agent, each bounded by `timeoutMs`;
 * one `it` can wait for several (a branch set settles through its peers;
 * seeding and polling add calls). Vitest's own timer is only a backstop, so it
 * must never fire before the step's bound has produced a verdict.
 */
const VITEST_TIMEOUT_PER_STEP_TIMEOUT = 4;

/** The reporters of the run: Vitest's (or those named after `--`), and the contract report and its views when asked for. */
async function reporters(invocation: Invocation, cwd: string): Promise<unknown[]> {
  const named = invocation.vitest.options.reporter;
  const theirs =
    named === undefined
      ? ['default']
      : ([] as unknown[]).concat(named).map((r) => (typeof r === 'string' && /^\.\.?\//.test(r) ? resolve(cwd, r) : r));
  const ours: Reporter[] = [];
  if (invocation.report) {
    const { default: AdcpReporter } = await import('../vitest/reporter.js');
    ours.push(
      new AdcpReporter({
        outputFile: invocation.report,
        htmlFile: invocation.reportHtml,
        markdownFile: invocation.reportMarkdown,
      }),
    );
  } else if (invocation.reportHtml || invocation.reportMarkdown) {
    const { ReportViewsReporter } = await import('./views-reporter.js');
    ours.push(new ReportViewsReporter({ htmlFile: invocation.reportHtml, markdownFile: invocation.reportMarkdown }));
  }
  return [...theirs, ...ours];
}

/** Vitest's options for the run: timeouts from the step timeout, the options after `--`, and what makes this command. */
function vitestOptions(
  invocation: Invocation,
  plugin: AdcpStoryboardsOptions,
  cwd: string,
  runReporters: unknown[],
): Record<string, unknown> {
  const timeout = (plugin.timeoutMs ?? DEFAULT_TIMEOUT_MS) * VITEST_TIMEOUT_PER_STEP_TIMEOUT;
  const { reporter: _named, ...theirs } = invocation.vitest.options;
  return {
    testTimeout: timeout,
    hookTimeout: timeout,
    passWithNoTests: false,
    // Vitest's options after `--` (-t, --bail, --outputFile, …), over the defaults above, never over what makes this command.
    ...theirs,
    config: false as const,
    root: cwd,
    watch: false,
    run: true,
    include: [],
    reporters: runReporters,
  };
}

/**
 * Starts loading what a run needs — Vitest's Node API and the plugin, the largest imports of a run — while the agent is
 * asked for its capabilities: that wait is the network's, and the main thread is free meanwhile. Failures are not
 * reported here: `runVitest` imports the same modules again (the same promises) and reports them where it always did.
 */
export function preloadRun(): void {
  void importVitest().catch(() => {});
  void import('../plugin/plugin.js').catch(() => {});
}

/** Runs the storyboards with `plugin` (the selection made); resolves to the exit status. */
export async function runVitest(
  invocation: Invocation,
  plugin: AdcpStoryboardsOptions,
  cwd: string,
  secrets: readonly string[],
): Promise<number> {
  let vitestApi: typeof import('vitest/node');
  let runReporters: unknown[];
  try {
    vitestApi = await importVitest();
    runReporters = await reporters(invocation, cwd);
  } catch (error) {
    return configurationFailure(error, false, secrets);
  }
  const interruption = new Interruption();
  const options = vitestOptions(invocation, plugin, cwd, [...runReporters, interruption.reporter()]);
  const { createVitest } = vitestApi;
  const { adcpStoryboards } = await import('../plugin/plugin.js');
  let vitest: Vitest;
  try {
    vitest = await createVitest('test', options as Parameters<typeof createVitest>[1], {
      plugins: [adcpStoryboards(plugin), interruption.plugin()],
    });
  } catch (error) {
    interruption.stopListening();
    return configurationFailure(error, false, secrets);
  }
  const stopped = await startRun(vitest, invocation.vitest.filters, interruption);
  const code = stopped
    ? configurationFailure(stopped, false, secrets)
    : (interruption.exitCode ?? (runFailed(vitest) ? 1 : 0));
  // Set before exit(): as under `vitest run`, a handle left open cannot keep CI waiting past
  // teardownTimeout — Vitest then ends the process with this status.
  process.exitCode = code;
  await vitest.exit();
  return code;
}

/**
 * Starts the run, as startVitest runs it, but a configuration error from the run's start — the plugin's preflight
 * (agent-preflight.ts: an unreachable agent, refused credentials), thrown as the run starts or from the storyboard
 * project's global setup — is this command's exit 2 with its one message, not a stack under "Unhandled Error" and
 * exit 1: resolves to that error, if one stopped the run.
 */
async function startRun(vitest: Vitest, filters: string[], interruption: Interruption): Promise<Error | undefined> {
  let stopped: Error | undefined;
  try {
    await vitest.start(filters);
  } catch (error) {
    if (isConfigurationError(error)) stopped = error;
    else if ((error as { code?: unknown })?.code !== 'VITEST_FILES_NOT_FOUND') {
      process.exitCode = 1;
      vitest.logger.printError(error, { fullStack: true, type: 'Unhandled Error' });
    }
  } finally {
    interruption.stopListening();
  }
  return stopped;
}

/** Whether a step failed, an error went unhandled, or something set a failing exit status. */
function runFailed(vitest: Vitest): boolean {
  return (
    vitest.state.getCountOfFailedTests() > 0 ||
    vitest.state.getUnhandledErrors().length > 0 ||
    Number(process.exitCode ?? 0) !== 0
  );
}
