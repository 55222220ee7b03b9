/**
 * schema/runner-output.schema.json against reports of real engine runs (the
 * fixture agent on 127.0.0.1, well-behaved and misbehaving), built by the
 * reporter's own buildReport: every failure kind carries the contract's
 * required-on-failure fields (null where there is nothing); the envelope,
 * the project × agent keying, filtered runs and the NDJSON stream — and the
 * schema rejects a report that breaks one of those rules.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import type { StepOutcome, StepResult } from '../../src/model/records.js';
import { testDir } from '../helpers/temp-dir.js';
import { buildReport, type ContractReport, type ReportTest } from '../../src/report/build.js';
import { completeStepResult } from '../../src/report/contract-fields.js';
import { publicAgentUrl, toolVersion } from '../../src/report/envelope.js';
import { NdjsonStream } from '../../src/report/ndjson.js';
import { redactStepResult } from '../../src/report/record.js';
import type { StoryboardInfo } from '../../src/model/step-meta.js';
import { assertValidContractReport, validateContractReport } from '../helpers/contract-schema.js';
import { phasedStoryboard, runInline, type InlineStep } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

const ROOT = '/virtual';
const info = (id: string, agentUrl: string, extra: Partial<StoryboardInfo> = {}): StoryboardInfo => ({
  id,
  title: id,
  track: 'core',
  file: `${ROOT}/${id}.storyboard.yaml`,
  agent_url: agentUrl,
  protocol: 'mcp',
  corpus_version: '3.0.6',
  ...extra,
});

/** The tests a framework would hand over for these step outcomes (records redacted as the adapter leaves them). */
function testsOf(storyboard: StoryboardInfo, outcomes: readonly StepOutcome[], project = 'vitest-adcp'): ReportTest[] {
  return outcomes.map((o) => {
    // The inline runs all have the id "inline": relabel them as the storyboard they stand for here.
    const result = { ...redactStepResult(o.result), storyboard_id: storyboard.id };
    return {
      project,
      file: storyboard.file,
      name: result.step_id,
      state: o.status,
      errors: [],
      meta: {
        adcp: { id: `${storyboard.id}/${result.phase_id}/${result.step_id}`, status: o.status, result, storyboard },
      },
    };
  });
}

const caps = (id: string, validations: unknown[], extra: Partial<InlineStep> = {}): InlineStep => ({
  id,
  task: 'get_adcp_capabilities',
  sample_request: { context: { correlation_id: id } },
  validations,
  ...extra,
});

/** Every failure kind the engine makes, from a well-behaved agent, a schema-breaking one and one that answers HTML. */
let ran: Promise<{ tests: ReportTest[]; good: string; broken: string; html: string }> | undefined;
function failingRuns() {
  return (ran ??= (async () => {
    const good = agent.url;
    const broken = agent.urlFor(['schema_invalid', 'wrong_value']);
    const html = agent.urlFor(['garbage']);
    const checks = phasedStoryboard([
      {
        id: 'checks',
        steps: [
          caps('caps', [
            { check: 'response_schema' },
            { check: 'field_value', path: 'context.correlation_id', value: 'caps' },
            { check: 'field_present', path: 'no.such.field' },
            { check: 'error_code', value: 'INVALID_REQUEST' },
          ]),
          // A schema ref that does not resolve: schema_id/schema_url still there (the identity asked for), json_pointer null.
          caps('unknown_schema', [{ check: 'response_schema' }], { response_schema_ref: 'core/no-such-schema.json' }),
          // Nothing to send: the $context value never resolved, so the check never reached the agent (response null).
          {
            id: 'unresolved',
            task: 'get_products',
            sample_request: { brief: '$context.never_captured' },
            validations: [{ check: 'field_present', path: 'products' }],
          },
        ],
      },
    ]);
    const [onGood, onBroken, onHtml] = await Promise.all(
      [good, broken, html].map((url) => runInline(checks, url, { strictKeys: false })),
    ); // never_captured: a load warning, not an error, under strictKeys: false
    const tests = [
      ...testsOf(info('on_good', good), Object.values(onGood!)),
      ...testsOf(info('on_broken', broken), Object.values(onBroken!)),
      ...testsOf(info('on_html', html), Object.values(onHtml!)),
    ];
    return { tests, good, broken, html };
  })());
}

