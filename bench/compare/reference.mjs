/**
 * The reference runner (`adcp storyboard run`, from the devDependency
 * @adcp/sdk, or the SDK of `--sdk`: bench/compare/sdk.mjs) as a child process,
 * and its `--json` output read back into step verdicts keyed like ours.
 *
 * What the capability-driven `--json` output (a compliance result) gives, as
 * read from real runs of 6.11.0:
 *   - `storyboards_executed`: the ids it selected (scenarios expanded);
 *   - `tracks[].scenarios[]`: one entry per (storyboard, phase), `scenario` is
 *     `<storyboard_id>/<phase_id>`, its `steps[]` in order with `step` (the
 *     step's *title*, no id), `passed`, `skipped`, `skip_reason` (the runner's
 *     detailed reason), `error`, `details`;
 *   - `failures[]`: failed steps with their `step_id` (no phase id);
 *   - storyboards whose track is not one of the report's tracks (e.g.
 *     `security_baseline`, `signed_requests`) appear in no scenario at all.
 * Whole-storyboard skips come as one synthetic phase + step (`missing_tool`,
 * `not_applicable`, `capability_unsupported`, `no_phases`, `discovery_failed`);
 * controller seeding as a synthetic `__controller_seeding__` phase.
 *
 * What 13.0.0 (corpus 3.1.15) prints, read from real runs against its examples:
 * the same document (a compliance result), and still no step ids in the
 * tracks (titles only; `failures[]` has them). Besides:
 *   - steps carry `requirement` (a storyboard-level `requires:` that is not
 *     met) and, when a step was left out of the run, `selection_reason`;
 *   - a new whole-storyboard phase, `requirement_unmet` (skip reason
 *     `requirement_unmet`, or `missing_test_controller` / `not_applicable` for
 *     some requirements), e.g. `signed_requests` when the agent does not
 *     advertise request signing — so it is reported in a track now;
 *   - storyboards it graded not applicable without running them (a required
 *     tool missing: `storyboards_missing_tools`; an older AdCP version:
 *     `storyboards_not_applicable`) come as `<id>/not_applicable` scenarios but
 *     are not in `storyboards_executed` (notExecutedStoryboards);
 *   - when every phase passed but the storyboard failed (a storyboard-scoped
 *     assertion), one stepless `<id>/storyboard` scenario;
 *   - `skip_reason` is still the detailed reason; its canonical reason is the
 *     SDK's own DETAILED_SKIP_TO_CANONICAL, which changed (13 grades
 *     `capability_unsupported` as `not_applicable`, 6.11 as
 *     `unsatisfied_contract`): useSkipTableOf reads it from the SDK run.
 *   - `summary` adds `skipped_by_reason`, `steps_not_selected`,
 *     `validations_not_applicable` (checks of a kind the runner does not know).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { SEEDING_PHASE, seedingStepId } from './corpus.mjs';
import { runToEnd } from './processes.mjs';

/** Synthetic phases that stand for the whole storyboard. */
const WHOLE_STORYBOARD_PHASES = new Set([
  'missing_tool',
  'not_applicable',
  'capability_unsupported',
  'no_phases',
  'discovery_failed',
  'requirement_unmet',
]);

/**
 * The runner's detailed skip reasons and the contract reason each one is
 * reported as (runner-output-contract skip reasons); canonical ones map to
 * themselves. This is 6.11's table; useSkipTableOf replaces it with the table
 * of the SDK being run.
 */
let CANONICAL_SKIP = {
  probe_skipped: 'not_applicable',
  not_in_only_vectors: 'not_applicable',
  grader_skipped: 'not_applicable',
  mcp_mode_flattens_url_edges: 'not_applicable',
  oauth_not_advertised: 'not_applicable',
  capability_unsupported: 'unsatisfied_contract',
  rate_abuse_opt_out: 'unsatisfied_contract',
  missing_test_kit_contract: 'unsatisfied_contract',
  live_side_effect_opt_in_required: 'unsatisfied_contract',
  operator_skip: 'unsatisfied_contract',
  controller_seeding_failed: 'prerequisite_failed',
};

