/**
 * Step-by-step comparison of the two runners' verdicts, and its tables.
 * Key: (storyboard_id, phase_id, step_id). Verdict: passed | failed | skipped:<reason>
 * (13.x reference also: not_selected:<reason>).
 *
 * Every difference — a disagreement, or a step only one side reported — also
 * gets a cause (causeOf), so a run against a newer corpus reads as "what is
 * missing on our side" rather than a wall of verdict pairs: a storyboard we
 * did not load (and why: loadErrorIssues), a check kind we do not implement,
 * a skip reason that differs, a step one side ran and the other skipped, …
 */

import { allStepsOf } from './reference.mjs';

/** Storyboards compared on their own, outside the agreement figure. */
export const EXCLUDED = new Set(['signed_requests', 'webhook_emission']);

/** Our contract report → step verdicts (first copy of a storyboard id wins; duplicates listed). */
export function stepsFromOurReport(report, corpus) {
  const steps = new Map();
  const duplicates = [];
  const seen = new Map();
  if (!report) return { steps, duplicates };
  // The protocols/ copy before its domains/ mirror, like the reference.
  const rank = (sb) => (sb.file?.includes('/domains/') || sb.file?.startsWith('domains/') ? 1 : 0);
  const storyboards = [...report.storyboards].sort((a, b) => rank(a) - rank(b));
  for (const sb of storyboards) {
    if (seen.has(sb.storyboard_id)) {
      duplicates.push({ storyboard_id: sb.storyboard_id, file: sb.file, first: seen.get(sb.storyboard_id) });
      continue;
    }
    seen.set(sb.storyboard_id, sb.file);
    if (sb.steps.length === 0 && sb.skip) {
      for (const [p, s] of allStepsOf(corpus.steps(sb.storyboard_id)))
        put(steps, sb.storyboard_id, p, s, {
          verdict: `skipped:${sb.skip.reason}`,
          detail: sb.skip.detail,
          whole_storyboard: true,
        });
      continue;
    }
    for (const step of sb.steps) {
      const failed = step.validations?.find((v) => !v.passed);
      put(steps, sb.storyboard_id, step.phase_id, step.step_id, {
        verdict: step.skip ? `skipped:${step.skip.reason}` : step.passed ? 'passed' : 'failed',
        task: step.task,
        detail:
          step.skip?.detail ??
          step.error ??
          (failed ? `${failed.description ?? failed.check}${failed.error ? `: ${failed.error}` : ''}` : undefined),
      });
    }
  }
  return { steps, duplicates };
}

function put(map, storyboardId, phaseId, stepId, value) {
  const key = `${storyboardId}|${phaseId}|${stepId}`;
  if (!map.has(key)) map.set(key, { storyboard_id: storyboardId, phase_id: phaseId, step_id: stepId, ...value });
}

const coarse = (verdict) => (verdict?.startsWith('skipped') ? 'skipped' : verdict);
const shortKey = (key) => key.split('|').join(' › ');

/**
 * The issues of our load errors, per storyboard id: `unknown key "requires"`, `unknown check "field_absent"`,
 * `schema: …` (one entry per distinct issue of a file). `idOf(file)` maps a file of a load error to its storyboard id
 * (`file` as our report gives it: relative to our run's cwd, or absolute).
 * @returns {Map<string, { file: string, issues: string[] }>}
 */
export function loadErrorIssues(loadErrors, idOf) {
  const out = new Map();
  for (const e of loadErrors ?? []) {
    const id = idOf(e.file) ?? `?${e.file}`;
    const issues = new Set();
    for (const m of String(e.message ?? '').matchAll(/^\S+:\d+:\d+: \[(\w+)\] (.*)$/gm)) {
      const [, code, text] = m;
      let issue;
      if (code === 'unknown_key') issue = `unknown key ${/unknown key ("[^"]*")/.exec(text)?.[1] ?? text}`;
      else if (code === 'unknown_check') issue = `unknown check ${/check ("[^"]*")/.exec(text)?.[1] ?? text}`;
      else issue = `${code}: ${text.replace(/\[\d+\]/g, '[]').slice(0, 120)}`;
      issues.add(issue);
    }
    if (issues.size === 0)
      issues.add(
        String(e.message ?? 'load error')
          .split('\n')[0]
          .slice(0, 160),
      );
    out.set(id, { file: e.file, issues: [...issues] });
  }
  return out;
}