async function failingReport(): Promise<ContractReport> {
  return buildReport((await failingRuns()).tests, {
    root: ROOT,
    started_at: '2026-11-30T10:00:00.000Z',
    finished_at: '2026-11-30T10:00:05.000Z',
  });
}

const allValidations = (r: ContractReport) =>
  r.storyboards.flatMap((s) =>
    s.steps.flatMap((step) => step.validations.map((v) => ({ storyboard: s.storyboard_id, step: step.step_id, ...v }))),
  );
const REQUIRED_ON_FAILURE = ['request', 'response', 'json_pointer', 'expected', 'actual', 'schema_id', 'schema_url'];

describe('schema/runner-output.schema.json on reports of real runs', () => {
  it('a report of failing runs validates, and has the failures it is meant to have', async () => {
    const report = await failingReport();
    assertValidContractReport(report);
    const failed = allValidations(report).filter((v) => !v.passed);
    expect([...new Set(failed.map((v) => v.check))]).toEqual(
      expect.arrayContaining([
        'response_schema',
        'field_value',
        'field_present',
        'error_code',
        'unresolved_substitution',
        'invariant',
      ]),
    );
    expect(report.storyboards.find((s) => s.storyboard_id === 'on_html')!.steps[0]!.error).toMatch(
      /content type|text\/html/i,
    );
  });

  it('every failed validation carries every required-on-failure field, null where there is nothing', async () => {
    const failed = allValidations(await failingReport()).filter((v) => !v.passed);
    expect(failed.length).toBeGreaterThan(8);
    for (const v of failed)
      for (const key of REQUIRED_ON_FAILURE)
        expect(v, `${v.storyboard}/${v.step} ${v.check} lacks ${key}`).toHaveProperty(key);
    // A response_schema failure whose schema ref did not resolve: the identity fields are there (the artifact asked for).
    const noSchema = failed.find((v) => v.step === 'unknown_schema' && v.check === 'response_schema')!;
    expect(noSchema).toMatchObject({
      schema_id: expect.stringMatching(/no-such-schema\.json$/),
      schema_url: expect.stringMatching(/^https:.*no-such-schema\.json$/),
      json_pointer: null,
      actual: { reason: 'schema_not_found' },
    });
    // A check that never reached the agent: a request maybe, no response — null, not absent.
    const unresolved = failed.find((v) => v.check === 'unresolved_substitution')!;
    expect(unresolved.response).toBeNull();
    // Other checks name no schema.
    for (const v of failed.filter((v) => v.check !== 'response_schema'))
      expect([v.schema_id, v.schema_url]).toEqual([null, null]);
  });

  it('an answer the transport could not read still records a response with payload null', async () => {
    const html = (await failingReport()).storyboards.find((s) => s.storyboard_id === 'on_html')!.steps[0]!;
    expect(html.response).toMatchObject({ transport: 'mcp', payload: null, status: 200 });
  });

  it('completeStepResult fills the fields without changing its input, and keeps what is there', () => {
    const step: StepResult = {
      storyboard_id: 's',
      phase_id: 'p',
      step_id: 'x',
      task: 't',
      passed: false,
      duration_ms: 1,
      extraction: { path: 'none' },
      request: { transport: 'mcp', operation: 't', payload: { a: 1 } },
      validations: [
        { check: 'any_of', passed: false, description: 'd' },
        { check: 'field_value', passed: false, description: 'd', json_pointer: '/a', expected: 1, actual: 2 },
        { check: 'field_present', passed: true, description: 'd' },
      ],
    };
    const before = JSON.stringify(step);
    const complete = completeStepResult(step);
    expect(JSON.stringify(step)).toBe(before);
    expect(complete.validations[0]).toEqual({
      check: 'any_of',
      passed: false,
      description: 'd',
      request: step.request,
      response: null,
      json_pointer: null,
      expected: null,
      actual: null,
      schema_id: null,
      schema_url: null,
    });
    expect(complete.validations[1]).toMatchObject({ json_pointer: '/a', expected: 1, actual: 2 });
    expect(complete.validations[2]).toEqual({ check: 'field_present', passed: true, description: 'd' });
  });
});

