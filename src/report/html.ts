/**
 * The run as one self-contained HTML file — the report a buyer or an agent
 * builder opens from a CI artifact: storyboard › phase › step with status,
 * filters (failed / skipped / track), and per step the request, the response
 * (the failing JSON Pointer highlighted in what the checks read), the
 * validations and their YAML lines.
 *
 * Pure: built from the contract report object (the same data as the JSON).
 * No network: no external asset, and a Content-Security-Policy of
 * `default-src 'none'` that allows only this file's own style and script (by
 * hash). Every interpolated value goes through `html` (escaped, control
 * characters made visible); agent payloads pass the JSON report's redaction
 * (record.ts) again on the way in.
 *
 * Contract 2.6.0's rendering rules: an advisory check that failed is muted and marked `[ADVISORY]` (never the red of a
 * failure), and counted beside the failed steps in the header; a check not graded shows its note; notices, and what the
 * selection left out, have their own lines — all of it escaped like the agent's text.
 */
import { createHash } from 'node:crypto';
import type { Notice, StepResult, ValidationResult } from '../model/records.js';
import { RUNNER_CAPABILITY_VERSION } from '../engine/severity.js';
import { isAdvisoryFailure, runCounters } from './counters.js';
import { failureHeadline, taskResult } from './format.js';
import { redactStepResult } from './record.js';
import { sanitizeOutput } from '../model/redact.js';
import type { RunModel, StoryboardReport } from './model.js';
import { counts, relativeTo, verdict } from './markdown.js';
import { partialRunText, statusWithSkips } from './summary.js';

export interface HtmlReportOptions {
  /** YAML paths are printed relative to this (the project root). @default process.cwd() */
  root?: string;
  /** The page title. @default 'AdCP storyboard report' */
  title?: string;
}

/** Markup already escaped (built by `html`). */
class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function escapeText(text: string): string {
  return sanitizeOutput(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function part(value: Part): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(part).join('');
  return escapeText(String(value));
}

/** Tagged template: every interpolation is escaped unless it is already `Html`. */
function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => (out += part(v) + strings[i + 1]!));
  return new Html(out);
}

function decodePointer(pointer: string): string[] {
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function encodeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The deepest part of `pointer` that exists in `value`: where to mark a missing field. */
function deepestExisting(value: unknown, pointer: string): string {
  if (!pointer.startsWith('/')) return '';
  let node = value;
  let at = '';
  for (const token of decodePointer(pointer)) {
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, token)) break;
    node = (node as Record<string, unknown>)[token];
    at += `/${encodeToken(token)}`;
  }
  return at;
}

/**
 * Pretty JSON (2-space) as escaped markup, with the values at `marks`
 * wrapped: `fail` where the failing pointer is, `near` at the deepest existing
 * parent of a pointer that is not there.
 */
function jsonHtml(value: unknown, marks: ReadonlyMap<string, 'fail' | 'near'>): string {
  const out: string[] = [];
  const seen = new WeakSet<object>();
  const walk = (node: unknown, pointer: string, indent: string, depth: number): void => {
    const mark = marks.get(pointer);
    if (mark) out.push(`<mark class="${mark}" title="${escapeText(pointer || '(the whole response)')}">`);
    if (node === null || typeof node !== 'object') {
      const text = JSON.stringify(node) ?? 'undefined';
      out.push(`<span class="j-${node === null ? 'null' : typeof node}">${escapeText(text)}</span>`);
    } else if (seen.has(node) || depth > 64) {
      out.push('"[cut]"');
    } else {
      seen.add(node);
      const entries: [string, unknown][] = Array.isArray(node)
        ? node.map((v, i) => [String(i), v])
        : Object.entries(node as Record<string, unknown>);
      const [open, close] = Array.isArray(node) ? ['[', ']'] : ['{', '}'];
      if (entries.length === 0) out.push(open + close);
      else {
        out.push(`${open}\n`);
        entries.forEach(([key, inner], i) => {
          out.push(indent + '  ');
          if (!Array.isArray(node)) out.push(`<span class="j-key">${escapeText(JSON.stringify(key))}</span>: `);
          walk(inner, `${pointer}/${encodeToken(key)}`, indent + '  ', depth + 1);
          out.push(i < entries.length - 1 ? ',\n' : '\n');
        });
        out.push(indent + close);
      }
      seen.delete(node);
    }
    if (mark) out.push('</mark>');
  };
  walk(value, '', '', 0);
  return out.join('');
}

