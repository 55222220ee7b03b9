/**
 * Installed as a user would: `npm pack`, the tarball installed into a fresh
 * temporary repo beside vitest and @adcp/sdk, a storyboard written there, plain
 * `npx vitest run`, the agent given only by environment variables. Once with
 * the Vitest we develop on, once with the oldest of our peer range (3.2).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../helpers/run-vitest.js';

const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as any;
let dir: string;
let tarball: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-packed-'));
  const packDir = join(dir, 'pack');
  mkdirSync(packDir);
  execFileSync('npm', ['pack', '--pack-destination', packDir, '--silent'], { cwd: repoRoot, stdio: 'pipe' });
  tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz'))!);
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh agent repository with our tarball, the given vitest (and vite), @adcp/sdk, a config, a storyboard and two TS tests. */
function createProject(name: string, devDependencies: string[]): string {
  const project = join(dir, name);
  mkdirSync(join(project, 'storyboards'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-agent', private: true, type: 'module' }, null, 2));
  // From the npm cache our own `npm ci` filled; the registry only for what it lacks.
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--save-dev', tarball, ...devDependencies, `@adcp/sdk@${pkg.devDependencies['@adcp/sdk']}`], {
    cwd: project,
    stdio: 'pipe',
  });
  writeFileSync(
    join(project, 'vitest.config.ts'),
    `import { defineConfig } from 'vitest/config';\nimport { adcpStoryboards } from 'vitest-adcp';\n\nexport default defineConfig({\n  plugins: [adcpStoryboards({ compliance: { storyboards: ['capability_discovery'] } })],\n  test: { reporters: ['default', ['vitest-adcp/reporter', { outputFile: 'reports/adcp.json' }]] },\n});\n`,
  );
  writeFileSync(
    join(project, 'storyboards', 'smoke.storyboard.yaml'),
    [
      '# yaml-language-server: $schema=../node_modules/vitest-adcp/schema/storyboard.schema.json',
      'id: my_smoke',
      'title: My smoke test',
      'phases:',
      '  - id: discovery',
      '    title: Discovery',
      '    steps:',
      '      - id: caps',
      '        title: Capabilities',
      '        task: get_adcp_capabilities',
      '        sample_request:',
      '          context: { correlation_id: smoke }',
      '        validations:',
      '          - check: response_schema',
      '          - check: field_value',
      '            path: context.correlation_id',
      '            value: smoke',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(project, 'storyboards', 'typed.test.ts'),
    `/// <reference types="vitest-adcp/client" />\nimport { expect, it } from 'vitest';\nimport sb from './smoke.storyboard.yaml';\nit('typed import', () => { expect(sb.phases[0].steps[0].id).toBe('caps'); });\n`,
  );
  writeFileSync(
    join(project, 'storyboards', 'auth.test.ts'),
    `import 'vitest-adcp/matchers';\nimport { expect, it } from 'vitest';\nit('refuses unauthenticated calls', async () => {\n  await expect(process.env.ADCP_AGENT_URL).toRejectUnauthenticated();\n  await expect(process.env.ADCP_AGENT_URL).toExposeWwwAuthenticate({ scheme: 'Bearer' });\n});\n`,
  );
  return project;
}

function vitestRun(project: string, args: string[] = []) {
  const env: NodeJS.ProcessEnv = { ...process.env, ADCP_AGENT_URL: inject('agentUrl'), ADCP_AUTH_TOKEN: 'demo-packed-v1', NO_COLOR: '1', FORCE_COLOR: '0' };
  for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
  const result = spawnSync('npx', ['vitest', 'run', ...args], { cwd: project, env, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe.each([
  { vitest: pkg.devDependencies.vitest, extra: [`vite@${pkg.devDependencies.vite}`], primary: true },
  { vitest: '3.2.4', extra: [], primary: false },
])('installed beside vitest $vitest', ({ vitest, extra, primary }) => {
  let project: string;
  beforeAll(() => {
    project = createProject(`agent-repo-vitest-${vitest}`, [`vitest@${vitest}`, ...extra]);
  }, 300_000);

  it('runs a user storyboard and a corpus storyboard with plain npx vitest run, agent from the environment', () => {
    const { status, output } = vitestRun(project);
    expect(status, output).toBe(0);
    expect(output).toMatch(new RegExp(`RUN\\s+v${vitest.replace(/\./g, '\\.')}`));
    expect(output).toMatch(/storyboards\/smoke\.storyboard\.yaml/);
    expect(output).toMatch(/capability-discovery\.yaml/);
    expect(output).toMatch(/Tests\s+5 passed \(5\)/);
    const report = JSON.parse(readFileSync(join(project, 'reports', 'adcp.json'), 'utf8'));
    expect(report.summary).toMatchObject({ total_steps: 3, steps_passed: 3, steps_failed: 0 });
    expect(JSON.stringify(report)).not.toContain('demo-packed-v1');
  }, 180_000);

  it.runIf(primary)('loads from a CommonJS config too (Vite bundles a .cts config, or any config of a package without "type": "module", with require)', () => {
    writeFileSync(join(project, 'vitest.cjs.config.cts'), readFileSync(join(project, 'vitest.config.ts'), 'utf8').replace("'reports/adcp.json'", "'reports/adcp-cjs.json'"));
    const { status, output } = vitestRun(project, ['--config', 'vitest.cjs.config.cts']);
    expect(output).not.toMatch(/ESM only/);
    expect(status, output).toBe(0);
    expect(output).toMatch(/Tests\s+5 passed \(5\)/);
    rmSync(join(project, 'vitest.cjs.config.cts'));
  }, 180_000);

  it.runIf(primary)('typechecks a user test importing a storyboard and a config using the plugin options', () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['storyboards/*.ts', 'vitest.config.ts'] }),
    );
    writeFileSync(
      join(project, 'storyboards', 'typed-strict.test.ts'),
      `/// <reference types="vitest-adcp/client" />\nimport type { Storyboard, StepResult } from 'vitest-adcp';\nimport sb from './smoke.storyboard.yaml';\nconst s: Storyboard = sb;\nconst line: number = s.phases[0]!.steps[0]!.loc.line;\nconst r: Pick<StepResult, 'passed'> = { passed: line > 0 };\nexport { r };\n`,
    );
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    rmSync(join(project, 'storyboards', 'typed-strict.test.ts'));
  });

  it.runIf(primary)('runs `npx vitest-adcp <url>` without a config: the bin, and only the storyboards it was given', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
    for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key.startsWith('ADCP_')) delete env[key];
    const result = spawnSync('npx', ['vitest-adcp', inject('agentUrl'), '--storyboards', 'capability_discovery', '--report', 'reports/cli.json'], { cwd: project, env, encoding: 'utf8', timeout: 120_000 });
    const output = result.stdout + result.stderr;
    expect(result.status, output).toBe(0);
    // The repository's vitest.config.ts (with its own storyboard and tests) is not this command's.
    expect(output).toMatch(/Tests\s+2 passed \(2\)/);
    const report = JSON.parse(readFileSync(join(project, 'reports', 'cli.json'), 'utf8'));
    expect(report.storyboards.map((s: any) => s.storyboard_id)).toEqual(['capability_discovery']);
  });

  it.runIf(primary)('ships types, the storyboard JSON Schema and the client module declaration', () => {
    const installed = join(project, 'node_modules', 'vitest-adcp');
    const files = (sub: string) => readdirSync(join(installed, sub));
    expect(files('dist')).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'runtime.js', 'runtime.d.ts']));
    expect(files('dist/report')).toEqual(expect.arrayContaining(['reporter.js', 'reporter.d.ts']));
    expect(files('dist/matchers')).toEqual(expect.arrayContaining(['index.js', 'index.d.ts']));
    expect(files('schema')).toContain('storyboard.schema.json');
    expect(files('.')).toContain('client.d.ts');
    // Every source a shipped source map names is shipped too, so stack frames and "go to source" land on real files.
    const missing: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.js.map')) {
          for (const source of JSON.parse(readFileSync(path, 'utf8')).sources as string[]) if (!existsSync(join(dir, source))) missing.push(`${path} → ${source}`);
        }
      }
    };
    walk(join(installed, 'dist'));
    expect(missing).toEqual([]);
  });
});
