/**
 * Controller seeding (storyboard-schema.yaml > prerequisites.controller_seeding
 * and `fixtures:`): when a storyboard asks for it, the runner seeds every
 * fixture through `comply_test_controller` before the storyboard's own phases,
 * as an injected phase of its own.
 *
 * The phase is planned from the storyboard data alone (pure), so the compiler
 * can show each seed call as a test and the engine can run the same steps.
 * Order follows the spec's foreign-key DAG: accounts first (3.1), products, then
 * the entities that reference them (pricing options, plans), creatives, and
 * media buys last.
 *
 * Whose sandbox: the seeds belong to the identity the storyboard's steps use
 * (storyboard-schema.yaml > controller seeding; create_media_buy_async.yaml:
 * "keyed to the caller's … sandbox account"), so the seed calls carry the first
 * account a step of the storyboard writes — with `sandbox: true`, which every
 * comply_test_controller request must set — and only a storyboard that writes
 * none gets a fictional `test.example` one.
 */
import type { Phase, Step, Storyboard } from '../model/storyboard.js';
import { CONTROLLER_TASK } from '../model/answer-error.js';
import { formatHas } from '../storyboard/format.js';

export const SEEDING_PHASE_ID = '__controller_seeding__';

interface SeedKind {
  /** Key under `fixtures:`. */
  key: 'accounts' | 'creative_formats' | 'products' | 'pricing_options' | 'creatives' | 'plans' | 'media_buys';
  scenario: string;
  /** Id fields lifted out of the entry into `params` (the rest is `params.fixture`). */
  ids: string[];
  /** The format minor whose controller has the scenario (comply-test-controller-request.json); absent: 3.0. */
  since?: string;
}

/**
 * The FK order: account ──▶ product ──▶ pricing_option, plan, media_buy; creative, plan ──▶ media_buy. Creative formats
 * (3.1: seed_creative_format in compliance/comply-test-controller-request.json, a collection storyboards use though the
 * schema's list of keys leaves it out) come before the products and creatives that name them.
 */
const SEED_ORDER: SeedKind[] = [
  { key: 'accounts', scenario: 'seed_account', ids: ['account_id'], since: '3.1' },
  { key: 'creative_formats', scenario: 'seed_creative_format', ids: ['format_id'], since: '3.1' },
  { key: 'products', scenario: 'seed_product', ids: ['product_id'] },
  { key: 'pricing_options', scenario: 'seed_pricing_option', ids: ['product_id', 'pricing_option_id'] },
  { key: 'creatives', scenario: 'seed_creative', ids: ['creative_id'] },
  { key: 'plans', scenario: 'seed_plan', ids: ['plan_id'] },
  { key: 'media_buys', scenario: 'seed_media_buy', ids: ['media_buy_id'] },
];

export interface SeedingPlan {
  phase?: Phase;
  /** Fixture keys the spec maps to no seed scenario (reported, not seeded). */
  unknownKeys: string[];
}

/** A seed step carries what it seeds, so grading can tell an unsupported scenario from a failed seed. */
export interface SeedStep extends Step {
  seed: { scenario: string; key: string };
}

export function isSeedStep(step: Step): step is SeedStep {
  return typeof (step as SeedStep).seed === 'object' && (step as SeedStep).seed !== null;
}

export function planSeeding(storyboard: Storyboard): SeedingPlan {
  const fixtures = storyboard.fixtures;
  if (storyboard.prerequisites?.controller_seeding !== true || !fixtures || typeof fixtures !== 'object')
    return { unknownKeys: [] };
  // A 3.0 storyboard's controller has no seed_account / seed_creative_format: those keys seed nothing there.
  const kinds = SEED_ORDER.filter((k) => k.since === undefined || formatHas(storyboard.formatVersion, k.since));
  const known = new Set<string>(kinds.map((k) => k.key));
  const unknownKeys = Object.keys(fixtures).filter((k) => !known.has(k));
  const steps: SeedStep[] = [];
  const account = storyboardAccount(storyboard);
  for (const kind of kinds) {
    const entries = fixtures[kind.key];
    if (!Array.isArray(entries)) continue;
    entries.forEach((entry, index) => {
      const record = entry && typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
      const ids = kind.ids.map((id) => record[id]);
      const label = ids.every((v) => typeof v === 'string' && v.length > 0) ? ids.join('.') : `#${index + 1}`;
      const params: Record<string, unknown> = {};
      let fixture: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(record)) (kind.ids.includes(k) ? params : fixture)[k] = v;
      // An entry that writes its fixture out (`{ account_id, fixture: { … } }`, the 3.1 form) means that object.
      const written = fixture.fixture;
      if (Object.keys(fixture).length === 1 && written && typeof written === 'object' && !Array.isArray(written))
        fixture = written as Record<string, unknown>;
      steps.push({
        id: `${kind.scenario}.${label}`,
        title: `${kind.scenario} ${label}`,
        task: CONTROLLER_TASK,
        // Seeding failures are graded storyboard-wide by the engine, not through the stateful cascade.
        stateful: false,
        requires_tool: CONTROLLER_TASK,
        sample_request: { account: structuredClone(account), scenario: kind.scenario, params: { ...params, fixture } },
        validations: [],
        seed: { scenario: kind.scenario, key: kind.key },
        loc: storyboard.loc,
      });
    });
  }
  if (steps.length === 0) return { unknownKeys };
  return {
    phase: { id: SEEDING_PHASE_ID, title: 'Controller seeding', steps, loc: storyboard.loc },
    unknownKeys,
  };
}

/** The sandbox account of a storyboard that writes none: a controller scopes seeded state to it. */
const FALLBACK_ACCOUNT = Object.freeze({ brand: { domain: 'test.example' }, operator: 'test.example' });

/**
 * The account the storyboard's steps use: the first `account` object a step's sample_request writes without a
 * placeholder in it (a placeholder is only known at run time), as a sandbox account.
 */
function storyboardAccount(storyboard: Pick<Storyboard, 'phases'>): Record<string, unknown> {
  for (const phase of storyboard.phases)
    for (const step of phase.steps) {
      const account = (step.sample_request as { account?: unknown } | undefined)?.account;
      if (
        account &&
        typeof account === 'object' &&
        !Array.isArray(account) &&
        !/\$context\.|\{\{|\$test_kit\.|\$generate:/.test(JSON.stringify(account))
      )
        return { ...(account as Record<string, unknown>), sandbox: true };
    }
  return { ...FALLBACK_ACCOUNT, sandbox: true };
}
