/**
 * What a user reads at the end of a storyboard run, in real runs against the fixture agent: the terminal summary (per
 * track, passed/failed/skipped, skip reasons grouped and counted, the agent's tool list once, the hint that runs the
 * skipped work) under Vitest and under Jest, and the failure messages of item 7 of issue 21 (an object mismatch names
 * its first differing key path, an unresolved placeholder says so and names the step that should have captured it,
 * multi-line JSON indented under its label, a missing agent URL under Jest said the Jest way, once).
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { builtModule, copyBuiltDist } from '../helpers/built.js';
import { corpusStubDir, readJestJson } from '../helpers/jest-project.js';
import { byId, repoRoot, runNode, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `summary-${process.pid}`);
const stripFences = (text: string) =>
  text.replace(/<<([a-z ]+?) [0-9a-f]{12}>>/g, '<<$1 #>>').replace(/<<end [0-9a-f]{12}>>/g, '<<end #>>');

/** A storyboard whose steps fail in the ways item 7 is about, and skip for a missing tool. */
const MESSAGES_STORYBOARD = [
  'id: messages',
  'title: Messages',
  'track: core',
  'phases:',
  '  - id: p',
  '    title: P',
  '    steps:',
  '      - id: object_mismatch',
  '        title: Object mismatch',
  '        task: get_adcp_capabilities',
  '        sample_request:',
  '          context: { correlation_id: msg, nested: { k: agent-side } }',
  '        validations:',
  '          - check: field_value',
  '            path: context',
  '            value: { correlation_id: msg, nested: { k: storyboard-side } }',
  '            description: the whole context comes back',
  '      - id: capture',
  '        title: Captures what is not there',
  '        task: get_adcp_capabilities',
  '        sample_request:',
  '          context: { correlation_id: capture }',
  '        context_outputs:',
  '          - name: product_id',
  '            path: no_such_field',
  '      - id: use_capture',
  '        title: Uses the capture',
  '        task: get_adcp_capabilities',
  '        sample_request:',
  '          context: { correlation_id: $context.product_id }',
  '      - id: not_served',
  '        title: A task the agent does not serve',
  '        task: sync_creatives',
  '        sample_request_skip_schema: true',
  '        sample_request: {}',
  '',
].join('\n');

beforeAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  writeFileSync(join(scratch, 'messages.storyboard.yaml'), MESSAGES_STORYBOARD);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('under Vitest', () => {
  let run: VitestRun;
  beforeAll(async () => {
    run = await runVitest({
      config: join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts'),
      reporters: [await builtModule('vitest/summary-reporter')],
      env: {
        ADCP_AGENT_URL: inject('agentUrl'),
        ADCP_AUTH_TOKEN: 'demo-summary',
        E2E_STORYBOARDS: `${scratch}/*.storyboard.yaml`,
        E2E_CORPUS: 'webhook_emission',
      },
    });
  }, 120_000);

  it('names the first differing key path of an object mismatch, with both values in compact form below', () => {
    const error = byId(run, 'object_mismatch').errors[0]!;
    expect(error.message).toMatch(
      /^field_value at \/context: the object differs at \/context\/nested\/k: expected "storyboard-side", got "agent-side" — .*messages\.storyboard\.yaml:14:13$/,
    );
    const details = stripFences(error.diff ?? '');
    expect(details).toContain('    expected: {"correlation_id":"msg","nested":{"k":"storyboard-side"}}\n');
    expect(details).toContain(
      '    actual:   <<agent value #>> {"correlation_id":"msg","nested":{"k":"agent-side"}} <<end #>>\n',
    );
    expect(details).toContain(
      '    first difference at /context/nested/k: expected "storyboard-side", got <<agent value #>> "agent-side" <<end #>>',
    );
  });

  it('says a placeholder did not resolve and which step should have captured it, not "expected [1 items], got null"', () => {
    const error = byId(run, 'use_capture').errors[0]!;
    expect(error.message).toMatch(
      /^unresolved_substitution: placeholder \$context\.product_id did not resolve: step "capture" \(phase p\) failed/,
    );
    expect(error.message).not.toContain('items]');
    expect(error.diff).toContain('    unresolved: $context.product_id');
  });

  it('ends the run with the per-track summary: counts, skip reasons grouped, the tool list once, the webhook hint', () => {
    const out = run.stdout;
    expect(out).toContain('\nvitest-adcp: 2 storyboards, 11 steps: 0 passed, 3 failed, 8 skipped\n');
    expect(out).toMatch(/\n {2}✗ core {2}failed — 2 storyboards, 0 passed, 3 failed, 8 skipped\n/);
    expect(out).toMatch(
      /\n {6}skipped: not_applicable \(no webhook receiver in this run\) ×7, missing_tool sync_creatives ×1\n/,
    );
    expect(out).toMatch(
      /\n {2}agent tools: .*get_adcp_capabilities.*get_products.* — missing_tool skips are tasks it does not advertise\n/,
    );
    expect(out).toContain(
      "\n  hint (7 skipped steps): the runner's webhook receiver would run them: npx vitest-adcp … --webhook-receiver, or the plugin option webhooks: { receiver: 'loopback' }\n",
    );
    // The skip itself names only the missing tool; the agent's list is said once, in the summary.
    expect(byId(run, 'not_served').note).toBe('missing_tool: the agent does not advertise the tool "sync_creatives"');
    expect(out.match(/get_adcp_capabilities, /g)?.length).toBe(1);
  });
});

