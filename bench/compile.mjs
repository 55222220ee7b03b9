#!/usr/bin/env node
/**
 * How long the loader + compiler take over the whole @adcp/sdk corpus, per
 * file and in total, next to the reference runner's own YAML loader
 * (`parseStoryboard` from @adcp/sdk/testing) measured in the same process —
 * the ratio is what to compare across machines.
 *
 *   npm run bench:compile            (builds dist/ first)
 *   node bench/compile.mjs --rounds 20 --json
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '10' }, json: { type: 'boolean', default: false } },
});
const rounds = Number(values.rounds);
const root = new URL('..', import.meta.url).pathname;
const { compileStoryboard, loadStoryboard, findSdkRoot, installedCorpusVersions } = await import(
  join(root, 'dist', 'internal.js')
);

const sdk = findSdkRoot(root);
const version = installedCorpusVersions(sdk).at(-1);
const corpus = join(sdk, 'compliance', 'cache', version);

function yamlFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? yamlFiles(full) : /\.ya?ml$/.test(name) ? [full] : [];
  });
}
const files = ['universal', 'protocols', 'specialisms', 'domains']
  .flatMap((d) => yamlFiles(join(corpus, d)))
  .map((file) => ({ file, source: readFileSync(file, 'utf8') }))
  .filter(({ source }) => /^phases:/m.test(source));

let reference;
try {
  const testing = await import('@adcp/sdk/testing');
  reference = testing.parseStoryboard;
} catch {
  reference = undefined;
}

function timeEach(fn) {
  const perFile = new Map(files.map(({ file }) => [file, []]));
  const totals = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    for (const { file, source } of files) {
      const t = performance.now();
      fn(source, file);
      perFile.get(file).push(performance.now() - t);
    }
    totals.push(performance.now() - start);
  }
  return { perFile, totals };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Cold: the first pass includes compiling the storyboard JSON Schema.
const coldStart = performance.now();
let steps = 0;
let errors = 0;
for (const { file, source } of files) {
  const out = compileStoryboard(source, file, { runtime: 'vitest-adcp/runtime', corpusRoot: corpus });
  if (out.storyboard) steps += out.storyboard.phases.reduce((n, p) => n + p.steps.length, 0);
  else errors++;
}
const cold = performance.now() - coldStart;

const load = timeEach((source, file) => loadStoryboard(source, file, { corpusRoot: corpus }));
const compile = timeEach((source, file) =>
  compileStoryboard(source, file, { runtime: 'vitest-adcp/runtime', corpusRoot: corpus }),
);
const ref = reference ? timeEach((source) => reference(source)) : undefined;

const rows = files.map(({ file }) => ({
  file: relative(corpus, file),
  load_ms: median(load.perFile.get(file)),
  load_compile_ms: median(compile.perFile.get(file)),
  reference_parse_ms: ref ? median(ref.perFile.get(file)) : null,
}));
const summary = {
  corpus: `${relative(root, corpus)} (${version})`,
  files: files.length,
  steps,
  load_errors: errors,
  rounds,
  cold_first_pass_ms: cold,
  load_total_median_ms: median(load.totals),
  load_compile_total_median_ms: median(compile.totals),
  reference_parse_total_median_ms: ref ? median(ref.totals) : null,
  ratio_vs_reference: ref ? median(compile.totals) / median(ref.totals) : null,
  per_file_load_compile_ms: {
    median: median(rows.map((r) => r.load_compile_ms)),
    max: Math.max(...rows.map((r) => r.load_compile_ms)),
  },
};

if (values.json) {
  console.log(JSON.stringify({ summary, rows }, null, 2));
} else {
  const fmt = (n) => (n === null ? '—' : n.toFixed(2));
  console.log(`file${' '.repeat(62)}load ms  load+compile ms  reference parse ms`);
  for (const r of rows.sort((a, b) => b.load_compile_ms - a.load_compile_ms)) {
    console.log(
      `${r.file.padEnd(66)}${fmt(r.load_ms).padStart(7)}  ${fmt(r.load_compile_ms).padStart(15)}  ${fmt(r.reference_parse_ms).padStart(18)}`,
    );
  }
  console.log('');
  for (const [k, v] of Object.entries(summary))
    console.log(`${k.padEnd(34)} ${typeof v === 'number' ? fmt(v) : JSON.stringify(v)}`);
}