describe('the schema rejects a report that breaks a rule (so the tests above can fail)', () => {
  const mutate = async (change: (r: any) => void) => {
    const r = structuredClone(await failingReport()) as any;
    change(r);
    return validateContractReport(r);
  };
  const firstFailed = (r: any) => r.storyboards[0].steps.flatMap((s: any) => s.validations).find((v: any) => !v.passed);

  it.each(REQUIRED_ON_FAILURE)('a failed validation without %s', async (key) => {
    const { valid, errors } = await mutate((r) => delete firstFailed(r)[key]);
    expect(valid).toBe(false);
    expect(errors.join('\n')).toMatch(
      new RegExp(`^/storyboards/0/steps/\\d+/validations/\\d+ must have required property '${key}'`, 'm'),
    );
  });

  it('a field_value validation naming a schema, a response_schema one without schema_id', async () => {
    expect(
      (
        await mutate(
          (r) =>
            (r.storyboards[0].steps[0].validations.find((v: any) => v.check === 'field_value').schema_id = '/x.json'),
        )
      ).valid,
    ).toBe(false);
    expect(
      (
        await mutate(
          (r) => delete r.storyboards[0].steps[0].validations.find((v: any) => v.check === 'response_schema').schema_id,
        )
      ).valid,
    ).toBe(false);
  });

  it('a failed step with no failed validation and no error; an unknown skip reason; a header outside the allowlist', async () => {
    expect((await mutate((r) => (r.storyboards[0].steps[0].validations = []))).valid).toBe(false);
    expect((await mutate((r) => (r.storyboards[0].steps[0].skip = { reason: 'filtered', detail: 'x' }))).valid).toBe(
      false,
    );
    expect((await mutate((r) => (r.storyboards[0].steps[0].response.headers['set-cookie'] = 'a=b'))).valid).toBe(false);
  });

  it('no run envelope, or one without the agent; a track without its project', async () => {
    expect((await mutate((r) => delete r.run)).errors).toContain("/ must have required property 'run'");
    expect((await mutate((r) => delete r.run.agent_url)).valid).toBe(false);
    expect((await mutate((r) => delete r.summary.tracks[0].project)).valid).toBe(false);
  });

  it("counts that disagree with the steps, a step in another storyboard's entry, a status its steps contradict", async () => {
    expect((await mutate((r) => (r.summary.steps_failed += 1))).errors).toEqual([
      expect.stringMatching(/^\/summary\/steps_failed is \d+, but the steps count \d+$/),
    ]);
    expect((await mutate((r) => (r.storyboards[1].steps[0].storyboard_id = 'elsewhere'))).errors).toEqual([
      '/storyboards/1/steps/0/storyboard_id is "elsewhere" in the entry of "on_broken"',
    ]);
    expect((await mutate((r) => (r.storyboards[0].status = 'passed'))).errors).toEqual([
      '/storyboards/0/status is "passed", but its steps make it "failed"',
    ]);
    expect((await mutate((r) => (r.run.complete = false))).errors).toEqual([
      '/run/complete is false with 0 steps not run',
    ]);
  });

  it('assertValidContractReport throws with each error as pointer + message', () => {
    expect(() =>
      assertValidContractReport({ contract: { id: 'runner_output_contract', version: '1.0.0' } }),
    ).toThrowError(
      /7 errors:\n {2}\/ must have required property 'runner'[\s\S]*\n {2}\/contract\/version must be equal to constant {"allowedValue":"1\.1\.0"}$/,
    );
  });
});

describe('the shipped schema', () => {
  it('is exported by the package and compiles under ajv strict mode', async () => {
    const resolved = import.meta.resolve('vitest-adcp/schema/runner-output.schema.json');
    const schema = JSON.parse(readFileSync(new URL(resolved), 'utf8'));
    expect(schema).toMatchObject({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'https://unpkg.com/vitest-adcp/schema/runner-output.schema.json',
    });
    expect(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).files).toContain('schema');
    // The contract version the schema pins is the one of the corpus installed.
    const contract = readFileSync(
      new URL(
        '../../node_modules/@adcp/sdk/compliance/cache/3.0.6/universal/runner-output-contract.yaml',
        import.meta.url,
      ),
      'utf8',
    );
    expect(contract).toMatch(/^version: "1\.1\.0"$/m);
    expect(schema.properties.contract.properties.version.const).toBe('1.1.0');
  });
});

