/**
 * Storyboards not applicable up front (src/plugin/up-front.ts): a run that selects its storyboards from the agent's
 * capabilities grades their storyboard-level `requires_capability` gates before it starts, as storyboard-schema.yaml
 * asks ("evaluated against the agent's get_adcp_capabilities response before executing phases … the runner skips the
 * storyboard with skip_result.reason: not_applicable and detail naming the predicate path and declared value").
 *
 * The built bin and `vitest run` with `compliance.fromCapabilities`, each a real process, against the fixture agent (it
 * declares `creative.supports_generation: false` and `creative.has_creative_library: true`), on a copy of the installed
 * corpus with two universal storyboards added: one whose gate the agent does not satisfy, one whose gate it does.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveCorpus } from '../../src/corpus.js';
import { assertValidContractReport } from '../helpers/contract-schema.js';
import { buildBin, NO_AGENT_ENV, repoRoot, runNode } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `up-front-${process.pid}`);
const corpus = join(scratch, 'corpus');
let cliJs: string;

const OFF_DETAIL = 'requires_capability: creative.supports_generation must equal true; the agent declares false';

/** A universal storyboard of one capabilities step, behind a `requires_capability` gate on `path` equal to true. */
function gated(id: string, path: string): string {
  return [
    `id: ${id}`,
    'version: "1.0.0"',
    `title: "Gated on ${path}"`,
    'category: capability_discovery',
    'summary: A storyboard behind a capability gate.',
    'narrative: It runs only for an agent that declares the capability.',
    'track: core',
    'requires_capability:',
    `  path: ${path}`,
    '  equals: true',
    'agent:',
    '  interaction_model: media_buy_seller',
    'caller:',
    '  role: buyer_agent',
    'phases:',
    '  - id: discover',
    '    title: Discover',
    '    steps:',
    '      - id: capabilities',
    '        title: Read the capabilities',
    '        task: get_adcp_capabilities',
    '        validations:',
    '          - check: field_present',
    '            path: supported_protocols',
    '            description: The agent declares its protocols',
    '',
  ].join('\n');
}