export const canonicalSkip = (reason) => CANONICAL_SKIP[reason] ?? reason ?? 'unknown';

/**
 * Takes the detailed → canonical skip table from the SDK at `sdkRoot` (its storyboard types module exports
 * DETAILED_SKIP_TO_CANONICAL; not from a public entry point, so read by path), keeping the built-in one when it has
 * none. 6.11's is the built-in table, entry for entry.
 */
export function useSkipTableOf(sdkRoot) {
  try {
    const table = createRequire(join(sdkRoot, 'package.json'))(
      join(sdkRoot, 'dist', 'lib', 'testing', 'storyboard', 'types.js'),
    ).DETAILED_SKIP_TO_CANONICAL;
    if (table && typeof table === 'object') CANONICAL_SKIP = { ...table };
  } catch {
    // an SDK without that module: the built-in table
  }
  return CANONICAL_SKIP;
}

function verdictOf(step) {
  // 13.x: a step the run's selection left out (`selection_reason`) was not skipped, it was not chosen.
  const selection = step.selection_reason ?? step.selection_result?.reason;
  if (selection) return `not_selected:${selection}`;
  if (step.skipped) return `skipped:${canonicalSkip(step.skip?.reason ?? step.skip_reason)}`;
  return step.passed ? 'passed' : 'failed';
}

function npxArgs(url, auth, extra) {
  return [
    '--no',
    'adcp',
    'storyboard',
    'run',
    url,
    ...extra,
    '--json',
    '--allow-http',
    ...(auth ? ['--auth', auth] : []),
  ];
}

/** Runs the capability-driven assessment; the JSON is saved to `outFile`. */
export async function runReferenceAssessment({ url, auth, outFile, logFile, cwd, env, timeoutS, extraArgs = [] }) {
  const args = npxArgs(url, auth, [...(timeoutS ? ['--timeout', String(timeoutS)] : []), ...extraArgs]);
  const run = await runToEnd('reference', 'npx', args, {
    cwd,
    env,
    logFile,
    stdoutFile: outFile,
    timeoutMs: (timeoutS ?? 120) * 1000 + 60_000,
  });
  const json = readJson(outFile);
  if (!json)
    throw new Error(
      `reference run wrote no JSON (exit ${run.code}${run.timedOut ? ', timed out' : ''}); see ${logFile}`,
    );
  return { json, ms: run.ms, exitCode: run.code, command: `npx ${args.join(' ')}` };
}

/** Runs one storyboard file (`--file`): a full storyboard result with step ids. */
export async function runReferenceFile({
  url,
  auth,
  file,
  outFile,
  logFile,
  cwd,
  env,
  timeoutMs = 300_000,
  extraArgs = [],
}) {
  const args = npxArgs(url, auth, ['--file', file, ...extraArgs]);
  const run = await runToEnd('reference --file', 'npx', args, { cwd, env, logFile, stdoutFile: outFile, timeoutMs });
  return { json: readJson(outFile), ms: run.ms, exitCode: run.code, command: `npx ${args.join(' ')}` };
}

function readJson(file) {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  // stdout is the JSON document; tolerate a stray line before it.
  const start = text.indexOf('{');
  if (start === -1) return undefined;
  try {
    return JSON.parse(text.slice(start));
  } catch {
    return undefined;
  }
}

/** Every (phase, step) a storyboard has: its seeding steps, then its YAML steps; (*, *) when it has none. */
export function allStepsOf(defined) {
  const all = [
    ...(defined?.seeding ?? []).map((id) => [SEEDING_PHASE, id]),
    ...(defined?.phases.flatMap((p) => p.steps.map((s) => [p.id, s.id])) ?? []),
  ];
  if (all.length === 0) all.push(['*', '*']);
  return all;
}

