/**
 * The run model: what a run's tests say, in one shape whatever runner-output contract the report follows — what
 * build.ts produces, what the views (summary.ts, markdown.ts, html.ts, ndjson.ts) read, and what each contract
 * version's serialiser (contract.ts) writes out. Its field names are the contract's (snake_case), and the entries and
 * step records are written unchanged by every serialiser; what a version adds is either data here that an older
 * version leaves out (a storyboard's `corpus_version`, `not_selected`, `notices`) or a count the serialiser derives
 * from the steps (counters.ts).
 */
import type { ContractVersion } from '../model/contract-rules.js';
import type { Notice, NotSelectedRecord, SkipReason, SkipResult, StepResult } from '../model/records.js';
import type { RunEnvelope } from './envelope.js';

/**
 * `incomplete`: no step failed but some did not run (a filtered or cut-short run) — never `passed` on a subset.
 * `not_run`: none of its steps ran.
 */
export type StoryboardStatus = 'passed' | 'failed' | 'skipped' | 'incomplete' | 'not_run';

/**
 * A step this run gives no verdict for (vitest-adcp extension), counted apart from the graded steps:
 * - `not_reached`: its test did not run (a line filter, `.only` elsewhere, a run that stopped before it);
 * - `cancelled`: the run was cancelled (SIGINT/SIGTERM, Vitest's cancel key) while its call was under way: the call
 *   was aborted, so it has no verdict; what went out is kept;
 * - `replayed`: its own test was filtered out (`-t`), but a selected step depends on it, so it ran to set that step
 *   up; the record is kept, and its outcome is in `detail`;
 * - `filtered`: left out by a `-t` filter. build.ts marks such steps so, then moves them to `summary.not_selected`
 *   (they are not step results); a report file of an earlier vitest-adcp may still list such steps, and the views read it.
 */
export interface NotRunStep extends StepResult {
  not_run: { reason: 'filtered' | 'not_reached' | 'replayed' | 'cancelled'; detail: string };
}

export interface StoryboardReport {
  storyboard_id: string;
  title: string;
  version?: string;
  track?: string;
  /** Project-relative path of the YAML file. */
  file: string;
  /** The Vitest project that ran it (`''` for an unnamed root project). */
  project: string;
  /** The agent it tested (credentials in the URL removed), and how it was reached. */
  agent_url: string | null;
  protocol: 'mcp' | 'a2a' | null;
  /**
   * The compliance corpus it ran against, when known: its steps were graded by that corpus's contract rules (written
   * from contract 2.6.0 on, which a report mixing 3.0 and 3.1 targets follows).
   */
  corpus_version?: string;
  status: StoryboardStatus;
  /** When the storyboard was skipped as a whole (e.g. `no_phases`). */
  skip?: SkipResult;
  steps: StepResult[];
}

/** A track's status for one project × agent (two agents' results never merge into one track status). */
export interface TrackReport {
  track: string;
  project: string;
  agent_url: string | null;
  status: StoryboardStatus;
  storyboards: { storyboard_id: string; status: StoryboardStatus }[];
  /** When every storyboard of the track skipped: the reasons, as the contract's skip distinctions. */
  skip_reasons?: SkipReason[];
}

export interface RunSummary {
  /** Steps with a verdict: passed + failed + skipped (steps that did not run are counted apart). */
  total_steps: number;
  steps_passed: number;
  steps_failed: number;
  steps_skipped: number;
  /** Planned steps with no verdict in this run (vitest-adcp extension): not reached, or replayed for a selected step. */
  steps_not_run: number;
  tracks: TrackReport[];
  schemas_used: { schema_id: string; schema_url: string }[];
  /** What the run's selection left out before execution (contract 2.6.0 `not_selected`); absent: nothing known. */
  not_selected?: NotSelectedRecord[];
  /** Notices about the run rather than one step (contract 2.6.0 `run_summary.notices`); absent: none. */
  notices?: Notice[];
}

/** The contract a report names: its id, and the version it follows. */
export interface ContractId<V extends ContractVersion = ContractVersion> {
  id: 'runner_output_contract';
  version: V;
}

/**
 * The run model. `contract` is the version the run's report follows, decided from the corpus versions its storyboards
 * ran against (contract.ts `reportContract`); a serialised report of either version is a run model too, so a view
 * renders a report file as it renders a run.
 */
export interface RunModel {
  contract: ContractId;
  runner: { name: 'vitest-adcp'; version: string };
  generated_at: string;
  /** Which agent(s), protocol, project(s), corpus version, tool version, start and end. */
  run: RunEnvelope;
  summary: RunSummary;
  storyboards: StoryboardReport[];
  /** Storyboard files that did not load (no steps ran). */
  load_errors: { file: string; message: string; project: string }[];
}

/**
 * A contract report of any version, or the run model it is written from: what every view renders and what the
 * package has always called the report object (`vitest-adcp/reporter`'s `ContractReport`). The JSON as written is
 * contract.ts's `ContractReportJson` (1.1.0 or 2.6.0), which is one.
 */
export type ContractReport = RunModel;
