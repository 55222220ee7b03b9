/**
 * The contract reporter in a real `vitest run`: one JSON with every step's
 * record, the run summary the contract requires, load errors — and nothing
 * secret in it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `reporter-${process.pid}`);
const out = join(scratch, 'contract.json');
const secretToken = 'demo-reporter-secret-token-9f3b';
let run: VitestRun;
let report: any;

beforeAll(async () => {
  mkdirSync(scratch, { recursive: true });
  writeFileSync(
    join(scratch, 'leaky.storyboard.yaml'),
    [
      'id: leaky',
      'title: Leaky',
      'track: core',
      'phases:',
      '  - id: p',
      '    title: P',
      '    steps:',
      '      - id: echo',
      '        title: Echo secrets back',
      '        task: get_adcp_capabilities',
      '        sample_request:',
      // The agent echoes the context: the configured token comes back under a key no redaction pattern matches.
      `          context: { correlation_id: leaky, api_key: "kit-planted-key", nested: { Authorization: "Bearer planted" }, note: "${secretToken}" }`,
      '        validations:',
      '          - check: response_schema',
      '          - check: field_value',
      '            path: context.correlation_id',
      '            value: "not-what-the-agent-says"',
      '',
    ].join('\n'),
  );
  writeFileSync(join(scratch, 'placeholder.storyboard.yaml'), 'id: placeholder\ntitle: Placeholder\nversion: "0.1.0"\ntrack: brand\nphases: []\n');
  writeFileSync(join(scratch, 'broken.storyboard.yaml'), 'id: broken\ntitle: Broken\nphases:\n  - id: p\n    steps:\n      - id: s\n');
  run = await runVitest({
    config: join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts'),
    env: {
      ADCP_AGENT_URL: inject('agentUrl'),
      ADCP_AUTH_TOKEN: secretToken,
      E2E_STORYBOARDS: [join(repoRoot, 'fixtures', 'storyboards', 'discovery.storyboard.yaml'), `${scratch}/*.storyboard.yaml`].join(','),
    },
    reporters: [join(repoRoot, 'src', 'report', 'reporter.ts')],
    args: [`--outputFile.vitest-adcp=${out}`],
  });
  report = JSON.parse(readFileSync(out, 'utf8'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('contract reporter', () => {
  it('writes one record per step with the contract fields, grouped by storyboard', () => {
    expect(report.contract).toEqual({ id: 'runner_output_contract', version: '1.1.0' });
    const ids = report.storyboards.map((s: any) => s.storyboard_id).sort();
    expect(ids).toEqual(['fixture_discovery', 'leaky', 'placeholder']);
    for (const storyboard of report.storyboards) {
      for (const step of storyboard.steps) {
        for (const field of ['storyboard_id', 'phase_id', 'step_id', 'task', 'passed', 'duration_ms', 'validations', 'extraction']) expect(step).toHaveProperty(field);
      }
    }
    const echo = report.storyboards.find((s: any) => s.storyboard_id === 'leaky').steps[0];
    expect(echo.passed).toBe(false);
    expect(echo.validations.find((v: any) => !v.passed)).toMatchObject({ check: 'field_value', json_pointer: '/context/correlation_id', expected: 'not-what-the-agent-says', actual: 'leaky' });
  });

  it('summarises the run: steps, tracks, schemas used', () => {
    const steps = report.storyboards.flatMap((s: any) => s.steps);
    expect(report.summary).toMatchObject({ total_steps: steps.length, steps_failed: 1, steps_passed: steps.length - 1, steps_skipped: 0 });
    expect(report.summary.tracks).toEqual(
      expect.arrayContaining([
        { track: 'core', status: 'failed', storyboards: expect.arrayContaining([{ storyboard_id: 'leaky', status: 'failed' }, { storyboard_id: 'fixture_discovery', status: 'passed' }]) },
        { track: 'brand', status: 'skipped', storyboards: [{ storyboard_id: 'placeholder', status: 'skipped' }], skip_reasons: ['no_phases'] },
      ]),
    );
    expect(report.summary.schemas_used).toEqual(
      expect.arrayContaining([{ schema_id: '/schemas/3.0.6/protocol/get-adcp-capabilities-response.json', schema_url: 'https://adcontextprotocol.org/schemas/3.0.6/protocol/get-adcp-capabilities-response.json' }]),
    );
  });

  it('reports a storyboard without phases as skipped with no_phases, citing id and version', () => {
    const placeholder = report.storyboards.find((s: any) => s.storyboard_id === 'placeholder');
    expect(placeholder).toMatchObject({ status: 'skipped', steps: [], skip: { reason: 'no_phases', detail: 'storyboard placeholder version 0.1.0 has no phases to run' } });
    expect(run.tests.find((t) => t.module.endsWith('placeholder.storyboard.yaml'))).toMatchObject({ state: 'skipped', note: 'no_phases: storyboard placeholder version 0.1.0 has no phases to run' });
  });

  it('lists storyboard files that did not load', () => {
    expect(report.load_errors).toEqual([expect.objectContaining({ file: expect.stringMatching(/broken\.storyboard\.yaml$/), message: expect.stringMatching(/\[schema\]/) })]);
  });

  it('leaks no secret: redacted keys, allowlisted headers, no token anywhere', () => {
    const text = readFileSync(out, 'utf8');
    expect(text).not.toContain(secretToken);
    expect(text).not.toContain('kit-planted-key');
    expect(text).not.toContain('Bearer planted');
    const echo = report.storyboards.find((s: any) => s.storyboard_id === 'leaky').steps[0];
    expect(echo.request.payload.context.api_key).toBe('[redacted]');
    expect(echo.response.payload.structuredContent.context.nested.Authorization).toBe('[redacted]');
    expect(JSON.parse(echo.response.payload.content[0].text).context.api_key).toBe('[redacted]');
    // The token the agent echoed is scrubbed from the record, the test meta and the failure shown.
    expect(echo.request.payload.context.note).toBe('[redacted]');
    expect(echo.response.payload.structuredContent.context.note).toBe('[redacted]');
    const failing = run.tests.find((t) => t.module.endsWith('leaky.storyboard.yaml'))!;
    expect(failing.state).toBe('failed');
    expect(failing.errors[0]!.message).toMatch(/"note": "\[redacted\]"/);
    expect(JSON.stringify([failing.errors, failing.meta])).not.toContain(secretToken);
    for (const step of report.storyboards.flatMap((s: any) => s.steps)) {
      for (const name of Object.keys(step.response?.headers ?? {})) {
        expect(['content-type', 'content-length', 'content-encoding', 'www-authenticate', 'location', 'retry-after', 'x-request-id', 'x-correlation-id']).toContain(name);
      }
    }
    // The terminal output too.
    expect(run.stdout + run.stderr).not.toContain(secretToken);
    expect(run.stdout + run.stderr).not.toContain('kit-planted-key');
  });
});

describe('sharded runs', () => {
  it('merges the shards\' blob reports into one contract report (vitest --shard + --merge-reports)', async () => {
    const blobs = join(scratch, 'blobs');
    const merged = join(scratch, 'merged.json');
    const config = join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts');
    const env = { ADCP_AGENT_URL: inject('agentUrl'), E2E_STORYBOARDS: join(repoRoot, 'fixtures', 'storyboards', '*.storyboard.yaml'), E2E_CORPUS: 'capability_discovery' };
    for (const shard of ['1/2', '2/2']) {
      const r = await runVitest({ config, env, reporters: ['blob'], args: [`--shard=${shard}`, `--outputFile.blob=${join(blobs, `${shard.replace('/', '-')}.json`)}`] });
      expect(r.exitCode, r.stdout + r.stderr).toBe(0);
      expect(r.tests.length).toBeGreaterThan(0);
    }
    const r = await runVitest({ config, env: { E2E_STORYBOARDS: env.E2E_STORYBOARDS }, reporters: [join(repoRoot, 'src', 'report', 'reporter.ts')], args: [`--merge-reports=${blobs}`, `--outputFile.vitest-adcp=${merged}`] });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(merged, 'utf8'));
    expect(report.storyboards.map((s: any) => s.storyboard_id).sort()).toEqual(['capability_discovery', 'fixture_auth', 'fixture_discovery', 'fixture_error_codes', 'fixture_products']);
    expect(report.summary.total_steps).toBe(r.tests.length);
    expect(report.summary.steps_failed).toBe(0);
  });
});
