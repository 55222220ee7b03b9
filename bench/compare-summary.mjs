#!/usr/bin/env node
/**
 * A markdown summary of a compare-bench run (bench/compare-reference.mjs): the
 * figures per agent and, per agent, the differences grouped by cause (the
 * `causes` of each compare-<agent>.json), with the load-error issues behind
 * the storyboards we did not load. Made for baselines against a newer SDK and
 * corpus (where the per-pair disagreement table of the bench's own markdown is
 * too long to read), so that a later run — say of another build, `--dist` —
 * can be set beside it.
 *
 *   node bench/compare-summary.mjs bench/out/sdk13                (to stdout)
 *   node bench/compare-summary.mjs bench/out/sdk13 --write /work/ref/baseline-sdk13.md
 *
 * Reads only the JSON files; runs nothing.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { write: { type: 'string' }, title: { type: 'string' } },
});
const dir = positionals[0] ?? 'bench/out';
// In run order (the bench writes each agent's file when it is done).
const files = readdirSync(dir)
  .filter((f) => /^compare-.+\.json$/.test(f))
  .map((f) => join(dir, f))
  .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
if (files.length === 0) {
  console.error(`no compare-*.json in ${dir}`);
  process.exit(2);
}
const results = files.map((f) => JSON.parse(readFileSync(f, 'utf8')));
const ok = results.filter((r) => !r.error);
const first = ok[0];

const pct = (v) => (v == null ? '–' : `${v}%`);
const run = (verdicts) => (verdicts?.passed ?? 0) + (verdicts?.failed ?? 0);
const lines = [];
lines.push(
  `# ${values.title ?? `vitest-adcp against the reference runner of @adcp/sdk ${first?.sdk?.version ?? '?'}`}`,
  '',
);
if (first) {
  lines.push(
    `Reference: \`adcp storyboard run <url> --json\` of @adcp/sdk ${first.sdk?.version} (corpus ${first.corpora?.reference.version}); vitest-adcp ${first.ours.via} on corpus ${first.corpora?.ours.version} (ADCP_COMPLIANCE=${first.corpora?.ours.root}), on the storyboards the reference ran plus those it graded not applicable up front. Run ${first.comparison ? new Date(statSync(files[0]).mtimeMs).toISOString().slice(0, 16).replace('T', ' ') : '?'} UTC.`,
    '',
    '- **compared**: steps both runners reported (signed_requests and webhook_emission counted apart); **agreement**: same verdict (passed / failed / skipped:<canonical reason>); **coarse**: ignoring the skip reason.',
    '- **on the reference run**: the same without the storyboards the reference graded not applicable before running them (it reports one skip for such a storyboard, expanded here to its steps).',
    '- **only reference**: steps the reference reported and we did not (in brackets, how many of them it actually ran — passed or failed — rather than skipped); **not loaded**: storyboard files our loader rejected.',
    '- **steps P/F/S**: passed / failed / skipped as each runner counts them in its own summary (the reference also counts validations of a check kind it does not know: `n/a checks`).',
    '',
  );
}
lines.push(
  '| agent | storyboards (+ n/a up front) | compared | agreement | coarse | on the reference run: compared, agreement (coarse) | only reference (ran) | only ours | not loaded (ours) | steps P/F/S reference | steps P/F/S ours |',
  '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
);
for (const r of results) {
  if (r.error) {
    lines.push(`| ${r.agent} | error: ${String(r.error).split('\n')[0].slice(0, 100)} | | | | | | | | | |`);
    continue;
  }
  const s = r.comparison.summary;
  const o = s.on_reference_run;
  const upFront = r.reference.not_executed?.length ?? 0;
  const pfs = (x) => (x ? `${x.steps_passed}/${x.steps_failed}/${x.steps_skipped}` : '–');
  const naChecks = r.reference.summary?.validations_not_applicable;
  lines.push(
    `| ${r.agent} | ${r.storyboards.length - upFront}${upFront ? ` (+${upFront})` : ''} | ${s.compared} | ${pct(s.agreement_pct)} (${s.agree}) | ${pct(s.agreement_coarse_pct)} | ${o ? `${o.compared}, ${pct(o.agreement_pct)} (${pct(o.agreement_coarse_pct)})` : '='} | ${s.only_reference.count} (${run(s.only_reference.verdicts)}) | ${s.only_ours.count} | ${r.ours.load_errors?.length ?? 0} | ${pfs(r.reference.summary)}${naChecks ? ` (${naChecks} n/a checks)` : ''} | ${pfs(r.ours.summary)} |`,
  );
}
lines.push('');

// Load errors: which issues keep storyboards from loading, over the distinct storyboards of the whole run.
const issues = new Map();
const notLoaded = new Set();
for (const r of ok)
  for (const [id, e] of Object.entries(r.ours.load_error_issues ?? {})) {
    if (notLoaded.has(id)) continue;
    notLoaded.add(id);
    for (const issue of e.issues) issues.set(issue, (issues.get(issue) ?? 0) + 1);
  }
if (notLoaded.size) {
  lines.push(
    `## Our load errors`,
    '',
    `${notLoaded.size} distinct storyboards did not load in vitest-adcp over the run. What kept them out (storyboards per issue; a storyboard usually has several):`,
    '',
    '| issue | storyboards |',
    '|---|--:|',
    ...[...issues.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `| ${k.replace(/\|/g, '\\|')} | ${n} |`),
    '',
  );
}

// Causes: over all agents, then per agent.
const total = new Map();
for (const r of ok)
  for (const c of r.comparison.causes ?? []) {
    const t = total.get(c.cause) ?? { count: 0, excluded: 0, agents: 0 };
    t.count += c.count;
    t.excluded += c.excluded;
    t.agents++;
    total.set(c.cause, t);
  }
lines.push(
  '## Differences by cause, all agents',
  '',
  '| cause | steps | of which counted apart | agents |',
  '|---|--:|--:|--:|',
  ...[...total.entries()]
    .sort((a, b) => b[1].count - a[1].count)
    .map(([cause, t]) => `| ${cause} | ${t.count} | ${t.excluded} | ${t.agents} |`),
  '',
  '## Differences by cause, per agent',
  '',
);
for (const r of ok) {
  lines.push(`### ${r.agent} (\`${r.example}\`)`, '');
  for (const c of r.comparison.causes ?? []) {
    const pairs = Object.entries(c.pairs)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${n}× \`${k}\``)
      .join(', ');
    const storyboards = Object.keys(c.storyboards).length;
    lines.push(
      `- **${c.cause}** — ${c.count} steps${c.excluded ? ` (${c.excluded} counted apart)` : ''}, ${storyboards} storyboard${storyboards === 1 ? '' : 's'}: ${pairs}; e.g. \`${c.examples[0]}\``,
    );
    if (c.load_error_issues)
      lines.push(
        `  - load errors: ${Object.entries(c.load_error_issues)
          .slice(0, 10)
          .map(([k, n]) => `${k} ×${n}`)
          .join(', ')}`,
      );
  }
  lines.push('');
}

const text = lines.join('\n');
if (values.write) {
  writeFileSync(values.write, text);
  console.log(`wrote ${values.write}`);
} else console.log(text);