describe('run envelope', () => {
  it('names the agent, protocol, project, corpus version, tool version, start and end', async () => {
    const { good } = await failingRuns();
    const report = buildReport(
      testsOf(
        info('one', good),
        Object.values(await runInline(phasedStoryboard([{ id: 'p', steps: [caps('c', [])] }]), good)),
      ),
      { root: ROOT, started_at: '2026-11-30T10:00:00.000Z', finished_at: '2026-11-30T10:00:05.000Z' },
    );
    assertValidContractReport(report);
    const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
    expect(report.run).toEqual({
      started_at: '2026-11-30T10:00:00.000Z',
      finished_at: '2026-11-30T10:00:05.000Z',
      duration_ms: 5000,
      agent_url: good,
      protocol: 'mcp',
      project: 'vitest-adcp',
      corpus_version: '3.0.6',
      // Why this corpus: known to the run's reporter (from the plugin's configuration), not to a bare model.
      corpus_choice: null,
      tool: { name: 'vitest-adcp', version },
      targets: [{ project: 'vitest-adcp', agent_url: good, protocol: 'mcp', corpus_version: '3.0.6' }],
      complete: true,
      test_name_pattern: null,
    });
    expect(report.runner.version).toBe(toolVersion());
  });

  it('keeps credentials in the agent URL out of the report', () => {
    expect(publicAgentUrl('https://user:s3cret-pass@agent.example/mcp?api_key=k3y-value&x=1')).toBe(
      'https://user:[redacted]@agent.example/mcp?api_key=[redacted]&x=1',
    );
    expect(publicAgentUrl(undefined)).toBeNull();
    const report = buildReport(
      testsOf(info('k', 'https://agent.example/mcp?token=tok-123456'), [
        {
          status: 'passed',
          result: {
            storyboard_id: 'k',
            phase_id: 'p',
            step_id: 's',
            task: 't',
            passed: true,
            duration_ms: 1,
            validations: [],
            extraction: { path: 'none' },
          },
        },
      ]),
      { root: ROOT },
    );
    expect(JSON.stringify(report)).not.toContain('tok-123456');
  });
});

describe('two projects testing two agents', () => {
  it('never merge: one entry per project × agent, each with its own status, tracks apart, both targets in the envelope', async () => {
    const { tests, good, broken } = await failingRuns();
    // The same storyboard file, run by two projects against two agents.
    const same = (url: string) => info('shared', url, { file: `${ROOT}/shared.storyboard.yaml` });
    const as = (from: string, project: string, url: string): ReportTest[] =>
      tests
        .filter((t) => t.meta.adcp!.storyboard.id === from)
        .map((t) => ({
          ...t,
          project,
          meta: {
            adcp: {
              ...t.meta.adcp!,
              storyboard: same(url),
              result: { ...t.meta.adcp!.result, storyboard_id: 'shared' },
            },
          },
        }));
    const onGood = as('on_good', 'a', good);
    const onBroken = as('on_broken', 'b', broken);
    const report = buildReport([...onGood, ...onBroken], { root: ROOT });
    assertValidContractReport(report);
    expect(report.storyboards.map((s) => [s.storyboard_id, s.project, s.agent_url, s.steps.length])).toEqual([
      ['shared', 'a', good, 3],
      ['shared', 'b', broken, 3],
    ]);
    expect(report.summary.tracks.map((t) => [t.track, t.project, t.agent_url])).toEqual([
      ['core', 'a', good],
      ['core', 'b', broken],
    ]);
    expect(report.run).toMatchObject({ agent_url: null, project: null, protocol: null, corpus_version: '3.0.6' });
    expect(report.run.targets.map((t) => [t.project, t.agent_url])).toEqual([
      ['a', good],
      ['b', broken],
    ]);
  });
});