/** Storyboard ids of the scenarios the assessment reported in its tracks. */
function reportedStoryboards(json) {
  const seen = new Set();
  for (const track of json.tracks ?? [])
    for (const s of track.scenarios ?? []) seen.add(s.scenario.slice(0, s.scenario.lastIndexOf('/')));
  return seen;
}

/** Storyboard ids the assessment ran but reported in no track (so no step verdicts for them). */
export function unreportedStoryboards(json) {
  const seen = reportedStoryboards(json);
  return (json.storyboards_executed ?? []).filter((id) => !seen.has(id));
}

/**
 * Storyboard ids the assessment reported in a track but did not run (13.x: not in `storyboards_executed`, graded
 * not applicable up front — `storyboards_missing_tools`, `storyboards_not_applicable`). Empty with 6.11.
 */
export function notExecutedStoryboards(json) {
  const executed = new Set(json.storyboards_executed ?? []);
  return [...reportedStoryboards(json)].filter((id) => !executed.has(id));
}

/**
 * Step verdicts of an assessment, keyed `storyboard_id|phase_id|step_id`.
 * Titles are mapped back to step ids through the storyboard YAML, in order.
 * @returns {{ steps: Map<string, object>, unmapped: object[] }}
 */
export function stepsFromAssessment(json, corpus) {
  const steps = new Map();
  const unmapped = [];
  const emptyPhases = [];
  // 13.x: `<id>/storyboard`, a stepless scenario for a storyboard-level verdict (every phase passed, the storyboard
  // did not); not a phase, so not an empty one either.
  const storyboardLevel = [];
  const notExecuted = new Set(notExecutedStoryboards(json));
  const failureIds = new Map(); // storyboard_id → step_ids that failed (to cross-check the title mapping)
  for (const f of json.failures ?? [])
    failureIds.set(f.storyboard_id, [...(failureIds.get(f.storyboard_id) ?? []), f.step_id]);
  for (const track of json.tracks ?? []) {
    for (const scenario of track.scenarios ?? []) {
      const cut = scenario.scenario.lastIndexOf('/');
      const storyboardId = scenario.scenario.slice(0, cut);
      const phaseId = scenario.scenario.slice(cut + 1);
      const defined = corpus.steps(storyboardId);
      if (phaseId === 'storyboard' && scenario.steps.length === 0 && !defined?.phases.some((p) => p.id === phaseId)) {
        storyboardLevel.push({
          storyboard_id: storyboardId,
          passed: scenario.overall_passed,
          summary: scenario.summary,
        });
        continue;
      }
      const executed = !notExecuted.has(storyboardId);
      if (WHOLE_STORYBOARD_PHASES.has(phaseId) && !defined?.phases.some((p) => p.id === phaseId)) {
        // One synthetic step for the whole storyboard: it stands for every step the YAML has.
        const synthetic = scenario.steps[0] ?? {};
        const verdict = verdictOf(synthetic);
        for (const [p, s] of allStepsOf(defined)) {
          put(steps, storyboardId, p, s, {
            verdict,
            raw_skip_reason: synthetic.skip_reason,
            ...(synthetic.requirement ? { requirement: synthetic.requirement } : {}),
            whole_storyboard: phaseId,
            ...(executed ? {} : { not_executed: true }),
            source: 'assessment',
            track: track.track,
            detail: synthetic.error ?? synthetic.warnings?.[0],
          });
        }
        continue;
      }
      const phase = defined?.phases.find((p) => p.id === phaseId);
      if (scenario.steps.length === 0) emptyPhases.push(`${storyboardId}/${phaseId}`);
      const ids =
        phaseId === SEEDING_PHASE
          ? scenario.steps.map((s) => seedingStepId(s.step))
          : matchTitles(scenario.steps, phase?.steps ?? []);
      scenario.steps.forEach((step, i) => {
        const stepId = ids[i] ?? `~${step.step}`;
        if (!ids[i]) unmapped.push({ storyboard_id: storyboardId, phase_id: phaseId, title: step.step });
        put(steps, storyboardId, phaseId, stepId, {
          verdict: verdictOf(step),
          raw_skip_reason: step.skip_reason,
          ...(step.requirement ? { requirement: step.requirement } : {}),
          ...(executed ? {} : { not_executed: true }),
          source: 'assessment',
          track: track.track,
          task: step.task,
          detail: step.error ?? (step.passed ? undefined : step.details) ?? step.warnings?.[0],
        });
      });
    }
  }
  // Cross-check: every failure the assessment lists must be a failed step we keyed.
  const mismatched = [];
  const unreported = new Set(unreportedStoryboards(json));
  const failedKeys = new Set(
    [...steps.values()].filter((v) => v.verdict === 'failed').map((v) => `${v.storyboard_id}|${v.step_id}`),
  );
  for (const [storyboardId, ids] of failureIds) {
    if (unreported.has(storyboardId)) continue;
    for (const id of ids) if (!failedKeys.has(`${storyboardId}|${id}`)) mismatched.push(`${storyboardId}.${id}`);
  }
  return { steps, unmapped, mismatched, emptyPhases, storyboardLevel, notExecuted: [...notExecuted] };
}