describe('the plugin adds the summary (addSummaryReporter from configureVitest)', () => {
  it('adds the summary to a run whose config names no vitest-adcp reporter, and prints it once beside the contract reporter', async () => {
    const config = join(scratch, 'summary-hook.config.ts');
    writeFileSync(
      config,
      [
        "import { defineConfig } from 'vitest/config';",
        `import { adcpStoryboards } from ${JSON.stringify(join(repoRoot, 'test', 'e2e', 'plugin-under-test.ts'))};`,
        'export default defineConfig({',
        `  plugins: [adcpStoryboards({ include: [${JSON.stringify(`${scratch}/*.storyboard.yaml`)}], timeoutMs: 5_000 })],`,
        '  test: { include: [], passWithNoTests: true },',
        '});',
        '',
      ].join('\n'),
    );
    const env = { ADCP_AGENT_URL: inject('agentUrl'), ADCP_AUTH_TOKEN: 'demo-summary' };
    const alone = await runVitest({ config, env, args: ['--root', repoRoot] });
    expect(alone.stdout).toContain('\nvitest-adcp: 1 storyboard, 4 steps: 0 passed, 3 failed, 1 skipped\n');
    const both = await runVitest({
      config,
      env,
      args: ['--root', repoRoot, `--outputFile.vitest-adcp=${join(scratch, 'both.json')}`],
      reporters: [await builtModule('vitest/reporter')],
    });
    expect(both.stdout.match(/\nvitest-adcp: 1 storyboard, 4 steps/g)).toHaveLength(1);
    expect(both.stdout).toMatch(
      /vitest-adcp: runner output contract report \(4 steps: 0 passed, 3 failed, 1 skipped\) written to /,
    );
  }, 120_000);
});

describe('under Jest', () => {
  const project = join(scratch, 'jest-project');
  const jestBin = join(repoRoot, 'node_modules', 'jest', 'bin', 'jest.js');
  beforeAll(async () => {
    mkdirSync(join(project, 'storyboards'), { recursive: true });
    // `tsc -p tsconfig.build.json --noCheck --declaration false`, built once per test run (test/helpers/built.ts).
    await copyBuiltDist(join(scratch, 'dist'), { sourceMaps: true });
    symlinkSync(join(repoRoot, 'schema'), join(scratch, 'schema'));
    copyFileSync(join(repoRoot, 'package.json'), join(scratch, 'package.json'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'jest-summary', private: true }));
    symlinkSync(join(repoRoot, 'node_modules'), join(project, 'node_modules'));
    writeFileSync(
      join(project, 'jest.config.js'),
      `module.exports = { preset: ${JSON.stringify(join(scratch, 'dist', 'jest', 'jest-preset.cjs'))}, reporters: ['default', [${JSON.stringify(join(scratch, 'dist', 'jest', 'reporter.cjs'))}, { outputFile: 'reports/adcp.json' }]] };\n`,
    );
    writeFileSync(join(project, 'storyboards', 'messages.storyboard.yaml'), MESSAGES_STORYBOARD);
  }, 180_000);
  afterAll(() => rmSync(corpusStubDir(project), { recursive: true, force: true }));

  const jest = (env: Record<string, string | undefined>) =>
    runNode([jestBin, '--ci', '--json', '--outputFile=results.json'], {
      cwd: project,
      env: { ADCP_AUTH_TOKEN: 'demo-summary', ADCP_STORYBOARDS: undefined, ADCP_COMPLIANCE: undefined, ...env },
    });

  it('prints the same per-track summary as Vitest, and the same messages', async () => {
    const run = await jest({ ADCP_AGENT_URL: inject('agentUrl'), ADCP_STORYBOARDS: 'webhook_emission' });
    const output = run.stdout + run.stderr;
    expect(run.exitCode, output).toBe(1);
    expect(output).toMatch(/\n {2}✗ core {2}failed — 2 storyboards, 0 passed, 3 failed, 8 skipped\n/);
    expect(output).toMatch(
      /\n {6}skipped: not_applicable \(no webhook receiver in this run\) ×7, missing_tool sync_creatives ×1\n/,
    );
    expect(output).toContain(
      "\n  hint (7 skipped steps): they need the runner's webhook receiver, which vitest-adcp hosts under Vitest only",
    );
    expect(output.match(/get_adcp_capabilities, /g)?.length, output).toBe(1); // the agent's tool list, once
    expect(output).toContain(
      'vitest-adcp: skipped messages/p/not_served — missing_tool: the agent does not advertise the tool "sync_creatives"\n',
    );
    const messages = readJestJson(join(project, 'results.json')).testResults.find((r) =>
      r.name.endsWith('messages.storyboard.yaml'),
    )!;
    const failure = (id: string) =>
      messages.assertionResults.find((a) => a.title.endsWith(`(${id})`))!.failureMessages.join('\n');
    expect(failure('object_mismatch')).toMatch(
      /^StoryboardStepError: field_value at \/context: the object differs at \/context\/nested\/k: expected "storyboard-side", got "agent-side"/,
    );
    expect(failure('use_capture')).toMatch(
      /^StoryboardStepError: unresolved_substitution: placeholder \$context\.product_id did not resolve: step "capture" \(phase p\) failed/,
    );
  }, 120_000);

  it('without an agent URL: says how to set it under Jest, unfenced, whole once and in one line for the other steps', async () => {
    const run = await jest({ ADCP_AGENT_URL: undefined });
    const output = run.stdout + run.stderr;
    expect(run.exitCode, output).toBe(1);
    const failures = readJestJson(join(project, 'results.json'))
      .testResults.flatMap((r) => r.assertionResults)
      .flatMap((a) => a.failureMessages);
    expect(failures.length).toBeGreaterThan(1);
    expect(failures.join('\n')).not.toMatch(/vitest\.config|<<error|adcpStoryboards/);
    const whole = failures.filter((f) => f.includes('ADCP_AGENT_URL=http://127.0.0.1:3000/mcp npx jest'));
    expect(whole).toHaveLength(1);
    expect(whole[0]).toContain("createJestPreset({ adcp: { agentUrl: 'http://127.0.0.1:3000/mcp' } })");
    // And once at the end, in the summary.
    expect(output).toMatch(
      /\n {2}✗ 4 steps failed before reaching the agent: vitest-adcp cannot run the storyboards under Jest: no agent to test\. Set ADCP_AGENT_URL/,
    );
    for (const f of failures.filter((x) => x !== whole[0]))
      expect(f).toMatch(
        /^StoryboardStepError: not run: vitest-adcp is not configured for Jest \(no agent to test; the fix is in the first failed step's message\)/,
      );
  }, 120_000);
});
