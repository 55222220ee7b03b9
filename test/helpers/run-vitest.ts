/**
 * Runs a real `vitest run` in a child process (our plugin inside it), the way a
 * user would, and returns what it saw. Used by the end-to-end tests.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { builtDist, copyBuiltDist } from './built.js';

export const repoRoot = resolve(import.meta.dirname, '..', '..');

export interface CapturedTest {
  module: string;
  name: string;
  fullName: string;
  location?: { line: number; column: number };
  state: 'passed' | 'failed' | 'skipped' | 'pending';
  note?: string;
  errors: {
    message: string;
    stack?: string;
    stacks?: { file: string; line: number; column: number; method: string }[];
    diff?: string;
  }[];
  meta: Record<string, any>;
  /** The Vitest project the test ran in, and how. */
  project: {
    name: string;
    isolate: boolean;
    pool: string;
    maxWorkers?: number;
    groupOrder: number;
    /** `server.deps.external`: strings as given, RegExps as their source and flags. */
    external: (string | { source: string; flags: string })[];
  };
}

export interface VitestRun extends NodeRun {
  tests: CapturedTest[];
  moduleErrors: { module: string; message: string; stack?: string }[];
  /** The test modules in the order the workers started them. */
  moduleStarts: string[];
}

export interface NodeRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node <args>` in a child process, the way a user's shell would: no
 * colours, and none of this (parent) run's Vitest worker variables.
 */
export async function runNode(
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {},
): Promise<NodeRun> {
  // GITHUB_STEP_SUMMARY: a child run's reporter must not append to the job summary of the CI job running these tests.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FORCE_COLOR: '0',
    NO_COLOR: '1',
    GITHUB_STEP_SUMMARY: undefined,
    // The e2e configs' plugin (test/e2e/plugin-under-test.ts): this run's build, as an install loads it.
    E2E_PLUGIN_BUILD: await builtDist(),
    ...options.env,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  // The parent run's own worker variables must not leak into the child.
  for (const key of Object.keys(env)) if (key.startsWith('VITEST') && key !== 'VITEST_ADCP_CAPTURE') delete env[key];
  delete env.TEST;
  delete env.NODE_ENV;
  const child = spawn(process.execPath, args, { cwd: options.cwd ?? repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const exitCode: number | null = await new Promise((r) => child.on('close', r));
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}

export async function runVitest(options: {
  config: string;
  env?: Record<string, string | undefined>;
  args?: string[];
  reporters?: string[];
  cwd?: string;
  timeoutMs?: number;
}): Promise<VitestRun> {
  const dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-e2e-'));
  const capture = join(dir, 'capture.json');
  const args = [
    join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    '--config',
    options.config,
    '--reporter=default',
    `--reporter=${join(repoRoot, 'test', 'helpers', 'capture-reporter.ts')}`,
    ...(options.reporters ?? []).map((r) => `--reporter=${r}`),
    ...(options.args ?? []),
  ];
  const { exitCode, stdout, stderr } = await runNode(args, {
    cwd: options.cwd,
    timeoutMs: options.timeoutMs,
    env: { VITEST_ADCP_CAPTURE: capture, ...options.env },
  });
  let captured: any = { tests: [], moduleErrors: [], moduleStarts: [] };
  try {
    captured = JSON.parse(readFileSync(capture, 'utf8'));
  } catch {
    // The child never got to report: stdout/stderr say why.
  }
  rmSync(dir, { recursive: true, force: true });
  return {
    exitCode,
    stdout,
    stderr,
    tests: captured.tests,
    moduleErrors: captured.moduleErrors,
    moduleStarts: captured.moduleStarts ?? [],
  };
}

export function byId(run: VitestRun, id: string): CapturedTest {
  const test = run.tests.find((t) => t.meta?.adcp?.id === id || t.name.endsWith(`(${id})`));
  if (!test)
    throw new Error(
      `no test ${id} in run; tests: ${run.tests.map((t) => t.fullName).join(' | ')}\n${run.stdout}\n${run.stderr}`,
    );
  return test;
}

/**
 * Builds the package (as `npm run build` does, without type checking, declarations or source maps) into
 * `<scratch>/dist`, with `schema/` beside it, so a test can run the `vitest-adcp` bin as installed:
 * `<scratch>/dist/cli.js`. Empties `scratch` first. The build is made once per test run and copied here
 * (test/helpers/built.ts); fails the calling hook with tsc's output if it fails.
 */
export async function buildBin(scratch: string): Promise<string> {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  await copyBuiltDist(join(scratch, 'dist'), { sourceMaps: false });
  symlinkSync(join(repoRoot, 'schema'), join(scratch, 'schema'));
  return join(scratch, 'dist', 'cli.js');
}

/** The agent settings a child run must not inherit from this run's environment: each test names its own. */
export const NO_AGENT_ENV = {
  ADCP_AGENT_URL: undefined,
  ADCP_AUTH_TOKEN: undefined,
  ADCP_PROTOCOL: undefined,
  ADCP_COMPLIANCE: undefined,
};
