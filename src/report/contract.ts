/**
 * One serialiser per runner-output contract version (runner-output-contract.yaml in the corpus,
 * `universal/runner-output-contract.yaml`) over the one run model (model.ts):
 *
 * - 1.1.0 (the 3.0 corpus): the report as vitest-adcp always wrote it — test/report/fixtures/report-1.1.0.json pins
 *   its bytes.
 * - 2.6.0 (the 3.1 corpus): the same entries and step records (their 2.6.0 fields — a validation's `id`, `severity`,
 *   `severity_promoted_from_advisory`, `note`; a step's `notices`; the `requirement_unmet` skip reason — come from the
 *   engine), each storyboard's `corpus_version`, and the run summary 2.6.0 requires: `steps_not_selected` and
 *   `runner_capability_version`, with `skipped_by_reason`, `validations_not_applicable`,
 *   `validations_advisory_failed`, `not_selected`, `not_selected_by_reason` and `notices`.
 *
 * vitest-adcp's own fields (`run`, `load_errors`, `steps_not_run`, a step's `not_run`, `warnings`, …) are in both: the
 * contract lets a runner add fields.
 */
import { complianceFromEnv, runCorpus } from '../corpus.js';
import { contractForCorpus, newestContract, type ContractVersion } from '../model/contract-rules.js';
import type { Notice, NotSelectedRecord } from '../model/records.js';
import { RUNNER_CAPABILITY_VERSION } from '../engine/severity.js';
import { runCounters, type RunCounters } from './counters.js';
import type { ContractId, RunModel, RunSummary, StoryboardReport } from './model.js';

export const CONTRACT_ID = 'runner_output_contract';

/**
 * The runner-output contract a report follows: its corpus's (`contractForCorpus`: 2.6.0 from AdCP 3.1 on, 1.1.0 for
 * 3.0). A run of targets on different corpora (two Vitest projects, a 3.0 and a 3.1 agent) follows the newest: an
 * older contract's records are valid under the newer one (it only adds optional fields and the `requirement_unmet`
 * reason), not the other way round; each storyboard entry then names its own `corpus_version`. A run with no corpus
 * version follows the newest, as the engine graded it (`contractRules(undefined)`).
 */
export function reportContract(corpusVersions: readonly (string | null | undefined)[]): ContractVersion {
  return newestContract(corpusVersions.map(contractForCorpus));
}

/**
 * The contract a run is expected to follow before any record says (an NDJSON stream's first line): that of the corpus
 * versions its projects were given, when the reporter can see them; else of the corpus a run takes when none is named
 * in an option — `ADCP_COMPLIANCE`'s, or the installed `@adcp/sdk`'s default (corpus.ts `runCorpus`, as the plugin's
 * fallback and the Jest preset pick it); none installed: the newest.
 */
export function expectedContract(fromDir: string, given: readonly (string | null | undefined)[] = []): ContractVersion {
  if (given.length) return reportContract(given);
  try {
    return contractForCorpus(runCorpus(complianceFromEnv(), fromDir)?.version);
  } catch {
    // ADCP_COMPLIANCE names a corpus that is not there: the run will say so; the stream follows the newest meanwhile.
    return contractForCorpus(undefined);
  }
}

/** A storyboard entry of a 1.1.0 report: no corpus version. */
type StoryboardReportV1 = Omit<StoryboardReport, 'corpus_version'>;

/** The run summary of a 1.1.0 report. */
type RunSummaryV1 = Omit<RunSummary, 'not_selected' | 'notices'>;

/** The run summary of a 2.6.0 report (runner-output-contract.yaml 2.6.0 > run_summary). */
interface RunSummaryV2 extends RunSummaryV1, RunCounters {
  runner_capability_version: string;
  not_selected: NotSelectedRecord[];
  notices: Notice[];
}

type RunEnvelopeV1 = Omit<RunModel['run'], 'corpus_choice'>;

interface ReportBody<V extends ContractVersion, S, B, R = RunModel['run']> {
  contract: ContractId<V>;
  runner: RunModel['runner'];
  generated_at: string;
  run: R;
  summary: S;
  storyboards: B[];
  load_errors: RunModel['load_errors'];
}

/** A report following runner output contract 1.1.0 (the 3.0 corpus's). */
export type ContractReportV1 = ReportBody<'1.1.0', RunSummaryV1, StoryboardReportV1, RunEnvelopeV1>;
/** A report following runner output contract 2.6.0 (the 3.1 corpus's). */
export type ContractReportV2 = ReportBody<'2.6.0', RunSummaryV2, StoryboardReport>;
/** The runner output contract JSON as written: in the version the run's corpus carries. */
export type ContractReportJson = ContractReportV1 | ContractReportV2;

function contractId<V extends ContractVersion>(version: V): ContractId<V> {
  return { id: CONTRACT_ID, version };
}

/** The 1.1.0 envelope: the one a 3.0 run always wrote (no `corpus_choice`). */
function runV1({ corpus_choice: _, ...run }: RunModel['run']): RunEnvelopeV1 {
  return run;
}

function serialiseV1(model: RunModel): ContractReportV1 {
  const { total_steps, steps_passed, steps_failed, steps_skipped, steps_not_run, tracks, schemas_used } = model.summary;
  return {
    contract: contractId('1.1.0'),
    runner: model.runner,
    generated_at: model.generated_at,
    run: runV1(model.run),
    summary: { total_steps, steps_passed, steps_failed, steps_skipped, steps_not_run, tracks, schemas_used },
    // Key order kept (the entry's own), so a 3.0 run's file is the bytes it always was.
    storyboards: model.storyboards.map(({ corpus_version: _, ...entry }) => entry),
    load_errors: model.load_errors,
  };
}

/** The 2.6.0 run summary: the counts that agree by construction with the steps, in the contract's order. */
function summaryV2(model: Pick<RunModel, 'storyboards' | 'summary'>): RunSummaryV2 {
  const { total_steps, steps_passed, steps_failed, steps_skipped, steps_not_run, tracks, schemas_used } = model.summary;
  const counters = runCounters(model);
  return {
    total_steps,
    steps_passed,
    steps_failed,
    // Beside steps_failed: advisory failures fail no step, and a reader must see them with the failures.
    validations_advisory_failed: counters.validations_advisory_failed,
    steps_skipped,
    steps_not_selected: counters.steps_not_selected,
    steps_not_run,
    tracks,
    schemas_used,
    runner_capability_version: RUNNER_CAPABILITY_VERSION,
    skipped_by_reason: counters.skipped_by_reason,
    validations_not_applicable: counters.validations_not_applicable,
    not_selected: model.summary.not_selected ?? [],
    not_selected_by_reason: counters.not_selected_by_reason,
    notices: model.summary.notices ?? [],
  };
}

function serialiseV2(model: RunModel): ContractReportV2 {
  return {
    contract: contractId('2.6.0'),
    runner: model.runner,
    generated_at: model.generated_at,
    run: model.run,
    summary: summaryV2(model),
    storyboards: model.storyboards,
    load_errors: model.load_errors,
  };
}

const SERIALISERS: { [V in ContractVersion]: (model: RunModel) => ContractReportJson & { contract: ContractId<V> } } = {
  '1.1.0': serialiseV1,
  '2.6.0': serialiseV2,
};

/** The contract JSON of a run: the run model written out in the contract version it follows (`model.contract`). */
export function serialiseReport(model: RunModel): ContractReportJson {
  return SERIALISERS[model.contract.version](model);
}