/** Our detail of a step whose check kind we do not grade (a storyboard loaded leniently). */
const UNKNOWN_CHECK = /unknown check|not defined by AdCP|cannot grade|not implemented|unsupported check/i;

/**
 * Why a row differs (undefined when both agree).
 * @param {object} row a row of compare()
 * @param {{ notLoaded?: Map<string, unknown>, ourStoryboards?: Set<string> }} context
 */
export function causeOf(row, context = {}) {
  if (row.agree) return undefined;
  const skip = (v) => v?.startsWith('skipped:') || v?.startsWith('not_selected:');
  if (!row.ours) {
    if (context.notLoaded?.has(row.storyboard_id)) return 'we did not load the storyboard';
    if (context.ourStoryboards && !context.ourStoryboards.has(row.storyboard_id))
      return 'storyboard not in our run (loaded, not reported)';
    return 'step only in the reference (storyboard ran on our side)';
  }
  if (!row.reference) return 'step only in ours';
  if (row.ours === 'failed' && UNKNOWN_CHECK.test(row.ours_detail ?? '')) return 'check kind not implemented (ours)';
  // 13.x: a storyboard the reference graded not applicable before running it (a required tool missing, …).
  if (row.reference_not_executed)
    return skip(row.ours)
      ? 'skip reason differs: reference graded the storyboard not applicable up front, we skipped its steps'
      : `reference graded the storyboard not applicable up front, we ran it (${row.ours})`;
  if (skip(row.reference) && skip(row.ours)) return 'skip reason differs';
  if (skip(row.reference)) return `reference skipped, we ran (${row.ours})`;
  if (skip(row.ours)) return `we skipped, reference ran (${row.reference})`;
  return row.reference === 'failed' ? 'reference failed, we passed' : 'we failed, reference passed';
}

/** Compares two verdict maps; `context` (causeOf) to give each difference its cause. */
export function compare(reference, ours, context) {
  const rows = [];
  for (const key of new Set([...reference.keys(), ...ours.keys()])) {
    const r = reference.get(key);
    const o = ours.get(key);
    const [storyboard_id, phase_id, step_id] = key.split('|');
    rows.push({
      storyboard_id,
      phase_id,
      step_id,
      excluded: EXCLUDED.has(storyboard_id),
      reference: r?.verdict ?? null,
      ours: o?.verdict ?? null,
      agree: Boolean(r && o && r.verdict === o.verdict),
      agree_coarse: Boolean(r && o && coarse(r.verdict) === coarse(o.verdict)),
      reference_detail: r?.detail ? String(r.detail).slice(0, 400) : undefined,
      ours_detail: o?.detail ? String(o.detail).slice(0, 400) : undefined,
      reference_source: r?.source,
      reference_raw_skip_reason: r?.raw_skip_reason,
      ...(r?.requirement ? { reference_requirement: r.requirement } : {}),
      // 13.x: the reference graded the whole storyboard not applicable without running it.
      ...(r?.not_executed ? { reference_not_executed: true } : {}),
    });
  }
  if (context) for (const row of rows) row.cause = causeOf(row, context);
  rows.sort((a, b) =>
    `${a.storyboard_id}|${a.phase_id}|${a.step_id}`.localeCompare(`${b.storyboard_id}|${b.phase_id}|${b.step_id}`),
  );
  return { rows, ...summarise(rows), ...(context ? { causes: causes(rows, context) } : {}) };
}

/**
 * The differences grouped by cause, most first: each with its count (steps), how many of them are of the storyboards
 * counted apart, the verdict pairs (reference → ours) under it, the storyboards, a few examples; the cause "we did
 * not load the storyboard" also with the load-error issues of those storyboards (storyboards per issue).
 */
