/**
 * Storyboards under Jest (the repo's jest devDependency, 30.5): the preset, the transformer, the adapter and the
 * matchers, built like cli.test.ts into a private dist/ (so the packed-package tests, which rebuild dist/, cannot pull
 * it away), run by real `jest` on a fresh project against the fixture agent. The fresh-repo runs of the packed package
 * on Jest 29 and 30.5 are in the version matrix (`npm run test:matrix`).
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { resolveCorpus } from '../../src/corpus.js';
import {
  FAILING_CHECK,
  PASSING_STORYBOARD,
  readJestJson,
  USER_STORYBOARD,
  stepIdOf,
  stepLocations,
  writeJestProjectFiles,
} from '../helpers/jest-project.js';
import { expectGone, interrupted } from '../helpers/agent-gone.js';
import { copyBuiltDist } from '../helpers/built.js';
import { assertValidContractReport } from '../helpers/contract-schema.js';
import { closedPort } from '../helpers/ports.js';
import { NO_AGENT_ENV, repoRoot, runNode } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `jest-${process.pid}`);
const project = join(scratch, 'project');
const jestBin = join(repoRoot, 'node_modules', 'jest', 'bin', 'jest.js');
const corpusFile = join(resolveCorpus(undefined, repoRoot).root, 'universal', 'capability-discovery.yaml');
/** Where the preset writes the corpus stubs of a project (src/jest/preset.cts), and so how Jest labels them. */
const STUB_DIR = '.adcp-corpus';
/** Jest's label of a test file in its default reporter's output: ` PASS  <path relative to rootDir>`. */
const labels = (output: string) => [...output.matchAll(/^\s*(?:PASS|FAIL)\s+(\S+)/gm)].map((m) => m[1]!);

beforeAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(project, { recursive: true });
  // `tsc -p tsconfig.build.json --noCheck --declaration false`, built once per test run (test/helpers/built.ts).
  await copyBuiltDist(join(scratch, 'dist'), { sourceMaps: true });
  symlinkSync(join(repoRoot, 'schema'), join(scratch, 'schema'));
  copyFileSync(join(repoRoot, 'package.json'), join(scratch, 'package.json'));
  // A CommonJS project (no "type"), as most Jest projects are.
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'jest-agent', private: true }));
  symlinkSync(join(repoRoot, 'node_modules'), join(project, 'node_modules'));
  writeFileSync(
    join(project, 'jest.config.js'),
    `module.exports = { preset: ${JSON.stringify(join(scratch, 'dist', 'jest', 'jest-preset.cjs'))}, setupFilesAfterEnv: [${JSON.stringify(join(scratch, 'dist', 'cjs', 'matchers', 'jest.js'))}], reporters: ['default', [${JSON.stringify(join(scratch, 'dist', 'jest', 'reporter.cjs'))}, { outputFile: 'reports/jest-adcp.json', markdownFile: 'reports/jest-adcp.md', htmlFile: 'reports/jest-adcp.html', ndjson: true }]] };\n`,
  );
  writeJestProjectFiles(project);
}, 120_000);
afterAll(() => {
  // The corpus stubs are in the project (.adcp-corpus), gone with it.
  rmSync(scratch, { recursive: true, force: true });
});

function jest(args: string[], env: Record<string, string | undefined> = {}) {
  return runNode([jestBin, '--ci', '--testLocationInResults', '--json', '--outputFile=results.json', ...args], {
    cwd: project,
    env: {
      ADCP_AGENT_URL: inject('agentUrl'),
      ADCP_AUTH_TOKEN: undefined,
      ADCP_STORYBOARDS: undefined,
      ADCP_COMPLIANCE: undefined,
      ...env,
    },
  });
}