/** Step verdicts of a `--file` run (a storyboard result: phases → steps with ids); `emptyPhases` collects phases it ran no step of. */
export function stepsFromStoryboardResult(result, corpus, emptyPhases = []) {
  const steps = new Map();
  if (!result?.phases) return steps;
  const defined = corpus.steps(result.storyboard_id);
  for (const phase of result.phases) {
    if (WHOLE_STORYBOARD_PHASES.has(phase.phase_id) && !defined?.phases.some((p) => p.id === phase.phase_id)) {
      const synthetic = phase.steps[0] ?? {};
      for (const [p, s] of allStepsOf(defined))
        put(steps, result.storyboard_id, p, s, {
          verdict: verdictOf(synthetic),
          raw_skip_reason: synthetic.skip_reason,
          whole_storyboard: phase.phase_id,
          source: 'file',
          detail: synthetic.error ?? synthetic.skip?.detail,
        });
      continue;
    }
    if (phase.steps.length === 0) emptyPhases.push(`${result.storyboard_id}/${phase.phase_id}`);
    for (const step of phase.steps) {
      const failed = step.validations?.find((v) => !v.passed);
      put(steps, result.storyboard_id, phase.phase_id, step.step_id, {
        verdict: verdictOf(step),
        raw_skip_reason: step.skip_reason,
        ...(step.skip?.requirement ? { requirement: step.skip.requirement } : {}),
        source: 'file',
        task: step.task,
        detail:
          step.error ??
          step.skip?.detail ??
          (failed ? `${failed.description}${failed.error ? `: ${failed.error}` : ''}` : undefined),
      });
    }
  }
  return steps;
}

/**
 * Step ids for the reference's steps of one phase, by title in order (the next
 * YAML step with that title); when titles do not line up but the counts do, by
 * position. `undefined` where neither works.
 */
function matchTitles(refSteps, yamlSteps) {
  const ids = [];
  let from = 0;
  for (const step of refSteps) {
    const at = yamlSteps.findIndex((s, i) => i >= from && s.title === step.step);
    if (at !== -1) {
      ids.push(yamlSteps[at].id);
      from = at + 1;
    } else ids.push(undefined);
  }
  if (ids.includes(undefined) && refSteps.length === yamlSteps.length) return yamlSteps.map((s) => s.id);
  return ids;
}

function put(map, storyboardId, phaseId, stepId, value) {
  const key = `${storyboardId}|${phaseId}|${stepId}`;
  if (!map.has(key)) map.set(key, { storyboard_id: storyboardId, phase_id: phaseId, step_id: stepId, ...value });
}

export const referenceSupplementFile = (dir, id) => join(dir, `reference-file-${id.replace(/[^\w.-]+/g, '_')}.json`);
