/**
 * The run order of `sequential: true`: the reference runner's (its corpus order, its capability selection's order,
 * its comply() scenario expansion), and the sequencer step that puts storyboard files in that order among the slots
 * Vitest's own sequencer gave them. The end-to-end proof, at the agent, is test/e2e/sequential.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  listAllComplianceStoryboards,
  resolveBundleOrStoryboard,
  resolveStoryboardsForCapabilities,
} from '@adcp/sdk/testing';
import type { TestSpecification } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import { resolveCorpus } from '../../src/corpus.js';
import { storyboardIdsForCapabilities } from '../../src/plugin/capabilities.js';
import { listCorpus, referenceOrder, selectCorpus, selectCorpusInRunOrder } from '../../src/storyboard/select.js';
import { inRunOrder, listedRank } from '../../src/plugin/sequencer.js';
import { finishFirstOrder } from '../../src/plugin/workers.js';

const repo = join(import.meta.dirname, '..', '..');
const root = resolveCorpus(undefined, repo).root;
const idOf = new Map(listCorpus(root).map((e) => [e.file, e.id]));
const ids = (files: string[]) => files.map((f) => idOf.get(f));

/** What the reference's comply() runs, in its order: each storyboard's scenarios (not selected themselves) just before it. */
function complyOrder(storyboards: { id: string; requires_scenarios?: string[] }[]): string[] {
  const seen = new Set(storyboards.map((s) => s.id));
  const out: string[] = [];
  for (const sb of storyboards) {
    for (const id of sb.requires_scenarios ?? [])
      if (!seen.has(id)) {
        seen.add(id);
        out.push(id);
      }
    out.push(sb.id);
  }
  return out;
}

describe("the reference runner's order", () => {
  it("lists the corpus as the reference does (index.json's bundle order, index.yaml first in a bundle)", () => {
    const reference = listAllComplianceStoryboards({ complianceDir: root }).map((s) => s.id);
    const ours = [
      ...new Set(
        listCorpus(root)
          .sort(referenceOrder(root))
          .map((e) => e.id),
      ),
    ].filter((id) => reference.includes(id));
    expect(ours).toEqual(reference);
    // Not the path order: protocols/media-buy/creative-reception.yaml sorts before its index.yaml.
    expect(reference.indexOf('media_buy_seller')).toBeLessThan(reference.indexOf('creative_sales_agent'));
  });

  it.each([
    { supported_protocols: ['media_buy', 'creative'] },
    { supported_protocols: ['media_buy', 'signals'], specialisms: ['sales-guaranteed', 'signal-marketplace'] },
  ])("runs the capability selection for %j in comply()'s order", (capabilities) => {
    const selected = storyboardIdsForCapabilities(root, capabilities, { warn: () => {} });
    const expected = complyOrder(resolveStoryboardsForCapabilities(capabilities, { complianceDir: root }).storyboards);
    expect(ids(selectCorpusInRunOrder(root, { storyboards: selected }))).toEqual(expected);
  });

  it("runs named ids in the order given, then bundles expanded in the reference's order; a storyboard named twice keeps its first place", () => {
    const order = ids(
      selectCorpusInRunOrder(root, {
        storyboards: ['v3_envelope_integrity', 'capability_discovery', 'media_buy_seller/refine_products'],
        bundles: ['sales-guaranteed', 'capability-discovery'],
      }),
    );
    const bundle = complyOrder(resolveBundleOrStoryboard('sales-guaranteed', { complianceDir: root }));
    expect(order).toEqual([
      'v3_envelope_integrity',
      'capability_discovery',
      'media_buy_seller/refine_products',
      ...bundle.filter((id) => id !== 'media_buy_seller/refine_products'),
    ]);
  });

  it('selectCorpus is the same set, by path', () => {
    const selection = { bundles: ['media-buy', 'universal'], tracks: ['security'] };
    expect(selectCorpus(root, selection)).toEqual(selectCorpusInRunOrder(root, selection).sort());
  });
});

describe('inRunOrder (the sequencer step)', () => {
  const project = { name: 'vitest-adcp' };
  const other = { name: 'user' };
  const spec = (moduleId: string, p: object = project) => ({ moduleId, project: p }) as unknown as TestSpecification;

  it("reorders the storyboard project's files among their own slots, leaves every other file where it was, runs unlisted ones last by path", () => {
    const specs = [
      spec('/u/a.test.ts', other),
      spec('/c/z.yaml'),
      spec('/c/b.yaml'),
      spec('/u/b.test.ts', other),
      spec('/mine/y.storyboard.yaml'),
      spec('/c/a.yaml'),
      spec('/mine/x.storyboard.yaml'),
    ];
    const sorted = inRunOrder(specs, {
      owns: (s) => s.project === project,
      rank: listedRank(['/c/b.yaml', '/c/a.yaml', '/c/z.yaml']),
    });
    expect(sorted.map((s) => s.moduleId)).toEqual([
      '/u/a.test.ts',
      '/c/b.yaml',
      '/c/a.yaml',
      '/u/b.test.ts',
      '/c/z.yaml',
      '/mine/x.storyboard.yaml',
      '/mine/y.storyboard.yaml',
    ]);
  });

  /** Files of the given sizes in a temporary directory, for `check` (which gets their paths and the directory). */
  function withFiles(sizes: Record<string, number>, check: (paths: Record<string, string>, dir: string) => void): void {
    const dir = mkdtempSync(join(tmpdir(), 'finish-first-'));
    try {
      const paths: Record<string, string> = {};
      for (const [name, bytes] of Object.entries(sizes)) {
        paths[name] = join(dir, `${name}.yaml`);
        writeFileSync(paths[name], 'x'.repeat(bytes));
      }
      check(paths, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  // Not `sequential`, a first run: the run host runs every file ahead of its tests, the longest first; a worker given the
  // largest first waited for it, then showed all the others after the agent's last answer.
  it('puts the storyboard files smallest first when not sequential and no run has ended them (a first run), others where they were', () => {
    withFiles({ large: 300, small: 10, middle: 120 }, ({ large, small, middle }, dir) => {
      const specs = [
        spec(large!),
        spec('/u/a.test.ts', other),
        spec(small!),
        spec(middle!),
        spec(join(dir, 'gone.yaml')),
      ];
      const sorted = inRunOrder(
        specs,
        finishFirstOrder((s) => s.project === project),
      );
      expect(sorted.map((s) => s.moduleId)).toEqual([join(dir, 'gone.yaml'), '/u/a.test.ts', small, middle, large]);
    });
  });

  // Not `sequential`, after a run: a worker waits on each file's outcomes in turn, so the files go in the order the last
  // run ended them in (plugin/finish-times.ts), whatever their size; files no run has ended come after, smallest first.
  it('puts the files the last run ended in the order it ended them, then the others smallest first', () => {
    withFiles(
      { large: 300, small: 10, middle: 120, fresh: 200, newer: 20 },
      ({ large, small, middle, fresh, newer }) => {
        const ended = new Map([
          [large, 1_200],
          [small, 4_800],
          [middle, 2_500],
        ]);
        const specs = [
          spec(large!),
          spec('/u/a.test.ts', other),
          spec(small!),
          spec(middle!),
          spec(fresh!),
          spec(newer!),
        ];
        const sorted = inRunOrder(
          specs,
          finishFirstOrder(
            (s) => s.project === project,
            (f) => ended.get(f),
          ),
        );
        expect(sorted.map((s) => s.moduleId)).toEqual([large, '/u/a.test.ts', middle, small, newer, fresh]);
      },
    );
  });
});
