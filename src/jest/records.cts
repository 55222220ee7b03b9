/**
 * How a test file's step records travel from Jest's worker (vitest-adcp/jest/environment) to the contract reporter
 * in Jest's main process (vitest-adcp/jest/reporter): Jest reporters see assertion results, not test meta, so the
 * environment writes each file's records to a folder the reporter created for the run and named in the environment
 * variable below before any worker started.
 */
const nodePath = require('node:path') as typeof import('node:path');
const { createHash } = require('node:crypto') as typeof import('node:crypto');

const RECORDS_DIR_ENV = 'VITEST_ADCP_JEST_RECORDS';
/**
 * The log of the agent the preset's global setup started (start-agent.cts), for the workers' failing steps to name:
 * set in Jest's main process before any worker started, as the records folder is.
 */
const AGENT_LOG_ENV = 'VITEST_ADCP_JEST_AGENT_LOG';

/** The file one test file's records go to: the reporter finds it from the test path Jest tells it about. */
function recordsFile(dir: string, testPath: string): string {
  return nodePath.join(dir, `${createHash('sha256').update(testPath).digest('hex').slice(0, 32)}.json`);
}

module.exports = { AGENT_LOG_ENV, RECORDS_DIR_ENV, recordsFile };
