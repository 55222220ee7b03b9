/**
 * The terminal summary at the end of a storyboard run, for every runner (the `vitest-adcp` bin and plugin users
 * through the Vitest reporters, Jest through its reporter): per track, how many steps passed, failed and were
 * skipped, the skip reasons grouped and counted, the agent's tool list once (a `missing_tool` skip names only the
 * missing tool), and what would run the skipped work (`--webhook-receiver`, `--auth`, …).
 *
 * Pure: rendered from the run model (report/build.ts), as the markdown and HTML views are. Skip details can quote
 * agent-supplied names (its tool list, ids): every line goes through the output sanitiser. Contract 2.6.0: the advisory
 * checks that failed are counted beside the failed steps on the first line and named on an `[ADVISORY]` line; the
 * checks not graded, the steps the selection left out and the notices are counted (notice messages fenced).
 */
import type { SkipResult, StepResult } from '../model/records.js';
import type { RunModel, StoryboardReport, TrackReport } from './model.js';
import { fence, sanitizeOutput } from '../model/redact.js';
import { isAdvisoryFailure, runCounters } from './counters.js';

/**
 * The `; agent tools: [...]` part of a missing_tool / missing_test_controller detail (engine/gate.ts, the
 * request-signing probe); the cascade may append a note after it.
 */
const TOOL_LIST = /;\s*agent tools: \[([^\]]*)\]/;

/** A skip detail without the agent's whole tool list (said once, in the summary). */
export function withoutToolList(detail: string): string {
  return detail.replace(TOOL_LIST, '');
}

/** The agent's tool list a skip detail cites, if any. */
export function toolListOf(detail: string): string[] | undefined {
  const match = TOOL_LIST.exec(detail);
  if (!match) return undefined;
  return match[1]!.trim() === '' ? [] : match[1]!.split(',').map((t) => t.trim());
}

/** What would run a skipped step: the flag or option to change, one per kind. */
type SkipHint = 'webhook_receiver' | 'auth' | 'rate_abuse' | 'test_controller';

/** Each hint, said for the runner the user ran: the flag or option to change. */
const HINTS: Record<'vitest' | 'jest', Record<SkipHint, string>> = {
  vitest: {
    webhook_receiver:
      "the runner's webhook receiver would run them: npx vitest-adcp … --webhook-receiver, or the plugin option webhooks: { receiver: 'loopback' }",
    auth: 'the agent refused the credentials (HTTP 401/403): pass --auth-file <path> or set ADCP_AUTH_TOKEN (plugin option agent.auth.token)',
    rate_abuse:
      'opted out of the rate_abuse vectors: run without --skip-rate-abuse (plugin option signedRequests.skipRateAbuse)',
    test_controller:
      'they need comply_test_controller (deterministic testing), which the agent does not advertise: run them against a build of the agent that serves it',
  },
  jest: {
    webhook_receiver:
      "they need the runner's webhook receiver, which vitest-adcp hosts under Vitest only: npx vitest-adcp <agent-url> --webhook-receiver",
    auth: "the agent refused the credentials (HTTP 401/403): set ADCP_AUTH_TOKEN, or the preset's option adcp: { authToken }",
    rate_abuse:
      "opted out of the rate_abuse vectors: unset ADCP_SKIP_RATE_ABUSE (or the preset's adcp: { skipRateAbuse })",
    test_controller:
      'they need comply_test_controller (deterministic testing), which the agent does not advertise: run them against a build of the agent that serves it',
  },
};

