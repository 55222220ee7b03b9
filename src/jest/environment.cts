/**
 * `vitest-adcp/jest/environment`: Jest's node environment plus the storyboard runtime on each test file's global.
 *
 * Why an environment: Jest runs a test file's `require`s through its own module registry (a sandbox per file) and
 * deliberately routes every way out of it (`module.createRequire`, `process.getBuiltinModule`) back through that
 * registry, which loads ES modules only on Node ≥ 24.9 with Jest ≥ 30.5. The environment is Jest's documented
 * extension point that runs in the worker's own Node realm: here Node's `require` loads the (ESM) adapter and engine —
 * once per worker, as Vitest's `isolate: false` storyboard project does — and the test file gets only the result.
 */
import type { JestAdcpOptions, JestRuntime } from './suite.js' with { 'resolution-mode': 'import' };

const nodePath = require('node:path') as typeof import('node:path');
const { createRequire } = require('node:module') as typeof import('node:module');
const { writeFileSync } = require('node:fs') as typeof import('node:fs');
const { AGENT_LOG_ENV, RECORDS_DIR_ENV, recordsFile } = require('./records.cjs') as {
  AGENT_LOG_ENV: string;
  RECORDS_DIR_ENV: string;
  recordsFile: (dir: string, testPath: string) => string;
};

/** jest-environment-node from the user's project (it comes with jest), else from beside this package. */
function loadNodeEnvironment(): { TestEnvironment?: any; default?: any } {
  let firstError: unknown;
  for (const from of [nodePath.join(process.cwd(), 'package.json'), __filename]) {
    try {
      return createRequire(from)('jest-environment-node');
    } catch (error) {
      firstError ??= error;
    }
  }
  throw new Error(
    `vitest-adcp/jest/environment extends jest-environment-node, which does not resolve from ${process.cwd()} (it is installed with jest): ${firstError instanceof Error ? firstError.message : String(firstError)}`,
  );
}

const nodeEnvironment = loadNodeEnvironment();
const NodeEnvironment = nodeEnvironment.TestEnvironment ?? nodeEnvironment.default;
// Node's require of an ES module (Node ≥ 20.19 / 22.12).
const { createJestRuntime } = require('./suite.js') as {
  createJestRuntime: (sandbox: any, options?: JestAdcpOptions, rootDir?: string) => JestRuntime;
};

/** Whether a test file registered any storyboard (its steps planned, or a storyboard skipped as a whole). */
function hasRecords(records: JestRuntime['records']): boolean {
  return records.planned.length > 0 || records.steps.length > 0 || records.storyboards.length > 0;
}

class AdcpTestEnvironment extends NodeEnvironment {
  private readonly runtime: JestRuntime;
  private readonly testPath: string | undefined;

  constructor(config: any, context: any) {
    super(config, context);
    // Jest ≥ 27 passes { globalConfig, projectConfig }.
    const project = config.projectConfig ?? config;
    const given: JestAdcpOptions = project.testEnvironmentOptions?.adcp ?? {};
    // The started agent's log (`adcp.start`), named by the global setup for the failing steps.
    const agentLog = given.start ? process.env[AGENT_LOG_ENV] : undefined;
    const options: JestAdcpOptions = agentLog ? { ...given, agentLog } : given;
    this.runtime = createJestRuntime((this as any).global, options, project.rootDir);
    this.testPath = context?.testPath;
    (this as any).global.__vitestAdcpJest = this.runtime;
  }

  async teardown(): Promise<void> {
    // The step records of this test file, for the contract reporter in Jest's main process (reporters see no test meta).
    const dir = process.env[RECORDS_DIR_ENV];
    if (dir && this.testPath && hasRecords(this.runtime.records)) {
      try {
        writeFileSync(recordsFile(dir, this.testPath), JSON.stringify(this.runtime.records));
      } catch {
        // the reporter's folder is gone (its run ended): nothing to hand over
      }
    }
    await super.teardown();
  }
}

module.exports = AdcpTestEnvironment;
module.exports.TestEnvironment = AdcpTestEnvironment;
module.exports.default = AdcpTestEnvironment;
