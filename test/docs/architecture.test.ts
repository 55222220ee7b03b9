/**
 * docs/architecture.md is the map of src/: one row per folder (or top-level module) in its layer, and every path it
 * names exists. A folder added without a row, a row for a folder that is gone, a layer in the table that is not the
 * one the lint enforces (lint/layers.mjs), or a backticked path that no longer exists fails here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAYER_OF, LAYERS, unitOf } from '../../lint/layers.mjs';

const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

/** The units of src/ as they are on disk: each folder, and each top-level module (`cli.ts` and `cli/` are one). */
function unitsOnDisk(): string[] {
  const entries = readdirSync(join(root, 'src'), { withFileTypes: true });
  const units = entries
    .filter((e) => e.isDirectory() || (/\.(c|m)?ts$/.test(e.name) && !e.name.endsWith('.d.ts')))
    .map((e) => unitOf(e.name));
  return [...new Set(units)].sort();
}

/** The rows of the "Modules" table: the units named in the first cell, and the layer cell. */
function tableRows(): { units: string[]; layer: number; cell: string; line: string }[] {
  const section = doc.split(/^## /m).find((s) => s.startsWith('Modules'));
  if (!section) throw new Error('docs/architecture.md has no "## Modules" section');
  return section
    .split('\n')
    .filter((line) => /^\| \d+ \|/.test(line))
    .map((line) => {
      const [, layer, cell] = line.split('|').map((c) => c.trim());
      const units = [...new Set([...cell.matchAll(/`([^`]+)`/g)].map((m) => unitOf(m[1].replace(/\/$/, ''))))];
      return { units, layer: Number(layer), cell, line };
    });
}

/** Every file under the repository's own folders, as paths from the root (for bare names like `run.ts`). */
function repoFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) {
        if (!['node_modules', 'out', 'project'].includes(e.name)) walk(path);
        out.push(`${path}/`);
      } else out.push(path);
    }
  };
  for (const dir of ['src', 'test', 'bench', 'fixtures', 'scripts', 'lint', 'schema', 'examples', 'docs']) walk(dir);
  return out;
}

describe('docs/architecture.md', () => {
  it('has one row per folder of src/, and the lint knows every folder', () => {
    const onDisk = unitsOnDisk();
    const inTable = tableRows().flatMap((r) => r.units);
    expect(
      inTable.filter((u, i) => inTable.indexOf(u) !== i),
      'units with two rows',
    ).toEqual([]);
    expect([...inTable].sort()).toEqual(onDisk);
    expect([...LAYER_OF.keys()].sort()).toEqual(onDisk);
  });

  it('gives each row the layer the lint enforces', () => {
    for (const row of tableRows())
      for (const unit of row.units) expect(`${unit}: layer ${row.layer}`).toBe(`${unit}: layer ${LAYER_OF.get(unit)}`);
    expect(tableRows().map((r) => r.layer)).toEqual([...tableRows().map((r) => r.layer)].sort((a, b) => a - b));
    expect(Math.max(...tableRows().map((r) => r.layer))).toBe(LAYERS.length - 1);
  });

  it('names only paths that exist', () => {
    const files = repoFiles();
    const rows = tableRows();
    const missing: string[] = [];
    for (const line of doc.split('\n')) {
      const row = rows.find((r) => r.line === line);
      for (const [, token] of line.matchAll(/`([^`\s]+)`/g)) {
        const path = token.replace(/[),.:;]+$/, '');
        const looksLikeOurs =
          /^(src|test|bench|fixtures|scripts|lint|schema|examples|docs)\//.test(path) || /\.(c|m)?ts$/.test(path);
        if (!looksLikeOurs || /[*<>?{}$]/.test(path)) continue;
        if (existsSync(join(root, path))) continue;
        // A bare or partial name (`run.ts`, `rules/tasks.ts`): in the row's own folder, else anywhere in the repository.
        const inRow = row?.units.some((u) => existsSync(join(root, 'src', u, path)));
        if (inRow || files.some((f) => f.endsWith(`/${path}`))) continue;
        missing.push(path);
      }
    }
    expect(missing, `paths in docs/architecture.md that do not exist (from ${relative(root, root) || '.'})`).toEqual(
      [],
    );
  });
});

describe('the other docs', () => {
  it('name only src/ and test/ paths that exist (README.md, docs/*.md)', () => {
    const pages = ['README.md', ...readdirSync(join(root, 'docs')).map((f) => `docs/${f}`)].filter((p) =>
      p.endsWith('.md'),
    );
    const missing = pages.flatMap((page) =>
      [...readFileSync(join(root, page), 'utf8').matchAll(/\b((?:src|test)\/[\w./-]+\.(?:c|m)?ts)\b/g)]
        .map((m) => m[1])
        .filter((path) => !existsSync(join(root, path)))
        .map((path) => `${page}: ${path}`),
    );
    expect(missing).toEqual([]);
  });
});