/** A skip's group: its contract reason and, where the detail says it, what it is about (the missing tool, the receiver). */
function groupOf(skip: SkipResult): { key: string; label: string; hint?: SkipHint } {
  const { reason, detail } = skip;
  if (/webhook receiver|webhook_receiver_runner/.test(detail))
    return {
      key: `${reason}\u0000webhook`,
      label: `${reason} (no webhook receiver in this run)`,
      hint: 'webhook_receiver',
    };
  if (/rate_abuse_opt_out/.test(detail))
    return { key: `${reason}\u0000rate_abuse`, label: `${reason} (rate_abuse vectors opted out)`, hint: 'rate_abuse' };
  if (reason === 'missing_test_controller') return { key: reason, label: reason, hint: 'test_controller' };
  if (reason === 'missing_tool') {
    const tool = /the tool "([^"]+)"/.exec(detail)?.[1];
    if (tool) return { key: `${reason}\u0000${tool}`, label: `missing_tool ${tool}` };
    if (/required_tools/.test(detail))
      return { key: `${reason}\u0000required_tools`, label: "missing_tool (none of the storyboard's required_tools)" };
  }
  if (/oauth_not_advertised/.test(detail))
    return { key: `${reason}\u0000oauth`, label: `${reason} (the agent offers no OAuth)` };
  if (/skip_if /.test(detail)) return { key: `${reason}\u0000skip_if`, label: `${reason} (skip_if of the test kit)` };
  // Many details start with a code naming the case (request_signing_not_advertised: …, fixture_seed_unsupported: …).
  const code = /^([a-z][a-z0-9]*(?:_[a-z0-9]+)+): /.exec(detail)?.[1];
  if (code) return { key: `${reason}\u0000${code}`, label: `${reason} (${code})` };
  return { key: reason, label: reason };
}

/** Whether a step's answer was an authentication refusal (HTTP 401/403, or AUTH_REQUIRED). */
function refusedAuth(step: StepResult): boolean {
  if (!step.response) return false;
  const status = step.response.status;
  if (status === 401 || status === 403) return true;
  return /"AUTH_REQUIRED"/.test(JSON.stringify(step.response.payload ?? null).slice(0, 20_000));
}

interface Tally {
  passed: number;
  failed: number;
  skipped: number;
  notRun: number;
}

function tally(steps: readonly StepResult[]): Tally {
  const t: Tally = { passed: 0, failed: 0, skipped: 0, notRun: 0 };
  for (const s of steps) {
    if ('not_run' in s) t.notRun++;
    else if (s.skip) t.skipped++;
    else if (s.passed) t.passed++;
    else t.failed++;
  }
  return t;
}

/**
 * A status that never reads as a plain pass when steps were skipped: `passed (2 run, 6 skipped)`. Shared by the
 * markdown view (markdown.ts) for its track and storyboard rows.
 */
export function statusWithSkips(status: string, t: { passed: number; failed: number; skipped: number }): string {
  if (status !== 'passed' || t.skipped === 0) return status;
  return `passed (${t.passed + t.failed} run, ${t.skipped} skipped)`;
}

const MARK: Record<string, string> = { passed: '✓', failed: '✗', skipped: '↓', incomplete: '◐', not_run: '○' };

/** The steps of a storyboard as skips: its own skip (no_phases) counts as one. */
function skipsOf(sb: StoryboardReport): SkipResult[] {
  if (sb.skip && sb.steps.length === 0) return [sb.skip];
  return sb.steps.filter((s) => s.skip && !('not_run' in s)).map((s) => s.skip!);
}

function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export interface TerminalSummaryOptions {
  /** Groups of skip reasons shown per track; the rest are counted. @default 6 */
  maxGroups?: number;
  /** Whose flags and options the hints name. @default 'vitest' */
  runner?: 'vitest' | 'jest';
}

/** A track as the summary shows it: its storyboards (members), their steps tallied, and its label. */
interface TrackRow {
  track: TrackReport;
  members: StoryboardReport[];
  t: Tally;
  label: string;
}

/**
 * The summary's lines (no trailing newline), or `''` when the run had no storyboard. Plain text, sanitised.
 */
export function renderTerminalSummary(report: RunModel, options: TerminalSummaryOptions = {}): string {
  const maxGroups = options.maxGroups ?? 6;
  if (report.storyboards.length === 0 && report.load_errors.length === 0) return '';
  const multi = report.run.targets.length > 1;
  const rows = trackRows(report, multi);
  const width = Math.min(32, Math.max(...rows.map((r) => r.label.length)));
  const skips = skipsIn(rows.flatMap((r) => r.members));
  const out = [
    totalsLine(report),
    ...rows.flatMap((row) => trackLines(row, width, maxGroups)),
    ...advisoryLines(report),
    ...notGradedLines(report),
    ...notSelectedLines(report),
    ...noticeLines(report),
    ...toolLines(skips, multi),
    ...failedBeforeAgentLines(report),
    ...loadErrorLines(report),
    ...hintLines(hintCounts(skips, report), options.runner ?? 'vitest'),
  ];
  return sanitizeOutput(out.join('\n'));
}

