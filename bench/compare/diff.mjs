/**
 * Step-by-step comparison of the two runners' verdicts, and its tables.
 * Key: (storyboard_id, phase_id, step_id). Verdict: passed | failed | skipped:<reason>.
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

/** Compares two verdict maps. */
export function compare(reference, ours) {
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
    });
  }
  rows.sort((a, b) =>
    `${a.storyboard_id}|${a.phase_id}|${a.step_id}`.localeCompare(`${b.storyboard_id}|${b.phase_id}|${b.step_id}`),
  );
  return { rows, ...summarise(rows) };
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
      by_storyboard: byStoryboard,
      examples: list.slice(0, 5).map((r) => shortKey(`${r.storyboard_id}|${r.phase_id}|${r.step_id}`)),
    };
  };
  const pct = (n, d) => (d === 0 ? null : Math.round((1000 * n) / d) / 10);
  return {
    summary: {
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
  log(
    `only in reference: ${s.only_reference.count}${s.only_reference.excluded ? ` (${s.only_reference.excluded} excluded)` : ''}${fmtBy(s.only_reference.by_storyboard)}`,
  );
  log(
    `only in ours:      ${s.only_ours.count}${s.only_ours.excluded ? ` (${s.only_ours.excluded} excluded)` : ''}${fmtBy(s.only_ours.by_storyboard)}`,
  );
  log(`verdicts (compared) reference: ${JSON.stringify(s.verdicts_reference)}`);
  log(`verdicts (compared) ours:      ${JSON.stringify(s.verdicts_ours)}`);
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
    `Reference: \`adcp storyboard run <url> --json\` of @adcp/sdk ${meta.sdkVersion} (capability-driven selection); vitest-adcp ${meta.oursVersion} (${meta.via}) on the same storyboards. ${meta.date}.`,
  );
  lines.push(
    'Agreement = same verdict (passed / failed / skipped:<reason>) on steps both runners reported; `signed_requests` and `webhook_emission` counted apart.',
  );
  lines.push('');
  lines.push(
    '| agent (example) | claims | storyboards | steps compared | agreement | ignoring skip reason | only reference | only ours | signed_requests + webhook_emission (agree/compared) | time reference / ours |',
  );
  lines.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of results) {
    if (r.error) {
      lines.push(
        `| ${r.agent} (\`${r.example}\`) | ${r.role} | – | – | error: ${String(r.error).split('\n')[0].slice(0, 80)} | | | | | |`,
      );
      continue;
    }
    const s = r.comparison.summary;
    const apart =
      Object.entries(s.excluded_by_storyboard ?? {})
        .map(([id, e]) => `${id} ${e.agree}/${e.compared}`)
        .join(', ') || `${s.excluded_agree}/${s.excluded_compared}`;
    lines.push(
      `| ${r.agent} (\`${r.example}\`) | ${r.role} | ${r.storyboards.length} | ${s.compared} | ${s.agreement_pct ?? '–'}% (${s.agree}) | ${s.agreement_coarse_pct ?? '–'}% | ${fmtOnly(s.only_reference)} | ${fmtOnly(s.only_ours)} | ${apart} | ${(r.reference.ms / 1000).toFixed(1)} s / ${(r.ours.ms / 1000).toFixed(1)} s |`,
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