describe('Jest 30.5 with the preset', () => {
  it('runs a user storyboard and a corpus storyboard (ADCP_STORYBOARDS): names, YAML locations, verdicts, the failure located at its check; the matchers', async () => {
    const stepSummary = join(scratch, 'github-step-summary.md');
    writeFileSync(stepSummary, '# an earlier step\n');
    const run = await jest([], { ADCP_STORYBOARDS: 'capability_discovery', GITHUB_STEP_SUMMARY: stepSummary });
    const output = run.stdout + run.stderr;
    expect(run.exitCode, output).toBe(1); // caps_wrong fails, on purpose
    const results = readJestJson(join(project, 'results.json'));
    const byFile = (suffix: string) => results.testResults.find((r) => r.name.endsWith(suffix))!;

    const user = byFile('smoke.storyboard.yaml');
    expect(user.assertionResults.map((a) => [a.fullName, a.status, a.location])).toEqual([
      ['My smoke test (my_smoke) Discovery (discovery) Capabilities (caps)', 'passed', { line: 7, column: 9 }],
      [
        'My smoke test (my_smoke) Discovery (discovery) Capabilities, expecting another correlation id (caps_wrong)',
        'failed',
        { line: 17, column: 9 },
      ],
    ]);
    const failure = user.assertionResults[1]!.failureMessages.join('\n');
    expect(failure).toMatch(
      /^StoryboardStepError: field_value at \/context\/correlation_id: expected "not-smoke", got "smoke" — storyboards\/smoke\.storyboard\.yaml:23:13\n/,
    );
    // The details under the headline (Jest has no `diff` field) and, first frame, the failing check's YAML line.
    expect(failure).toMatch(/\n\d+ of \d+ validations failed in step "caps_wrong"/);
    const frames = failure
      .slice(failure.indexOf('\n    at field_value ('))
      .split('\n')
      .filter((l) => /^\s+at .*:\d+:\d+\)?$/.test(l));
    expect(frames[0]).toMatch(
      new RegExp(`at field_value \\(.*smoke\\.storyboard\\.yaml:${FAILING_CHECK.line}:${FAILING_CHECK.column}\\)$`),
    );
    expect(frames[1]).toMatch(/smoke\.storyboard\.yaml:17:9\)$/); // then the step's own line
    expect(output).not.toMatch(/done\(\)|Exceeded timeout/); // a one-parameter callback would be Jest's `done`

    // The corpus storyboard: a stub test file standing for it; every step at its line in the corpus YAML.
    const corpus = byFile('capability-discovery.storyboard.yaml');
    expect(corpus.name).toBe(join(project, STUB_DIR, 'universal', 'capability-discovery.storyboard.yaml'));
    // Labelled by its corpus path below the project, as Jest labels the user's own files: no temp directory in it.
    expect(labels(output).sort()).toEqual([
      '.adcp-corpus/universal/capability-discovery.storyboard.yaml',
      'storyboards/auth.test.js',
      'storyboards/smoke.storyboard.yaml',
    ]);
    // Not the stub folder the preset used to write in the system temp directory (the repository itself may be under /tmp).
    expect(output).not.toMatch(/vitest-adcp-jest-[0-9a-f]{12}/);
    expect(output).not.toMatch(/(PASS|FAIL)\s+\.\.\//);
    expect(corpus.assertionResults.length).toBeGreaterThan(0);
    const lines = stepLocations(corpusFile);
    for (const a of corpus.assertionResults) {
      expect(a.status, a.failureMessages.join('\n')).toBe('passed');
      expect(a.location, a.fullName).toEqual(lines.get(stepIdOf(a.title)));
    }
    expect(corpus.assertionResults[0]!.fullName).toMatch(/^Capability discovery \(capability_discovery\) /i);

    const matchers = byFile('auth.test.js');
    expect(matchers.assertionResults.map((a) => [a.status, a.failureMessages.join('\n')])).toEqual([['passed', '']]);
    expect(results.numFailedTests).toBe(1);

    // The contract report of vitest-adcp/jest/reporter: valid (that it equals Vitest's report of the same storyboards
    // is test/e2e/same-report.test.ts's).
    const jestReport = JSON.parse(readFileSync(join(project, 'reports', 'jest-adcp.json'), 'utf8'));
    assertValidContractReport(jestReport);
    expect(jestReport.storyboards.map((sb: any) => [sb.storyboard_id, sb.status, sb.steps.length]).sort()).toEqual([
      ['capability_discovery', 'passed', corpus.assertionResults.length],
      ['my_smoke', 'failed', 2],
    ]);
    expect(output).toMatch(
      /vitest-adcp: runner output contract report \(\d+ steps: \d+ passed, 1 failed, 0 skipped\) written to /,
    );

    // The views of the same report: the markdown summary, appended to the job summary too,
    // and the self-contained HTML report.
    const markdown = readFileSync(join(project, 'reports', 'jest-adcp.md'), 'utf8');
    expect(markdown.split('\n')[0]!).toMatch(/^## ❌ AdCP storyboards: /);
    // Why this corpus, as under Vitest: the workers' files report the choice their corpus was made by.
    const sdk = JSON.parse(
      readFileSync(join(repoRoot, 'node_modules', '@adcp', 'sdk', 'package.json'), 'utf8'),
    ).version;
    expect(markdown).toContain(`(the version @adcp/sdk ${sdk} pins)`);
    expect(readFileSync(stepSummary, 'utf8')).toBe(`# an earlier step\n${markdown}\n`);
    const html = readFileSync(join(project, 'reports', 'jest-adcp.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    for (const id of ['my_smoke', 'capability_discovery']) expect(html).toContain(id);
    expect(output).toContain('vitest-adcp: markdown summary written to ');
    expect(output).toContain(`vitest-adcp: markdown summary appended to the GitHub job summary (${stepSummary})`);
    expect(output).toContain('vitest-adcp: HTML report written to ');

    // The NDJSON stream beside the JSON: the run's start, every step record of the JSON, its end with the same summary.
    const ndjson = readFileSync(join(project, 'reports', 'jest-adcp.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(ndjson[0]).toMatchObject({ type: 'run_start', contract: { id: 'runner_output_contract' } });
    expect(ndjson.at(-1)).toMatchObject({ type: 'run_end', summary: jestReport.summary });
    const streamed = ndjson
      .filter((l) => l.type === 'step')
      .map((l) => `${l.storyboard_id}/${l.step.step_id} ${l.step.passed}`)
      .sort();
    const reported = jestReport.storyboards
      .flatMap((sb: any) => sb.steps.map((st: any) => `${sb.storyboard_id}/${st.step_id} ${st.passed}`))
      .sort();
    expect(streamed).toEqual(reported);
  }, 120_000);

  it('runs only the corpus suite its path pattern names, labelled by its corpus path', async () => {
    const run = await jest(['universal/capability'], { ADCP_STORYBOARDS: 'capability_discovery' });
    const output = run.stdout + run.stderr;
    expect(run.exitCode, output).toBe(0);
    expect(labels(output)).toEqual(['.adcp-corpus/universal/capability-discovery.storyboard.yaml']);
    expect(readJestJson(join(project, 'results.json')).testResults.map((r) => r.name)).toEqual([
      join(project, STUB_DIR, 'universal', 'capability-discovery.storyboard.yaml'),
    ]);
  }, 120_000);

  it('runs one step with -t, replaying the steps before it (reported as replayed, not graded)', async () => {
    const run = await jest(['-t', '\\(caps_wrong\\)', 'storyboards/smoke']);
    // No corpus storyboard selected this time: the stubs of the earlier runs are gone, so none of them runs.
    expect(existsSync(join(project, STUB_DIR))).toBe(false);
    const results = readJestJson(join(project, 'results.json'));
    expect(run.exitCode, run.stdout + run.stderr).toBe(1);
    expect([results.numFailedTests, results.numPassedTests, results.numPendingTests]).toEqual([1, 0, 1]);
    // The report: the step -t filtered out but the settle replayed is reported as replayed, not graded; only the
    // selected step counts.
    const report = JSON.parse(readFileSync(join(project, 'reports', 'jest-adcp.json'), 'utf8'));
    assertValidContractReport(report);
    expect(report.summary).toMatchObject({ total_steps: 1, steps_passed: 0, steps_failed: 1, steps_not_run: 1 });
    expect(report.storyboards[0].steps[0].not_run).toMatchObject({ reason: 'replayed' });
    expect(existsSync(join(project, 'results.json'))).toBe(true);
  }, 120_000);

  it("passes a step the contract skips (Jest cannot skip a started test) and prints the contract's reason with it", async () => {
    const run = await jest(['storyboards/smoke'], {
      ADCP_AGENT_URL: `${inject('agentOrigin')}/x/without@get_adcp_capabilities/mcp`,
    });
    const output = run.stdout + run.stderr;
    expect(run.exitCode, output).toBe(0);
    const statuses = readJestJson(join(project, 'results.json')).testResults.flatMap((r) =>
      r.assertionResults.map((a) => a.status),
    );
    expect(statuses).toEqual(['passed', 'passed']);
    expect(output).toMatch(/vitest-adcp: skipped my_smoke\/discovery\/caps — missing_tool: /);
    expect(output).toMatch(
      /vitest-adcp: skipped my_smoke\/discovery\/caps_wrong — (missing_tool|prerequisite_failed): /,
    );
    // Passed in Jest, skipped in the contract report: the record's status wins.
    const report = JSON.parse(readFileSync(join(project, 'reports', 'jest-adcp.json'), 'utf8'));
    expect(report.summary).toMatchObject({ total_steps: 2, steps_passed: 0, steps_skipped: 2 });
    expect(report.storyboards[0].steps[0].skip).toMatchObject({ reason: 'missing_tool' });
  }, 120_000);

  it('does not retry a step under jest.retryTimes: the retry fails, naming the first verdict', async () => {
    writeFileSync(join(project, 'retry.setup.js'), 'jest.retryTimes(1);\n');
    const config = readFileSync(join(project, 'jest.config.js'), 'utf8').replace(
      'setupFilesAfterEnv: [',
      'setupFilesAfterEnv: ["<rootDir>/retry.setup.js", ',
    );
    writeFileSync(join(project, 'jest.retry.config.js'), config);
    const run = await jest(['--config', 'jest.retry.config.js', '-t', '\\(caps_wrong\\)', 'storyboards/smoke']);
    const failed = readJestJson(join(project, 'results.json'))
      .testResults.flatMap((r) => r.assertionResults)
      .filter((a) => a.status === 'failed');
    expect(failed.length, run.stdout + run.stderr).toBe(1);
    expect(failed[0]!.failureMessages.join('\n')).toMatch(
      /does not retry storyboard steps \(retry 1\).*first attempt's verdict stands — field_value at \/context\/correlation_id: expected "not-smoke"/,
    );
  }, 120_000);
});

/**
 * `adcp.start` of the preset (issue 33): Jest's global setup starts the fixture agent from a shell command, the
 * storyboards run against it, the global teardown takes it down — its whole process group (the command records its
 * shell's pid, the group's leader, and runs the agent as the shell's child). A command that exits at once stops the
 * run with one line and exit 2, as `vitest run` and the bin do.
 */
describe('agent.start under Jest (createJestPreset({ adcp: { start } }))', () => {
  const fixtureCli = join(repoRoot, 'fixtures', 'agent', 'cli.mjs');
  const ONE_LINE = /vitest-adcp cannot run the storyboards: the agent command `[^\n]*/g;
  let n = 0;
  beforeAll(() => {
    mkdirSync(join(project, 'started'), { recursive: true });
    writeFileSync(join(project, 'started', 'pass.storyboard.yaml'), PASSING_STORYBOARD);
    writeFileSync(join(project, 'started', 'fail.storyboard.yaml'), USER_STORYBOARD);
    const preset = JSON.stringify(join(scratch, 'dist', 'jest', 'preset.cjs'));
    const reporter = JSON.stringify(join(scratch, 'dist', 'jest', 'reporter.cjs'));
    writeFileSync(
      join(project, 'jest.start.config.js'),
      [
        `const { createJestPreset } = require(${preset});`,
        'const timeoutMs = process.env.E2E_START_TIMEOUT ? Number(process.env.E2E_START_TIMEOUT) : undefined;',
        'const start = { command: process.env.E2E_START, ...(timeoutMs ? { timeoutMs } : {}) };',
        'module.exports = {',
        '  ...createJestPreset({ adcp: { agentUrl: process.env.E2E_AGENT_URL, start } }),',
        "  testMatch: ['<rootDir>/started/*.storyboard.yaml'],",
        `  reporters: ['default', [${reporter}, { outputFile: 'reports/started.json' }]],`,
        '};',
        '',
      ].join('\n'),
    );
  });

  function jestStarting(command: string, port: number, args: string[] = [], env: Record<string, string> = {}) {
    return runNode([jestBin, '--ci', '--config', 'jest.start.config.js', ...args], {
      cwd: project,
      env: {
        ...NO_AGENT_ENV,
        CI: undefined,
        E2E_START: command,
        E2E_AGENT_URL: `http://127.0.0.1:${port}/mcp`,
        ADCP_STORYBOARDS: undefined,
        ...env,
      },
    });
  }

  it('starts the agent before the run, passes a storyboard, stops its whole group after, keeps its log beside the report', async () => {
    const port = await closedPort();
    const pid = join(scratch, `jest-group-${++n}.pid`);
    const command = `echo $$ > '${pid}'; '${process.execPath}' '${fixtureCli}' --port ${port}`;
    const run = await jestStarting(command, port, ['started/pass']);
    const output = run.stdout + run.stderr;
    expect(run.exitCode, output).toBe(0);
    expect(output).toMatch(/Tests:\s+1 passed, 1 total/);
    await expectGone(pid, port);
    expect(readFileSync(join(project, 'reports', 'started.json.agent.log'), 'utf8')).toContain(
      `fixture agent: http://127.0.0.1:${port}/mcp`,
    );
  }, 120_000);

  it("a failing step names the agent's log, in its failure and in its record", async () => {
    const port = await closedPort();
    const pid = join(scratch, `jest-group-${++n}.pid`);
    const command = `echo $$ > '${pid}'; '${process.execPath}' '${fixtureCli}' --port ${port}`;
    const run = await jestStarting(command, port, ['--json', '--outputFile=started-results.json', 'started/fail']);
    expect(run.exitCode, run.stdout + run.stderr).toBe(1);
    const log = join(project, 'reports', 'started.json.agent.log');
    const failed = readJestJson(join(project, 'started-results.json'))
      .testResults.flatMap((r) => r.assertionResults)
      .filter((a) => a.status === 'failed');
    expect(failed.map((a) => a.title)).toEqual([expect.stringContaining('(caps_wrong)')]);
    // Under the headline and the checks (Jest has no `diff` field), before the stack.
    expect(failed[0]!.failureMessages.join('\n')).toContain(`\n\nagent log: ${log}\n    at `);
    const report = readFileSync(join(project, 'reports', 'started.json'), 'utf8');
    expect(report.match(/"agent_log": "([^"]*)"/g)).toEqual([`"agent_log": ${JSON.stringify(log)}`]);
    await expectGone(pid, port);
    expect(readFileSync(log, 'utf8')).toContain(`fixture agent: http://127.0.0.1:${port}/mcp`);
  }, 120_000);

  it('a command that exits at once stops the run with one line and exit 2', async () => {
    const port = await closedPort();
    const run = await jestStarting(`echo 'Error: no such config' >&2; exit 3`, port, ['started/pass']);
    const output = run.stdout + run.stderr;
    expect(run.exitCode, output).toBe(2);
    const lines = output.match(ONE_LINE) ?? [];
    expect(lines, output).toHaveLength(1);
    expect(lines[0]).toContain('exited with code 3 before it answered at');
    expect(lines[0]).toContain('its last output: "Error: no such config"');
    expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
  }, 120_000);

  it("Ctrl-C (SIGINT) of jest while the agent starts: exit 130, and the agent's group is gone", async () => {
    const port = await closedPort();
    const pid = join(scratch, `jest-group-${++n}.pid`);
    const never = `echo $$ > '${pid}'; '${process.execPath}' -e 'setInterval(() => {}, 1000)'`;
    const env = { ...NO_AGENT_ENV, CI: undefined, E2E_START: never, E2E_AGENT_URL: `http://127.0.0.1:${port}/mcp` };
    const code = await interrupted(
      [jestBin, '--ci', '--config', 'jest.start.config.js', 'started/pass'],
      env,
      pid,
      'SIGINT',
      project,
    );
    expect(code).toBe(130);
    await expectGone(pid, port);
  }, 120_000);
});

