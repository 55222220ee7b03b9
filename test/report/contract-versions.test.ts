/**
 * The runner-output contract version of a report (src/report/contract.ts over the run model of build.ts): 1.1.0 for
 * a 3.0 corpus's run, byte for byte the pinned report (fixtures/report-1.1.0.json: what the builder always wrote, but
 * for a filtered run, which since issue 31 lists neither the steps the filter left out nor a replayed step's verdict,
 * as in 2.6.0); 2.6.0 for a 3.1
 * corpus's, with every field 2.6.0 requires and the counters it adds, each pinned here on records built in-process;
 * the newest for a run with no corpus version and for a run mixing corpora; and each report against the JSON Schema
 * of its version (test/helpers/contract-schema.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { contractForCorpus } from '../../src/model/contract-rules.js';
import type { NotSelectedRecord, StepResult, ValidationResult } from '../../src/model/records.js';
import { stringifyInert } from '../../src/model/redact.js';
import type { StoryboardInfo } from '../../src/model/step-meta.js';
import { RUNNER_CAPABILITY_VERSION } from '../../src/engine/severity.js';
import { buildReport, type BuildOptions, type ReportTest } from '../../src/report/build.js';
import { serialiseReport, type ContractReportV2 } from '../../src/report/contract.js';
import { assertValidContractReport, validateContractReport } from '../helpers/contract-schema.js';
import { goldenTests, GOLDEN_ROOT, GOLDEN_TIMES } from './fixtures/golden-run.js';

const ROOT = '/project';
const AGENT = 'http://127.0.0.1:4100/mcp';

const info = (id: string, corpus: string | null | undefined, extra: Partial<StoryboardInfo> = {}): StoryboardInfo => ({
  id,
  title: `Storyboard ${id}`,
  track: 'core',
  file: `${ROOT}/${id}.yaml`,
  agent_url: AGENT,
  protocol: 'mcp',
  ...(corpus !== undefined ? { corpus_version: corpus } : {}),
  ...extra,
});

function step(sb: StoryboardInfo, step_id: string, over: Partial<StepResult> = {}): StepResult {
  return {
    storyboard_id: sb.id,
    phase_id: 'p',
    step_id,
    task: 'get_products',
    passed: true,
    duration_ms: 2,
    validations: [],
    extraction: { path: 'structured_content' },
    ...over,
  };
}

function ran(sb: StoryboardInfo, result: StepResult, project = ''): ReportTest {
  const status = result.skip ? 'skipped' : result.passed ? 'passed' : 'failed';
  return {
    project,
    file: sb.file,
    name: result.step_id,
    state: status,
    errors: [],
    meta: { adcp: { id: `${sb.id}/p/${result.step_id}`, status, result, storyboard: sb } },
  };
}

const failed = (over: Partial<ValidationResult> = {}): ValidationResult => ({
  check: 'field_value',
  passed: false,
  description: 'echoes the id',
  json_pointer: '/id',
  expected: 'a',
  actual: 'b',
  schema_id: null,
  schema_url: null,
  request: null,
  response: null,
  ...over,
});
const advisory = (over: Partial<ValidationResult> = {}) => failed({ severity: 'advisory', ...over });
const notGraded = (check = 'future_kind'): ValidationResult => ({
  check,
  passed: true,
  description: 'a newer kind',
  note: `runner does not implement check type '${check}' — graded as not_applicable to preserve forward compatibility`,
});

const report = (tests: ReportTest[], options: Partial<BuildOptions> = {}) =>
  serialiseReport(buildReport(tests, { root: ROOT, ...options }));
const v2 = (tests: ReportTest[], options: Partial<BuildOptions> = {}) => {
  const r = report(tests, options);
  expect(r.contract.version).toBe('2.6.0');
  return r as ContractReportV2;
};

describe('which contract a report follows', () => {
  it('is the corpus version’s: 1.1.0 for 3.0, 2.6.0 from 3.1 on (a 3.2 tree and pre-releases included), the newest without one', () => {
    expect(['3.0.6', '3.0.26', '2.5.0'].map(contractForCorpus)).toEqual(['1.1.0', '1.1.0', '1.1.0']);
    expect(['3.1.0-beta.7', '3.1.15', '3.1.19', '3.2.0', '4.0.0'].map(contractForCorpus)).toEqual(
      Array(5).fill('2.6.0'),
    );
    expect([undefined, null, '', 'latest'].map(contractForCorpus)).toEqual(Array(4).fill('2.6.0'));
  });

  it('a 3.0 run reports 1.1.0, a 3.1 run 2.6.0, a run with no corpus version 2.6.0', () => {
    const of = (corpus: string | null | undefined) => report([ran(info('a', corpus), step(info('a', corpus), 's'))]);
    expect(of('3.0.6').contract).toEqual({ id: 'runner_output_contract', version: '1.1.0' });
    expect(of('3.1.15').contract).toEqual({ id: 'runner_output_contract', version: '2.6.0' });
    expect(of(null).contract.version).toBe('2.6.0');
    expect(of(undefined).contract.version).toBe('2.6.0');
  });

  it('a run of a 3.0 and a 3.1 target follows the newest, each storyboard naming its corpus version', () => {
    const old = info('a', '3.0.6');
    const next = info('a', '3.1.15', { agent_url: 'http://127.0.0.1:4200/mcp' });
    const r = v2([ran(old, step(old, 's'), 'three-oh'), ran(next, step(next, 's'), 'three-one')]);
    expect(r.storyboards.map((s) => [s.project, s.corpus_version])).toEqual([
      ['three-oh', '3.0.6'],
      ['three-one', '3.1.15'],
    ]);
    expect(r.run.targets.map((t) => t.corpus_version)).toEqual(['3.0.6', '3.1.15']);
    expect(r.run.corpus_version).toBeNull();
    assertValidContractReport(r);
  });

  it('a run with no storyboard entry (every file failed to load) follows the corpus its projects were given', () => {
    const loadError: ReportTest = {
      project: '',
      file: `${ROOT}/broken.yaml`,
      name: 'loads without errors (schema)',
      state: 'failed',
      errors: ['does not load'],
      meta: {},
    };
    expect(report([loadError], { configuredCorpusVersions: ['3.0.6'] }).contract.version).toBe('1.1.0');
    expect(report([loadError], { configuredCorpusVersions: ['3.1.19'] }).contract.version).toBe('2.6.0');
    expect(report([loadError]).contract.version).toBe('2.6.0');
  });
});

describe('1.1.0: the report of a 3.0 run', () => {
  it('is byte for byte what the builder wrote before the serialisers (fixtures/report-1.1.0.json)', () => {
    const r = serialiseReport(buildReport(goldenTests('3.0.6'), { root: GOLDEN_ROOT, ...GOLDEN_TIMES }));
    const written = stringifyInert({ ...r, generated_at: GOLDEN_TIMES.finished_at }, 2) + '\n';
    expect(written).toBe(readFileSync(new URL('./fixtures/report-1.1.0.json', import.meta.url), 'utf8'));
    assertValidContractReport(r);
  });

  it('leaves out what 2.6.0 adds: no corpus version on an entry, no 2.6.0 summary field, even with selection data', () => {
    const sb = info('a', '3.0.6');
    const r = report([ran(sb, step(sb, 's', { validations: [advisory()] }))], {
      notSelected: [{ storyboard_id: 'b', reason: 'explicit_scope_excluded', detail: 'x', step_count: 2 }],
    });
    expect(r.contract.version).toBe('1.1.0');
    expect(r.storyboards[0]).not.toHaveProperty('corpus_version');
    expect(r.run).not.toHaveProperty('corpus_choice');
    expect(Object.keys(r.summary)).toEqual([
      'total_steps',
      'steps_passed',
      'steps_failed',
      'steps_skipped',
      'steps_not_run',
      'tracks',
      'schemas_used',
    ]);
  });
});

describe('2.6.0: the report of a 3.1 run', () => {
  const sb = info('a', '3.1.15');

  it('the same run as the golden file validates against the 2.6.0 schema, its entries and steps unchanged', () => {
    const golden = serialiseReport(buildReport(goldenTests('3.0.6'), { root: GOLDEN_ROOT, ...GOLDEN_TIMES }));
    const r = serialiseReport(
      buildReport(goldenTests('3.1.15'), { root: GOLDEN_ROOT, ...GOLDEN_TIMES }),
    ) as ContractReportV2;
    expect(r.contract.version).toBe('2.6.0');
    assertValidContractReport(r);
    expect(r.storyboards.map(({ corpus_version, ...entry }) => [corpus_version, entry])).toEqual(
      golden.storyboards.map((entry) => ['3.1.15', entry]),
    );
    expect(r.run).toEqual({ ...golden.run, corpus_version: '3.1.15', corpus_choice: null, targets: expect.any(Array) });
    expect(r.load_errors).toEqual(golden.load_errors);
  });

  it('has every run_summary field 2.6.0 requires, and the optional ones, in the contract’s order', () => {
    const r = v2([ran(sb, step(sb, 's'))]);
    expect(Object.keys(r.summary)).toEqual([
      'total_steps',
      'steps_passed',
      'steps_failed',
      'validations_advisory_failed',
      'steps_skipped',
      'steps_not_selected',
      'steps_not_run',
      'tracks',
      'schemas_used',
      'runner_capability_version',
      'skipped_by_reason',
      'validations_not_applicable',
      'not_selected',
      'not_selected_by_reason',
      'notices',
    ]);
    expect(r.summary).toMatchObject({
      steps_not_selected: 0,
      runner_capability_version: RUNNER_CAPABILITY_VERSION,
      skipped_by_reason: {},
      validations_not_applicable: 0,
      validations_advisory_failed: 0,
      not_selected: [],
      not_selected_by_reason: {},
      notices: [],
    });
  });

  it('skipped_by_reason counts the skipped steps by reason, requirement_unmet included; a storyboard skipped whole is no step', () => {
    const skip = (reason: NonNullable<StepResult['skip']>['reason']) => ({ skip: { reason, detail: `d ${reason}` } });
    const whole: ReportTest = {
      project: '',
      file: `${ROOT}/empty.yaml`,
      name: 'no phases',
      state: 'skipped',
      errors: [],
      meta: {
        adcpStoryboard: { storyboard: info('empty', '3.1.15'), skip: { reason: 'no_phases', detail: 'no phases' } },
      },
    };
    const r = v2([
      ran(sb, step(sb, 'a', skip('requirement_unmet'))),
      ran(sb, step(sb, 'b', skip('requirement_unmet'))),
      ran(sb, step(sb, 'c', skip('missing_tool'))),
      ran(sb, step(sb, 'd')),
      whole,
    ]);
    expect(r.summary.skipped_by_reason).toEqual({ requirement_unmet: 2, missing_tool: 1 });
    expect(r.summary.steps_skipped).toBe(3);
    assertValidContractReport(r);
  });

  it('validations_not_applicable counts the validations passed with a note, not those not applicable to the transport', () => {
    const r = v2([
      ran(sb, step(sb, 'a', { validations: [notGraded(), notGraded('other_kind')] })),
      ran(
        sb,
        step(sb, 'b', {
          validations: [
            { check: 'a2a_submitted_artifact', passed: true, description: 'd', not_applicable: 'over MCP' },
          ],
        }),
      ),
    ]);
    expect(r.summary.validations_not_applicable).toBe(2);
    expect(r.storyboards[0]!.steps[0]!.validations[0]).toMatchObject({
      passed: true,
      note: expect.stringMatching(/future_kind/),
    });
    assertValidContractReport(r);
  });

  it('validations_advisory_failed counts the advisory failures; they are in no step failure count', () => {
    const r = v2([
      // An advisory failure beside passing checks: the step passed.
      ran(sb, step(sb, 'a', { validations: [advisory({ id: 'anti_facade' }), advisory()] })),
      // A required failure and an advisory one: failed once, on the required one.
      ran(sb, step(sb, 'b', { passed: false, validations: [failed(), advisory()] })),
      // A promoted advisory is required: it fails its step and is no advisory failure.
      ran(
        sb,
        step(sb, 'c', {
          passed: false,
          validations: [failed({ severity: 'required', severity_promoted_from_advisory: true })],
        }),
      ),
    ]);
    expect(r.summary).toMatchObject({ validations_advisory_failed: 3, steps_failed: 2, steps_passed: 1 });
    expect(r.storyboards[0]!.steps[0]!.validations[0]).toMatchObject({
      id: 'anti_facade',
      severity: 'advisory',
      passed: false,
    });
    assertValidContractReport(r);
  });

  it('carries a step’s notices and the run’s', () => {
    const notice = { severity: 'deprecation', code: 'signed_requests_specialism_deprecated', message: 'drop it' };
    const model = buildReport([ran(sb, step(sb, 'a', { notices: [notice] }))], { root: ROOT });
    model.summary.notices = [
      { severity: 'future_required', code: 'request_signing_required_in_4_0', message: 'm', effective_version: '4.0' },
    ];
    const r = serialiseReport(model) as ContractReportV2;
    expect(r.storyboards[0]!.steps[0]!.notices).toEqual([notice]);
    expect(r.summary.notices).toEqual(model.summary.notices);
    assertValidContractReport(r);
  });

  it('not_selected: the selection results with what they stand for, steps_not_selected their steps, by reason; never a skip', () => {
    const notSelected: NotSelectedRecord[] = [
      {
        storyboard_id: 'b',
        reason: 'explicit_scope_excluded',
        detail: '--storyboards a',
        step_count: 3,
        file: 'b.yaml',
      },
      { storyboard_id: 'c', reason: 'explicit_scope_excluded', detail: '--storyboards a', step_count: 2 },
      {
        storyboard_id: 'd',
        reason: 'version_excluded',
        detail: 'introduced_in 3.2.0; the run is 3.1.15',
        step_count: 4,
      },
    ];
    const r = v2([ran(sb, step(sb, 'a'))], { notSelected });
    expect(r.summary).toMatchObject({
      steps_not_selected: 9,
      not_selected: notSelected,
      not_selected_by_reason: { explicit_scope_excluded: 2, version_excluded: 1 },
      total_steps: 1,
      steps_skipped: 0,
      skipped_by_reason: {},
    });
    assertValidContractReport(r);
  });
});

describe('the 2.6.0 schema and consistency checks reject a report that breaks a 2.6.0 rule', () => {
  const sb = info('a', '3.1.15');
  const base = () =>
    structuredClone(
      v2(
        [
          ran(sb, step(sb, 'a', { validations: [advisory(), notGraded()] })),
          ran(sb, step(sb, 'b', { passed: false, validations: [failed()] })),
          ran(sb, step(sb, 'c', { skip: { reason: 'requirement_unmet', detail: 'controller' } })),
        ],
        { notSelected: [{ storyboard_id: 'z', reason: 'explicit_scope_excluded', detail: 'd', step_count: 2 }] },
      ),
    ) as any;
  const errorsOf = (change: (r: any) => void) => {
    const r = base();
    change(r);
    return validateContractReport(r);
  };

  it('the base report is valid', () => {
    expect(validateContractReport(base())).toEqual({ valid: true, errors: [] });
  });

  it.each(['steps_not_selected', 'runner_capability_version'])('a summary without the required %s', (key) => {
    const { valid, errors } = errorsOf((r) => delete r.summary[key]);
    expect(valid).toBe(false);
    expect(errors).toContain(`/summary must have required property '${key}'`);
  });

  it('counters that disagree with the steps', () => {
    expect(errorsOf((r) => (r.summary.validations_advisory_failed = 0)).errors).toEqual([
      '/summary/validations_advisory_failed is 0, but the validations count 1',
    ]);
    expect(errorsOf((r) => (r.summary.validations_not_applicable = 2)).errors).toEqual([
      '/summary/validations_not_applicable is 2, but the validations count 1',
    ]);
    expect(errorsOf((r) => (r.summary.skipped_by_reason = { not_applicable: 1 })).errors).toEqual([
      '/summary/skipped_by_reason is {"not_applicable":1}, but the steps count {"requirement_unmet":1}',
    ]);
    expect(errorsOf((r) => (r.summary.steps_not_selected = 3)).errors).toEqual([
      '/summary/steps_not_selected is 3, but not_selected counts 2',
    ]);
    expect(errorsOf((r) => (r.summary.not_selected_by_reason = {})).errors).toEqual([
      '/summary/not_selected_by_reason is {}, but not_selected counts {"explicit_scope_excluded":1}',
    ]);
  });

  it('a failed step whose only failed validation is advisory; a step passed on a required failure', () => {
    const onlyAdvisory = errorsOf((r) => {
      r.storyboards[0].steps[1].validations[0].severity = 'advisory';
      r.summary.validations_advisory_failed = 2;
    });
    expect(onlyAdvisory.valid).toBe(false);
    expect(onlyAdvisory.errors).toContain('/storyboards/0/steps/1 must match a schema in anyOf');
    const passedOnRequired = errorsOf((r) => (r.storyboards[0].steps[0].validations[0].severity = 'required'));
    expect(passedOnRequired.valid).toBe(false);
    expect(passedOnRequired.errors).toContain('/storyboards/0/steps/0/validations must NOT be valid');
  });

  it('a validation with an unknown severity, a promotion on an advisory, a note on a failed check; an unknown selection reason; a future_required notice without its version', () => {
    expect(errorsOf((r) => (r.storyboards[0].steps[0].validations[0].severity = 'optional')).valid).toBe(false);
    expect(
      errorsOf((r) => (r.storyboards[0].steps[0].validations[0].severity_promoted_from_advisory = true)).valid,
    ).toBe(false);
    expect(errorsOf((r) => (r.storyboards[0].steps[1].validations[0].note = 'n')).valid).toBe(false);
    expect(errorsOf((r) => (r.summary.not_selected[0].reason = 'filtered')).valid).toBe(false);
    expect(
      errorsOf((r) => (r.storyboards[0].steps[0].notices = [{ severity: 'future_required', code: 'c', message: 'm' }]))
        .valid,
    ).toBe(false);
    expect(
      errorsOf(
        (r) =>
          (r.storyboards[0].steps[0].notices = [
            { severity: 'info', code: 'c', message: 'm', effective_version: '4.0' },
          ]),
      ).valid,
    ).toBe(false);
    // Unknown notice severities and codes are well-formed (forward compatibility).
    expect(
      errorsOf((r) => (r.storyboards[0].steps[0].notices = [{ severity: 'sunset', code: 'NEW_CODE', message: 'm' }]))
        .valid,
    ).toBe(true);
  });

  it('a 1.1.0 report with a 2.6.0 skip reason, or a 2.6.0 one naming 1.1.0', () => {
    const old = info('a', '3.0.6');
    const r = structuredClone(report([ran(old, step(old, 's'))])) as any;
    r.storyboards[0].steps[0].skip = { reason: 'requirement_unmet', detail: 'controller' };
    r.storyboards[0].steps[0].passed = true;
    r.summary.steps_skipped = 1;
    r.summary.steps_passed = 0;
    r.storyboards[0].status = 'skipped';
    r.summary.tracks[0].status = 'skipped';
    expect(validateContractReport(r).valid).toBe(false);
    expect(errorsOf((x) => (x.contract.version = '1.1.0')).valid).toBe(false);
  });
});

describe('the shipped 2.6.0 schema', () => {
  it('is exported by the package beside the 1.1.0 one, pins 2.6.0 and compiles under ajv strict mode', () => {
    const schema = JSON.parse(
      readFileSync(new URL(import.meta.resolve('vitest-adcp/schema/runner-output-2.6.schema.json')), 'utf8'),
    );
    expect(schema).toMatchObject({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'https://unpkg.com/vitest-adcp/schema/runner-output-2.6.schema.json',
    });
    expect(schema.properties.contract.properties.version.const).toBe('2.6.0');
    expect(schema.definitions.skip_reason.enum).toContain('requirement_unmet');
    // Compiled strictly on first use: a report of each version validates (above), so both compile.
    expect(validateContractReport(report([ran(info('a', '3.1.15'), step(info('a', '3.1.15'), 's'))])).valid).toBe(true);
  });
});
