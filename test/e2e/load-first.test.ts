/**
 * Issue 31, item 5, under `vitest run` with the plugin: a storyboard with a misspelt task beside one that loads, and an
 * agent that is not up: the load error first (file:line:col and its rule), then the unreachable agent in one line, for
 * the file that loaded. Before, the run said only "cannot be reached". The bin's side of items 5 and 6, from the packed
 * package: test/e2e/newcomer.test.ts.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedPort } from '../helpers/ports.js';
import { NO_AGENT_ENV as CLEAN_ENV, repoRoot, runVitest } from '../helpers/run-vitest.js';

const misspelt = 'fixtures/broken/misspelled-task.storyboard.yaml';
const discovery = 'fixtures/storyboards/discovery.storyboard.yaml';
/** The misspelt task's load error, located, as the plugin prints it. */
const LOAD_ERROR =
  'fixtures/broken/misspelled-task.storyboard.yaml:9:15: [misspelled_task] task "get_adcp_capabilites" in step "caps" is not an AdCP or runner task';

describe('item 5: load errors first, then the unreachable agent in one line', () => {
  it('the plugin (`vitest run`): the load error, then the agent line, once; no test ran', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const run = await runVitest({
      config: join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts'),
      env: { ...CLEAN_ENV, ADCP_AGENT_URL: url, E2E_STORYBOARDS: `${misspelt},${discovery}` },
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode).toBe(1);
    const loadError = output.indexOf(LOAD_ERROR);
    const agentLine = output.indexOf(
      `vitest-adcp cannot run the 1 storyboard file that loads: the agent at ${url} cannot be reached`,
    );
    expect(loadError >= 0 && agentLine > loadError, output).toBe(true);
    expect(output.match(/cannot be reached/g)).toHaveLength(1);
    expect(run.tests).toEqual([]);
  });
});
