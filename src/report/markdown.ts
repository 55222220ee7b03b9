/**
 * The run as a markdown summary — a GitHub job summary (`$GITHUB_STEP_SUMMARY`)
 * or a file beside the contract JSON: the verdict, per-track and per-storyboard
 * status, and each failed step's headline with its YAML line.
 *
 * Pure: built from the contract report object (the same data as the JSON), no
 * second walk over Vitest's tasks. Storyboard text (titles, ids) is escaped as
 * markdown; anything the agent wrote (headlines quote it, fenced) only ever
 * appears inside code blocks, where GitHub renders no link, image or HTML.
 *
 * Contract 2.6.0's rendering rules: the advisory checks that failed are counted beside the failed steps in the
 * heading and listed in their own section, every line `[ADVISORY]`; a check not graded (its `note`), an observation,
 * a not-selected item's detail and a notice's message are fenced, inside code blocks, like the agent's values.
 */
import { failsStep, type StepResult, type ValidationResult } from '../model/records.js';
import { RUNNER_CAPABILITY_VERSION } from '../engine/severity.js';
import { isAdvisoryFailure, isNotGraded, runCounters } from './counters.js';
import { failureHeadline } from './format.js';
import { redactStepResult } from './record.js';
import { sanitizeOutput, fence } from '../model/redact.js';
import { partialRunText, statusWithSkips } from './summary.js';
import type { RunModel, StoryboardReport, TrackReport } from './model.js';

export interface MarkdownSummaryOptions {
  /** YAML paths in failures are printed relative to this (the project root). @default process.cwd() */
  root?: string;
  /**
   * Failed steps listed with their headline; the rest are counted (the JSON report has them all). A job summary is
   * capped at 1 MiB per step by GitHub.
   * @default 50
   */
  maxFailures?: number;
}

const STATUS: Record<string, string> = {
  passed: '✅ passed',
  failed: '❌ failed',
  skipped: '⏭️ skipped',
  incomplete: '◐ incomplete',
  not_run: '○ not run',
};

/** A status; a pass with skipped steps says how many ran: `✅ passed (2 run, 6 skipped)`, never a plain pass. */
function status(s: string, tally?: { passed: number; failed: number; skipped: number }): string {
  const word = STATUS[s] ?? md(s);
  return s === 'passed' && tally && tally.skipped > 0 ? `✅ ${md(statusWithSkips(s, tally))}` : word;
}

