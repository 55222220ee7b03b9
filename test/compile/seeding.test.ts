/**
 * The injected controller-seeding phase in the compiled test module: a
 * `describe` of its own before the storyboard's phases, one `it` per seed call
 * (the ids the engine grades), placed at the storyboard's first line.
 */
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { describe, expect, it } from 'vitest';
import { compileStoryboard } from '../../src/compile/compile.js';
import { phasedStoryboard } from '../helpers/inline-run.js';

const phases = [
  { id: 'main', title: 'Main', steps: [{ id: 'find', title: 'Find', task: 'get_products', validations: [] }] },
];
const fixtures = {
  pricing_options: [{ product_id: 'gm_prod', pricing_option_id: 'gm_po' }],
  products: [{ product_id: 'gm_prod' }],
};
const compile = (root: Record<string, unknown>) =>
  compileStoryboard(phasedStoryboard(phases, root), '/virtual/seeded.storyboard.yaml', {
    runtime: 'vitest-adcp/runtime',
  });

describe('compiling prerequisites.controller_seeding', () => {
  const { code, map } = compile({ prerequisites: { controller_seeding: true }, fixtures });

  it('emits the seeding phase as a describe with one it per seed, in FK order, before the first phase', () => {
    const seeding = code.indexOf('describe("Controller seeding (__controller_seeding__)", () => {');
    const product = code.indexOf(
      'it("seed_product gm_prod (seed_product.gm_prod)", { meta: suite.planned("__controller_seeding__", "seed_product.gm_prod"), timeout: suite.timeout() }, (ctx) => suite.step(ctx, "__controller_seeding__", "seed_product.gm_prod"));',
    );
    const option = code.indexOf(
      'it("seed_pricing_option gm_prod.gm_po (seed_pricing_option.gm_prod.gm_po)", { meta: suite.planned("__controller_seeding__", "seed_pricing_option.gm_prod.gm_po"), timeout: suite.timeout() }, (ctx) => suite.step(ctx, "__controller_seeding__", "seed_pricing_option.gm_prod.gm_po"));',
    );
    const firstPhase = code.indexOf('describe("Main (main)"');
    expect(
      [seeding, product, option, firstPhase].every((i) => i >= 0),
      code,
    ).toBe(true);
    expect(seeding).toBeLessThan(product);
    expect(product).toBeLessThan(option);
    expect(option).toBeLessThan(firstPhase);
  });

  it("maps the seeding describe to the storyboard's first line", () => {
    const index = code.indexOf('describe("Controller seeding');
    const before = code.slice(0, index).split('\n');
    expect(
      originalPositionFor(new TraceMap(map as any), { line: before.length, column: before.at(-1)!.length }),
    ).toMatchObject({ source: 'seeded.storyboard.yaml', line: 1 });
  });

  it('emits no seeding phase without controller_seeding: true', () => {
    expect(compile({ fixtures }).code).not.toContain('__controller_seeding__');
  });
});
