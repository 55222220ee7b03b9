/**
 * The order the run host starts storyboards in when several run at once (src/plan/launch-order.ts): the storyboards
 * with a window first (a seeding phase, a window alone at the agent), then the others; the most planned steps first in
 * each, then the larger file; a file that does not load before all. And the plugin's use of it (run-start.ts
 * `launchOrder`): each file planned as its run plans it, on the 3.0.6 corpus.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification } from 'vitest/node';
import { planOf } from '../../src/adapter/planned-steps.js';
import { resolveCorpus } from '../../src/corpus.js';
import { controller, planned } from '../helpers/planned.js';
import { inLaunchOrder, launchShape, type LaunchShape } from '../../src/plan/launch-order.js';
import { SEEDING_PHASE_ID } from '../../src/plan/seeding.js';
import { launchOrder } from '../../src/plugin/run-start.js';
import { loadStoryboardFile } from '../../src/storyboard/load.js';

describe('launchShape', () => {
  it('a seeding phase or a window alone is a window; counts every planned step', () => {
    const seeding = planned(
      [SEEDING_PHASE_ID, controller('seed', 'seed_product')],
      ['p', { id: 'a', task: 'get_products' }],
    );
    const arm = planned(
      ['p', controller('arm', 'force_create_media_buy_arm')],
      ['p', { id: 'buy', task: 'create_media_buy' }],
    );
    const plain = planned(
      ['p', { id: 'a', task: 'get_products' }],
      ['p', controller('status', 'force_media_buy_status')],
      ['p', { id: 'c', task: 'create_media_buy' }],
    );
    expect(launchShape(seeding, 10)).toEqual({ windows: true, steps: 2, bytes: 10 });
    expect(launchShape(arm, 20)).toEqual({ windows: true, steps: 2, bytes: 20 });
    expect(launchShape(plain, 30)).toEqual({ windows: false, steps: 3, bytes: 30 });
  });
});

describe('inLaunchOrder', () => {
  const shape = (windows: boolean, steps: number, bytes = 0): LaunchShape => ({ windows, steps, bytes });

  it('windows first, then the most steps, then the larger file; a file that does not load before all; stable', () => {
    const shapes: Record<string, LaunchShape | undefined> = {
      plainLong: shape(false, 30),
      plainShort: shape(false, 2),
      windowShort: shape(true, 3),
      windowLong: shape(true, 12),
      broken: undefined,
      plainLongSmaller: shape(false, 30, -1),
      plainShortTwin: shape(false, 2),
    };
    const order = inLaunchOrder(Object.keys(shapes), (name) => shapes[name]);
    expect(order).toEqual([
      'broken',
      'windowLong',
      'windowShort',
      'plainLong',
      'plainLongSmaller',
      'plainShort',
      'plainShortTwin',
    ]);
  });
});

describe("the plugin's launch order (run-start.ts launchOrder)", () => {
  it('on the 3.0.6 corpus: each file planned as its run plans it, windows first, then the most steps', async () => {
    const corpus = resolveCorpus(undefined);
    const files = yamlFiles(join(corpus.root, 'protocols'));
    expect(files.length).toBeGreaterThan(10);
    const loaded = new Map(
      files.map((file) => {
        const result = loadStoryboardFile(file, { corpusRoot: corpus.root });
        return [{ moduleId: file } as TestSpecification, result.ok ? { storyboard: result.storyboard } : undefined];
      }),
    );
    const broken = { moduleId: join(corpus.root, 'no-such-storyboard.yaml') } as TestSpecification;
    loaded.set(broken, undefined);
    const order = await launchOrder([...loaded.keys()], loaded, { corpusRoot: corpus.root });
    expect(order[0]).toBe(broken);
    const shapes = order.slice(1).map((spec) => {
      const plan = planOf(loaded.get(spec)!.storyboard, { corpusRoot: corpus.root });
      return { file: spec.moduleId, ...launchShape(plan, statSync(spec.moduleId).size) };
    });
    // The two kinds of window are both there: an arm alone (create_media_buy_async), a seeding phase (governance).
    const place = (suffix: string) => shapes.findIndex((s) => s.file.endsWith(suffix));
    const firstPlain = shapes.findIndex((s) => !s.windows);
    expect(place('media-buy/scenarios/create_media_buy_async.yaml')).toBeLessThan(firstPlain);
    expect(place('governance/index.yaml')).toBeLessThan(firstPlain);
    expect(firstPlain).toBeGreaterThan(0);
    expect(shapes.slice(firstPlain).every((s) => !s.windows)).toBe(true);
    for (let i = 1; i < shapes.length; i++)
      if (shapes[i]!.windows === shapes[i - 1]!.windows)
        expect(shapes[i]!.steps, shapes[i]!.file).toBeLessThanOrEqual(shapes[i - 1]!.steps);
  });
});

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.yaml'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}