function causes(rows, context) {
  const out = new Map();
  for (const r of rows) {
    if (!r.cause) continue;
    const c = out.get(r.cause) ?? { cause: r.cause, count: 0, excluded: 0, pairs: {}, storyboards: {}, examples: [] };
    c.count++;
    if (r.excluded) c.excluded++;
    const pair = `${r.reference ?? '–'} → ${r.ours ?? '–'}`;
    c.pairs[pair] = (c.pairs[pair] ?? 0) + 1;
    c.storyboards[r.storyboard_id] = (c.storyboards[r.storyboard_id] ?? 0) + 1;
    if (c.examples.length < 3) c.examples.push(shortKey(`${r.storyboard_id}|${r.phase_id}|${r.step_id}`));
    out.set(r.cause, c);
  }
  const notLoaded = out.get('we did not load the storyboard');
  if (notLoaded && context.notLoaded) {
    const issues = {};
    for (const id of Object.keys(notLoaded.storyboards))
      for (const issue of context.notLoaded.get(id)?.issues ?? []) issues[issue] = (issues[issue] ?? 0) + 1;
    notLoaded.load_error_issues = Object.fromEntries(Object.entries(issues).sort((a, b) => b[1] - a[1]));
  }
  return [...out.values()].sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause));
}

function summarise(rows) {
  const both = rows.filter((r) => r.reference && r.ours);
  const main = both.filter((r) => !r.excluded);
  const excluded = both.filter((r) => r.excluded);
  const categories = new Map();
  for (const r of main.filter((r) => !r.agree)) {
    const label = `${r.reference} → ${r.ours}`;
    const c = categories.get(label) ?? { category: label, count: 0, examples: [] };
    c.count++;
    if (c.examples.length < 5) c.examples.push(`${r.storyboard_id} › ${r.phase_id} › ${r.step_id}`);
    categories.set(label, c);
  }
  const only = (side) => {
    const list = rows.filter((r) => (side === 'reference' ? r.reference && !r.ours : r.ours && !r.reference));
    const byStoryboard = {};
    for (const r of list) byStoryboard[r.storyboard_id] = (byStoryboard[r.storyboard_id] ?? 0) + 1;
    return {
      count: list.length,
      excluded: list.filter((r) => r.excluded).length,
      // What those steps were on that side: run (passed / failed) or skipped, and why.
      verdicts: tally(list.map((r) => r[side])),
      by_storyboard: byStoryboard,
      examples: list.slice(0, 5).map((r) => shortKey(`${r.storyboard_id}|${r.phase_id}|${r.step_id}`)),
    };
  };
  const pct = (n, d) => (d === 0 ? null : Math.round((1000 * n) / d) / 10);
  // 13.x: the same figures without the storyboards the reference graded not applicable up front (whose steps it
  // reports as one skip each, against ours run or skipped step by step); absent when there are none (6.x).
  const ran = main.filter((r) => !r.reference_not_executed);
  const onReferenceRun =
    ran.length === main.length
      ? undefined
      : {
          compared: ran.length,
          agree: ran.filter((r) => r.agree).length,
          agreement_pct: pct(ran.filter((r) => r.agree).length, ran.length),
          agreement_coarse_pct: pct(ran.filter((r) => r.agree_coarse).length, ran.length),
          only_reference: rows.filter((r) => r.reference && !r.ours && !r.excluded && !r.reference_not_executed).length,
        };
  return {
    summary: {
      ...(onReferenceRun ? { on_reference_run: onReferenceRun } : {}),
      compared: main.length,
      agree: main.filter((r) => r.agree).length,
      agreement_pct: pct(main.filter((r) => r.agree).length, main.length),
      agree_coarse: main.filter((r) => r.agree_coarse).length,
      agreement_coarse_pct: pct(main.filter((r) => r.agree_coarse).length, main.length),
      excluded_compared: excluded.length,
      excluded_agree: excluded.filter((r) => r.agree).length,
      // Each storyboard counted apart, with its own disagreement categories (reference → ours).
      excluded_by_storyboard: Object.fromEntries(
        [...EXCLUDED].map((id) => {
          const mine = both.filter((r) => r.storyboard_id === id);
          const only = (side) =>
            rows.filter(
              (r) => r.storyboard_id === id && (side === 'reference' ? r.reference && !r.ours : r.ours && !r.reference),
            ).length;
          return [
            id,
            {
              compared: mine.length,
              agree: mine.filter((r) => r.agree).length,
              agree_coarse: mine.filter((r) => r.agree_coarse).length,
              only_reference: only('reference'),
              only_ours: only('ours'),
              disagreements: tally(mine.filter((r) => !r.agree).map((r) => `${r.reference} → ${r.ours}`)),
            },
          ];
        }),
      ),
      only_reference: only('reference'),
      only_ours: only('ours'),
      verdicts_reference: tally(main.map((r) => r.reference)),
      verdicts_ours: tally(main.map((r) => r.ours)),
    },
    disagreements: [...categories.values()].sort((a, b) => b.count - a.count || a.category.localeCompare(b.category)),
  };
}