/** Storyboard-written text in a markdown line or table cell: one line, markdown punctuation escaped, controls visible. */
function md(text: string): string {
  return sanitizeOutput(text)
    .replace(/[\r\n]+/g, ' ')
    .replace(/[\\`*_{}[\]()<>#+!|~&:-]/g, (c) => `\\${c}`);
}

/** A code span that no backtick in `text` can close (in a table cell, a `|` would still end the cell: escaped). */
function code(text: string, inTable = false): string {
  let clean = sanitizeOutput(text).replace(/[\r\n]+/g, ' ');
  if (inTable) clean = clean.replace(/\|/g, '\\|');
  const longest = Math.max(0, ...[...clean.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}${clean.startsWith('`') || clean.endsWith('`') ? ` ${clean} ` : clean}${ticks}`;
}

/** A fenced block that no line of `text` can close. */
function block(text: string): string {
  const clean = sanitizeOutput(text);
  const longest = Math.max(2, ...[...clean.matchAll(/`{3,}|~{3,}/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${clean}\n${fence}`;
}

/** A step's verdict; `not_run` for a planned step whose test did not run (a `-t` filter, a cut-short run). */
export const verdict = (s: StepResult): 'passed' | 'failed' | 'skipped' | 'not_run' =>
  'not_run' in s ? 'not_run' : s.skip ? 'skipped' : s.passed ? 'passed' : 'failed';

export function counts(steps: StepResult[]): { passed: number; failed: number; skipped: number; not_run: number } {
  const out = { passed: 0, failed: 0, skipped: 0, not_run: 0 };
  for (const step of steps) out[verdict(step)]++;
  return out;
}

/** Which project × agent an entry belongs to: only shown when the run tested more than one. */
function target(entry: Pick<StoryboardReport | TrackReport, 'project' | 'agent_url'>): string {
  return `${entry.project ? `${code(entry.project, true)} ` : ''}${entry.agent_url ? code(entry.agent_url, true) : 'no agent'}`;
}

export function relativeTo(root: string, file: string): string {
  return file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file;
}

function shorten(text: string): string {
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

/** A failed validation's lines: what, where in the response, where in the YAML; the agent's value and notes fenced. */
function validationLines(v: ValidationResult, root: string, mark = ''): string[] {
  const pointer = typeof v.json_pointer === 'string' ? ` at ${v.json_pointer || '""'}` : '';
  const source = v.source ? ` — ${relativeTo(root, v.source.file)}:${v.source.line}:${v.source.column}` : '';
  // Contract 2.6.0 > severity_promoted_from_advisory: the promotion's provenance, on the true case.
  const promoted = v.severity_promoted_from_advisory
    ? ` [REQUIRED — was advisory; promoted at v${RUNNER_CAPABILITY_VERSION}]`
    : '';
  const lines = [`  ${mark}✗ ${v.description} [${v.check}]${promoted}${pointer}${source}`];
  // What the agent sent there (the headline says "a different string (below)" when it is not short and plain): fenced.
  if (v.actual !== undefined && v.check !== 'response_schema')
    lines.push(`    actual: ${fence(shorten(JSON.stringify(v.actual) ?? String(v.actual)), 'agent value')}`);
  for (const observation of v.observations ?? [])
    lines.push(`    observation: ${fence(shorten(observation), 'observation')}`);
  return lines;
}

/** One line per failed validation under the headline — the advisory ones after, marked `[ADVISORY]`. */
function failureLines(step: StepResult, root: string): string[] {
  return [
    failureHeadline(step, { cwd: root }),
    ...step.validations.filter(failsStep).flatMap((v) => validationLines(v, root)),
    ...step.validations.filter(isAdvisoryFailure).flatMap((v) => validationLines(v, root, '[ADVISORY] ')),
  ];
}

export function renderMarkdownSummary(report: RunModel, options: MarkdownSummaryOptions = {}): string {
  const root = options.root ?? process.cwd();
  const maxFailures = options.maxFailures ?? 50;
  const multi = report.run.targets.length > 1;
  const out = [
    ...headingLines(report, multi),
    ...trackTableLines(report, multi),
    ...storyboardTableLines(report, multi),
    ...failedStepLines(report, root, maxFailures, multi),
    ...advisoryLines(report, root, maxFailures, multi),
    ...notGradedLines(report, maxFailures),
    ...notSelectedLines(report),
    ...noticeLines(report),
    ...loadErrorLines(report),
  ];
  return `${out.join('\n').trimEnd()}\n`;
}

/** The verdict and totals, what was tested with what, and whether the run was partial. */
function headingLines(report: RunModel, multi: boolean): string[] {
  const { total_steps, steps_passed, steps_failed, steps_skipped } = report.summary;
  const { validations_advisory_failed: advisory, steps_not_selected: notSelected } = runCounters(report);
  const run = report.run;
  // Contract 2.6.0 > validations_advisory_failed: shown beside steps_failed, never below the fold.
  const advisoryText = advisory ? `, ${advisory} advisory check${advisory === 1 ? '' : 's'} failed` : '';
  const notSelectedText = notSelected ? `, ${notSelected} not selected` : '';
  const out = [
    `## ${runVerdict(report)} AdCP storyboards: ${steps_passed} passed, ${steps_failed} failed${advisoryText}, ${steps_skipped} skipped (${total_steps} steps, ${report.storyboards.length} storyboards${notSelectedText})`,
    '',
    `Against ${against(report, multi)}${run.corpus_version ? `, corpus ${md(run.corpus_version)}${run.corpus_choice ? ` (${md(run.corpus_choice)})` : ''}` : ''}; ${run.tool.name} ${run.tool.version}, runner output contract ${report.contract.version}, ${run.started_at}, ${(run.duration_ms / 1000).toFixed(1)} s.`,
  ];
  if (!run.complete)
    out.push('', `◐ ${partialRunText(report, code)}; no storyboard with a step left out or unrun is called passed.`);
  out.push('');
  return out;
}

/** ❌ when a step or storyboard failed or a file did not load, ◐ for a partial run, else ✅. */
function runVerdict(report: RunModel): string {
  const failedStoryboards = report.storyboards.filter((s) => s.status === 'failed').length;
  if (report.summary.steps_failed > 0 || failedStoryboards > 0 || report.load_errors.length > 0) return '❌';
  return report.run.complete ? '✅' : '◐';
}

/** What the run tested: the agent, its protocol and project, or how many agents when more than one. */
function against(report: RunModel, multi: boolean): string {
  const run = report.run;
  if (multi) return `${run.targets.length} agents (below)`;
  return `${run.agent_url ? code(run.agent_url) : 'no agent'}${run.protocol ? ` over ${run.protocol.toUpperCase()}` : ''}${run.project ? ` from project ${code(run.project)}` : ''}`;
}

/** The table of tracks: status and storyboards counted by status. */
function trackTableLines(report: RunModel, multi: boolean): string[] {
  if (report.summary.tracks.length === 0) return [];
  return [
    `| track |${multi ? ' project · agent |' : ''} status | storyboards |`,
    `|---|${multi ? '---|' : ''}---|---|`,
    ...report.summary.tracks.map((track) => trackRow(report, track, multi)),
    '',
  ];
}

/** A track's row: its status (with the skip reasons) and its storyboards counted by status. */
function trackRow(report: RunModel, track: TrackReport, multi: boolean): string {
  const by = { passed: 0, failed: 0, skipped: 0, incomplete: 0, not_run: 0 } as Record<string, number>;
  for (const s of track.storyboards) by[s.status] = (by[s.status] ?? 0) + 1;
  const tally = Object.entries(by)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${md(k.replace('_', ' '))}`)
    .join(', ');
  const why = track.skip_reasons?.length ? ` (${track.skip_reasons.map(md).join(', ')})` : '';
  const steps = report.storyboards
    .filter(
      (s) => (s.track ?? 'untracked') === track.track && s.project === track.project && s.agent_url === track.agent_url,
    )
    .flatMap((s) => s.steps);
  return `| ${md(track.track)} |${multi ? ` ${target(track)} |` : ''} ${status(track.status, counts(steps))}${why} | ${tally} |`;
}

/** The table of storyboards: track, status, steps counted by verdict, file. */
function storyboardTableLines(report: RunModel, multi: boolean): string[] {
  if (report.storyboards.length === 0) return [];
  const notRun = report.summary.steps_not_run;
  return [
    `| storyboard | track |${multi ? ' project · agent |' : ''} status | steps passed / failed / skipped${notRun ? ' / not run' : ''} | file |`,
    `|---|---|${multi ? '---|' : ''}---|---|---|`,
    ...report.storyboards.map((sb) => storyboardRow(sb, notRun, multi)),
    '',
  ];
}

/** A storyboard's row: its track, status (with its skip reason), steps counted by verdict, and file. */
function storyboardRow(sb: StoryboardReport, notRun: number, multi: boolean): string {
  const c = counts(sb.steps);
  const why = sb.skip ? ` (${md(sb.skip.reason)})` : '';
  const tallies = `${c.passed} / ${c.failed} / ${c.skipped}${notRun ? ` / ${c.not_run}` : ''}`;
  return `| ${md(sb.title)} ${code(sb.storyboard_id, true)} | ${md(sb.track ?? 'untracked')} |${multi ? ` ${target(sb)} |` : ''} ${status(sb.status, c)}${why} | ${tallies} | ${code(sb.file, true)} |`;
}

/** The failed steps, each with where it is and its failure lines in a block: `maxFailures` listed, the rest counted. */
function failedStepLines(report: RunModel, root: string, maxFailures: number, multi: boolean): string[] {
  const failures = report.storyboards.flatMap((sb) =>
    sb.steps.filter((s) => verdict(s) === 'failed').map((step) => ({ sb, step })),
  );
  if (failures.length === 0) return [];
  const out = [`### Failed steps (${failures.length})`, ''];
  for (const { sb, step } of failures.slice(0, maxFailures)) {
    // The same redaction as the JSON report, again: nothing reaches a summary that the report would not show.
    const safe = redactStepResult(step);
    out.push(
      `**${md(sb.title)}** › ${md(step.phase_id)} › ${md(step.step_id)} (${code(step.task)})${step.optional ? ' — optional phase' : ''} in ${code(sb.file)}${multi ? ` against ${target(sb)}` : ''}`,
      '',
      block(failureLines(safe, root).join('\n')),
      '',
    );
  }
  if (failures.length > maxFailures)
    out.push(`… and ${failures.length - maxFailures} more failed steps: see the contract report.`, '');
  return out;
}

/** Where a step is, for a list line: storyboard › phase › step, its file, and the agent when the run had several. */
function stepPlace(sb: StoryboardReport, step: StepResult, multi: boolean): string {
  return `**${md(sb.title)}** › ${md(step.phase_id)} › ${md(step.step_id)} (${code(step.task)}) in ${code(sb.file)}${multi ? ` against ${target(sb)}` : ''}`;
}

/**
 * Advisory findings: every advisory check that failed, in steps that passed as in steps that failed — a façade that
 * marks its anti-façade checks advisory must not pass unseen (contract 2.6.0 > severity > rendered-output rule).
 */
function advisoryLines(report: RunModel, root: string, maxFailures: number, multi: boolean): string[] {
  const found = report.storyboards.flatMap((sb) =>
    sb.steps
      .filter((s) => verdict(s) !== 'not_run' && s.validations.some(isAdvisoryFailure))
      .map((step) => ({ sb, step: redactStepResult(step) })),
  );
  if (found.length === 0) return [];
  const count = found.reduce((n, { step }) => n + step.validations.filter(isAdvisoryFailure).length, 0);
  const out = [`### Advisory findings (${count}): they fail no step`, ''];
  for (const { sb, step } of found.slice(0, maxFailures)) {
    const lines = step.validations.filter(isAdvisoryFailure).flatMap((v) => validationLines(v, root, '[ADVISORY] '));
    out.push(`[ADVISORY] ${stepPlace(sb, step, multi)}`, '', block(lines.join('\n')), '');
  }
  if (found.length > maxFailures)
    out.push(`… and ${found.length - maxFailures} more steps with advisory findings: see the contract report.`, '');
  return out;
}

/** The checks this runner did not grade (forward compatibility): where, and their notes fenced. */
function notGradedLines(report: RunModel, maxFailures: number): string[] {
  const notes = report.storyboards.flatMap((sb) =>
    sb.steps.flatMap((step) =>
      step.validations
        .filter(isNotGraded)
        .map(
          (v) =>
            `${sb.storyboard_id} › ${step.phase_id} › ${step.step_id} [${v.check}]: ${fence(v.note!, 'runner note')}`,
        ),
    ),
  );
  if (notes.length === 0) return [];
  const shown = notes.slice(0, maxFailures);
  if (notes.length > maxFailures) shown.push(`… and ${notes.length - maxFailures} more`);
  return [
    `### Checks not graded (${notes.length}): this runner does not implement their kind`,
    '',
    block(shown.join('\n')),
    '',
  ];
}

/** What the run's selection left out before execution: never skipped, never failed. */
function notSelectedLines(report: RunModel): string[] {
  const items = report.summary.not_selected ?? [];
  if (items.length === 0) return [];
  const steps = items.reduce((n, item) => n + item.step_count, 0);
  return [
    `### Not selected (${items.length} storyboard${items.length === 1 ? '' : 's'}, ${steps} step${steps === 1 ? '' : 's'})`,
    '',
    '| storyboard | reason | steps | detail |',
    '|---|---|---|---|',
    ...items.map(
      (item) =>
        `| ${code([item.storyboard_id, item.phase_id, item.step_id].filter(Boolean).join('/'), true)} | ${md(item.reason)} | ${item.step_count} | ${code(item.detail, true)} |`,
    ),
    '',
  ];
}

/** The run's notices and its steps', once per code: severity, code, the message fenced. */
function noticeLines(report: RunModel): string[] {
  const byCode = new Map<string, { severity: string; message: string; where: string[] }>();
  const add = (notice: { severity: string; code: string; message: string }, where: string) => {
    const entry = byCode.get(notice.code) ?? { severity: notice.severity, message: notice.message, where: [] };
    if (where) entry.where.push(where);
    byCode.set(notice.code, entry);
  };
  for (const notice of report.summary.notices ?? []) add(notice, '');
  for (const sb of report.storyboards)
    for (const step of sb.steps)
      for (const notice of step.notices ?? []) add(notice, `${sb.storyboard_id}/${step.phase_id}/${step.step_id}`);
  if (byCode.size === 0) return [];
  const lines = [...byCode].map(
    ([c, n]) =>
      `${n.severity} ${c}: ${fence(n.message, 'notice')}${n.where.length ? ` (${n.where.slice(0, 3).join(', ')}${n.where.length > 3 ? ', …' : ''})` : ''}`,
  );
  return [`### Notices (${byCode.size})`, '', block(lines.join('\n')), ''];
}

/** The storyboard files that did not load, each with its error in a block. */
function loadErrorLines(report: RunModel): string[] {
  if (report.load_errors.length === 0) return [];
  return [
    `### Storyboard files that did not load (${report.load_errors.length})`,
    '',
    ...report.load_errors.flatMap((e) => [code(e.file), '', block(e.message), '']),
  ];
}
