#!/usr/bin/env node
/**
 * Capability selection against the reference's: for every declaration below, on each corpus, the storyboard ids
 * vitest-adcp selects (storyboard/obligations.ts, read from the corpus's index.json) beside those of the SDK's
 * `resolveStoryboardsForCapabilities`, in order; and what each costs in a fresh process.
 *
 *   npm run build && node bench/selection.mjs [--sdk /work/ref/sdk13] [--corpus <compliance dir>]...
 *
 * Declarations, from the corpus's own index: nothing; every set of its protocols (2^n) with all their specialisms;
 * every specialism alone with its parent protocol; everything in reverse order. Without `--corpus`, every corpus the
 * SDK ships. `npm test` holds a part of these (each protocol with its specialisms, all of them both ways) on the
 * devDependency's 3.0.6 (test/plugin/capabilities.test.ts); this is for all of them, and for the SDKs and corpora a
 * clean clone does not have (13.0.0 and the 3.1 / 3.2 bundles of ../shared/spec/protocol, unpacked:
 * `tar xzf ../shared/spec/protocol/adcp-3.1.19.tgz -C /tmp`, then `--corpus /tmp/adcp-3.1.19/compliance`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { openSdk } from './compare/sdk.mjs';

const repo = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({ options: { sdk: { type: 'string' }, corpus: { type: 'string', multiple: true } } });
const sdk = openSdk(values.sdk, repo);
const cache = join(sdk.root, 'compliance', 'cache');
const corpora =
  values.corpus ??
  readdirSync(cache)
    .filter((name) => existsSync(join(cache, name, 'index.json')))
    .map((name) => join(cache, name));

const entry = createRequire(join(sdk.dir, 'noop.js')).resolve('@adcp/sdk/testing');
const { resolveStoryboardsForCapabilities } = await import(pathToFileURL(entry).href);
const { storyboardIdsForCapabilities } = await import(join(repo, 'dist', 'plugin', 'capabilities.js'));

function declarations(index) {
  const claim = (protocol) => protocol.replaceAll('-', '_');
  const protocols = index.protocols.map((p) => p.id);
  const specialismsOf = (ids) => index.specialisms.filter((s) => ids.includes(s.protocol)).map((s) => s.id);
  const subsets = protocols.reduce((all, p) => [...all, ...all.map((s) => [...s, p])], [[]]);
  return [
    {},
    ...subsets.map((ids) => ({ supported_protocols: ids.map(claim), specialisms: specialismsOf(ids) })),
    ...index.specialisms.map((s) => ({ supported_protocols: [claim(s.protocol)], specialisms: [s.id] })),
    { supported_protocols: protocols.map(claim).reverse(), specialisms: specialismsOf(protocols).reverse() },
  ];
}

/** Milliseconds and MB of RSS a fresh node process spends importing `code`'s module and running it once. */
function freshCost(code) {
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const r0 = process.memoryUsage().rss; const t0 = performance.now(); ${code}; console.log(JSON.stringify({ ms: performance.now() - t0, mb: (process.memoryUsage().rss - r0) / 1e6 }));`,
    ],
    { cwd: sdk.dir, encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').at(-1));
}

console.log(`@adcp/sdk ${sdk.version} (${sdk.root})\n`);
console.log(
  '| corpus | declarations | same ids, same order | differing | first run: reference (import + select) | ours |',
);
console.log('|---|--:|--:|--:|--:|--:|');
const differences = [];
for (const root of corpora) {
  const index = JSON.parse(readFileSync(join(root, 'index.json'), 'utf8'));
  let same = 0;
  const list = declarations(index);
  for (const capabilities of list) {
    const warnings = [];
    const ours = storyboardIdsForCapabilities(root, capabilities, { warn: (m) => warnings.push(m) });
    const theirs = [
      ...new Set(resolveStoryboardsForCapabilities(capabilities, { complianceDir: root }).storyboards.map((s) => s.id)),
    ];
    if (JSON.stringify(ours) === JSON.stringify(theirs) && warnings.length === 0) same++;
    else differences.push({ corpus: index.adcp_version, capabilities, ours, theirs, warnings });
  }
  const all = list.at(-1);
  const reference = freshCost(
    `const m = await import(${JSON.stringify(pathToFileURL(entry).href)}); m.resolveStoryboardsForCapabilities(${JSON.stringify(all)}, { complianceDir: ${JSON.stringify(root)} })`,
  );
  const ourCost = freshCost(
    `const m = await import(${JSON.stringify(pathToFileURL(join(repo, 'dist', 'plugin', 'capabilities.js')).href)}); m.storyboardIdsForCapabilities(${JSON.stringify(root)}, ${JSON.stringify(all)})`,
  );
  const cost = (c) => `${c.ms.toFixed(0)} ms, ${c.mb.toFixed(0)} MB`;
  console.log(
    `| ${index.adcp_version} | ${list.length} | ${same} | ${list.length - same} | ${cost(reference)} | ${cost(ourCost)} |`,
  );
}
for (const d of differences.slice(0, 10)) {
  console.log(`\n${d.corpus} ${JSON.stringify(d.capabilities)}`);
  console.log(`  only ours: ${d.ours.filter((id) => !d.theirs.includes(id)).join(', ') || '-'}`);
  console.log(`  only the reference's: ${d.theirs.filter((id) => !d.ours.includes(id)).join(', ') || '-'}`);
  if (d.warnings.length) console.log(`  warnings: ${d.warnings.join(' | ')}`);
}
process.exitCode = differences.length ? 1 : 0;
