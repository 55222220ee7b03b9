/**
 * Real `vitest run`s with our plugin, in a child process, against the fixture
 * agent: the describe/it tree, locations in the YAML, failures with their
 * records, broken files failing alone, `-t` selection, TS imports.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { loadStoryboardFile } from '../../src/storyboard/load.js';
import { startFixtureAgent } from '../../fixtures/agent/server.mjs';
import { builtModule } from '../helpers/built.js';
import { closedPort } from '../helpers/ports.js';
import { byId, repoRoot, runNode, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts');
const storyboardsDir = join(repoRoot, 'fixtures', 'storyboards');
const brokenDir = join(repoRoot, 'fixtures', 'broken');
const good = ['discovery', 'products', 'error-codes'].map((name) => join(storyboardsDir, `${name}.storyboard.yaml`));

function stepsOf(file: string) {
  const loaded = loadStoryboardFile(file);
  if (!loaded.ok) throw new Error(`fixture ${file} does not load`);
  return loaded.storyboard.phases.flatMap((phase) =>
    phase.steps.map((step) => ({ storyboard: loaded.storyboard, phase, step })),
  );
}

describe('against the conformant fixture agent', () => {
  let run: VitestRun;
  // The tests' own cache directory (`test.env`, which Vitest applies in the workers only), as a user's config may set.
  const testsCacheHome = mkdtempSync(join(tmpdir(), 'vitest-adcp-tests-xdg-'));
  afterAll(() => rmSync(testsCacheHome, { recursive: true, force: true }));
  beforeAll(async () => {
    run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: inject('agentUrl'),
        E2E_STORYBOARDS: [...good, join(brokenDir, '*.storyboard.yaml')].join(','),
        E2E_CORPUS: 'capability_discovery',
        E2E_TS_TESTS: '1',
        E2E_TEST_XDG_CACHE_HOME: testsCacheHome,
      },
    });
  });

  it("reads the compiled storyboards where the main process stored them, whatever cache directory the tests' test.env names", () => {
    // Each storyboard module names its storyboard by digest; the workers read it from the main process's store, not
    // from one under the tests' XDG_CACHE_HOME (before: every storyboard file failed, "not in …/storyboards").
    expect(run.moduleErrors, run.stderr).toEqual([]);
    expect(run.tests.filter((t) => t.module.endsWith('.yaml')).length).toBeGreaterThan(0);
    expect(existsSync(join(testsCacheHome, 'vitest-adcp', 'storyboards'))).toBe(false);
  });

  it('shows each storyboard as describe(storyboard) › describe(phase) › it(step), all passing', () => {
    for (const file of good) {
      for (const { storyboard, phase, step } of stepsOf(file)) {
        const test = byId(run, `${storyboard.id}/${phase.id}/${step.id}`);
        expect(test.state, `${test.fullName}\n${test.errors.map((e) => e.message).join('\n')}`).toBe('passed');
        expect(test.fullName).toBe(
          `${storyboard.title} (${storyboard.id}) > ${phase.title} (${phase.id}) > ${step.title} (${step.id})`,
        );
      }
    }
  });

  it("leaves the plugin's build to Node in the storyboard project, as an install under node_modules is", async () => {
    // A clone's (or a link's) build is outside node_modules: without the plugin's pattern, Vitest would transform
    // every module of the runtime in the main process (src/plugin/projects.ts ownBuildDeps).
    const runtime = await builtModule('runtime');
    const external = byId(run, 'get_capabilities').project.external;
    const leftToNode = external.some((p) => typeof p !== 'string' && new RegExp(p.source, p.flags).test(runtime));
    expect(leftToNode, JSON.stringify(external)).toBe(true);
  });

  it('reports each step at its own line and column in the YAML', () => {
    // Read off the fixture files by hand: the line of each step's `      - id: <step>`, whose mapping starts at column 9.
    const lines: [file: string, id: string, line: number][] = [
      [good[0]!, 'fixture_discovery/capabilities/get_capabilities', 49],
      [good[0]!, 'fixture_discovery/creative_formats/list_display_formats', 95],
      [good[0]!, 'fixture_discovery/creative_formats/list_formats_first_page', 135],
      [good[0]!, 'fixture_discovery/creative_formats/list_formats_second_page', 173],
      [good[1]!, 'fixture_products/product_discovery/get_products_by_brief', 52],
      [good[1]!, 'fixture_products/product_discovery/refine_to_captured_product', 90],
      [good[1]!, 'fixture_products/media_buy/create_media_buy_for_product', 138],
      [good[1]!, 'fixture_products/error_handling/create_media_buy_unknown_product', 202],
      [good[1]!, 'fixture_products/error_handling/get_products_without_buying_mode', 241],
      [good[2]!, 'fixture_error_codes/rejected_requests/get_products_missing_buying_mode', 52],
      [good[2]!, 'fixture_error_codes/rejected_requests/create_media_buy_unknown_product', 79],
      [good[2]!, 'fixture_error_codes/rejected_requests/create_media_buy_budget_too_low', 118],
    ];
    for (const [file, id, line] of lines)
      expect(byId(run, id), id).toMatchObject({ module: file, location: { line, column: 9 } });
    expect(run.tests.filter((t) => good.includes(t.module))).toHaveLength(lines.length);
  });

  it('runs the real capability_discovery storyboard from the @adcp/sdk corpus, green', () => {
    for (const id of [
      'capability_discovery/protocol_discovery/get_capabilities',
      'capability_discovery/protocol_discovery/get_capabilities_filtered',
    ]) {
      expect(byId(run, id).state).toBe('passed');
    }
  });

  it('puts the runner-output-contract record in each test meta', () => {
    const meta = byId(run, 'capability_discovery/protocol_discovery/get_capabilities').meta.adcp;
    expect(meta.result).toMatchObject({
      storyboard_id: 'capability_discovery',
      phase_id: 'protocol_discovery',
      step_id: 'get_capabilities',
      task: 'get_adcp_capabilities',
      passed: true,
      duration_ms: expect.any(Number),
      extraction: { path: 'structured_content' },
      request: {
        transport: 'mcp',
        operation: 'get_adcp_capabilities',
        payload: { context: { correlation_id: 'capability_discovery--get_capabilities' } },
      },
      response: { transport: 'mcp', status: 200 },
    });
    expect(meta.result.validations.find((v: any) => v.check === 'response_schema')).toMatchObject({
      passed: true,
      schema_id: '/schemas/3.0.6/protocol/get-adcp-capabilities-response.json',
    });
  });

  it('fails each broken file on its own, with file:line:col and the rule, at that position', () => {
    const files = readdirSync(brokenDir).filter((f) => f.endsWith('.storyboard.yaml'));
    expect(files.length).toBeGreaterThan(10);
    for (const name of files) {
      const file = join(brokenDir, name);
      const expectation = /# expect: (\w+) @ (\d+):(\d+)/.exec(readFileSync(file, 'utf8'))!;
      const [, rule, line, column] = expectation;
      const tests = run.tests.filter((t) => t.module === file);
      expect(tests, name).toHaveLength(1);
      expect(tests[0]!.state).toBe('failed');
      expect(tests[0]!.name).toBe(`loads without errors (${rule})`);
      expect(tests[0]!.errors[0]!.message).toContain(`${file}:${line}:${column}: [${rule}]`);
      expect(tests[0]!.location).toEqual({ line: Number(line), column: Number(column) });
    }
    expect(run.moduleErrors).toEqual([]);
  });

  it('lets a TS test import the validated, typed storyboard without running it there', () => {
    const ts = run.tests.filter((t) => t.module.endsWith('import-storyboard.test.ts'));
    expect(ts.map((t) => [t.name, t.state])).toEqual([['imports a validated, typed storyboard', 'passed']]);
  });

  it('exits non-zero only because of the broken files', () => {
    const failed = run.tests.filter((t) => t.state === 'failed');
    expect(failed.every((t) => t.module.startsWith(brokenDir))).toBe(true);
    expect(run.exitCode).toBe(1);
  });
});

describe('against a misbehaving agent', () => {
  let run: VitestRun;
  beforeAll(async () => {
    const url = `${inject('agentOrigin')}/x/wrong_value/mcp`;
    // Given as an explicit file (option `files`), relative to the project root.
    run = await runVitest({
      config,
      env: { ADCP_AGENT_URL: url, E2E_FILES: 'fixtures/storyboards/discovery.storyboard.yaml' },
    });
  });

  it('fails the step with what was checked, where, expected vs actual, sent and received', () => {
    const test = byId(run, 'fixture_discovery/capabilities/get_capabilities');
    expect(test.state).toBe('failed');
    // The headline is the error's message (JUnit's message=); the details travel in its diff, printed under it.
    const message = `${test.errors[0]!.message}\n${test.errors[0]!.diff}`;
    // One headline first: what, where, expected vs got.
    expect(message.split('\n')[0]).toBe(
      'field_value at /context/correlation_id: expected "fixture_discovery--get_capabilities", got "fixture_discovery--get_capabilities-mutated" — fixtures/storyboards/discovery.storyboard.yaml:83:13 (+1 more failed check)',
    );
    // discovery.storyboard.yaml line 83: `          - check: field_value` (column 13) on context.correlation_id.
    expect(message).toContain(
      'Context correlation_id returned unchanged [field_value] at fixtures/storyboards/discovery.storyboard.yaml:83:13',
    );
    expect(message).toContain('pointer:  /context/correlation_id');
    expect(message).toMatch(/sent \(mcp get_adcp_capabilities/);
    expect(message).toMatch(/received \(structured_content HTTP 200, \d+ ms\), around \/context\/correlation_id:/);
    // The diff is the context.echo invariant's (two objects); the scalar mismatch needs none.
    expect(test.errors[0]!.diff).toContain('"correlation_id": "fixture_discovery--get_capabilities-mutated"');
    // Vitest's own expected/actual diff, under the details (rendered by the adapter: the details took its place in `diff`).
    expect(test.errors[0]!.diff).toMatch(
      /\n\n- Expected\n\+ Received\n\n {2}\{\n- {3}"correlation_id": "fixture_discovery--get_capabilities",\n\+ {3}"correlation_id": "fixture_discovery--get_capabilities-mutated",/,
    );
    expect(test.meta.adcp.result.validations.find((v: any) => !v.passed)).toMatchObject({
      json_pointer: '/context/correlation_id',
      expected: 'fixture_discovery--get_capabilities',
      source: { line: 83, column: 13 },
      request: expect.any(Object),
      response: expect.any(Object),
    });
  });

  it("puts the failure's stack frames on the failing validation's line, then the step's, in the YAML (what CI annotations and IDEs point at)", () => {
    const failing = run.tests.filter((t) => t.state === 'failed');
    expect(failing.length).toBeGreaterThan(0);
    for (const test of failing) {
      const [first, second] = test.errors[0]!.stacks ?? [];
      const validation = test.meta.adcp.result.validations.find((v: any) => !v.passed && v.source);
      expect(first?.file).toBe(good[0]);
      if (validation) {
        expect(first).toMatchObject({ line: validation.source.line, column: validation.source.column });
        expect(second).toMatchObject({ file: good[0], line: test.location!.line });
      } else {
        expect(first?.line).toBe(test.location!.line);
      }
    }
    // `          - check: field_value` is line 83 (column 13), `      - id: get_capabilities` line 49 of discovery.storyboard.yaml.
    const stacks = byId(run, 'fixture_discovery/capabilities/get_capabilities').errors[0]!.stacks!;
    expect(stacks[0]).toMatchObject({ file: good[0], line: 83, column: 13 });
    expect(stacks[1]).toMatchObject({ file: good[0], line: 49 });
  });
});

describe('selecting one step with -t', () => {
  it("runs just that step, replaying the steps it depends on silently; the worker that runs it keeps the main process's cache key", async () => {
    const products = join(storyboardsDir, 'products.storyboard.yaml');
    const consumer = stepsOf(products).find(({ step }) =>
      JSON.stringify(step.sample_request ?? {}).includes('$context.'),
    )!;
    // A filtered run: the worker runs the file itself, through the caches. With the tests' own XDG_CACHE_HOME
    // (`test.env`) it made a key of its own there (the main process's entries its misses, its own the main's).
    const testsCacheHome = mkdtempSync(join(tmpdir(), 'vitest-adcp-tests-xdg-'));
    onTestFinished(() => rmSync(testsCacheHome, { recursive: true, force: true }));
    const run = await runVitest({
      config,
      env: { ADCP_AGENT_URL: inject('agentUrl'), E2E_STORYBOARDS: products, E2E_TEST_XDG_CACHE_HOME: testsCacheHome },
      args: ['-t', consumer.step.id],
    });
    const ran = run.tests.filter((t) => t.state !== 'skipped');
    expect(ran.map((t) => t.name)).toEqual([`${consumer.step.title} (${consumer.step.id})`]);
    expect(ran[0]!.state).toBe('passed');
    expect(run.exitCode).toBe(0);
    expect(existsSync(join(testsCacheHome, 'vitest-adcp', 'cache-key'))).toBe(false);
  });
});

describe('selecting one step by its YAML line (vitest file.yaml:LINE, what IDEs run)', () => {
  it('runs the step declared at that line', async () => {
    const products = join(storyboardsDir, 'products.storyboard.yaml');
    // Line 90 of products.storyboard.yaml: `      - id: refine_to_captured_product`.
    const run = await runVitest({
      config,
      env: { ADCP_AGENT_URL: inject('agentUrl'), E2E_STORYBOARDS: products },
      args: [`${products}:90`],
    });
    const ran = run.tests.filter((t) => t.state !== 'skipped');
    expect(ran.map((t) => [t.name, t.state])).toEqual([
      ['Refine to the captured product by id (refine_to_captured_product)', 'passed'],
    ]);
  });
});

describe('--retry', () => {
  it('never calls the agent again for a storyboard step, and says why with the first verdict', async () => {
    const own = await startFixtureAgent();
    try {
      const retried = await runVitest({
        config,
        env: {
          ADCP_AGENT_URL: own.urlFor(['wrong_value', 'session_retried']),
          E2E_FILES: 'fixtures/storyboards/discovery.storyboard.yaml',
        },
        args: ['--retry=2'],
      });
      const test = byId(retried, 'fixture_discovery/capabilities/get_capabilities');
      expect(test.state).toBe('failed');
      expect(test.errors.at(-1)!.message).toMatch(
        /^vitest-adcp does not retry storyboard steps \(retry 2\): .*first attempt's verdict stands — field_value at \/context\/correlation_id/,
      );
      // The step's own call (its correlation id) went out once, not three times.
      const stepCalls = own.calls.filter(
        (c) =>
          c.session === 'retried' &&
          (c.arguments as any)?.context?.correlation_id === 'fixture_discovery--get_capabilities',
      );
      expect(stepCalls).toHaveLength(1);
    } finally {
      await own.close();
    }
  });
});

describe("an agent slower than Vitest's own test timeout", () => {
  it("waits for the engine's bound, not Vitest's timer, and the report agrees with the terminal", async () => {
    // Each answer takes 1.2 s; the user's testTimeout is 1 s; the plugin's step bound (timeoutMs) is 5 s.
    const url = `${inject('agentOrigin')}/x/slow_ms_1200@get_adcp_capabilities/mcp`;
    const out = join(repoRoot, '.vitest-adcp', `slow-${process.pid}.json`);
    const run = await runVitest({
      config,
      env: { ADCP_AGENT_URL: url, E2E_FILES: 'fixtures/storyboards/discovery.storyboard.yaml' },
      reporters: [await builtModule('vitest/reporter')],
      args: ['--testTimeout=1000', `--outputFile.vitest-adcp=${out}`],
    });
    expect(run.tests.length).toBeGreaterThan(0);
    expect(
      run.tests
        .map((t) => [t.name, t.state, t.errors[0]?.message.split('\n')[0]])
        .filter(([, state]) => state !== 'passed'),
    ).toEqual([]);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    rmSync(out);
    expect(report.summary).toMatchObject({
      total_steps: run.tests.length,
      steps_passed: run.tests.length,
      steps_failed: 0,
    });
  });
});

describe('configuration errors', () => {
  it('a compliance version neither installed nor fetchable stops the run, naming the version and where it looked, even with no corpus storyboard selected', async () => {
    // A mirror nobody answers at (never the network): the named version is fetched before anything resolves it.
    const mirror = `http://127.0.0.1:${await closedPort()}`;
    const run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: inject('agentUrl'),
        ADCP_COMPLIANCE: '9.9.9',
        ADCP_BASE_URL: mirror,
        E2E_STORYBOARDS: good[0]!,
      },
    });
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout + run.stderr).toContain(
      `could not fetch the checksum of AdCP 9.9.9 from ${mirror}/protocol/9.9.9.tgz.sha256`,
    );
    expect(run.tests).toEqual([]);
  });

  it('a missing agent URL stops the run once, with the fix, before any step — not once per step', async () => {
    const run = await runVitest({ config, env: { ADCP_AGENT_URL: undefined, E2E_STORYBOARDS: good.join(',') } });
    expect(run.exitCode).toBe(1);
    const output = run.stdout + run.stderr;
    expect(output.match(/no agent to test: set ADCP_AGENT_URL/g)).toHaveLength(1);
    expect(output).toContain(
      'ConfigurationError: vitest-adcp cannot run the storyboards: no agent to test: set ADCP_AGENT_URL',
    );
    expect(run.tests.filter((t) => t.state === 'failed')).toEqual([]);
  });

  it("with isolate: true the storyboards run in the user's project, and the run stops once all the same", async () => {
    const run = await runVitest({
      config,
      env: { ADCP_AGENT_URL: undefined, E2E_STORYBOARDS: good[0]!, E2E_ISOLATE: '1' },
    });
    expect(run.exitCode).toBe(1);
    expect((run.stdout + run.stderr).match(/no agent to test: set ADCP_AGENT_URL/g)).toHaveLength(1);
    expect(run.tests).toEqual([]);
  });
});

describe('compliance.fromCapabilities in a config', () => {
  const vitestBin = join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');

  it("adds what the agent must pass to the explicit selection and the user's own storyboards", async () => {
    const run = await runNode([vitestBin, 'list', '--filesOnly', '--config', config], {
      env: {
        ADCP_AGENT_URL: inject('agentUrl'),
        E2E_FROM_CAPABILITIES: '1',
        E2E_CORPUS: 'brand_baseline',
        E2E_STORYBOARDS: good[0]!,
      },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const files = run.stdout.split('\n').filter((line) => line.endsWith('.yaml'));
    for (const file of [
      'universal/capability-discovery.yaml',
      'protocols/media-buy/index.yaml',
      'protocols/creative/index.yaml',
      'protocols/brand/index.yaml',
      'fixtures/storyboards/discovery.storyboard.yaml',
    ]) {
      expect(
        files.filter((f) => f.endsWith(file)),
        file,
      ).toHaveLength(1);
    }
    expect(files.some((f) => f.includes('/domains/') || f.includes('/specialisms/'))).toBe(false);
  });

  it('stops `vitest run` with one message naming the URL when the agent cannot be reached', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const run = await runNode([vitestBin, 'run', '--config', config], {
      env: { ADCP_AGENT_URL: url, E2E_FROM_CAPABILITIES: '1' },
    });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`AgentUnreachableError: cannot ask the agent at ${url} for its capabilities`);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });
});