/**
 * The first line: storyboards and steps of the whole run — the advisory checks that failed beside the failed steps
 * (contract 2.6.0 > validations_advisory_failed: adjacent to steps_failed), the steps not run and not selected after.
 */
function totalsLine(report: RunModel): string {
  const { total_steps, steps_passed, steps_failed, steps_skipped, steps_not_run } = report.summary;
  const { validations_advisory_failed: advisory, steps_not_selected: notSelected } = runCounters(report);
  const advisoryText = advisory > 0 ? `, ${count(advisory, 'advisory check')} failed` : '';
  const notRun = steps_not_run > 0 ? `, ${steps_not_run} not run` : '';
  const left = notSelected > 0 ? `, ${notSelected} not selected` : '';
  return `vitest-adcp: ${count(report.storyboards.length, 'storyboard')}${wholeSkipsText(report)}, ${count(total_steps, 'step')}: ${steps_passed} passed, ${steps_failed} failed${advisoryText}, ${steps_skipped} skipped${notRun}${left}`;
}

/**
 * The storyboards skipped as a whole, which have no steps to count (those not applicable before the run, those without
 * phases: a storyboard's entry has a `skip` only then), by reason: ` (29 skipped as a whole: not_applicable ×29)`;
 * nothing when there are none.
 */
function wholeSkipsText(report: RunModel): string {
  const whole = report.storyboards.filter((sb) => sb.skip);
  if (whole.length === 0) return '';
  const byReason = new Map<string, number>();
  for (const sb of whole) byReason.set(sb.skip!.reason, (byReason.get(sb.skip!.reason) ?? 0) + 1);
  return ` (${whole.length} skipped as a whole: ${[...byReason].map(([reason, n]) => `${reason} ×${n}`).join(', ')})`;
}

/** Where the advisory checks that failed are (the first three): they fail no step, so no test failure shows them. */
function advisoryLines(report: RunModel): string[] {
  const found = report.storyboards.flatMap((sb) =>
    sb.steps.flatMap((step) =>
      step.validations
        .filter(isAdvisoryFailure)
        .map((v) => `${sb.storyboard_id}/${step.phase_id}/${step.step_id} ${v.check}`),
    ),
  );
  if (found.length === 0) return [];
  const shown = `${found.slice(0, 3).join(', ')}${found.length > 3 ? `, ${found.length - 3} more` : ''}`;
  return [`  [ADVISORY] ${count(found.length, 'advisory check')} failed (reported, failing no step): ${shown}`];
}

/** How many checks this runner did not grade, and their kinds (storyboard text: fenced). */
function notGradedLines(report: RunModel): string[] {
  const { validations_not_applicable: n } = runCounters(report);
  if (n === 0) return [];
  const kinds = [
    ...new Set(
      report.storyboards.flatMap((sb) =>
        sb.steps.flatMap((s) => s.validations.filter((v) => v.note).map((v) => v.check)),
      ),
    ),
  ];
  return [
    `  ${count(n, 'check')} not graded — kinds this runner does not implement: ${fence(kinds.join(', '), 'storyboard value')}`,
  ];
}

/**
 * What makes a run partial, in words the markdown and HTML views share: the steps a test name filter left out (not
 * selected), and the planned steps with no verdict here (not reached, or replayed only to set up a selected step).
 * `quote` formats the filter for the view.
 */
