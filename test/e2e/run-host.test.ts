/**
 * Storyboards in flight at once (src/plugin/run-host.ts): the main process runs a run's storyboard files up to
 * `concurrency` at a time, and the workers' step tests read the outcomes. Counted at a proxy in front of the fixture
 * agent, every call held 300 ms (`slow_ms_300`), so that calls of different storyboards overlap only if they were in
 * flight together: more at once than the run has workers by default, one at a time with `concurrency: 1`, the same
 * verdicts either way — and a filtered run (`-t`) calls nothing of the storyboards it filtered out.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { countingProxy, type CountingProxy } from '../helpers/counting-proxy.js';
import { repoRoot, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `run-host-${process.pid}`);
const STORYBOARDS = ['a', 'b', 'c', 'd', 'e', 'f'];

/** A config running the storyboards of `dir` (default: the scratch directory's), with the plugin options `options`. */
function writeConfig(name: string, options: string, dir = scratch): string {
  const file = join(scratch, `${name}.config.ts`);
  writeFileSync(
    file,
    [
      "import { defineConfig } from 'vitest/config';",
      `import { adcpStoryboards } from ${JSON.stringify(join(repoRoot, 'test', 'e2e', 'plugin-under-test.ts'))};`,
      `export default defineConfig({ root: ${JSON.stringify(repoRoot)}, plugins: [adcpStoryboards({ include: [${JSON.stringify(`${dir}/*.storyboard.yaml`)}], timeoutMs: 10_000${options} })], test: { include: [], passWithNoTests: true } });`,
      '',
    ].join('\n'),
  );
  return file;
}

beforeAll(() => {
  mkdirSync(scratch, { recursive: true });
  for (const name of STORYBOARDS) {
    writeFileSync(
      join(scratch, `${name}.storyboard.yaml`),
      [
        `id: in_flight_${name}`,
        `title: In flight ${name}`,
        'phases:',
        '  - id: p',
        '    steps:',
        `      - id: first_${name}`,
        '        task: get_adcp_capabilities',
        '        validations: [{ check: field_present, path: adcp }]',
        `      - id: second_${name}`,
        '        task: get_adcp_capabilities',
        '        validations: [{ check: field_present, path: supported_protocols }]',
        '',
      ].join('\n'),
    );
  }
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function run(config: string, args: string[] = []): Promise<{ run: VitestRun; proxy: CountingProxy }> {
  const proxy = await countingProxy(inject('agentOrigin') + '/x/slow_ms_300/mcp');
  try {
    const result = await runVitest({ config, env: { ADCP_AGENT_URL: proxy.url }, args });
    return { run: result, proxy };
  } finally {
    await proxy.close();
  }
}

const verdicts = (run: VitestRun) => run.tests.map((t) => `${t.name} ${t.state}`).sort();

describe('storyboards in flight at once', () => {
  it('by default, more storyboards call the agent at once than the run has workers, with the verdicts of one at a time', async () => {
    const [concurrent, sequential] = [
      await run(writeConfig('default', '')),
      await run(writeConfig('one', ', concurrency: 1')),
    ];
    expect(concurrent.run.exitCode, concurrent.run.stderr).toBe(0);
    expect(verdicts(concurrent.run)).toHaveLength(12);
    expect(verdicts(concurrent.run)).toEqual(verdicts(sequential.run));
    for (const test of concurrent.run.tests) expect(test.state).toBe('passed');
    // Two workers at most on this machine: without the run host, two storyboards were in flight.
    expect(concurrent.proxy.maxInFlight('tools/call')).toBeGreaterThan(2);
    expect(sequential.proxy.maxInFlight('tools/call')).toBe(1);
    // Each step called once (and the preflight's one call), whoever ran it.
    expect(concurrent.proxy.toolCalls()).toHaveLength(12 + 1);
  });

  it('a filtered run calls only what the steps it picked need', async () => {
    const { run: filtered, proxy } = await run(writeConfig('filtered', ''), ['-t', 'second_c']);
    expect(filtered.exitCode, filtered.stderr).toBe(0);
    const ran = filtered.tests.filter((t) => t.state === 'passed').map((t) => t.meta.adcp?.result.step_id);
    expect(ran).toEqual(['second_c']);
    // The preflight's call, then c's two steps (second_c's settle replays first_c); nothing of the other five.
    expect(proxy.toolCalls()).toHaveLength(1 + 2);
  });

  it('refuses a concurrency that is not a whole number of 1 or more', async () => {
    const { run: refused } = await run(writeConfig('zero', ', concurrency: 0'));
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/concurrency is how many storyboards run at once/);
  });
});

// A worker takes one file at a time and waits for its outcomes: the files go to it in the order the last run ended them
// in (src/plugin/finish-times.ts, kept in cacheDir), not smallest first, which held a ready file behind one still
// running. Here the small file's run is the long one (three calls of 300 ms), the large file's the short one (one).
describe("the worker's order", () => {
  /** A directory of its own for a test's storyboards, and the config that runs them with a cache of their own. */
  function orderDir(name: string): { dir: string; config: string } {
    const dir = join(scratch, name);
    mkdirSync(dir, { recursive: true });
    return { dir, config: writeConfig(name, `, cacheDir: ${JSON.stringify(join(dir, 'cache'))}`, dir) };
  }
  /** A storyboard of one call a step (300 ms each behind the proxy), after `padding` comment lines: its file's size. */
  function storyboard(dir: string, file: string, id: string, steps: string[], padding = 0): void {
    writeFileSync(
      join(dir, file),
      [
        ...Array.from({ length: padding }, (_, i) => `# padding: the file's size, not its run's length (${i})`),
        `id: ${id}`,
        `title: ${id}`,
        'phases:',
        '  - id: p',
        '    steps:',
        ...steps.flatMap((step) => [`      - id: ${step}`, '        task: get_adcp_capabilities']),
        '',
      ].join('\n'),
    );
  }
  const order = (r: VitestRun) => r.moduleStarts.map((file) => basename(file));

  it('is smallest first on a first run, then the order the run before ended the files in', async () => {
    const { dir, config } = orderDir('order');
    storyboard(dir, 'long.storyboard.yaml', 'ends_last', ['a', 'b', 'c']);
    storyboard(dir, 'quick.storyboard.yaml', 'ends_first', ['only'], 40);
    const first = (await run(config)).run;
    expect(first.exitCode, first.stderr).toBe(0);
    expect(order(first)).toEqual(['long.storyboard.yaml', 'quick.storyboard.yaml']);
    const second = (await run(config)).run;
    expect(second.exitCode, second.stderr).toBe(0);
    expect(order(second)).toEqual(['quick.storyboard.yaml', 'long.storyboard.yaml']);
    expect(verdicts(second)).toEqual(verdicts(first));
  });

  // The order the run before ended the files in is a guess, and a first run has none: at each file's end the worker
  // takes next the files whose runs the host has ended since (src/vitest/worker-order.ts). Smallest first, the worker
  // waits on the small file's run (three calls); the middle one's run is the longest (eight calls), the large one's the
  // shortest (one): it has ended when the small file ends, the middle one has not.
  it("takes next, at each file's end, the files whose runs have ended: on a first run too", async () => {
    const { dir, config } = orderDir('ended-first');
    const steps = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);
    storyboard(dir, 'small_waited_on.storyboard.yaml', 'small_waited_on', steps(3));
    storyboard(dir, 'middle_longest.storyboard.yaml', 'middle_longest', steps(8), 20);
    storyboard(dir, 'large_shortest.storyboard.yaml', 'large_shortest', steps(1), 60);
    const { run: first } = await run(config);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(order(first)).toEqual([
      'small_waited_on.storyboard.yaml',
      'large_shortest.storyboard.yaml',
      'middle_longest.storyboard.yaml',
    ]);
    expect(first.tests.filter((t) => t.state !== 'passed')).toEqual([]);
  });
});