describe('the corpus stub folder (createJestPreset)', () => {
  type Preset = { roots?: string[] };
  const createJestPreset = (options: object): Preset =>
    createRequire(import.meta.url)(join(scratch, 'dist', 'jest', 'preset.cjs')).createJestPreset(options);
  const selection = { compliance: { storyboards: ['capability_discovery'] } };
  let root: string;
  beforeAll(() => {
    // The selection comes from the options only.
    for (const name of ['ADCP_STORYBOARDS', 'ADCP_BUNDLES', 'ADCP_TRACKS', 'ADCP_COMPLIANCE']) vi.stubEnv(name, '');
    root = mkdtempSync(join(tmpdir(), 'vitest-adcp-preset-'));
    symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'preset-root', private: true }));
  });
  afterAll(() => {
    vi.unstubAllEnvs();
    rmSync(root, { recursive: true, force: true });
  });

  it('is below the root, ignores itself in git, and is gone when nothing is selected', () => {
    const preset = createJestPreset({ ...selection, rootDir: root });
    const dir = join(root, STUB_DIR);
    expect(preset.roots).toEqual(['<rootDir>', dir]);
    expect(readdirSync(join(dir, 'universal'))).toEqual(['capability-discovery.storyboard.yaml']);
    expect(readFileSync(join(dir, 'universal', 'capability-discovery.storyboard.yaml'), 'utf8')).toBe(
      `# vitest-adcp corpus storyboard: ${corpusFile}\n`,
    );
    // git sees nothing to commit: the folder's own .gitignore says `*`.
    execFileSync('git', ['init', '-q'], { cwd: root });
    expect(
      execFileSync('git', ['status', '--porcelain', '--untracked-files=all', '--', STUB_DIR], {
        cwd: root,
        encoding: 'utf8',
      }),
    ).toBe('');
    expect(
      execFileSync('git', ['check-ignore', '-q', `${STUB_DIR}/universal/capability-discovery.storyboard.yaml`], {
        cwd: root,
        encoding: 'utf8',
      }),
    ).toBe('');

    expect(createJestPreset({ rootDir: root }).roots).toBeUndefined();
    expect(existsSync(dir)).toBe(false);
  });

  it('leaves a folder of that name it did not write alone, and says so when it needs the folder', () => {
    const dir = join(root, STUB_DIR);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'mine.txt'), "the user's");
    expect(createJestPreset({ rootDir: root }).roots).toBeUndefined();
    expect(() => createJestPreset({ ...selection, rootDir: root })).toThrow(
      `vitest-adcp: ${dir} exists and was not written by vitest-adcp`,
    );
    expect(readFileSync(join(dir, 'mine.txt'), 'utf8')).toBe("the user's");
  });
});