describe('a filtered run', () => {
  const planned = (storyboard: StoryboardInfo, step_id: string): ReportTest => ({
    project: 'vitest-adcp',
    file: storyboard.file,
    name: step_id,
    state: 'skipped',
    errors: [],
    meta: { adcpPlanned: { storyboard, phase_id: 'p', step_id, task: 'get_adcp_capabilities' } },
  });

  it('lists the steps the filter left out as not selected, and never calls a storyboard passed on a subset', async () => {
    const { good } = await failingRuns();
    const sb = info('partial', good);
    const outcomes = Object.values(
      await runInline(
        phasedStoryboard([{ id: 'p', steps: [caps('ran', [{ check: 'field_present', path: 'adcp' }])] }]),
        good,
      ),
    );
    const untouched = info('untouched', good, { track: 'other' });
    const report = buildReport(
      [planned(sb, 'before'), ...testsOf(sb, outcomes), planned(sb, 'after'), planned(untouched, 'only')],
      { root: ROOT, test_name_pattern: 'ran' },
    );
    assertValidContractReport(report);
    const partial = report.storyboards.find((s) => s.storyboard_id === 'partial')!;
    expect(partial.status).toBe('incomplete');
    expect(partial.steps.map((s) => [s.step_id, 'not_run' in s ? 'not_run' : s.passed])).toEqual([['ran', true]]);
    expect(report.storyboards.map((s) => s.storyboard_id)).toEqual(['partial']);
    expect(report.summary.not_selected!.map((n) => [n.storyboard_id, n.step_id ?? null, n.step_count])).toEqual([
      ['partial', 'before', 1],
      ['partial', 'after', 1],
      ['untouched', null, 1],
    ]);
    expect(report.summary.not_selected![0]).toMatchObject({
      reason: 'explicit_scope_excluded',
      detail: expect.stringContaining('-t "ran"'),
    });
    expect(report.summary).toMatchObject({
      total_steps: 1,
      steps_passed: 1,
      steps_failed: 0,
      steps_skipped: 0,
      steps_not_run: 0,
    });
    expect(report.summary.tracks.map((t) => [t.track, t.status])).toEqual([['core', 'incomplete']]);
    expect(report.run).toMatchObject({ complete: false, test_name_pattern: 'ran' });
  });

  it('a failure among run steps still fails the storyboard; a run of every step is complete', async () => {
    const { tests } = await failingRuns();
    const broken = tests.filter((t) => t.meta.adcp!.storyboard.id === 'on_broken');
    const withUnrun = buildReport([...broken, planned(broken[0]!.meta.adcp!.storyboard, 'later')], { root: ROOT });
    expect(withUnrun.storyboards[0]!.status).toBe('failed');
    expect(buildReport(broken, { root: ROOT }).run.complete).toBe(true);
  });
});

describe('the NDJSON stream', () => {
  it('writes a line per finished test as it goes — a run killed before the end keeps them, redacted like the JSON', async () => {
    const { tests, good } = await failingRuns();
    const secretTest: ReportTest = {
      ...tests[0]!,
      meta: {
        adcp: {
          ...tests[0]!.meta.adcp!,
          result: {
            ...tests[0]!.meta.adcp!.result,
            request: { transport: 'mcp', operation: 'x', payload: { api_key: 'ndjson-planted-key' } },
          },
        },
      },
    };
    const file = join(testDir('adcp-ndjson-'), 'deep', 'run.ndjson');
    const stream = new NdjsonStream(file);
    stream.start('2026-11-30T10:00:00.000Z', null);
    for (const test of [secretTest, ...tests.slice(1, 4)]) stream.test(test, ROOT);
    // No end(): the run was killed here. What is on disk is whole lines of JSON.
    const text = readFileSync(file, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(['run_start', 'step', 'step', 'step', 'step']);
    expect(lines[0]).toMatchObject({
      contract: { id: 'runner_output_contract', version: '1.1.0' },
      runner: { name: 'vitest-adcp', version: toolVersion() },
    });
    expect(lines[1]).toMatchObject({
      project: 'vitest-adcp',
      agent_url: good,
      protocol: 'mcp',
      storyboard_id: 'on_good',
      file: 'on_good.storyboard.yaml',
      step: { step_id: 'caps' },
    });
    expect(text).not.toContain('ndjson-planted-key');
    expect(lines[1].step.request.payload.api_key).toBe('[redacted]');
    // Each step line is the record the JSON report has for it.
    const report = buildReport([secretTest, ...tests.slice(1, 4)], { root: ROOT });
    expect(lines.slice(1).map((l) => l.step)).toEqual(report.storyboards.flatMap((s) => s.steps));

    stream.end(report);
    const last = JSON.parse(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)!);
    // The envelope as the report's contract writes it (1.1.0 here: without 2.6.0's corpus_choice).
    const { corpus_choice: _, ...runV1 } = report.run;
    expect(last).toEqual({ type: 'run_end', run: runV1, summary: report.summary });
    // A second run starts the file afresh.
    stream.start('2026-11-30T11:00:00.000Z', 'x');
    expect(readFileSync(file, 'utf8').trimEnd().split('\n')).toHaveLength(1);
  });
});
