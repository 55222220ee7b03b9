/**
 * Installed as a user would: `npm pack`, the tarball installed into a fresh
 * temporary repo beside vitest and @adcp/sdk, a storyboard written there, plain
 * `npx vitest run`, the agent given only by environment variables. Once with
 * the Vitest we develop on, once with the oldest of our peer range (3.2).
 * The config, the `-t` command and the editor settings are the README's own,
 * read from it, so the README's examples do what they say.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PASSING_STORYBOARD } from '../helpers/jest-project.js';
import { installDev, installedProject } from '../helpers/installed.js';
import { packedTarball } from '../helpers/packed.js';
import { repoRoot } from '../helpers/run-vitest.js';

const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as any;
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
/** The README's quick start, as a user copies it. */
const quickStart = {
  plugins: /^ {2}(plugins: \[adcpStoryboards\(.*\)\],)$/m.exec(readme)![1]!,
  oneStep: /^npx vitest run -t '([^']+)'\s+# (.*)$/m.exec(readme)!.slice(1) as [string, string],
  modeline: /^# yaml-language-server: \$schema=(\S+)$/m.exec(readme)![1]!,
  yamlSchemas: JSON.parse(`{${/^"yaml\.schemas": .*$/m.exec(readme)![0]}}`)['yaml.schemas'] as Record<string, string[]>,
};
let dir: string;
let tarball: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-packed-'));
  // Packed once per test run, shared with the other packed-package tests (test/helpers/packed.ts).
  tarball = await packedTarball();
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh agent repository (an ES module package) with our tarball, the given vitest (and `extra` packages), @adcp/sdk,
 * a config, a storyboard and three TS tests. The Vitest we develop on: a copy of the README's install made once per test
 * run (test/helpers/installed.ts, newcomer.test.ts's too, with its vite); another: installed here.
 */
async function createProject(name: string, vitest: string, extra: string[]): Promise<string> {
  const project = join(dir, name);
  const esm = (devDeps?: Record<string, string>) => ({
    name: 'my-agent',
    private: true,
    type: 'module',
    ...(devDeps ? { devDependencies: devDeps } : {}),
  });
  if (vitest === pkg.devDependencies.vitest) {
    await installedProject(project, (installed) => esm(installed.devDependencies));
  } else {
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify(esm(), null, 2));
    installDev(project, [tarball, `vitest@${vitest}`, ...extra, `@adcp/sdk@${pkg.devDependencies['@adcp/sdk']}`]);
  }
  mkdirSync(join(project, 'storyboards'));
  writeFileSync(join(project, 'vitest.config.ts'), configText(quickStart.plugins, 'reports/adcp.json'));
  writeFileSync(
    join(project, 'storyboards', 'smoke.storyboard.yaml'),
    `# yaml-language-server: $schema=${quickStart.modeline}\n${PASSING_STORYBOARD}`,
  );
  // A misspelt key (`validation:`): not a *.storyboard.yaml, so only the runs that name it load it.
  writeFileSync(
    join(project, 'storyboards', 'typo.sb.yaml'),
    [
      'id: my_typo',
      'title: My typo',
      'phases:',
      '  - id: discovery',
      '    steps:',
      '      - id: caps',
      '        title: Capabilities',
      '        task: get_adcp_capabilities',
      '        validation:',
      '          - check: field_present',
      '            path: adcp',
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
  // A hand-written test: createAdcpClient and the matchers on its responses (typechecked too, below).
  writeFileSync(
    join(project, 'storyboards', 'client.test.ts'),
    [
      "import 'vitest-adcp/matchers';",
      "import { createAdcpClient } from 'vitest-adcp';",
      "import { afterAll, expect, it } from 'vitest';",
      "const adcp = createAdcpClient({ url: process.env.ADCP_AGENT_URL!, protocol: 'mcp', auth: process.env.ADCP_AUTH_TOKEN });",
      'afterAll(() => adcp.close());',
      "it('hand-written: auth, schema and context echo through createAdcpClient', async () => {",
      "  const refused = await adcp.call('list_creatives', {}, { auth: 'none' });",
      '  expect(refused).toRejectUnauthenticated();',
      "  expect(refused).toExposeWwwAuthenticate('Bearer', { realm: expect.stringContaining('127.0.0.1') });",
      "  const caps = await adcp.call('get_adcp_capabilities', { context: { correlation_id: 'hand-written' } });",
      '  expect(caps).toMatchAdcpSchema();',
      "  expect(caps).toEchoContext({ correlation_id: 'hand-written' });",
      '});',
      '',
    ].join('\n'),
  );
  return project;
}

/** The project's Vitest config: the given plugin line (the README's), the contract reporter, and JUnit when asked. */
function configText(plugins: string, report: string, junit?: string): string {
  const reporters = [
    `'default'`,
    `['vitest-adcp/reporter', { outputFile: '${report}' }]`,
    ...(junit ? [`['junit', { outputFile: '${junit}' }]`] : []),
  ];
  return `import { defineConfig } from 'vitest/config';\nimport { adcpStoryboards } from 'vitest-adcp';\n\nexport default defineConfig({\n  ${plugins}\n  test: { reporters: [${reporters.join(', ')}] },\n});\n`;
}

function vitestRun(project: string, args: string[] = [], extraEnv: NodeJS.ProcessEnv = {}) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ADCP_AGENT_URL: inject('agentUrl'),
    ADCP_AUTH_TOKEN: 'demo-packed-v1',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    ...extraEnv,
  };
  for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
  const result = spawnSync('npx', ['vitest', 'run', ...args], {
    cwd: project,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe.each([
  // The primary's vite comes with the shared install (test/helpers/installed.ts).
  { vitest: pkg.devDependencies.vitest, extra: [], primary: true },
  { vitest: '3.2.4', extra: [], primary: false },
])('installed beside vitest $vitest', ({ vitest, extra, primary }) => {
  let project: string;
  beforeAll(async () => {
    project = await createProject(`agent-repo-vitest-${vitest}`, vitest, extra);
  }, 360_000);

  it('runs a user storyboard and a corpus storyboard with plain npx vitest run, agent from the environment', () => {
    const { status, output } = vitestRun(project);
    expect(status, output).toBe(0);
    expect(output).toMatch(new RegExp(`RUN\\s+v${vitest.replace(/\./g, '\\.')}`));
    expect(output).toMatch(/storyboards\/smoke\.storyboard\.yaml/);
    expect(output).toMatch(/capability-discovery\.yaml/);
    expect(output).toMatch(/Tests\s+6 passed \(6\)/);
    const report = JSON.parse(readFileSync(join(project, 'reports', 'adcp.json'), 'utf8'));
    expect(report.summary).toMatchObject({ total_steps: 3, steps_passed: 3, steps_failed: 0 });
    expect(JSON.stringify(report)).not.toContain('demo-packed-v1');
  }, 180_000);

  it.runIf(primary)(
    'loads from a CommonJS config too (Vite bundles a .cts config, or any config of a package without "type": "module", with require); strictKeys: false loads a misspelt key with its warning in the report and JUnit',
    () => {
      const lenient = quickStart.plugins.replace(
        'adcpStoryboards({',
        "adcpStoryboards({ strictKeys: false, files: ['storyboards/typo.sb.yaml'], ",
      );
      writeFileSync(
        join(project, 'vitest.cjs.config.cts'),
        configText(lenient, 'reports/adcp-cjs.json', 'reports/junit-cjs.xml'),
      );
      const { status, output } = vitestRun(project, ['--config', 'vitest.cjs.config.cts']);
      expect(output).not.toMatch(/ESM only/);
      expect(status, output).toBe(0);
      expect(output).toMatch(/Tests\s+7 passed \(7\)/);
      // The warning is not only in the terminal: on the storyboard's first step in the contract report, and in JUnit.
      const warning =
        /typo\.sb\.yaml:9:9: warning: \[unknown_key\] unknown key "validation" in step "caps" \(did you mean "validations"\?\)/;
      const report = JSON.parse(readFileSync(join(project, 'reports', 'adcp-cjs.json'), 'utf8'));
      const typo = report.storyboards.find((s: any) => s.storyboard_id === 'my_typo');
      expect(typo.steps[0].warnings).toEqual([expect.stringMatching(warning)]);
      const junit = readFileSync(join(project, 'reports', 'junit-cjs.xml'), 'utf8').replace(/&quot;/g, '"');
      expect(junit).toMatch(new RegExp(`<property name="warning" value="[^"]*${warning.source}`));
      rmSync(join(project, 'vitest.cjs.config.cts'));
    },
    180_000,
  );

  it.runIf(primary)(
    "a CommonJS project (what `npm init -y` writes) runs with the config named as the README says, without Vite's warning",
    () => {
      const configName = /name the\s+file `(vitest\.config\.[cm]?ts)`/.exec(readme)?.[1];
      expect(configName).toBe('vitest.config.mts');
      const packageJson = readFileSync(join(project, 'package.json'), 'utf8');
      const config = readFileSync(join(project, 'vitest.config.ts'), 'utf8');
      const warning = /ESM syntax in a file loaded as CommonJS/;
      try {
        writeFileSync(
          join(project, 'package.json'),
          JSON.stringify({ ...JSON.parse(packageJson), type: 'commonjs' }, null, 2),
        );
        // As vitest.config.ts, the README's config warns on every run: what the README tells the user to avoid.
        const asTs = vitestRun(project);
        expect(asTs.status, asTs.output).toBe(0);
        expect(asTs.output).toMatch(warning);
        rmSync(join(project, 'vitest.config.ts'));
        writeFileSync(join(project, configName!), config);
        const { status, output } = vitestRun(project);
        expect(status, output).toBe(0);
        expect(output).not.toMatch(warning);
        expect(output).not.toMatch(/^\(!\)/m);
        expect(output).toMatch(/Tests\s+6 passed \(6\)/);
      } finally {
        rmSync(join(project, configName ?? 'vitest.config.mts'), { force: true });
        writeFileSync(join(project, 'vitest.config.ts'), config);
        writeFileSync(join(project, 'package.json'), packageJson);
      }
    },
    240_000,
  );

  it.runIf(primary)(
    "runs the README's one-step command: one test, the step named, not the steps whose id it is a prefix of",
    () => {
      const [pattern, comment] = quickStart.oneStep;
      expect(comment).toMatch(/^one step/);
      const { status, output } = vitestRun(project, ['-t', pattern]);
      expect(status, output).toBe(0);
      expect(output).toMatch(/Tests\s+1 passed \| 5 skipped \(6\)/);
    },
    180_000,
  );

  it.runIf(primary)(
    "stays under 300 MB in every process of a user's run on 8 MB answers with 80 failing checks each, and writes a report under 20 MB",
    () => {
      // Issue 13's bound, measured where users pay it: the package from node_modules, Vite's default config loader (our own
      // repo's TS config, which Vite bundles with src/, starts its main process at ~300 MB; test/e2e/memory.test.ts holds the
      // worker bound there). Each process writes its own high-water mark (VmHWM) through test/helpers/rss-probe.mjs.
      mkdirSync(join(project, 'memory'), { recursive: true });
      writeFileSync(
        join(project, 'memory', 'eight-megabytes.storyboard.yaml'),
        readFileSync(join(repoRoot, 'fixtures', 'hostile', 'memory', 'eight-megabytes.storyboard.yaml')),
      );
      writeFileSync(
        join(project, 'vitest.memory.config.ts'),
        configText("plugins: [adcpStoryboards({ include: ['memory/*.storyboard.yaml'] })],", 'reports/memory.json'),
      );
      const probes = mkdtempSync(join(dir, 'rss-'));
      const { status, output } = vitestRun(project, ['--config', 'vitest.memory.config.ts'], {
        ADCP_AGENT_URL: `${inject('agentOrigin')}/x/hostile/mcp`,
        RSS_PROBE_DIR: probes,
        NODE_OPTIONS:
          `${process.env.NODE_OPTIONS ?? ''} --import=${join(repoRoot, 'test', 'helpers', 'rss-probe.mjs')}`.trim(),
      });
      expect(status, output).toBe(1);
      expect(output).toMatch(/Tests\s+2 failed \| 3 passed/); // the two 8 MB steps; the user's own three tests pass
      const peaks = readdirSync(probes)
        .filter((f) => /^\d+\.json$/.test(f))
        .map((f) => JSON.parse(readFileSync(join(probes, f), 'utf8')) as { argv: string[]; peakKiB: number });
      expect(peaks.length, output).toBeGreaterThanOrEqual(2); // the main process and at least one worker
      for (const peak of peaks) expect(peak.peakKiB / 1024, JSON.stringify(peak)).toBeLessThan(300);
      expect(readFileSync(join(project, 'reports', 'memory.json')).length).toBeLessThan(20 * 1024 * 1024);
      rmSync(join(project, 'vitest.memory.config.ts'));
      rmSync(join(project, 'memory'), { recursive: true });
    },
    180_000,
  );

  it.runIf(primary)('typechecks a user test importing a storyboard and a config using the plugin options', () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        include: ['storyboards/*.ts', 'vitest.config.ts'],
      }),
    );
    writeFileSync(
      join(project, 'storyboards', 'typed-strict.test.ts'),
      `/// <reference types="vitest-adcp/client" />\nimport type { Storyboard, StepResult } from 'vitest-adcp';\nimport sb from './smoke.storyboard.yaml';\nconst s: Storyboard = sb;\nconst line: number = s.phases[0]!.steps[0]!.loc.line;\nconst r: Pick<StepResult, 'passed'> = { passed: line > 0 };\n// @ts-expect-error — the storyboard type has no catch-all: a misspelt key does not compile.\nconst t = s.phases[0]!.titel;\nexport { r, t };\n`,
    );
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    rmSync(join(project, 'storyboards', 'typed-strict.test.ts'));
  });

  it.runIf(primary)(
    'runs `npx vitest-adcp <url>` without a config: the bin, and only the storyboards it was given; a misspelt key is a located load error',
    () => {
      const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
      for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key.startsWith('ADCP_')) delete env[key];
      const result = spawnSync(
        'npx',
        [
          'vitest-adcp',
          inject('agentUrl'),
          '--storyboards',
          'capability_discovery,./storyboards/typo.sb.yaml',
          '--report',
          'reports/cli.json',
        ],
        { cwd: project, env, encoding: 'utf8', timeout: 120_000 },
      );
      const output = result.stdout + result.stderr;
      // The repository's vitest.config.ts (with its own storyboard and tests) is not this command's.
      expect(output).toMatch(/Tests\s+1 failed \| 2 passed \(3\)/);
      // Strict by default: the step with `validation:` does not pass with nothing checked; the file fails to load, at the key.
      expect(result.status, output).toBe(1);
      expect(output).toMatch(/loads without errors \(unknown_key\)/);
      const report = JSON.parse(readFileSync(join(project, 'reports', 'cli.json'), 'utf8'));
      expect(report.storyboards.map((s: any) => s.storyboard_id)).toEqual(['capability_discovery']);
      expect(report.load_errors).toEqual([
        expect.objectContaining({
          file: 'storyboards/typo.sb.yaml',
          message: expect.stringMatching(
            /typo\.sb\.yaml:9:9: \[unknown_key\] unknown key "validation" in step "caps"\n\s+fix: did you mean "validations"\? \(.*strictKeys: false/,
          ),
        }),
      ]);
    },
  );

  it.runIf(primary)('ships types, the storyboard JSON Schema and the client module declaration', () => {
    const installed = join(project, 'node_modules', 'vitest-adcp');
    const files = (sub: string) => readdirSync(join(installed, sub));
    expect(files('dist')).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'runtime.js', 'runtime.d.ts']));
    expect(files('dist/vitest')).toEqual(expect.arrayContaining(['reporter.js', 'reporter.d.ts']));
    expect(files('dist/matchers')).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'jest.js', 'jest.d.ts']));
    expect(files('schema')).toContain('storyboard.schema.json');
    expect(files('.')).toContain('client.d.ts');
    // The CommonJS build of the client and the Jest matchers (test/e2e/jest-client.test.ts runs it in Jest), and the
    // annotated example storyboards the README links.
    expect(files('dist/cjs')).toEqual(expect.arrayContaining(['package.json', 'client', 'matchers']));
    expect(files('examples')).toEqual(
      expect.arrayContaining(['discovery.storyboard.yaml', 'media-buy.storyboard.yaml']),
    );
    // The editor settings the README shows: a modeline that works in any folder (the published copy, the schema's $id), or
    // the installed copy mapped to the storyboard globs from the workspace root.
    const schemaPath = createRequire(join(project, 'noop.js')).resolve('vitest-adcp/schema/storyboard.schema.json');
    const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
    expect(quickStart.modeline).toBe(schema.$id);
    expect(
      Object.entries(quickStart.yamlSchemas).map(([path, globs]) => [existsSync(join(project, path)), globs]),
    ).toEqual([[true, ['**/*.storyboard.yaml', '**/*.storyboard.yml']]]);
    // The installed schema compiles under ajv's strict mode and flags a misspelt check and an unknown key.
    const validate = new Ajv({ strict: true, allErrors: true }).compile(schema);
    const step = {
      id: 's',
      task: 'get_products',
      sample_requst: {},
      validations: [{ check: 'field_presnet', path: 'products' }],
    };
    expect(validate({ id: 'a', title: 'A', phases: [{ id: 'p', steps: [step] }] })).toBe(false);
    expect(validate.errors!.map((e) => `${e.instancePath} ${e.keyword}`)).toEqual([
      '/phases/0/steps/0 additionalProperties',
      '/phases/0/steps/0/validations/0/check enum',
    ]);
    // Every source a shipped source map names is shipped too, so stack frames and "go to source" land on real files.
    const missing: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.js.map')) {
          for (const source of JSON.parse(readFileSync(path, 'utf8')).sources as string[])
            if (!existsSync(join(dir, source))) missing.push(`${path} → ${source}`);
        }
      }
    };
    walk(join(installed, 'dist'));
    expect(missing).toEqual([]);
  });
});