function tally(list) {
  const out = {};
  for (const v of list) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** Plain-text report of one agent. */
export function printAgent(name, result, log = console.log) {
  const s = result.summary;
  log(`\n── ${name} ─────────────────────────────────────────────`);
  log(
    `steps compared: ${s.compared} (signed_requests + webhook_emission apart: ${s.excluded_agree}/${s.excluded_compared} agree)`,
  );
  for (const [id, e] of Object.entries(s.excluded_by_storyboard ?? {})) {
    if (e.compared === 0 && e.only_reference === 0 && e.only_ours === 0) continue;
    const why = Object.entries(e.disagreements)
      .map(([k, n]) => `${n}× ${k}`)
      .join(', ');
    log(
      `  ${id}: ${e.agree}/${e.compared} agree (ignoring skip reason ${e.agree_coarse}/${e.compared}); only reference ${e.only_reference}, only ours ${e.only_ours}${why ? `; disagreements: ${why}` : ''}`,
    );
  }
  log(
    `agreement: ${s.agree}/${s.compared} = ${s.agreement_pct ?? '–'}%  (pass/fail/skip ignoring skip reason: ${s.agreement_coarse_pct ?? '–'}%)`,
  );
  if (s.on_reference_run) {
    const o = s.on_reference_run;
    log(
      `  on the storyboards the reference ran (not those it graded not applicable up front): ${o.agree}/${o.compared} = ${o.agreement_pct ?? '–'}% (ignoring skip reason ${o.agreement_coarse_pct ?? '–'}%), only in reference ${o.only_reference}`,
    );
  }
  log(
    `only in reference: ${s.only_reference.count}${s.only_reference.excluded ? ` (${s.only_reference.excluded} excluded)` : ''}${fmtBy(s.only_reference.by_storyboard)}`,
  );
  log(
    `only in ours:      ${s.only_ours.count}${s.only_ours.excluded ? ` (${s.only_ours.excluded} excluded)` : ''}${fmtBy(s.only_ours.by_storyboard)}`,
  );
  log(`verdicts (compared) reference: ${JSON.stringify(s.verdicts_reference)}`);
  log(`verdicts (compared) ours:      ${JSON.stringify(s.verdicts_ours)}`);
  if (result.causes?.length) {
    log('differences by cause (steps, incl. one-sided and counted-apart ones):');
    for (const c of result.causes) {
      const pairs = Object.entries(c.pairs)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([k, n]) => `${n}× ${k}`)
        .join(', ');
      log(`  ${String(c.count).padStart(4)}  ${c.cause}${c.excluded ? ` (${c.excluded} apart)` : ''}: ${pairs}`);
      if (c.load_error_issues)
        log(
          `        load errors: ${Object.entries(c.load_error_issues)
            .slice(0, 8)
            .map(([k, n]) => `${k} ×${n}`)
            .join(', ')}`,
        );
    }
  }
  if (result.disagreements.length === 0) {
    log('disagreements: none');
    return;
  }
  log('disagreements (reference → ours):');
  const width = Math.max(...result.disagreements.map((d) => d.category.length));
  for (const d of result.disagreements) {
    log(`  ${d.category.padEnd(width)}  ${String(d.count).padStart(4)}   e.g. ${d.examples[0]}`);
    for (const e of d.examples.slice(1)) log(`  ${''.padEnd(width)}        ${e}`);
  }
}

