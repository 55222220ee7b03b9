/**
 * Planning the controller-seeding phase (src/plan/seeding.ts) from the
 * storyboard alone. test/compile/seeding.test.ts shows the phase in the
 * compiled module; grading-model.e2e.test.ts runs it against the fixture agent.
 */
import { describe, expect, it } from 'vitest';
import { planPhases } from '../../src/engine/role.js';
import { BUILTIN_ROLES } from '../../src/roles/index.js';
import { isSeedStep, planSeeding, SEEDING_PHASE_ID } from '../../src/plan/seeding.js';
import type { Step, Storyboard } from '../../src/model/storyboard.js';

const loc = { line: 1, column: 1 };
const own = [{ id: 'main', title: 'Main', steps: [], loc }];
const storyboard = (root: Record<string, unknown>) =>
  ({ id: 'sb', title: 'sb', phases: own, loc, ...root }) as unknown as Storyboard;
const ACCOUNT = { brand: { domain: 'test.example' }, operator: 'test.example', sandbox: true };

describe('planSeeding', () => {
  it('seeds every fixture in foreign-key order, lifting ids into params', () => {
    const plan = planSeeding(
      storyboard({
        prerequisites: { controller_seeding: true },
        fixtures: {
          media_buys: [{ media_buy_id: 'mb1', packages: [] }],
          plans: [{ plan_id: 'pl1' }],
          creatives: [{ creative_id: 'c1', format: 'f' }],
          pricing_options: [{ product_id: 'p1', pricing_option_id: 'po1', rate: 5 }],
          products: [{ product_id: 'p1', name: 'P' }],
          creative_formats: [{ format_id: 'f', fixture: { name: 'F', type: 'display' } }],
          audiences: [{ id: 'a' }],
        },
      }),
    );
    expect(plan.unknownKeys).toEqual(['audiences']);
    expect(plan.phase!.id).toBe(SEEDING_PHASE_ID);
    expect(plan.phase!.title).toBe('Controller seeding');
    const steps = plan.phase!.steps;
    expect(steps.map((s) => s.id)).toEqual([
      'seed_creative_format.f',
      'seed_product.p1',
      'seed_pricing_option.p1.po1',
      'seed_creative.c1',
      'seed_plan.pl1',
      'seed_media_buy.mb1',
    ]);
    expect(steps[2]).toEqual({
      id: 'seed_pricing_option.p1.po1',
      title: 'seed_pricing_option p1.po1',
      task: 'comply_test_controller',
      stateful: false,
      requires_tool: 'comply_test_controller',
      sample_request: {
        account: ACCOUNT,
        scenario: 'seed_pricing_option',
        params: { product_id: 'p1', pricing_option_id: 'po1', fixture: { rate: 5 } },
      },
      validations: [],
      seed: { scenario: 'seed_pricing_option', key: 'pricing_options' },
      loc,
    });
    expect(steps.map((s) => (s.sample_request as { params: unknown }).params)).toEqual([
      { format_id: 'f', fixture: { name: 'F', type: 'display' } },
      { product_id: 'p1', fixture: { name: 'P' } },
      { product_id: 'p1', pricing_option_id: 'po1', fixture: { rate: 5 } },
      { creative_id: 'c1', fixture: { format: 'f' } },
      { plan_id: 'pl1', fixture: {} },
      { media_buy_id: 'mb1', fixture: { packages: [] } },
    ]);
    expect(steps.every(isSeedStep)).toBe(true);
  });

  it('a 3.0 storyboard seeds no accounts or creative formats: its controller has no such scenario', () => {
    const fixtures = {
      accounts: [{ account_id: 'a1' }],
      creative_formats: [{ format_id: 'f' }],
      products: [{ product_id: 'p1' }],
    };
    const plan = planSeeding({
      ...storyboard({ prerequisites: { controller_seeding: true }, fixtures }),
      formatVersion: '3.0.6',
    });
    expect(plan.phase!.steps.map((s) => s.id)).toEqual(['seed_product.p1']);
    expect(plan.unknownKeys).toEqual(['accounts', 'creative_formats']);
    const newer = planSeeding({
      ...storyboard({ prerequisites: { controller_seeding: true }, fixtures }),
      formatVersion: '3.1.15',
    });
    expect(newer.phase!.steps.map((s) => s.id)).toEqual([
      'seed_account.a1',
      'seed_creative_format.f',
      'seed_product.p1',
    ]);
  });

  it('labels an entry without all its ids by position', () => {
    const steps = planSeeding(
      storyboard({
        prerequisites: { controller_seeding: true },
        fixtures: {
          products: [{ name: 'no id' }, { product_id: '' }, null, { product_id: 5 }],
          pricing_options: [{ product_id: 'p1' }],
        },
      }),
    ).phase!.steps;
    expect(steps.map((s) => s.id)).toEqual([
      'seed_product.#1',
      'seed_product.#2',
      'seed_product.#3',
      'seed_product.#4',
      'seed_pricing_option.#1',
    ]);
    expect((steps[2]!.sample_request as { params: unknown }).params).toEqual({ fixture: {} });
  });

  it('an entry that writes its fixture out (`{ id, fixture: { … } }`) means that object; beside other keys it is one of them', () => {
    const steps = planSeeding(
      storyboard({
        prerequisites: { controller_seeding: true },
        fixtures: {
          products: [
            { product_id: 'p1', fixture: { name: 'P' } },
            { product_id: 'p2', fixture: { name: 'Q' }, channel: 'display' },
            { product_id: 'p3', fixture: ['not', 'an', 'object'] },
            { product_id: 'p4', fixture: null },
          ],
        },
      }),
    ).phase!.steps;
    expect(steps.map((s) => (s.sample_request as { params: unknown }).params)).toEqual([
      { product_id: 'p1', fixture: { name: 'P' } },
      { product_id: 'p2', fixture: { fixture: { name: 'Q' }, channel: 'display' } },
      { product_id: 'p3', fixture: { fixture: ['not', 'an', 'object'] } },
      { product_id: 'p4', fixture: { fixture: null } },
    ]);
  });

  it("seeds under the account the storyboard's steps send (as a sandbox account), else a sandbox test.example", () => {
    const withSteps = (...requests: unknown[]) =>
      ({
        id: 'sb',
        title: 'sb',
        loc,
        prerequisites: { controller_seeding: true },
        fixtures: { products: [{ product_id: 'p1' }] },
        phases: [
          { id: 'a', title: 'A', loc, steps: [] },
          {
            id: 'b',
            title: 'B',
            loc,
            steps: requests.map((sample_request, i) => ({ id: `s${i}`, task: 'get_products', sample_request, loc })),
          },
        ],
      }) as unknown as Storyboard;
    const seededUnder = (...requests: unknown[]) =>
      (planSeeding(withSteps(...requests)).phase!.steps[0]!.sample_request as { account: unknown }).account;
    const kit = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle.example' };
    expect(seededUnder({ brief: 'x' }, { account: kit }, { account: { account_id: 'other' } })).toEqual({
      ...kit,
      sandbox: true,
    });
    // Not an account object, or one with a placeholder known only at run time: the next step's, else the fallback.
    for (const skipped of [
      'acct_1',
      ['a'],
      null,
      { account_id: '$context.account_id' },
      { brand: { domain: '{{runner.brand}}' } },
      { brand: '$test_kit.brand' },
      { account_id: '$generate:uuid' },
    ]) {
      expect(seededUnder({ account: skipped }, { account: kit }), JSON.stringify(skipped)).toEqual({
        ...kit,
        sandbox: true,
      });
      expect(seededUnder({ account: skipped }), JSON.stringify(skipped)).toEqual(ACCOUNT);
    }
    expect(seededUnder()).toEqual(ACCOUNT);
    expect(seededUnder(undefined, { account: { account_id: 'acc_9', sandbox: false } })).toEqual({
      account_id: 'acc_9',
      sandbox: true,
    });
    // Each seed step gets its own copy.
    const plan = planSeeding(withSteps({ account: kit }));
    const [first] = plan.phase!.steps;
    expect((first!.sample_request as { account: unknown }).account).not.toBe(kit);
  });

  it('plans nothing without controller_seeding: true, without fixtures, or with nothing seedable', () => {
    const fixtures = { products: [{ product_id: 'p1' }] };
    expect(planSeeding(storyboard({ fixtures }))).toEqual({ unknownKeys: [] });
    expect(planSeeding(storyboard({ prerequisites: { controller_seeding: 'yes' }, fixtures }))).toEqual({
      unknownKeys: [],
    });
    expect(planSeeding(storyboard({ prerequisites: { controller_seeding: true } }))).toEqual({ unknownKeys: [] });
    expect(planSeeding(storyboard({ prerequisites: { controller_seeding: true }, fixtures: 'none' }))).toEqual({
      unknownKeys: [],
    });
    expect(
      planSeeding(storyboard({ prerequisites: { controller_seeding: true }, fixtures: { products: 'p1', odd: [] } })),
    ).toEqual({ unknownKeys: ['odd'] });
  });

  it('the built-in roles plan the seeding phase first, only when there is one', () => {
    const seeded = storyboard({
      prerequisites: { controller_seeding: true },
      fixtures: { products: [{ product_id: 'p1' }] },
    });
    expect(planPhases(BUILTIN_ROLES, seeded, {}).map((p) => p.id)).toEqual([SEEDING_PHASE_ID, 'main']);
    expect(planPhases(BUILTIN_ROLES, storyboard({}), {})).toBe(own);
  });

  it('isSeedStep: only steps that carry what they seed', () => {
    const plain = { id: 's', title: 's', task: 't', validations: [], loc } as Step;
    expect(isSeedStep(plain)).toBe(false);
    expect(isSeedStep({ ...plain, seed: null } as unknown as Step)).toBe(false);
    expect(isSeedStep({ ...plain, seed: 'x' } as unknown as Step)).toBe(false);
  });
});
