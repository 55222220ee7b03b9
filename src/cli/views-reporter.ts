/**
 * `--report-html` / `--report-markdown` without `--report`: the HTML report and the markdown summary of the run, built
 * from the same contract report the `vitest-adcp/reporter` writes (vitest/reporter.ts `buildContractReport`), without
 * writing its JSON (the terminal summary is the plugin's summary reporter's). With `--report` the bin uses that
 * reporter, which writes all three.
 */
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { buildContractReport } from '../vitest/reporter.js';
import { writeReportViews } from '../report/write.js';

export class ReportViewsReporter implements Reporter {
  private root = process.cwd();
  private startedAt = new Date().toISOString();
  private testNamePattern: string | null = null;
  private log: (message: string) => void = () => {};

  constructor(private readonly files: { htmlFile?: string; markdownFile?: string }) {}

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
    this.testNamePattern = vitest.config.testNamePattern?.source ?? null;
    this.log = (message) => vitest.logger.log(message);
  }

  onTestRunStart(): void {
    this.startedAt = new Date().toISOString();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const report = buildContractReport(modules, this.root, {
      started_at: this.startedAt,
      finished_at: new Date().toISOString(),
      test_name_pattern: this.testNamePattern,
    });
    for (const line of writeReportViews(report, { root: this.root, ...this.files })) this.log(line);
  }
}