/** Storyboards run; 13.x: `+N n/a`, those the reference graded not applicable up front (ours ran them too). */
const fmtStoryboards = (r) => {
  const upFront = r.reference.not_executed?.length ?? 0;
  return upFront ? `${r.storyboards.length - upFront} (+${upFront} n/a)` : String(r.storyboards.length);
};

const fmtOnly = (o) => (o.excluded ? `${o.count - o.excluded} (+${o.excluded} excl.)` : String(o.count));

function fmtBy(by) {
  const entries = Object.entries(by).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) return '';
  return `  [${entries
    .slice(0, 6)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')}${entries.length > 6 ? ', …' : ''}]`;
}

/** Markdown for docs/conformance.md: one summary row per agent, then the disagreement categories. */
export function markdown(results, meta) {
  const lines = [];
  lines.push(
    `Reference: \`adcp storyboard run <url> --json\` of @adcp/sdk ${meta.sdkVersion} (capability-driven selection${meta.corpora ? `, corpus ${meta.corpora.reference.version}` : ''}); vitest-adcp ${meta.oursVersion} (${meta.via}${meta.corpora ? `, corpus ${meta.corpora.ours.version}` : ''}) on the same storyboards. ${meta.date}.`,
  );
  lines.push(
    'Agreement = same verdict (passed / failed / skipped:<reason>) on steps both runners reported; `signed_requests` and `webhook_emission` counted apart.',
  );
  lines.push('');
  // A column for the storyboard files vitest-adcp did not load, when any did (a newer corpus).
  const loadColumn = results.some((r) => r.ours?.load_errors?.length);
  lines.push(
    `| agent (example) | claims | storyboards | steps compared | agreement | ignoring skip reason | only reference | only ours | signed_requests + webhook_emission (agree/compared) | time reference / ours |${loadColumn ? ' not loaded (ours) |' : ''}`,
  );
  lines.push(`|---|---|--:|--:|--:|--:|--:|--:|--:|--:|${loadColumn ? '--:|' : ''}`);
  for (const r of results) {
    if (r.error) {
      lines.push(
        `| ${r.agent} (\`${r.example}\`) | ${r.role} | – | – | error: ${String(r.error).split('\n')[0].slice(0, 80)} | | | | | |${loadColumn ? ' |' : ''}`,
      );
      continue;
    }
    const s = r.comparison.summary;
    const apart =
      Object.entries(s.excluded_by_storyboard ?? {})
        .map(([id, e]) => `${id} ${e.agree}/${e.compared}`)
        .join(', ') || `${s.excluded_agree}/${s.excluded_compared}`;
    lines.push(
      `| ${r.agent} (\`${r.example}\`) | ${r.role} | ${fmtStoryboards(r)} | ${s.compared} | ${s.agreement_pct ?? '–'}% (${s.agree}) | ${s.agreement_coarse_pct ?? '–'}% | ${fmtOnly(s.only_reference)} | ${fmtOnly(s.only_ours)} | ${apart} | ${(r.reference.ms / 1000).toFixed(1)} s / ${(r.ours.ms / 1000).toFixed(1)} s |${loadColumn ? ` ${r.ours.load_errors?.length ?? 0} |` : ''}`,
    );
  }
  lines.push('');
  lines.push('| agent | reference → vitest-adcp | steps | e.g. |');
  lines.push('|---|---|--:|---|');
  for (const r of results) {
    if (r.error) continue;
    for (const d of r.comparison.disagreements)
      lines.push(
        `| ${r.agent} | \`${d.category}\` | ${d.count} | ${d.examples
          .slice(0, 2)
          .map((e) => `\`${e}\``)
          .join(', ')} |`,
      );
  }
  lines.push('');
  lines.push('| agent | storyboard counted apart | agree/compared | reference → vitest-adcp |');
  lines.push('|---|---|--:|---|');
  for (const r of results) {
    if (r.error) continue;
    for (const [id, e] of Object.entries(r.comparison.summary.excluded_by_storyboard ?? {})) {
      if (e.compared === 0) continue;
      lines.push(
        `| ${r.agent} | ${id} | ${e.agree}/${e.compared} | ${
          Object.entries(e.disagreements)
            .map(([k, n]) => `\`${k}\` ×${n}`)
            .join(', ') || '–'
        } |`,
      );
    }
  }
  return lines.join('\n');
}
