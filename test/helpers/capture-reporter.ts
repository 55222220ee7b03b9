/**
 * A reporter for our end-to-end tests: writes every test case of the run (name,
 * full name, location, state, errors, adcp meta) and every module error to the
 * JSON file named by VITEST_ADCP_CAPTURE, so a parent test can assert on what
 * a real `vitest run` saw; and the order the workers started the test modules in.
 */
import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

export default class CaptureReporter implements Reporter {
  private readonly moduleStarts: string[] = [];

  onTestModuleStart(module: TestModule): void {
    this.moduleStarts.push(module.moduleId);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const out = process.env.VITEST_ADCP_CAPTURE;
    if (!out) return;
    const tests = [];
    const moduleErrors = [];
    for (const module of modules) {
      for (const error of module.errors())
        moduleErrors.push({ module: module.moduleId, message: error.message, stack: error.stack });
      for (const test of module.children.allTests()) {
        const result = test.result();
        tests.push({
          module: module.moduleId,
          name: test.name,
          fullName: test.fullName,
          location: test.location,
          state: result.state,
          note: (result as any).note,
          errors: (result.errors ?? []).map((e: any) => ({
            message: e.message,
            stack: e.stack,
            stacks: e.stacks,
            diff: e.diff,
          })),
          meta: test.meta(),
          project: {
            name: test.project.name,
            isolate: test.project.config.isolate,
            pool: test.project.config.pool,
            maxWorkers: test.project.config.maxWorkers,
            groupOrder: test.project.config.sequence.groupOrder,
            // What the project leaves to Node: patterns as source and flags, to be read back as RegExps.
            external: (test.project.config.server?.deps?.external ?? []).map((pattern: string | RegExp) =>
              typeof pattern === 'string' ? pattern : { source: pattern.source, flags: pattern.flags },
            ),
          },
        });
      }
    }
    writeFileSync(
      out,
      JSON.stringify(
        {
          tests,
          moduleErrors,
          moduleStarts: this.moduleStarts,
          unhandledErrors: unhandledErrors.map((e: any) => e?.message ?? String(e)),
        },
        null,
        2,
      ),
    );
  }
}
