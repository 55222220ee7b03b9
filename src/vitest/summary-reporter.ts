/**
 * A Vitest reporter that prints only the terminal summary of a storyboard run (report/summary.ts): per track, passed,
 * failed and skipped steps, skip reasons grouped and counted, and what would run the skipped work. The plugin adds it
 * to every run (`addSummaryReporter` in `configureVitest`); the contract reporter (reporter.ts) prints the same summary,
 * and a run with both prints it once. A run without storyboards prints nothing.
 */
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { claimSummary, renderTerminalSummary } from '../report/summary.js';

/** @public Vitest loads a reporter named by path through its default export (test/e2e/summary.test.ts does). */
export default class AdcpSummaryReporter implements Reporter {
  private root = process.cwd();
  private vitest: Vitest | undefined;
  private log: (message: string) => void = (message) => process.stdout.write(`${message}\n`);

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
    this.root = vitest.config.root;
    this.log = (message) => vitest.logger.log(message);
  }

  async onTestRunEnd(modules: ReadonlyArray<TestModule>): Promise<void> {
    if (!claimSummary(modules)) return;
    // Loaded here, not with the plugin: the config's main process needs the report builder only at a run's end.
    const { buildContractReport } = await import('./reporter.js');
    print(renderTerminalSummary(buildContractReport(modules, this.root, {}, this.vitest)), this.log);
  }
}

function print(text: string, log: (message: string) => void): void {
  if (text) log(`\n${text}`);
}

/**
 * Adds the summary reporter to a Vitest run, once (call it from a plugin's `configureVitest`, which runs before Vitest
 * creates its reporters): only beside a reporter that prints to the terminal, and not when the run has one already.
 */
export function addSummaryReporter(vitest: Vitest): void {
  const reporters = vitest.config.reporters as unknown[];
  if (!Array.isArray(reporters) || reporters.some((r) => r instanceof AdcpSummaryReporter)) return;
  // Only beside a reporter that writes to the terminal: `--reporter=json` alone writes its JSON to stdout.
  const name = (r: unknown) => (Array.isArray(r) ? r[0] : typeof r === 'string' ? r : undefined);
  if (!reporters.some((r) => TERMINAL_REPORTERS.has(name(r) as string))) return;
  reporters.push(new AdcpSummaryReporter());
}

/** Vitest's built-in reporters that print the run in the terminal. */
const TERMINAL_REPORTERS = new Set(['default', 'verbose', 'tree', 'dot', 'basic', 'minimal', 'agent']);