beforeAll(async () => {
  cliJs = await buildBin(scratch);
  cpSync(resolveCorpus(undefined, repoRoot).root, corpus, { recursive: true });
  writeFileSync(join(corpus, 'universal', 'x-gated-off.yaml'), gated('x_gated_off', 'creative.supports_generation'));
  writeFileSync(join(corpus, 'universal', 'x-gated-on.yaml'), gated('x_gated_on', 'creative.has_creative_library'));
  // The corpus's own index names the universal storyboards every agent is obligated to (storyboard/obligations.ts).
  const index = JSON.parse(readFileSync(join(corpus, 'index.json'), 'utf8')) as { universal: string[] };
  index.universal.push('x-gated-off', 'x-gated-on');
  writeFileSync(join(corpus, 'index.json'), JSON.stringify(index));
}, 120_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Report {
  summary: { total_steps: number };
  storyboards: { storyboard_id: string; status: string; skip?: { reason: string; detail: string }; steps: unknown[] }[];
}

function storyboardIn(report: Report, id: string) {
  return report.storyboards.find((s) => s.storyboard_id === id);
}

describe('the bin, selecting from the capabilities', () => {
  it('--list marks the storyboard whose gate the agent does not satisfy, and counts it', async () => {
    const run = await runNode([cliJs, inject('agentUrl'), '--list'], {
      env: { ...NO_AGENT_ENV, ADCP_COMPLIANCE: corpus },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const why = (id: string) =>
      run.stdout
        .split('\n')
        .find((line) => line.startsWith(`${id}\t`))
        ?.split('\t')[2];
    expect(why('x_gated_off')).toBe(`capabilities: universal; not applicable up front: ${OFF_DETAIL}`);
    expect(why('x_gated_on')).toBe('capabilities: universal');
    expect(run.stdout.trim().split('\n').at(-1)).toMatch(
      /^\d+ storyboards \(from the agent's capabilities: .*\), 1 of them not applicable to the agent \(requires_capability\), reported skipped without running$/,
    );
  });

  it('runs no test of it, and reports it skipped as a whole with the gate and what the agent declares', async () => {
    const report = join(scratch, 'bin.json');
    const run = await runNode(
      [
        cliJs,
        inject('agentUrl'),
        '--report',
        report,
        '--',
        '--reporter=default',
        '--reporter=json',
        '--outputFile.json',
        join(scratch, 'bin-vitest.json'),
      ],
      { env: { ...NO_AGENT_ENV, ADCP_COMPLIANCE: corpus } },
    );
    expect(run.stderr).toContain('1 of them not applicable to the agent (requires_capability)');
    const vitest = JSON.parse(readFileSync(join(scratch, 'bin-vitest.json'), 'utf8')) as {
      testResults: { name: string }[];
    };
    const files = vitest.testResults.map((r) => r.name);
    expect(files.some((f) => f.endsWith('x-gated-on.yaml'))).toBe(true);
    expect(files.some((f) => f.endsWith('x-gated-off.yaml'))).toBe(false);
    const json = JSON.parse(readFileSync(report, 'utf8')) as Report;
    assertValidContractReport(json);
    expect(storyboardIn(json, 'x_gated_off')).toMatchObject({
      status: 'skipped',
      skip: { reason: 'not_applicable', detail: OFF_DETAIL },
      steps: [],
    });
    expect(storyboardIn(json, 'x_gated_on')).toMatchObject({ status: 'passed' });
    expect(run.stdout).toMatch(/vitest-adcp: \d+ storyboards \(1 skipped as a whole: not_applicable ×1\), /);
  });
});

describe('every selected storyboard not applicable', () => {
  it('runs them all the same, each step skipped with the gate: a run of no files would be "No test files found"', async () => {
    // A corpus whose index obligates one universal storyboard, gated off, and no protocol baseline.
    const only = join(scratch, 'corpus-gated-only');
    cpSync(corpus, only, {
      recursive: true,
      filter: (path) =>
        !/[\\/](universal|protocols|specialisms|domains)[\\/]./.test(path) || path.endsWith('x-gated-off.yaml'),
    });
    const index = JSON.parse(readFileSync(join(only, 'index.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(
      join(only, 'index.json'),
      JSON.stringify({ ...index, universal: ['x-gated-off'], protocols: [], specialisms: [], domains: [] }),
    );
    const report = join(scratch, 'only.json');
    const run = await runNode([cliJs, inject('agentUrl'), '--report', report], {
      env: { ...NO_AGENT_ENV, ADCP_COMPLIANCE: only },
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.stderr).toContain("vitest-adcp: 1 storyboard (from the agent's capabilities: 1 universal); --list");
    const json = JSON.parse(readFileSync(report, 'utf8')) as Report;
    const entry = storyboardIn(json, 'x_gated_off')!;
    expect(entry).toMatchObject({
      status: 'skipped',
      steps: [{ skip: { reason: 'not_applicable', detail: OFF_DETAIL } }],
    });
    expect(entry).not.toHaveProperty('skip');
  });
});

describe('vitest run with compliance.fromCapabilities', () => {
  it('grades the same storyboard before the run, the same way', async () => {
    const report = join(scratch, 'plugin.json');
    const config = join(scratch, 'vitest.config.mjs');
    writeFileSync(
      config,
      `import { adcpStoryboards } from ${JSON.stringify(join(scratch, 'dist', 'index.js'))};\nimport AdcpReporter from ${JSON.stringify(join(scratch, 'dist', 'vitest', 'reporter.js'))};\nexport default { plugins: [adcpStoryboards({ include: [], compliance: { fromCapabilities: true } })], test: { include: [], reporters: ['default', new AdcpReporter({ outputFile: ${JSON.stringify(report)} })] } };\n`,
    );
    const run = await runNode(
      [join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', config, '--root', scratch],
      { env: { ...NO_AGENT_ENV, ADCP_AGENT_URL: inject('agentUrl'), ADCP_COMPLIANCE: corpus } },
    );
    expect(run.stdout + run.stderr).not.toContain('x-gated-off.yaml');
    const json = JSON.parse(readFileSync(report, 'utf8')) as Report;
    expect(storyboardIn(json, 'x_gated_off')).toMatchObject({
      status: 'skipped',
      skip: { reason: 'not_applicable', detail: OFF_DETAIL },
      steps: [],
    });
    expect(storyboardIn(json, 'x_gated_on')).toMatchObject({ status: 'passed' });
  });
});