function marksFor(data: unknown, validations: ValidationResult[]): Map<string, 'fail' | 'near'> {
  const marks = new Map<string, 'fail' | 'near'>();
  for (const v of validations) {
    if (v.passed || typeof v.json_pointer !== 'string') continue;
    const existing = deepestExisting(data, v.json_pointer);
    marks.set(existing, existing === v.json_pointer ? 'fail' : marks.get(existing) === 'fail' ? 'fail' : 'near');
  }
  return marks;
}

function pre(value: unknown, marks: ReadonlyMap<string, 'fail' | 'near'> = new Map()): Html {
  return new Html(`<pre class="json">${jsonHtml(value, marks)}</pre>`);
}

function shortJson(value: unknown): string {
  if (value === undefined) return '';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

const BADGE: Record<string, string> = {
  passed: '✓ passed',
  failed: '✗ failed',
  skipped: '⤼ skipped',
  incomplete: '◐ incomplete',
  not_run: '○ not run',
};
/**
 * A status badge. Given the steps' tally, a pass with skipped steps says how many ran (`✓ passed (2 run, 6 skipped)`,
 * statusWithSkips, as the markdown view and the terminal summary say it): never a plain pass.
 */
const badge = (status: string, tally?: { passed: number; failed: number; skipped: number }) => {
  const text = BADGE[status] ?? status;
  const said = tally ? statusWithSkips(status, tally) : status;
  return html`<span class="badge ${status}">${text.replace(status, said)}</span>`;
};

function where(root: string, v: Pick<ValidationResult, 'source'>, sbFile?: string): Html | string {
  if (!v.source) return '';
  const file = relativeTo(root, v.source.file);
  // In the storyboard's own file (the usual case) the line is enough; the path is in the title.
  if (file === sbFile)
    return html`<code class="yaml" title="${file}:${v.source.line}:${v.source.column}">line ${v.source.line}:${v.source.column}</code>`;
  return html`<code class="yaml">${file}:${v.source.line}:${v.source.column}</code>`;
}

/** A validation's status: ✓, ✗, `n/a` (not applicable, or not graded), `[ADVISORY] ✗` for an advisory that failed. */
function statusCell(v: ValidationResult): string {
  if (isAdvisoryFailure(v)) return '[ADVISORY] ✗';
  if (!v.passed) return '✗';
  return v.not_applicable || v.note ? 'n/a' : '✓';
}

/** Its severity when it is not plain required: advisory, or required since the advisory expired. */
function severityTag(v: ValidationResult): Html | '' {
  if (v.severity === 'advisory') return html` <span class="tag advisory">advisory</span>`;
  if (v.severity_promoted_from_advisory)
    return html` <span class="tag" title="its expires_after_version is at or below this runner's capability version">required — was advisory; promoted at v${RUNNER_CAPABILITY_VERSION}</span>`;
  return '';
}

function noticeList(notices: readonly Notice[] | undefined): Html | '' {
  if (!notices?.length) return '';
  return html`<ul class="notices">${notices.map(
    (n) =>
      html`<li><span class="tag">${n.severity}</span> <code>${n.code}</code> ${n.message}${n.effective_version ? html` <span class="muted">(AdCP ${n.effective_version})</span>` : ''}</li>`,
  )}</ul>`;
}

function validationsTable(step: StepResult, root: string, sbFile: string): Html {
  if (step.validations.length === 0) return html`<p class="muted">No validations.</p>`;
  const rows = step.validations.map(
    (v) => html`<tr class="${v.passed ? 'ok' : isAdvisoryFailure(v) ? 'advisory' : 'ko'}">
<td>${statusCell(v)}</td><td><code>${v.check}</code>${severityTag(v)}</td><td>${v.description}${v.not_applicable ? html`<div class="muted">${v.not_applicable}</div>` : ''}${v.note ? html`<div class="muted note">not graded: ${v.note}</div>` : ''}</td>
<td>${typeof v.json_pointer === 'string' ? html`<code class="${v.passed ? '' : 'ptr'}">${v.json_pointer || '""'}</code>` : ''}</td>
<td>${v.passed ? '' : html`<code>${shortJson(v.expected)}</code>`}</td>
<td>${v.passed || v.check === 'response_schema' ? '' : html`<code class="agent">${shortJson(v.actual)}</code>`}</td>
<td>${where(root, v, sbFile)}</td>
<td>${v.error ? html`<pre class="reason">${v.error}</pre>` : ''}${v.schema_id ? html`<div class="muted">${v.schema_id}</div>` : ''}${v.remediation ? html`<div>fix: ${v.remediation}</div>` : ''}${(v.observations ?? []).map((o) => html`<div class="muted">${o}</div>`)}</td>
</tr>`,
  );
  return html`<table class="validations"><colgroup><col class="w-st"><col class="w-check"><col class="w-desc"><col class="w-ptr"><col class="w-val"><col class="w-val"><col class="w-yaml"><col></colgroup><thead><tr><th></th><th>check</th><th>description</th><th>pointer</th><th>expected</th><th>actual</th><th>YAML</th><th>reason</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function stepSection(raw: StepResult, sb: StoryboardReport, root: string): Html {
  // The same redaction as the JSON report, again: nothing reaches the page that the report would not show.
  const step = redactStepResult(raw);
  const status = verdict(step);
  return html`<details class="step" data-status="${status}"${status === 'failed' ? new Html(' open') : ''}>
${stepSummary(step, status, root)}
<div class="body">
${stepLocation(step, sb, root)}
${step.error ? html`<h4>Error</h4><pre class="reason">${step.error}</pre>` : ''}
${(step.warnings ?? []).map((w) => html`<p class="warning">warning: ${w}</p>`)}
${step.notices?.length ? html`<h4>Notices</h4>${noticeList(step.notices)}` : ''}
<h4>Validations</h4>
${validationsTable(step, root, sb.file)}
${responseSection(step)}
${requestSection(step, status)}
${step.signed_request ? html`<h4>Signed request</h4>${pre(step.signed_request)}` : ''}
${step.webhook_deliveries ? html`<h4>Webhook deliveries</h4>${pre(step.webhook_deliveries)}` : ''}
</div>
</details>`;
}

/** A step's line: status, id, task, time, optional tag; under it the failure headline, or why it was skipped or not run. */
function stepSummary(step: StepResult, status: ReturnType<typeof verdict>, root: string): Html {
  const headline = status === 'failed' ? failureHeadline(step, { cwd: root }) : '';
  const notRun = 'not_run' in step ? (step as { not_run: { reason: string; detail: string } }).not_run : undefined;
  const advisory = step.validations.filter(isAdvisoryFailure).length;
  return html`<summary>${badge(status)} <b>${step.step_id}</b> <code>${step.task}</code> <span class="muted">${step.duration_ms} ms</span>${
    step.optional ? html` <span class="tag">optional</span>` : ''
  }${advisory ? html` <span class="tag advisory">[ADVISORY] ${advisory} failed</span>` : ''}${headline ? html`<div class="headline">${headline}</div>` : ''}${step.skip ? html`<div class="skip">${step.skip.reason}: ${step.skip.detail}</div>` : ''}${
    notRun ? html`<div class="skip">not run (${notRun.reason}): ${notRun.detail}</div>` : ''
  }</summary>`;
}

/** Where the step is: the storyboard file, the YAML line of its first failed (else first) validation, its id. */
function stepLocation(step: StepResult, sb: StoryboardReport, root: string): Html {
  const firstSource =
    step.validations.find((v) => !v.passed && v.source)?.source ?? step.validations.find((v) => v.source)?.source;
  return html`<p class="muted">${sb.file}${firstSource ? html` · YAML ${where(root, { source: firstSource })}` : ''} · id <code>${step.storyboard_id}/${step.phase_id}/${step.step_id}</code></p>`;
}

/** What the checks read (failing pointers marked), the whole payload when that differs, the allowlisted headers; or that nothing came back. */
function responseSection(step: StepResult): Html | '' {
  const response = step.response;
  if (!response)
    return step.request ? html`<h4>Response</h4><p class="muted">nothing (no response from the agent)</p>` : '';
  const data = taskResult(response);
  return html`<h4>Response <span class="muted">${step.extraction.path}${response.status !== undefined ? ` · HTTP ${response.status}` : ''}${
    response.duration_ms !== undefined ? ` · ${response.duration_ms} ms` : ''
  }${response.task_state ? ` · ${response.task_state}` : ''}</span></h4>
<p class="muted">What the checks read${step.validations.some((v) => !v.passed && typeof v.json_pointer === 'string') ? ', failing pointer highlighted' : ''}:</p>${pre(data, marksFor(data, step.validations))}
${data !== response.payload ? html`<details><summary class="muted">whole payload as received</summary>${pre(response.payload)}</details>` : ''}
${response.headers && Object.keys(response.headers).length ? html`<details><summary class="muted">headers (allowlisted)</summary>${pre(response.headers)}</details>` : ''}`;
}

/** What was sent: shown open unless the step failed. */
function requestSection(step: StepResult, status: ReturnType<typeof verdict>): Html | '' {
  const request = step.request;
  if (!request) return '';
  return html`<details class="request"${status === 'failed' ? '' : new Html(' open')}><summary><b>Request</b> <span class="muted">${request.transport} ${request.operation}${request.url ? ` → ${request.url}` : ''}</span></summary>${pre(request.payload)}</details>`;
}

function tally(steps: StepResult[]): Html {
  const c = counts(steps);
  return html`<span class="tally" title="passed / failed / skipped${c.not_run ? ' / not run' : ''}"><span class="passed">${c.passed}</span> / <span class="failed">${c.failed}</span> / <span class="skipped">${c.skipped}</span>${
    c.not_run ? html` / <span class="not_run">${c.not_run}</span>` : ''
  }</span>`;
}

function storyboardSection(sb: StoryboardReport, root: string, multi: boolean): Html {
  const phases = new Map<string, StepResult[]>();
  for (const step of sb.steps) phases.set(step.phase_id, [...(phases.get(step.phase_id) ?? []), step]);
  const phaseStatus = (steps: StepResult[]) =>
    steps.some((s) => verdict(s) === 'failed')
      ? 'failed'
      : steps.every((s) => verdict(s) === 'not_run')
        ? 'not_run'
        : steps.some((s) => verdict(s) === 'not_run')
          ? 'incomplete'
          : steps.every((s) => s.skip)
            ? 'skipped'
            : 'passed';
  return html`<details class="sb" data-status="${sb.status}" data-track="${sb.track ?? 'untracked'}"${sb.status === 'failed' ? new Html(' open') : ''}>
<summary>${badge(sb.status, counts(sb.steps))} <b>${sb.title}</b> <code>${sb.storyboard_id}</code>${sb.version ? html` <span class="muted">v${sb.version}</span>` : ''} <span class="tag">${sb.track ?? 'untracked'}</span> ${tally(sb.steps)} <span class="muted">${sb.file}${multi ? ` · ${sb.project ? `${sb.project} · ` : ''}${sb.agent_url ?? 'no agent'}` : ''}</span>${
    sb.skip ? html`<div class="skip">${sb.skip.reason}: ${sb.skip.detail}</div>` : ''
  }</summary>
${[...phases].map(
  ([
    phase,
    steps,
  ]) => html`<details class="phase" data-status="${phaseStatus(steps)}"${phaseStatus(steps) === 'failed' ? new Html(' open') : ''}>
<summary>${badge(phaseStatus(steps), counts(steps))} phase <b>${phase}</b> ${tally(steps)}</summary>
${steps.map((s) => stepSection(s, sb, root))}
</details>`,
)}
</details>`;
}

const STYLE = `
:root{--ok:#1a7f37;--ko:#cf222e;--skip:#8c6d1f;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328}
header{padding:16px 24px;border-bottom:1px solid var(--line);background:var(--bg)}h1{font-size:20px;margin:0 0 6px}
main{padding:12px 24px}code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.muted{color:var(--muted)}.badge{display:inline-block;min-width:72px;padding:0 6px;border-radius:10px;font-size:12px;color:#fff;text-align:center}
.badge.passed{background:var(--ok)}.badge.failed{background:var(--ko)}.badge.skipped{background:var(--skip)}.badge.incomplete,.badge.not_run{background:var(--muted)}
.tally .passed{color:var(--ok)}.tally .failed{color:var(--ko)}.tally .skipped{color:var(--skip)}
.tag{border:1px solid var(--line);border-radius:8px;padding:0 6px;font-size:12px}
.chips span{margin-right:14px}.filters{margin-top:8px;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
details{margin:4px 0}summary{cursor:pointer;padding:3px 0}details.sb{border:1px solid var(--line);border-radius:6px;padding:4px 10px}
details.phase{margin-left:18px}details.step{margin-left:18px;border-left:3px solid var(--line);padding-left:8px}
details.step[data-status=failed]{border-left-color:var(--ko)}.tally .not_run{color:var(--muted)}details.step[data-status=skipped]{border-left-color:var(--skip)}
.headline{color:var(--ko);font-family:ui-monospace,monospace;font-size:12px;margin:2px 0 0 80px;white-space:pre-wrap;word-break:break-word}
.skip{color:var(--skip);font-size:12px;margin:2px 0 0 80px}.body{padding:4px 0 8px}h4{margin:10px 0 4px}
pre{background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:8px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-word}
pre.reason{max-height:160px;margin:0}.w-st{width:24px}.w-check{width:11%}.w-desc{width:17%}.w-ptr{width:11%}.w-val{width:16%}.w-yaml{width:8%}
table{border-collapse:collapse;width:100%;table-layout:fixed}td{overflow-wrap:anywhere}th,td{border:1px solid var(--line);padding:3px 6px;vertical-align:top;text-align:left}
tr.ko{background:#ffebe9}tr.advisory{background:#f6f8fa;color:var(--muted)}.tag.advisory{color:var(--muted);border-style:dashed}
.tally .advisory{color:var(--muted)}ul.notices{margin:4px 0;padding-left:18px}code.ptr{background:#ffd8d3;color:var(--ko);font-weight:600}
mark.fail{background:#ffd8d3;outline:2px solid var(--ko);color:inherit}mark.near{background:#fff1c2;outline:1px dashed var(--skip);color:inherit}
.j-key{color:#0550ae}.j-string{color:#0a3069}.j-number,.j-boolean,.j-null{color:#953800}.warning{color:var(--skip)}
.loaderr{border:1px solid var(--ko);border-radius:6px;padding:6px 10px;margin:6px 0}
[hidden]{display:none!important}
`;

const SCRIPT = `
(() => {
  const $ = (id) => document.getElementById(id);
  const apply = () => {
    const failedOnly = $('f-failed').checked, showSkipped = $('f-skipped').checked, track = $('f-track').value;
    const shows = (status) => (!failedOnly || status === 'failed') && (showSkipped || status !== 'skipped');
    for (const sb of document.querySelectorAll('details.sb')) {
      const onTrack = !track || sb.dataset.track === track;
      const steps = sb.querySelectorAll('details.step');
      for (const step of steps) step.hidden = !(onTrack && shows(step.dataset.status));
      for (const phase of sb.querySelectorAll('details.phase')) phase.hidden = !phase.querySelector('details.step:not([hidden])');
      sb.hidden = !onTrack || (steps.length ? !sb.querySelector('details.step:not([hidden])') : !shows(sb.dataset.status));
    }
    $('f-none').hidden = !!document.querySelector('details.sb:not([hidden])');
  };
  // The filters live in the URL's hash too (#failed&track=core&skipped=0), so a link opens the same view.
  const hash = new URLSearchParams(location.hash.slice(1));
  $('f-failed').checked = hash.has('failed');
  $('f-skipped').checked = hash.get('skipped') !== '0';
  if ([...$('f-track').options].some((o) => o.value === hash.get('track'))) $('f-track').value = hash.get('track');
  const save = () => {
    const next = new URLSearchParams();
    if ($('f-failed').checked) next.set('failed', '');
    if (!$('f-skipped').checked) next.set('skipped', '0');
    if ($('f-track').value) next.set('track', $('f-track').value);
    history.replaceState(null, '', '#' + next.toString().replace('failed=', 'failed'));
  };
  for (const id of ['f-failed', 'f-skipped', 'f-track']) $(id).addEventListener('change', () => { apply(); save(); });
  $('f-open').addEventListener('click', () => { for (const d of document.querySelectorAll('main details')) d.open = true; });
  $('f-close').addEventListener('click', () => { for (const d of document.querySelectorAll('main details')) d.open = false; });
  apply();
  document.documentElement.dataset.ready = 'true';
})();
`;

/** What the run's selection left out before execution: neither skipped nor failed. */
function notSelectedSection(report: RunModel): Html | '' {
  const items = report.summary.not_selected ?? [];
  if (items.length === 0) return '';
  return html`<section><h3>Not selected (${items.length})</h3><table class="not-selected"><thead><tr><th>storyboard</th><th>reason</th><th>steps</th><th>detail</th></tr></thead><tbody>${items.map(
    (item) =>
      html`<tr><td><code>${[item.storyboard_id, item.phase_id, item.step_id].filter(Boolean).join('/')}</code></td><td>${item.reason}</td><td>${item.step_count}</td><td>${item.detail}</td></tr>`,
  )}</tbody></table></section>`;
}

/**
 * The run's counts: steps by verdict — the advisory checks that failed right beside the failed steps (contract 2.6.0 >
 * validations_advisory_failed) —, not run, not selected, not graded, storyboards.
 */
function countChips(report: RunModel): Html {
  const { total_steps, steps_passed, steps_failed, steps_skipped, steps_not_run } = report.summary;
  const counters = runCounters(report);
  return html`<div class="chips"><span><b>${total_steps}</b> steps</span><span class="tally"><span class="passed">${steps_passed} passed</span></span><span class="tally"><span class="failed">${steps_failed} failed</span></span>${
    counters.validations_advisory_failed
      ? html`<span class="tally"><span class="advisory">[ADVISORY] ${counters.validations_advisory_failed} advisory check${counters.validations_advisory_failed === 1 ? '' : 's'} failed</span></span>`
      : ''
  }<span class="tally"><span class="skipped">${steps_skipped} skipped</span></span>${steps_not_run ? html`<span class="tally"><span class="not_run">${steps_not_run} not run</span></span>` : ''}${
    counters.steps_not_selected ? html`<span class="muted">${counters.steps_not_selected} not selected</span>` : ''
  }${counters.validations_not_applicable ? html`<span class="muted">${counters.validations_not_applicable} checks not graded</span>` : ''}<span>${report.storyboards.length} storyboards</span></div>`;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

export function renderHtmlReport(report: RunModel, options: HtmlReportOptions = {}): string {
  const root = options.root ?? process.cwd();
  const title = options.title ?? 'AdCP storyboard report';
  const { steps_passed, steps_failed, steps_skipped, tracks } = report.summary;
  const run = report.run;
  const trackNames = [...new Set(tracks.map((t) => t.track))];
  const trackCounts = (t: (typeof tracks)[number]) =>
    counts(
      report.storyboards
        .filter((s) => (s.track ?? 'untracked') === t.track && s.project === t.project && s.agent_url === t.agent_url)
        .flatMap((s) => s.steps),
    );
  const failed =
    steps_failed > 0 || report.storyboards.some((s) => s.status === 'failed') || report.load_errors.length > 0;
  // default-src 'none': the page can fetch, load or connect to nothing; only its own style and script run.
  const csp = `default-src 'none'; style-src ${sha256(STYLE)}; script-src ${sha256(SCRIPT)}; img-src data:; base-uri 'none'; form-action 'none'`;
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${new Html(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
<header>
<h1>${badge(failed ? 'failed' : 'passed', { passed: steps_passed, failed: steps_failed, skipped: steps_skipped })} ${title}</h1>
${countChips(report)}
<div class="chips muted"><span>${
    run.targets.length > 1
      ? `${run.targets.length} agents: ${run.targets.map((t) => `${t.project ? `${t.project} · ` : ''}${t.agent_url ?? 'no agent'}`).join(', ')}`
      : `agent ${run.agent_url ?? 'none'}${run.protocol ? ` (${run.protocol})` : ''}${run.project ? ` · project ${run.project}` : ''}`
  }</span>${run.corpus_version ? html`<span>corpus ${run.corpus_version}${run.corpus_choice ? ` (${run.corpus_choice})` : ''}</span>` : ''}<span>${run.started_at} · ${(run.duration_ms / 1000).toFixed(1)} s</span><span>${run.tool.name} ${run.tool.version} · runner output contract ${report.contract.version}</span></div>
${run.complete ? '' : html`<p class="warning">${partialRunText(report, (pattern) => pattern)}.</p>`}
<div class="chips">tracks: ${tracks.map((t) => html`<span>${t.track} ${badge(t.status, trackCounts(t))}${run.targets.length > 1 ? html` <span class="muted">${t.project ? `${t.project} · ` : ''}${t.agent_url ?? ''}</span>` : ''}</span>`)}</div>
<div class="filters">
<label><input type="checkbox" id="f-failed"> failed only</label>
<label><input type="checkbox" id="f-skipped" checked> show skipped</label>
<label>track <select id="f-track"><option value="">all</option>${trackNames.map((t) => html`<option value="${t}">${t}</option>`)}</select></label>
<button type="button" id="f-open">expand all</button><button type="button" id="f-close">collapse all</button>
</div>
</header>
<main>
${
  report.load_errors.length
    ? html`<section><h3>Storyboard files that did not load</h3>${report.load_errors.map((e) => html`<div class="loaderr"><code>${e.file}</code><pre class="reason">${e.message}</pre></div>`)}</section>`
    : ''
}
${report.summary.notices?.length ? html`<section><h3>Notices</h3>${noticeList(report.summary.notices)}</section>` : ''}
${notSelectedSection(report)}
${report.storyboards.map((sb) => storyboardSection(sb, root, run.targets.length > 1))}
<p id="f-none" class="muted" hidden>Nothing matches these filters.</p>
</main>
<script>${new Html(SCRIPT)}</script>
</body>
</html>
`;
  return page.value;
}