export function partialRunText(report: RunModel, quote: (text: string) => string): string {
  const filtered = (report.summary.not_selected ?? [])
    .filter((item) => item.reason === 'explicit_scope_excluded')
    .reduce((n, item) => n + item.step_count, 0);
  const notRun = report.summary.steps_not_run;
  const parts = [
    ...(filtered ? [`${count(filtered, 'step')} not selected`] : []),
    ...(notRun
      ? [`${count(notRun, 'planned step')} without a verdict (not reached, or replayed for a selected step)`]
      : []),
  ];
  const pattern = report.run.test_name_pattern;
  return `Partial run: ${parts.join(', ') || 'some planned steps did not run'}${pattern ? ` (test name filter ${quote(pattern)})` : ''}`;
}

/** The storyboards the selection left out, counted by reason. */
function notSelectedLines(report: RunModel): string[] {
  const items = report.summary.not_selected ?? [];
  if (items.length === 0) return [];
  const { steps_not_selected, not_selected_by_reason } = runCounters(report);
  const reasons = Object.entries(not_selected_by_reason)
    .map(([reason, n]) => `${reason} ×${n}`)
    .join(', ');
  const storyboards = new Set(items.map((item) => JSON.stringify([item.project, item.file, item.storyboard_id]))).size;
  return [`  not selected: ${count(steps_not_selected, 'step')} of ${count(storyboards, 'storyboard')}: ${reasons}`];
}

/** The notices of the run and its steps, once per code, their messages fenced. */
function noticeLines(report: RunModel): string[] {
  const notices = [
    ...(report.summary.notices ?? []),
    ...report.storyboards.flatMap((sb) => sb.steps.flatMap((s) => s.notices ?? [])),
  ];
  const byCode = new Map(notices.map((n) => [n.code, n]));
  return [...byCode.values()].map(
    (n) => `  notice (${n.severity}) ${n.code}: ${fence(n.message.split('\n')[0]!, 'notice')}`,
  );
}

/** Each track with its storyboards, their steps tallied, and its label (the project and agent too when the run had several). */
function trackRows(report: RunModel, multi: boolean): TrackRow[] {
  return report.summary.tracks.map((track) => {
    const members = report.storyboards.filter(
      (sb) =>
        (sb.track ?? 'untracked') === track.track && sb.project === track.project && sb.agent_url === track.agent_url,
    );
    const steps = members.flatMap((sb) => sb.steps);
    const t = tally(steps);
    // A storyboard skipped as a whole (no steps) counts as one skipped step here, as in its status.
    for (const sb of members) if (sb.skip && sb.steps.length === 0) t.skipped++;
    const label = `${track.track}${multi ? ` [${track.project ? `${track.project} ` : ''}${track.agent_url ?? 'no agent'}]` : ''}`;
    return { track, members, t, label };
  });
}

/** A track's status line, then its skip reasons when it has skips. */
function trackLines({ track, members, t, label }: TrackRow, width: number, maxGroups: number): string[] {
  const parts = [
    `${t.passed} passed`,
    `${t.failed} failed`,
    `${t.skipped} skipped`,
    ...(t.notRun ? [`${t.notRun} not run`] : []),
  ];
  const status = statusWithSkips(track.status.replace('_', ' '), t);
  const line = `  ${MARK[track.status] ?? '-'} ${label.padEnd(width)}  ${status} — ${count(members.length, 'storyboard')}, ${parts.join(', ')}`;
  return [line, ...skippedLines(skipsIn(members), maxGroups)];
}

/** The skip reasons grouped and counted, the most frequent first: `maxGroups` of them named, the rest counted. */
function skippedLines(skips: { skip: SkipResult }[], maxGroups: number): string[] {
  const groups = new Map<string, { label: string; n: number }>();
  for (const { skip } of skips) {
    const group = groupOf(skip);
    const entry = groups.get(group.key) ?? { label: group.label, n: 0 };
    entry.n++;
    groups.set(group.key, entry);
  }
  const sorted = [...groups.values()].sort((a, b) => b.n - a.n || a.label.localeCompare(b.label));
  if (sorted.length === 0) return [];
  const shown = sorted.slice(0, maxGroups).map((g) => `${g.label} ×${g.n}`);
  const rest = sorted.slice(maxGroups).reduce((n, g) => n + g.n, 0);
  return [`      skipped: ${shown.join(', ')}${rest ? `, ${rest} more` : ''}`];
}

/** The skips of these storyboards, each with its storyboard, in order. */
function skipsIn(storyboards: StoryboardReport[]): { sb: StoryboardReport; skip: SkipResult }[] {
  return storyboards.flatMap((sb) => skipsOf(sb).map((skip) => ({ sb, skip })));
}

/** The agent's tool list, once per agent (the last a skip cited): a missing_tool skip names only the missing tool. */
function toolLines(skips: { sb: StoryboardReport; skip: SkipResult }[], multi: boolean): string[] {
  const tools = new Map<string, string[]>();
  for (const { sb, skip } of skips) {
    const listed = toolListOf(skip.detail);
    if (listed) tools.set(sb.agent_url ?? '', listed);
  }
  return [...tools].map(
    ([agent, list]) =>
      `  agent tools${tools.size > 1 || multi ? ` (${agent || 'no agent'})` : ''}: ${list.length ? list.join(', ') : 'none'} — missing_tool skips are tasks it does not advertise`,
  );
}

/** A step that ran and failed (not skipped, not left unrun). */
function failedStep(s: StepResult): boolean {
  return !('not_run' in s) && !s.skip && !s.passed;
}

/** One cause that failed many steps before any reached the agent (a configuration error): said once here. */
function failedBeforeAgentLines(report: RunModel): string[] {
  const before = new Map<string, number>();
  for (const s of report.storyboards.flatMap((sb) => sb.steps))
    if (failedStep(s) && !s.request && !s.response && s.error && s.validations.length === 0)
      before.set(s.error, (before.get(s.error) ?? 0) + 1);
  return [...before]
    .filter(([, n]) => n >= 2)
    .map(([error, n]) => {
      const first = error.split('\n')[0]!;
      return `  ✗ ${count(n, 'step')} failed before reaching the agent: ${first.length > 400 ? `${first.slice(0, 399)}…` : first}`;
    });
}

/** The storyboard files that did not load: the first three named (their errors are printed above). */
function loadErrorLines(report: RunModel): string[] {
  if (report.load_errors.length === 0) return [];
  return [
    `  ✗ ${count(report.load_errors.length, 'storyboard file')} did not load: ${report.load_errors
      .slice(0, 3)
      .map((e) => e.file)
      .join(', ')}${report.load_errors.length > 3 ? ', …' : ''} (the errors are above)`,
  ];
}

/** How many steps each hint is for: skipped steps by their group's hint, then failed steps the agent refused auth to. */
function hintCounts(skips: { skip: SkipResult }[], report: RunModel): Map<SkipHint, number> {
  const hints = new Map<SkipHint, number>();
  for (const { skip } of skips) {
    const hint = groupOf(skip).hint;
    if (hint) hints.set(hint, (hints.get(hint) ?? 0) + 1);
  }
  const authCut = report.storyboards.flatMap((sb) => sb.steps).filter((s) => failedStep(s) && refusedAuth(s)).length;
  if (authCut > 0) hints.set('auth', authCut);
  return hints;
}

/** What would run the skipped (or refused) work, said for the runner the user ran. */
function hintLines(hints: Map<SkipHint, number>, runner: 'vitest' | 'jest'): string[] {
  const said = HINTS[runner];
  return [...hints].map(
    ([hint, n]) => `  hint (${hint === 'auth' ? count(n, 'failed step') : count(n, 'skipped step')}): ${said[hint]}`,
  );
}

const PRINTED = Symbol.for('vitest-adcp.summary-printed');

/**
 * Whether the summary of this run end was printed already, marking it printed: the contract reporter and the summary
 * reporter both print it, and a run that has both prints it once. `runEnd` is the object all reporters of one run end
 * receive (Vitest's `testModules` array). Kept on `globalThis`, because the two reporters can be loaded as two copies
 * of this module (a config's reporter path and the plugin's import).
 */
export function claimSummary(runEnd: object): boolean {
  const g = globalThis as { [PRINTED]?: WeakSet<object> };
  const printed = (g[PRINTED] ??= new WeakSet());
  if (printed.has(runEnd)) return false;
  printed.add(runEnd);
  return true;
}
