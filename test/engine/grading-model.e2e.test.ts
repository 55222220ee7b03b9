/**
 * The grading model (src/engine/gate.ts, grade.ts, polling.ts, src/plan/seeding.ts,
 * substitute.ts, idempotency.ts, invariants.ts, skip-if.ts) against the real
 * fixture agent: each rule holds on a conformant endpoint and fails — or skips
 * with the contract's reason and detail — on an endpoint that misbehaves in
 * exactly the way the rule exists to catch.
 *
 * Every run gets its own `session_<key>` sandbox, so seeded state never leaks
 * between tests, and "not sent" / "sent once" are read from the agent's call
 * log for that session — never from timing.
 */
import type { TestModule } from 'vitest/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent, type FixtureCall } from '../../fixtures/agent/server.mjs';
import type { StepOutcome, StepResult, ValidationResult } from '../../src/model/records.js';
import { buildContractReport } from '../../src/vitest/reporter.js';
import type { AdcpStepMeta } from '../../src/model/step-meta.js';
import {
  openInline,
  phasedStoryboard,
  runInline,
  type InlinePhase,
  type InlineRunOptions,
  type InlineStep,
} from '../helpers/inline-run.js';
import { countingProxy } from '../helpers/counting-proxy.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

/** The fixture agent's tools/list, in the sorted form a missing_tool detail cites it. */
const FIXTURE_TOOLS = [
  'comply_test_controller',
  'create_media_buy',
  'get_adcp_capabilities',
  'get_media_buys',
  'get_products',
  'list_creative_formats',
  'list_creatives',
  'tasks/get',
  'tasks_get',
  'update_media_buy',
];
const toolList = (...without: string[]) => `[${FIXTURE_TOOLS.filter((t) => !without.includes(t)).join(', ')}]`;
const missingToolDetail = (tool: string, ...without: string[]) =>
  `the agent does not advertise the tool "${tool}"; agent tools: ${toolList(...without)}`;
const prerequisiteDetail = (step: string, phase: string, how = 'failed') =>
  `prerequisite step "${step}" (phase ${phase}) ${how}, so the state this stateful step needs never materialised`;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Ran {
  steps: Record<string, StepOutcome>;
  /** step id → `passed` | `failed` | `skipped:<reason>`, in execution order. */
  verdicts: Record<string, string>;
  /** The agent's call log for this run's session (one tool, or all). */
  calls(tool?: string): FixtureCall[];
}

let sessions = 0;

/** A fresh sandbox (session_<key>) of the fixture agent exhibiting `behaviours`, and its share of the call log. */
function endpoint(behaviours: string[] = []): Pick<Ran, 'calls'> & { url: string } {
  const session = `gm${++sessions}`;
  return {
    url: agent.urlFor([...behaviours, `session_${session}`]),
    calls: (tool) => agent.calls.filter((c) => c.session === session && (tool === undefined || c.tool === tool)),
  };
}

/** Runs a storyboard (phases, or the steps of one phase `main`) on a fresh endpoint. */
async function run(
  body: InlinePhase[] | InlineStep[],
  options: InlineRunOptions & { behaviours?: string[]; root?: Record<string, unknown> } = {},
): Promise<Ran> {
  const { url, calls } = endpoint(options.behaviours);
  const phases = isPhases(body) ? body : [{ id: 'main', steps: body }];
  const steps = await runInline(phasedStoryboard(phases, options.root), url, options);
  const verdicts = Object.fromEntries(
    Object.entries(steps).map(([id, o]) => [
      id,
      o.status === 'skipped' ? `skipped:${o.result.skip!.reason}` : o.status,
    ]),
  );
  return { steps, verdicts, calls };
}

function isPhases(body: InlinePhase[] | InlineStep[]): body is InlinePhase[] {
  return body.every((item) => Array.isArray((item as InlinePhase).steps));
}

const result = (r: Ran, id: string): StepResult => {
  const outcome = r.steps[id];
  if (!outcome) throw new Error(`no step ${id}; steps: ${Object.keys(r.steps).join(', ')}`);
  return outcome.result;
};
const validation = (r: Ran, id: string, check: string): ValidationResult | undefined =>
  result(r, id).validations.find((v) => v.check === check);
const invariant = (r: Ran, id: string, name: string): ValidationResult | undefined =>
  result(r, id).validations.find((v) => v.check === 'invariant' && v.description.startsWith(`${name}:`));
/** The arguments the agent received for one tool, in order. */
const sent = (r: Ran, tool: string) => r.calls(tool).map((c) => c.arguments as Record<string, any>);

const stateful = { stateful: true };
/** Steps of one task: send `request`, check that `field` came back; `extra` overrides any key. */
const stepOf =
  (task: string, request: unknown, field: string) =>
  (id: string, extra: Partial<InlineStep> = {}): InlineStep => ({
    id,
    task,
    ...(request === undefined ? {} : { sample_request: request }),
    validations: [{ check: 'field_present', path: field }],
    ...extra,
  });
const products = stepOf('get_products', { buying_mode: 'brief', brief: 'display' }, 'products');
const capabilities = stepOf('get_adcp_capabilities', undefined, 'adcp');
const creatives = stepOf('list_creatives', {}, 'creatives');
const formats = stepOf('list_creative_formats', {}, 'formats');
/** A bookable create_media_buy request from the fixture catalogue, without an idempotency_key. */
const MEDIA_BUY = {
  account: { brand: { domain: 'fixture-brand.example' }, operator: 'pinnacle-agency.example' },
  brand: { domain: 'fixture-brand.example' },
  start_time: 'asap',
  end_time: '2027-06-30T23:59:59Z',
  packages: [{ product_id: 'prod_video_preroll', pricing_option_id: 'po_video_preroll_cpm', budget: 5000 }],
};
const createBuy = (id: string, extra: Partial<InlineStep> = {}, request: Record<string, unknown> = {}) =>
  stepOf('create_media_buy', { ...MEDIA_BUY, ...request }, 'media_buy_id')(id, extra);
/** A step that echoes a value back through `context`, so later tests can read what the engine substituted. */
const echo = (id: string, correlationId: string, extra: Partial<InlineStep> = {}) =>
  capabilities(id, { sample_request: { context: { correlation_id: correlationId } }, ...extra });

// ---------------------------------------------------------------------------
// 1. missing_tool
// ---------------------------------------------------------------------------

describe('missing_tool', () => {
  const body = [creatives('creatives'), products('discover')];

  it('a task absent from tools/list is skipped missing_tool, citing the tool and the agent tool list, and never sent', async () => {
    const r = await run(body, { behaviours: ['without@list_creatives'] });
    expect(r.verdicts).toEqual({ creatives: 'skipped:missing_tool', discover: 'passed' });
    expect(result(r, 'creatives').skip).toEqual({
      reason: 'missing_tool',
      detail: missingToolDetail('list_creatives', 'list_creatives'),
    });
    expect(result(r, 'creatives').request).toBeUndefined();
    expect(r.calls('list_creatives')).toEqual([]);
    expect(r.calls('get_products')).toHaveLength(1);
  });

  it('a listed tool runs', async () => {
    const r = await run(body);
    expect(r.verdicts).toEqual({ creatives: 'passed', discover: 'passed' });
    expect(r.calls('list_creatives')).toHaveLength(1);
  });

  it('storyboard required_tools, none advertised: every step is missing_tool and nothing is sent', async () => {
    const r = await run(body, { root: { required_tools: ['sync_accounts', 'list_accounts'] } });
    expect(r.verdicts).toEqual({ creatives: 'skipped:missing_tool', discover: 'skipped:missing_tool' });
    for (const id of ['creatives', 'discover']) {
      expect(result(r, id).skip!.detail).toBe(
        `the storyboard's required_tools [sync_accounts, list_accounts]: the agent advertises none of them; agent tools: ${toolList()}`,
      );
    }
    expect(r.calls()).toEqual([]);
  });

  it('storyboard required_tools: one advertised is enough, and the gate reads the agent, not the storyboard', async () => {
    const root = { required_tools: ['sync_accounts', 'get_products'] };
    expect((await run(body, { root })).verdicts).toEqual({ creatives: 'passed', discover: 'passed' });
    // Without get_products even the step of a tool the agent has (list_creatives) is missing_tool.
    const r = await run(body, { root, behaviours: ['without@get_products'] });
    expect(r.verdicts).toEqual({ creatives: 'skipped:missing_tool', discover: 'skipped:missing_tool' });
    expect(result(r, 'creatives').skip!.detail).toBe(
      `the storyboard's required_tools [sync_accounts, get_products]: the agent advertises none of them; agent tools: ${toolList('get_products')}`,
    );
    expect(r.calls()).toEqual([]);
  });
});

// ---------------------------------------------------------------------------
// 2. missing_test_controller
// ---------------------------------------------------------------------------

describe('missing_test_controller', () => {
  const body = [
    {
      id: 'scenarios',
      task: 'comply_test_controller',
      requires_tool: 'comply_test_controller',
      sample_request: { scenario: 'list_scenarios' },
      validations: [{ check: 'field_value', path: 'success', value: true }],
    },
    products('needs_controller', { requires_tool: 'comply_test_controller' }),
  ];

  it('requires_tool: comply_test_controller on an agent without it: missing_test_controller, nothing sent', async () => {
    const r = await run(body, { behaviours: ['without@comply_test_controller'] });
    expect(r.verdicts).toEqual({
      scenarios: 'skipped:missing_test_controller',
      needs_controller: 'skipped:missing_test_controller',
    });
    for (const id of ['scenarios', 'needs_controller']) {
      expect(result(r, id).skip!.detail).toBe(
        `this step needs comply_test_controller (deterministic testing), which the agent does not advertise; agent tools: ${toolList('comply_test_controller')}`,
      );
    }
    expect(r.calls()).toEqual([]);
  });

  it('with the controller both steps run', async () => {
    const r = await run(body);
    expect(r.verdicts).toEqual({ scenarios: 'passed', needs_controller: 'passed' });
    expect(r.calls().map((c) => c.tool)).toEqual(['comply_test_controller', 'get_products']);
  });
});

describe('a controller scenario the agent does not implement (UNKNOWN_SCENARIO)', () => {
  const force = (extra: Partial<InlineStep> = {}): InlineStep => ({
    id: 'force',
    task: 'comply_test_controller',
    sample_request: { scenario: 'force_account_status', params: { account_id: 'acct_x', status: 'suspended' } },
    validations: [{ check: 'field_value', path: 'success', value: true }],
    ...extra,
  });

  it("the agent's list_scenarios lacks it: the phase is skipped not_applicable before anything is sent", async () => {
    const r = await run([force(), products('after')]);
    expect(r.verdicts).toEqual({ force: 'skipped:not_applicable', after: 'skipped:not_applicable' });
    expect(result(r, 'force').skip!.detail).toBe(
      'phase "main" drives the comply_test_controller scenario "force_account_status", which the agent\'s list_scenarios does not list',
    );
    expect(sent(r, 'comply_test_controller').map((a) => a.scenario)).toEqual(['list_scenarios']);
    expect(r.calls('get_products')).toEqual([]);
  });

  it('no list_scenarios answer: that step meets UNKNOWN_SCENARIO and grades the rest not_applicable, sending nothing after it', async () => {
    const r = await run([force(), products('after')], { behaviours: ['no_list_scenarios'] });
    expect(r.verdicts).toEqual({ force: 'skipped:not_applicable', after: 'skipped:not_applicable' });
    expect(result(r, 'force').skip!.detail).toBe(
      'the agent\'s comply_test_controller does not implement scenario "force_account_status" (UNKNOWN_SCENARIO), so this storyboard does not apply to it',
    );
    expect(r.calls('get_products')).toEqual([]);
  });

  it('a step that expects the error is graded on it, and the storyboard goes on', async () => {
    const r = await run([
      force({ expect_error: true, validations: [{ check: 'error_code', value: 'UNKNOWN_SCENARIO' }] }),
      products('after'),
    ]);
    expect(r.verdicts).toEqual({ force: 'passed', after: 'passed' });
  });
});

// ---------------------------------------------------------------------------
// 3. prerequisite_failed cascade
// ---------------------------------------------------------------------------

describe('prerequisite_failed cascade', () => {
  const cascade: InlinePhase[] = [
    {
      id: 'setup',
      steps: [
        products('create', {
          ...stateful,
          sample_request: { buying_mode: 'brief', brief: 'display', context: { correlation_id: 'gm-create' } },
          validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'gm-create' }],
        }),
        creatives('same_phase_stateful', stateful),
        capabilities('same_phase_stateless'),
      ],
    },
    { id: 'use', steps: [formats('later_stateful', stateful), capabilities('later_stateless')] },
  ];

  it('on a conformant agent every step runs once and passes', async () => {
    const r = await run(cascade);
    expect(Object.values(r.verdicts)).toEqual(['passed', 'passed', 'passed', 'passed', 'passed']);
    expect(r.calls().map((c) => c.tool)).toEqual([
      'get_products',
      'list_creatives',
      'get_adcp_capabilities',
      'list_creative_formats',
      'get_adcp_capabilities',
    ]);
  });

  it.each(['wrong_value@get_products', 'error_response@get_products'])(
    'a failed stateful step (%s) skips every later stateful step, this phase and later ones, naming it; stateless steps still run',
    async (behaviour) => {
      const r = await run(cascade, { behaviours: [behaviour] });
      expect(r.verdicts).toEqual({
        create: 'failed',
        same_phase_stateful: 'skipped:prerequisite_failed',
        same_phase_stateless: 'passed',
        later_stateful: 'skipped:prerequisite_failed',
        later_stateless: 'passed',
      });
      for (const id of ['same_phase_stateful', 'later_stateful']) {
        expect(result(r, id).skip).toEqual({
          reason: 'prerequisite_failed',
          detail: prerequisiteDetail('create', 'setup'),
        });
        expect(result(r, id).request).toBeUndefined();
      }
      expect(r.calls('list_creatives')).toEqual([]);
      expect(r.calls('list_creative_formats')).toEqual([]);
      expect(r.calls('get_adcp_capabilities')).toHaveLength(2);
    },
  );

  const missingFirst = (others: InlineStep[]): InlinePhase[] => [
    { id: 'accounts', steps: [creatives('sync', stateful), ...others] },
    { id: 'use', steps: [formats('after', stateful)] },
  ];

  it('a stateful step skipped missing_tool in a phase with other stateful steps trips the cascade', async () => {
    const r = await run(missingFirst([products('list', stateful)]), { behaviours: ['without@list_creatives'] });
    expect(r.verdicts).toEqual({
      sync: 'skipped:missing_tool',
      list: 'skipped:prerequisite_failed',
      after: 'skipped:prerequisite_failed',
    });
    expect(result(r, 'sync').skip!.detail).toBe(missingToolDetail('list_creatives', 'list_creatives'));
    for (const id of ['list', 'after'])
      expect(result(r, id).skip!.detail).toBe(prerequisiteDetail('sync', 'accounts', 'was skipped (missing_tool)'));
    expect(r.calls()).toEqual([]);
  });

  it('the only stateful step of its phase skipped missing_tool does not cascade, and its detail says so', async () => {
    const r = await run(missingFirst([capabilities('caps')]), { behaviours: ['without@list_creatives'] });
    expect(r.verdicts).toEqual({ sync: 'skipped:missing_tool', caps: 'passed', after: 'passed' });
    expect(result(r, 'sync').skip!.detail).toBe(
      `${missingToolDetail('list_creatives', 'list_creatives')} (the only stateful step of phase accounts: nothing downstream is cascaded)`,
    );
    expect(r.calls('list_creative_formats')).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------
// 4. peer_substituted
// ---------------------------------------------------------------------------

describe('peer_substituted (provides_state_for)', () => {
  const substitution: InlinePhase[] = [
    {
      id: 'accounts',
      steps: [creatives('sync', stateful), products('list', { ...stateful, provides_state_for: 'sync' })],
    },
    { id: 'use', steps: [formats('after', stateful)] },
  ];

  it('the substitute passes: the missing target is re-graded peer_substituted in the contract shape and later stateful steps run', async () => {
    const r = await run(substitution, { behaviours: ['without@list_creatives'] });
    expect(r.verdicts).toEqual({ sync: 'skipped:peer_substituted', list: 'passed', after: 'passed' });
    // runner-output-contract.yaml > peer_substituted: "<this_step_id> state provided by <peer_phase_id>.<peer_step_id>"
    expect(result(r, 'sync').skip).toEqual({
      reason: 'peer_substituted',
      detail: 'sync state provided by accounts.list',
    });
    expect(r.calls('list_creatives')).toEqual([]);
    expect(r.calls('list_creative_formats')).toHaveLength(1);
  });

  it('the substitute fails: the target stays missing_tool and later stateful steps cascade', async () => {
    const r = await run(substitution, { behaviours: ['without@list_creatives', 'error_response@get_products'] });
    expect(r.verdicts).toEqual({ sync: 'skipped:missing_tool', list: 'failed', after: 'skipped:prerequisite_failed' });
    expect(result(r, 'sync').skip!.detail).toBe(
      `${missingToolDetail('list_creatives', 'list_creatives')} (declared substitute list did not pass)`,
    );
    expect(result(r, 'after').skip!.detail).toBe(prerequisiteDetail('list', 'accounts'));
    expect(r.calls('list_creative_formats')).toEqual([]);
  });

  it('the substitute is itself missing: the cascade proceeds as if provides_state_for were absent', async () => {
    const r = await run(substitution, { behaviours: ['without@list_creatives', 'without@get_products'] });
    expect(r.verdicts).toEqual({
      sync: 'skipped:missing_tool',
      list: 'skipped:missing_tool',
      after: 'skipped:prerequisite_failed',
    });
    expect(r.calls()).toEqual([]);
  });

  it('asked first, as the Vitest adapter asks, the target waits for its substitute before its verdict', async () => {
    const { url, calls } = endpoint(['without@list_creatives']);
    const storyboardRun = openInline(phasedStoryboard(substitution), url);
    try {
      const sync = await storyboardRun.settle('accounts', 'sync');
      expect(sync.status).toBe('skipped');
      expect(sync.result.skip).toEqual({ reason: 'peer_substituted', detail: 'sync state provided by accounts.list' });
      expect(calls().map((c) => c.tool)).toEqual(['get_products']);
      expect((await storyboardRun.settle('use', 'after')).status).toBe('passed');
    } finally {
      await storyboardRun.close();
    }
  });

  it('with both tools present nothing is substituted', async () => {
    const r = await run(substitution);
    expect(r.verdicts).toEqual({ sync: 'passed', list: 'passed', after: 'passed' });
  });
});

// ---------------------------------------------------------------------------
// 5. Controller seeding
// ---------------------------------------------------------------------------

/** Written against FK order on purpose: the runner must seed products first, media buys last. */
const SEEDED_FIXTURES = {
  media_buys: [
    {
      media_buy_id: 'gm_mb',
      status: 'active',
      packages: [{ product_id: 'gm_prod', pricing_option_id: 'gm_po', budget: 1000 }],
    },
  ],
  creatives: [{ creative_id: 'gm_cr', status: 'approved' }],
  pricing_options: [{ product_id: 'gm_prod', pricing_option_id: 'gm_po', pricing_model: 'cpm' }],
  products: [{ product_id: 'gm_prod', name: 'Grading-model seeded product', delivery_type: 'non_guaranteed' }],
};
const SEED_STEPS = [
  'seed_product.gm_prod',
  'seed_pricing_option.gm_prod.gm_po',
  'seed_creative.gm_cr',
  'seed_media_buy.gm_mb',
];

describe('controller seeding', () => {
  const seeded = [
    products('find', {
      sample_request: { buying_mode: 'wholesale', filters: { product_ids: ['gm_prod'] } },
      validations: [{ check: 'field_value', path: 'products[0].product_id', value: 'gm_prod' }],
    }),
    creatives('creative', {
      sample_request: { filters: { creative_ids: ['gm_cr'] } },
      validations: [{ check: 'field_value', path: 'creatives[0].creative_id', value: 'gm_cr' }],
    }),
  ];
  const seeding = (fixtures: Record<string, unknown> = SEEDED_FIXTURES) => ({
    prerequisites: { controller_seeding: true },
    fixtures,
  });

  it('runs an injected __controller_seeding__ phase first, seeding in FK order, and later steps see the seeded state', async () => {
    const r = await run(seeded, { root: seeding() });
    expect(Object.keys(r.steps)).toEqual([...SEED_STEPS, 'find', 'creative']);
    expect(Object.values(r.verdicts)).toEqual(['passed', 'passed', 'passed', 'passed', 'passed', 'passed']);
    for (const id of SEED_STEPS)
      expect(result(r, id)).toMatchObject({
        phase_id: '__controller_seeding__',
        task: 'comply_test_controller',
        passed: true,
      });
    const seeds = r.calls('comply_test_controller');
    expect(seeds.map((c) => c.arguments.scenario)).toEqual([
      'seed_product',
      'seed_pricing_option',
      'seed_creative',
      'seed_media_buy',
    ]);
    expect(seeds[1]!.arguments.params).toEqual({
      product_id: 'gm_prod',
      pricing_option_id: 'gm_po',
      fixture: { pricing_model: 'cpm' },
    });
    // Every seed precedes the storyboard's own first call.
    expect(Math.max(...seeds.map((c) => c.seq))).toBeLessThan(r.calls('get_products')[0]!.seq);
  });

  it('without controller_seeding nothing is seeded and the same steps fail', async () => {
    const r = await run(seeded, { root: { fixtures: SEEDED_FIXTURES } });
    expect(r.verdicts).toEqual({ find: 'failed', creative: 'failed' });
    expect(r.calls('comply_test_controller')).toEqual([]);
  });

  it('no_seed: every step is skipped not_applicable, fixture_seed_unsupported, and the storyboard sends nothing of its own', async () => {
    const r = await run(seeded, { root: seeding(), behaviours: ['no_seed'] });
    expect(Object.values(r.verdicts)).toEqual(Array(6).fill('skipped:not_applicable'));
    for (const outcome of Object.values(r.steps))
      expect(outcome.result.skip!.detail).toMatch(/^fixture_seed_unsupported/);
    expect(r.calls('get_products')).toEqual([]);
    expect(r.calls('list_creatives')).toEqual([]);
  });

  it('without@comply_test_controller: missing_test_controller everywhere, nothing sent', async () => {
    const r = await run(seeded, { root: seeding(), behaviours: ['without@comply_test_controller'] });
    expect(Object.values(r.verdicts)).toEqual(Array(6).fill('skipped:missing_test_controller'));
    expect(r.calls()).toEqual([]);
  });

  it('a failing seed fails its step and every later step skips prerequisite_failed, citing the seed step', async () => {
    const fixtures = {
      products: [{ product_id: 'gm_prod' }],
      pricing_options: [{ product_id: 'gm_unknown', pricing_option_id: 'gm_po' }],
    };
    const r = await run(seeded, { root: seeding(fixtures) });
    expect(r.verdicts).toEqual({
      'seed_product.gm_prod': 'passed',
      'seed_pricing_option.gm_unknown.gm_po': 'failed',
      find: 'skipped:prerequisite_failed',
      creative: 'skipped:prerequisite_failed',
    });
    for (const id of ['find', 'creative']) {
      expect(result(r, id).skip!.detail).toMatch(
        /^controller seeding failed at seed_pricing_option\.gm_unknown\.gm_po: .*NOT_FOUND.*gm_unknown is not seeded/,
      );
    }
    expect(r.calls('get_products')).toEqual([]);
    expect(r.calls('list_creatives')).toEqual([]);
  });

  /** The seeding phase's controller calls as they reached the agent (spans in proxy events), and the run's outcomes. */
  async function seededThroughProxy(fixtures: Record<string, unknown>, seedsTogether: boolean) {
    // Each seed answered after 200 ms: seeds sent together are in flight together however loaded the machine is.
    const { url } = endpoint(['slow_ms_200@comply_test_controller']);
    const proxy = await countingProxy(url);
    try {
      const steps = await runInline(
        phasedStoryboard([{ id: 'main', steps: [seeded[0]!] }], seeding(fixtures)),
        proxy.url,
        {
          seedsTogether,
        },
      );
      return { steps, spans: proxy.toolSpans().filter((s) => s.tool === 'comply_test_controller') };
    } finally {
      await proxy.close();
    }
  }
  const overlap = (a: { start: number; end: number }, b: { start: number; end: number }) =>
    a.start < b.end && b.start < a.end;
  const verdictsOf = (steps: Record<string, StepOutcome>) =>
    Object.fromEntries(Object.entries(steps).map(([id, o]) => [id, o.status]));

  it('seedsTogether: the seeds of one kind reach the agent together, each kind once the one before has answered; the verdicts are those of one seed after another', async () => {
    const fixtures = (tag: string) => ({
      products: ['1', '2', '3'].map((n) => ({ product_id: `${tag}_p${n}`, delivery_type: 'non_guaranteed' })),
      pricing_options: ['1', '2'].map((n) => ({
        product_id: `${tag}_p${n}`,
        pricing_option_id: `${tag}_po${n}`,
        pricing_model: 'cpm',
      })),
    });
    const together = await seededThroughProxy(fixtures('gt'), true);
    const products = together.spans.filter((s) => s.scenario === 'seed_product');
    const pricing = together.spans.filter((s) => s.scenario === 'seed_pricing_option');
    expect([products.length, pricing.length]).toEqual([3, 2]);
    for (const [i, a] of products.entries()) for (const b of products.slice(i + 1)) expect(overlap(a, b)).toBe(true);
    expect(overlap(pricing[0]!, pricing[1]!)).toBe(true);
    // Foreign-key order: no pricing option before every product has been answered.
    expect(Math.min(...pricing.map((s) => s.start))).toBeGreaterThan(Math.max(...products.map((s) => s.end)));
    const oneByOne = await seededThroughProxy(fixtures('go'), false);
    for (const [i, a] of oneByOne.spans.entries())
      for (const b of oneByOne.spans.slice(i + 1)) expect(overlap(a, b)).toBe(false);
    const named = (steps: Record<string, StepOutcome>, tag: string) =>
      JSON.stringify(verdictsOf(steps)).replaceAll(tag, 'x');
    expect(named(together.steps, 'gt')).toBe(named(oneByOne.steps, 'go'));
    expect(Object.entries(verdictsOf(together.steps)).filter(([id]) => id.startsWith('seed_'))).toEqual(
      together.spans.map((span, k) => [Object.keys(together.steps)[k], 'passed']),
    );
  });

  it('seedsTogether: of two failing seeds of a kind, the first in run order is the one the later steps cite, whichever answered first', async () => {
    const fixtures = {
      products: [{ product_id: 'gh_prod', delivery_type: 'non_guaranteed' }],
      pricing_options: ['gh_unknown_a', 'gh_unknown_b'].map((product_id) => ({
        product_id,
        pricing_option_id: 'gh_po',
        pricing_model: 'cpm',
      })),
    };
    const { steps, spans } = await seededThroughProxy(fixtures, true);
    expect(overlap(spans[1]!, spans[2]!)).toBe(true);
    expect(verdictsOf(steps)).toEqual({
      'seed_product.gh_prod': 'passed',
      'seed_pricing_option.gh_unknown_a.gh_po': 'failed',
      'seed_pricing_option.gh_unknown_b.gh_po': 'failed',
      find: 'skipped',
    });
    expect(steps.find!.result.skip!.detail).toMatch(
      /^controller seeding failed at seed_pricing_option\.gh_unknown_a\.gh_po: /,
    );
  });
});

// ---------------------------------------------------------------------------
// 6. $generate
// ---------------------------------------------------------------------------

describe('$generate', () => {
  it('one alias is one value on the wire across steps; alias-less uses differ; nothing literal is sent', async () => {
    const replayKey = '$generate:uuid_v4#replay';
    const r = await run([
      createBuy(
        'book',
        { context_outputs: [{ name: 'media_buy_id', path: 'media_buy_id' }] },
        { idempotency_key: replayKey, context: { correlation_id: '$generate:uuid_v4' } },
      ),
      createBuy(
        'replay',
        {
          validations: [
            { check: 'field_value', path: 'media_buy_id', value: '$context.media_buy_id' },
            { check: 'field_value', path: 'replayed', value: true },
          ],
        },
        {
          idempotency_key: replayKey,
          context: { correlation_id: '$generate:uuid_v4', note: `replay of ${replayKey}` },
        },
      ),
    ]);
    expect(r.verdicts).toEqual({ book: 'passed', replay: 'passed' });
    const [book, replay] = sent(r, 'create_media_buy');
    expect(book!.idempotency_key).toMatch(UUID_V4);
    expect(replay!.idempotency_key).toBe(book!.idempotency_key);
    expect(replay!.context.note).toBe(`replay of ${book!.idempotency_key}`);
    const fresh = [book!.context.correlation_id, replay!.context.correlation_id];
    for (const value of fresh) expect(value).toMatch(UUID_V4);
    expect(new Set([...fresh, book!.idempotency_key]).size).toBe(3);
    expect(JSON.stringify(r.calls())).not.toContain('$generate');
  });
});

// ---------------------------------------------------------------------------
// 7. idempotency_key
// ---------------------------------------------------------------------------

describe('idempotency_key on mutating tasks', () => {
  it('added as a fresh UUID when absent, left out under omit_idempotency_key, kept when written; reads get none', async () => {
    const r = await run([
      createBuy('auto'),
      createBuy('auto_again'),
      createBuy('omitted', {
        omit_idempotency_key: true,
        expect_error: true,
        validations: [{ check: 'error_code', value: 'INVALID_REQUEST' }],
      }),
      createBuy('written', {}, { idempotency_key: 'gm-written-key-000001' }),
      products('read'),
    ]);
    expect(r.verdicts).toEqual({
      auto: 'passed',
      auto_again: 'passed',
      omitted: 'passed',
      written: 'passed',
      read: 'passed',
    });
    const [auto, autoAgain, omitted, written] = sent(r, 'create_media_buy');
    expect(auto!.idempotency_key).toMatch(UUID_V4);
    expect(autoAgain!.idempotency_key).toMatch(UUID_V4);
    expect(autoAgain!.idempotency_key).not.toBe(auto!.idempotency_key);
    expect(omitted).not.toHaveProperty('idempotency_key');
    expect(written!.idempotency_key).toBe('gm-written-key-000001');
    expect(sent(r, 'get_products')[0]).not.toHaveProperty('idempotency_key');
  });
});

// ---------------------------------------------------------------------------
// 8. $context in validation value / allowed_values
// ---------------------------------------------------------------------------

describe('$context in a validation value or allowed_values', () => {
  const refine = (id: string, validations: unknown[]): InlineStep => ({
    id,
    task: 'get_products',
    sample_request: {
      buying_mode: 'wholesale',
      filters: { product_ids: ['$context.first'] },
      context: { correlation_id: '$context.corr' },
    },
    validations,
  });
  const body = [
    products('discover', {
      sample_request: { buying_mode: 'wholesale' },
      context_outputs: [
        { name: 'first', path: 'products[0].product_id' },
        { name: 'second', path: 'products[1].product_id' },
      ],
    }),
    refine('matches', [
      { check: 'field_value', path: 'products[0].product_id', value: '$context.first' },
      { check: 'field_value', path: 'products[0].product_id', allowed_values: ['$context.second', '$context.first'] },
      { check: 'field_value', path: 'context.correlation_id', value: '$context.corr' },
    ]),
    refine('mismatch', [{ check: 'field_value', path: 'products[0].product_id', value: '$context.second' }]),
    refine('unresolved', [{ check: 'field_value', path: 'products[0].product_id', value: '$context.never_captured' }]),
  ];
  const root = { context: { corr: 'gm-corr-8' } };
  // never_captured is refused at load time (unknown_context_reference); strictKeys: false makes that a warning, so the
  // run-time path (a value that did not resolve) is still what these tests grade.
  const lenient = { strictKeys: false } as const;

  it('compares against the captured value: passes when equal, fails naming the captured value when not', async () => {
    const r = await run(body, { ...lenient, root });
    expect(r.verdicts).toEqual({ discover: 'passed', matches: 'passed', mismatch: 'failed', unresolved: 'failed' });
    const discovered = (result(r, 'discover').response!.payload as any).structuredContent.products.map(
      (p: any) => p.product_id,
    );
    expect(sent(r, 'get_products')[1]!.filters.product_ids).toEqual([discovered[0]]);
    expect(result(r, 'mismatch').validations[0]).toMatchObject({
      passed: false,
      json_pointer: '/products/0/product_id',
      expected: discovered[1],
      actual: discovered[0],
    });
  });

  it('an agent that alters the echoed context fails the $context comparison', async () => {
    const r = await run(body, { ...lenient, root, behaviours: ['wrong_value@get_products'] });
    const [byId, byAllowed, byContext] = result(r, 'matches').validations;
    expect([byId!.passed, byAllowed!.passed]).toEqual([true, true]);
    expect(byContext).toMatchObject({ passed: false, expected: 'gm-corr-8', actual: 'gm-corr-8-mutated' });
  });

  it('an unresolved $context in a value fails the validation with a clear error', async () => {
    const r = await run(body, { ...lenient, root });
    expect(result(r, 'unresolved').validations[0]).toMatchObject({
      check: 'field_value',
      passed: false,
      expected: ['$context.never_captured'],
      error: expect.stringMatching(/^\$context\.never_captured in the expected value did not resolve/),
    });
  });
});

// ---------------------------------------------------------------------------
// 9. task_completion
// ---------------------------------------------------------------------------

describe('task_completion captures', () => {
  const asyncBody = () => [
    createBuy('book', {
      validations: [],
      context_outputs: [{ name: 'media_buy_id', path: 'task_completion.media_buy_id' }],
    }),
    echo('use', '$context.media_buy_id'),
  ];
  const asyncAgent = (...behaviours: string[]) => ['async_submitted@create_media_buy', ...behaviours];
  const fast = { pollIntervalMs: 1 };

  it('polls tasks/get to completion (exactly async_polls_2 polls) and captures from the completed task', async () => {
    const r = await run(asyncBody(), { ...fast, behaviours: asyncAgent('async_polls_2') });
    expect(r.verdicts).toEqual({ book: 'passed', use: 'passed' });
    const taskId = (result(r, 'book').response!.payload as any).structuredContent.task_id;
    expect(sent(r, 'tasks/get')).toEqual([
      { task_id: taskId, include_result: true },
      { task_id: taskId, include_result: true },
    ]);
    expect(sent(r, 'get_adcp_capabilities')[0]!.context.correlation_id).toMatch(/^mb_[0-9a-f]{12}$/);
  });

  it('polls get_task_status (AdCP 3.1) when the agent lists it, and nothing through tasks/get', async () => {
    const r = await run(asyncBody(), { ...fast, behaviours: asyncAgent('async_polls_2', 'get_task_status') });
    expect(r.verdicts).toEqual({ book: 'passed', use: 'passed' });
    expect(r.calls('get_task_status')).toHaveLength(2);
    expect(r.calls('tasks/get')).toEqual([]);
  });

  it('an envelope graded on its completion names the tool it polled', async () => {
    const r = await run([createBuy('book')], { ...fast, behaviours: asyncAgent('get_task_status') });
    expect(result(r, 'book').extraction.note).toMatch(/after 1 get_task_status poll\(s\)$/);
  });

  it('polls tasks_get when that is the only polling tool the agent lists', async () => {
    const r = await run(asyncBody(), { ...fast, behaviours: asyncAgent('async_polls_2', 'without@tasks/get') });
    expect(r.verdicts).toEqual({ book: 'passed', use: 'passed' });
    expect(r.calls('tasks_get')).toHaveLength(2);
  });

  it("an answer that is only the async envelope is graded on the task's completion, polled to its end", async () => {
    const r = await run([createBuy('book')], { ...fast, behaviours: asyncAgent('async_polls_3') });
    expect(r.verdicts).toEqual({ book: 'passed' });
    expect(r.calls('tasks/get')).toHaveLength(3);
    expect(result(r, 'book').extraction.note).toMatch(
      /^the agent answered submitted \(task [^)]+\); graded on the task's completion after 3 tasks\/get poll\(s\)$/,
    );
  });

  // Issue 31 item 10: the tasks/get answer was taken whatever task it named.
  it("a tasks/get answer for another task id is not this task's result: the step is graded on the envelope, with why", async () => {
    const r = await run([createBuy('book')], { ...fast, behaviours: asyncAgent('async_other_task') });
    const taskId = (result(r, 'book').response!.payload as any).structuredContent.task_id;
    expect(r.calls('tasks/get')).toHaveLength(1);
    expect(result(r, 'book').extraction.note ?? '').not.toMatch(/graded on the task's completion/);
    expect(result(r, 'book').warnings).toContain(
      `the agent answered submitted (task ${taskId}); the task could not be polled (tasks/get for task ${JSON.stringify(taskId)} answered for task ${JSON.stringify(`${taskId}-other`)}: an answer for another task is not this task's), so the step is graded on that interim answer`,
    );
  });

  it('a completion without the context echo keeps the one the immediate envelope carried', async () => {
    const withContext = {
      sample_request: { ...MEDIA_BUY, context: { correlation_id: 'gm-async-echo' } },
      validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'gm-async-echo' }],
    };
    const r = await run([createBuy('book', withContext)], { ...fast, behaviours: asyncAgent('async_bare_result') });
    expect(r.verdicts).toEqual({ book: 'passed' });
    expect(invariant(r, 'book', 'context.echo')).toMatchObject({ passed: true });
    expect(r.calls('tasks/get')).toHaveLength(1);
  });

  it('a step that validates the envelope itself (status) is graded on the immediate answer, without polling', async () => {
    const r = await run(
      [createBuy('book', { validations: [{ check: 'field_value', path: 'status', value: 'submitted' }] })],
      { ...fast, behaviours: asyncAgent() },
    );
    expect(r.verdicts).toEqual({ book: 'passed' });
    expect(r.calls('tasks/get')).toEqual([]);
  });

  it('a status check on the result (not an async status) still follows the task to its end', async () => {
    const resultStatus = { check: 'field_present', path: 'status' };
    const r = await run(
      [
        createBuy('book', {
          validations: [
            resultStatus,
            { check: 'field_value', path: 'status', allowed_values: ['active', 'pending_creatives', 'pending_start'] },
          ],
        }),
      ],
      {
        ...fast,
        behaviours: asyncAgent(),
      },
    );
    expect(r.calls('tasks/get')).toHaveLength(1);
    expect(r.verdicts).toEqual({ book: 'passed' });
  });

  it('an envelope whose task never completes is graded on the interim answer, with a warning', async () => {
    const r = await run([createBuy('book')], {
      timeoutMs: 500,
      pollIntervalMs: 20,
      behaviours: asyncAgent('async_never'),
    });
    expect(r.verdicts).toEqual({ book: 'failed' });
    expect(result(r, 'book').warnings?.[0]).toMatch(
      /^the agent answered submitted \(task [^)]+\); the task was still working when the step timeout ran out/,
    );
  });

  it('a synchronous answer is captured directly, without polling', async () => {
    const r = await run(asyncBody(), fast);
    expect(r.verdicts).toEqual({ book: 'passed', use: 'passed' });
    expect(r.calls('tasks/get')).toEqual([]);
  });

  it('async_never: bounded polling ends in capture_poll_timeout, and the consumer is not sent', async () => {
    const r = await run(asyncBody(), { timeoutMs: 1000, pollIntervalMs: 20, behaviours: asyncAgent('async_never') });
    expect(r.verdicts).toEqual({ book: 'failed', use: 'failed' });
    const timeout = validation(r, 'book', 'capture_poll_timeout')!;
    expect(timeout).toMatchObject({
      passed: false,
      json_pointer: null,
      expected: 'task_completion.media_buy_id',
      actual: 'working',
    });
    // Polled again and again, then gave up. (The last poll may be cut short by the deadline before it reaches the agent.)
    const polls = Number(/after (\d+) poll\(s\)/.exec(timeout.error!)?.[1]);
    const logged = r.calls('tasks/get').length;
    expect(logged).toBeGreaterThan(1);
    expect(polls).toBeGreaterThanOrEqual(logged);
    expect(validation(r, 'use', 'unresolved_substitution')).toMatchObject({ expected: ['$context.media_buy_id'] });
    expect(r.calls('get_adcp_capabilities')).toEqual([]);
  });

  it('a tasks/get that answers with an error ends the polling at once: capture_task_failed, the consumer not sent', async () => {
    const r = await run(asyncBody(), {
      ...fast,
      behaviours: ['async_working@create_media_buy', 'async_never', 'error_response@tasks/get'],
    });
    expect(r.verdicts).toEqual({ book: 'failed', use: 'failed' });
    expect(validation(r, 'book', 'capture_task_failed')).toMatchObject({
      passed: false,
      actual: null,
      error: expect.stringMatching(
        /^context_outputs "media_buy_id": polling the task failed: tasks\/get answered with an error: /,
      ),
    });
    expect(r.calls('tasks/get')).toHaveLength(1);
    expect(r.calls('get_adcp_capabilities')).toEqual([]);
  });

  it('an envelope whose task cannot be polled (garbage tasks/get answer) is graded on the interim answer after one poll, with a warning', async () => {
    const r = await run([createBuy('book')], {
      ...fast,
      behaviours: ['async_working@create_media_buy', 'garbage@tasks/get'],
    });
    expect(r.verdicts).toEqual({ book: 'failed' });
    expect(r.calls('tasks/get')).toHaveLength(1);
    expect(result(r, 'book').warnings?.[0]).toMatch(
      /^the agent answered working \(task [^)]+\); the task could not be polled \(.+\), so the step is graded on that interim answer$/,
    );
  });

  it('a working envelope is followed like a submitted one; the note names the status it answered', async () => {
    const r = await run([createBuy('book')], {
      ...fast,
      behaviours: ['async_working@create_media_buy', 'async_polls_2'],
    });
    expect(r.verdicts).toEqual({ book: 'passed' });
    expect(r.calls('tasks/get')).toHaveLength(2);
    expect(result(r, 'book').extraction).toEqual({
      path: 'structured_content',
      note: expect.stringMatching(
        /^the agent answered working \(task [^)]+\); graded on the task's completion after 2 tasks\/get poll\(s\)$/,
      ),
    });
  });

  it('an envelope-only answer whose task fails is graded on the failure, as an error answer', async () => {
    const r = await run([createBuy('book')], { ...fast, behaviours: asyncAgent('async_failed') });
    expect(r.verdicts).toEqual({ book: 'failed' });
    expect(result(r, 'book').extraction).toEqual({
      path: 'error',
      note: expect.stringMatching(
        /^the agent answered submitted \(task [^)]+\); graded on the task's end \(failed\) after 1 tasks\/get poll\(s\)$/,
      ),
    });
  });

  it('steps that validate the envelope (task_id, envelope_field_present, a2a_submitted_artifact, an async status among allowed_values) are not polled', async () => {
    for (const validations of [
      [{ check: 'field_present', path: 'task_id' }],
      [{ check: 'envelope_field_present', path: 'message' }],
      [{ check: 'a2a_submitted_artifact' }],
      [{ check: 'field_value', path: 'status', allowed_values: ['active', 'submitted'] }],
      [
        { check: 'field_present', path: 'message' },
        { check: 'field_present', path: 'task_id' },
      ],
    ]) {
      const r = await run([createBuy('book', { validations })], { ...fast, behaviours: asyncAgent() });
      expect(r.calls('tasks/get'), JSON.stringify(validations)).toEqual([]);
    }
  });

  it('a tasks/get cut short by the step deadline is a timeout, not a polling error', async () => {
    const r = await run([createBuy('book')], {
      timeoutMs: 500,
      pollIntervalMs: 20,
      behaviours: [...asyncAgent(), 'hang@tasks/get'],
    });
    expect(r.verdicts).toEqual({ book: 'failed' });
    expect(result(r, 'book').warnings?.[0]).toMatch(
      /^the agent answered submitted \(task [^)]+\); the task was still submitted when the step timeout ran out, so the step is graded on that interim answer$/,
    );
  });

  it('a failed task without a result is graded on its status answer', async () => {
    const r = await run(
      [createBuy('book', { validations: [{ check: 'field_value', path: 'status', value: 'failed' }] })],
      { ...fast, behaviours: asyncAgent('async_failed') },
    );
    expect(validation(r, 'book', 'field_value')).toMatchObject({ passed: true });
  });

  it('the completion keeps the context echo of the envelope', async () => {
    const r = await run([createBuy('book', {}, { context: { correlation_id: 'gm-async-ctx' } })], {
      ...fast,
      behaviours: asyncAgent(),
    });
    expect(r.calls('tasks/get')).toHaveLength(1);
    expect(invariant(r, 'book', 'context.echo')).toMatchObject({ passed: true });
    expect(r.verdicts).toEqual({ book: 'passed' });
  });

  it('async_failed: the task ends failed, graded capture_task_failed', async () => {
    const r = await run(asyncBody(), { ...fast, behaviours: asyncAgent('async_failed') });
    expect(r.verdicts).toEqual({ book: 'failed', use: 'failed' });
    expect(validation(r, 'book', 'capture_task_failed')).toMatchObject({
      passed: false,
      expected: 'task_completion.media_buy_id',
      actual: 'failed',
    });
    expect(r.calls('tasks/get')).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------
// 10. Runner-only tasks and runner substitutions
// ---------------------------------------------------------------------------

describe('runner-only tasks and {{runner.*}} substitutions', () => {
  it('expect_webhook is skipped (unsatisfied_contract; not_applicable under requires_contract), citing the contract, and never sent', async () => {
    const r = await run([
      { id: 'webhook', task: 'expect_webhook', validations: [] },
      { id: 'declared', task: 'expect_webhook', requires_contract: 'webhook_receiver_runner', validations: [] },
    ]);
    expect(r.verdicts).toEqual({ webhook: 'skipped:unsatisfied_contract', declared: 'skipped:not_applicable' });
    expect(result(r, 'webhook').skip!.detail).toBe(
      `expect_webhook needs the runner's webhook receiver (contract "webhook_receiver_runner"), and this run hosts none (plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver)`,
    );
    expect(result(r, 'declared').skip!.detail).toBe(
      `expect_webhook requires the test-kit contract "webhook_receiver_runner" (a webhook receiver), which is not in scope for this run`,
    );
    expect(r.calls()).toEqual([]);
  });

  it('contract 2.6.0: a storyboard naming {{runner.webhook_url:…}} requires a webhook receiver; without one it is skipped as a whole (requirement_unmet) and nothing is sent', async () => {
    const webhook = { push_notification_config: { url: '{{runner.webhook_url:book}}' } };
    const r = await run([
      capabilities('first'),
      createBuy('book', {}, webhook),
      { id: 'hook', task: 'expect_webhook', triggered_by: 'book', validations: [] },
    ]);
    // The storyboard-level gate comes before the webhook role's own not_applicable for its steps.
    expect(r.verdicts).toEqual({
      first: 'skipped:requirement_unmet',
      book: 'skipped:requirement_unmet',
      hook: 'skipped:requirement_unmet',
    });
    expect(result(r, 'book').skip!.detail).toMatch(
      /^webhook_receiver: the storyboard needs the runner's webhook receiver/,
    );
    expect(r.calls()).toEqual([]);
  });

  it('contract 1.1.0: a {{runner.webhook_url:<step>}} with no receiver grades the whole storyboard not_applicable (unresolved_substitution) before any step runs', async () => {
    // storyboard-schema.yaml (3.0.6 and 3.1) > Unresolved substitution behavior, preflight 1. 3.0.6 idempotency's shape:
    // its webhook-carrying booking, and steps beside it (create_media_buy_missing_key) that must not run without it.
    const webhook = { push_notification_config: { url: '{{runner.webhook_url:book}}' } };
    const r = await run(
      [
        { id: 'discovery', steps: [capabilities('first')] },
        { id: 'missing_key', steps: [createBuy('missing_key', { expect_error: true, omit_idempotency_key: true })] },
        {
          id: 'replay',
          steps: [
            createBuy('book', {}, webhook),
            createBuy('replay', {}, webhook),
            { id: 'hook', task: 'expect_webhook', triggered_by: 'book', validations: [] },
          ],
        },
      ],
      { contract: '1.1.0' },
    );
    const detail = `unresolved_substitution: {{runner.webhook_url:book}} (step "book", step "replay") needs the runner's webhook receiver, and this run hosts none (plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver) — so no step of this storyboard runs`;
    expect(r.verdicts).toEqual({
      first: 'skipped:not_applicable',
      missing_key: 'skipped:not_applicable',
      book: 'skipped:not_applicable',
      replay: 'skipped:not_applicable',
      hook: 'skipped:not_applicable',
    });
    for (const id of Object.keys(r.verdicts)) expect(result(r, id).skip!.detail).toBe(detail);
    expect(r.calls()).toEqual([]);
  });

  it('a {{runner.*}} variable no runner provides grades the storyboard not_applicable under either contract, naming it', async () => {
    const steps = [capabilities('first'), createBuy('book', {}, { po_number: 'po-{{runner.purchase_order}}' })];
    for (const contract of ['1.1.0', '2.6.0']) {
      const r = await run(steps, { contract });
      expect(r.verdicts).toEqual({ first: 'skipped:not_applicable', book: 'skipped:not_applicable' });
      expect(result(r, 'first').skip!.detail).toBe(
        'unresolved_substitution: {{runner.purchase_order}} (step "book") names no runner variable vitest-adcp provides ({{runner.webhook_base}}, {{runner.webhook_url:<step_id>}}) — so no step of this storyboard runs',
      );
      expect(r.calls()).toEqual([]);
    }
  });

  it('a $context placeholder that did not resolve still fails its own step: only {{runner.*}} is known before the run', async () => {
    // strictKeys: false — never_captured is a load error otherwise (unknown_context_reference); the run-time path is graded.
    const r = await run(
      [capabilities('first'), createBuy('with_capture', {}, { po_number: '$context.never_captured' })],
      {
        strictKeys: false,
        contract: '1.1.0',
      },
    );
    expect(r.verdicts).toEqual({ first: 'passed', with_capture: 'failed' });
    expect(validation(r, 'with_capture', 'unresolved_substitution')).toMatchObject({
      passed: false,
      expected: ['$context.never_captured'],
    });
    expect(r.calls('create_media_buy')).toEqual([]);
  });
});

// ---------------------------------------------------------------------------
// 11. skip_if
// ---------------------------------------------------------------------------

describe('skip_if', () => {
  const gated = (skipIf: string): InlinePhase[] => [
    { id: 'gated', skip_if: skipIf, steps: [creatives('probe', { auth: { type: 'api_key', from_test_kit: true } })] },
    { id: 'always', steps: [capabilities('after')] },
  ];

  it('"!test_kit.auth.api_key" runs the phase when the kit has the key and skips it (not_applicable, nothing sent) when not', async () => {
    const ran = await run(gated('!test_kit.auth.api_key'), { testKit: { auth: { api_key: 'demo-kit-v1' } } });
    expect(ran.verdicts).toEqual({ probe: 'passed', after: 'passed' });
    expect(ran.calls('list_creatives')).toHaveLength(1);
    const skipped = await run(gated('!test_kit.auth.api_key'), { testKit: { auth: {} } });
    expect(skipped.verdicts).toEqual({ probe: 'skipped:not_applicable', after: 'passed' });
    expect(result(skipped, 'probe').skip!.detail).toBe(
      'phase "gated" skipped: skip_if "!test_kit.auth.api_key" is true for this test kit',
    );
    expect(skipped.calls('list_creatives')).toEqual([]);
  });

  it('an expression it cannot evaluate: the phase runs and its steps carry a warning naming the expression', async () => {
    const expression = "agent.webhook_auth_mode == 'hmac_legacy'";
    const r = await run(gated(expression), { testKit: { auth: { api_key: 'demo-kit-v1' } } });
    expect(r.verdicts).toEqual({ probe: 'passed', after: 'passed' });
    expect(r.calls('list_creatives')).toHaveLength(1);
    expect(result(r, 'probe').warnings).toEqual([expect.stringContaining(`skip_if "${expression}"`)]);
    expect(result(r, 'after').warnings).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------
// 12. Unknown check kinds
// ---------------------------------------------------------------------------

describe('unknown check kinds', () => {
  it('pass with a note on the coverage gap, counted not applicable (contract 2.6.0 > forward compatibility); never fail the step', async () => {
    const r = await run(
      [
        capabilities('unknown', {
          validations: [
            { check: 'field_present', path: 'adcp' },
            { check: 'holographic_projection', path: 'adcp' },
          ],
        }),
      ],
      { strictKeys: false },
    );
    expect(r.verdicts).toEqual({ unknown: 'passed' });
    expect(result(r, 'unknown').validations.slice(0, 2)).toEqual([
      expect.objectContaining({ check: 'field_present', passed: true }),
      {
        check: 'holographic_projection',
        passed: true,
        description: 'holographic_projection',
        note: "runner does not implement check type 'holographic_projection' — graded as not_applicable to preserve forward compatibility",
        source: expect.any(Object),
      },
    ]);
  });
});

// ---------------------------------------------------------------------------
// 13. Invariants
// ---------------------------------------------------------------------------

describe('run-wide invariants', () => {
  const context = { correlation_id: 'gm-invariants' };
  const plain = [echo('caps', context.correlation_id, { validations: [] })];

  it('context.echo and context.no_secret_echo pass on a conformant answer, with no context check written', async () => {
    const r = await run(plain);
    expect(r.verdicts).toEqual({ caps: 'passed' });
    expect(invariant(r, 'caps', 'context.echo')).toMatchObject({ passed: true, json_pointer: '/context' });
    expect(invariant(r, 'caps', 'context.no_secret_echo')).toMatchObject({ passed: true });
  });

  it('context.echo fails when the agent drops the context', async () => {
    const r = await run(plain, { behaviours: ['drop_context'] });
    expect(r.verdicts).toEqual({ caps: 'failed' });
    expect(invariant(r, 'caps', 'context.echo')).toMatchObject({
      passed: false,
      json_pointer: '/context',
      expected: context,
      actual: null,
      error: 'the answer does not echo the request context',
    });
  });

  it('context.echo fails when the agent alters the context', async () => {
    const r = await run(plain, { behaviours: ['wrong_value'] });
    expect(r.verdicts).toEqual({ caps: 'failed' });
    expect(invariant(r, 'caps', 'context.echo')).toMatchObject({
      passed: false,
      expected: context,
      actual: { correlation_id: 'gm-invariants-mutated' },
      error: 'the echoed context differs from the one sent',
    });
  });

  it('an error answer that echoes the context passes context.echo; one that drops it fails', async () => {
    const rejected = [
      products('rejected', {
        expect_error: true,
        sample_request: { buying_mode: 'brief', brief: 'display', context },
        validations: [{ check: 'error_code', value: 'INVALID_REQUEST' }],
      }),
    ];
    const echoed = await run(rejected, { behaviours: ['error_response@get_products'] });
    expect(echoed.verdicts).toEqual({ rejected: 'passed' });
    expect(invariant(echoed, 'rejected', 'context.echo')).toMatchObject({ passed: true });
    const dropped = await run(rejected, { behaviours: ['error_response@get_products', 'drop_context'] });
    expect(dropped.verdicts).toEqual({ rejected: 'failed' });
    expect(invariant(dropped, 'rejected', 'context.echo')).toMatchObject({ passed: false });
  });

  it('context.no_secret_echo fails when the answer carries the credential the run sent', async () => {
    // wrong_value rewrites the echoed context, so the token comes back outside a verbatim echo.
    const r = await run([echo('caps', 'demo-e2e-token-v1', { validations: [] })], { behaviours: ['wrong_value'] });
    expect(r.verdicts).toEqual({ caps: 'failed' });
    expect(invariant(r, 'caps', 'context.no_secret_echo')).toMatchObject({
      passed: false,
      json_pointer: '/context/correlation_id',
      actual: '[redacted]',
    });
  });

  it('a verbatim echo of a context the storyboard itself filled is not a leak', async () => {
    const r = await run([echo('caps', 'demo-e2e-token-v1', { validations: [] })]);
    expect(invariant(r, 'caps', 'context.no_secret_echo')).toMatchObject({ passed: true });
  });

  it('invariants it does not implement are a warning on the first step only', async () => {
    const r = await run([echo('first', 'gm-a'), echo('second', 'gm-b')], {
      root: { invariants: ['context.echo', 'status.monotonic', 'governance.approval_binding'] },
    });
    expect(r.verdicts).toEqual({ first: 'passed', second: 'passed' });
    expect(result(r, 'first').warnings).toEqual([
      'invariants status.monotonic, governance.approval_binding are not checked by this version of vitest-adcp',
    ]);
    expect(result(r, 'second').warnings).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------
// 14. Optional phases
// ---------------------------------------------------------------------------

/** The contract report of one storyboard run, built from the engine's records the way the reporter reads them from Vitest. */
function reportOf(r: Ran) {
  const storyboard = { id: 'inline', title: 'Inline', track: 'core', file: '/virtual/inline.storyboard.yaml' };
  const tests = Object.values(r.steps).map((o) => {
    const meta: AdcpStepMeta = {
      id: `inline/${o.result.phase_id}/${o.result.step_id}`,
      status: o.status,
      result: o.result,
      storyboard,
    };
    return { name: o.result.step_id, meta: () => ({ adcp: meta }), result: () => ({ state: o.status, errors: [] }) };
  });
  const module = { moduleId: storyboard.file, children: { allTests: () => tests } } as unknown as TestModule;
  return buildContractReport([module], '/virtual');
}

describe('optional phases', () => {
  const body = (optional: boolean): InlinePhase[] => [
    { id: 'core', steps: [capabilities('required')] },
    {
      id: 'extra',
      optional,
      steps: [
        echo('optional_step', 'gm-optional', {
          validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'gm-optional' }],
        }),
      ],
    },
  ];

  it('a failing step of an optional phase fails, marked optional; the storyboard still passes in the contract report', async () => {
    const r = await run(body(true), { behaviours: ['wrong_value'] });
    expect(r.verdicts).toEqual({ required: 'passed', optional_step: 'failed' });
    expect(result(r, 'optional_step').optional).toBe(true);
    expect(result(r, 'required').optional).toBeUndefined();
    const report = reportOf(r);
    expect(report.storyboards[0]).toMatchObject({ storyboard_id: 'inline', status: 'passed' });
    expect(report.summary).toMatchObject({ total_steps: 2, steps_passed: 1, steps_failed: 1, steps_skipped: 0 });
    expect(report.summary.tracks).toMatchObject([
      { track: 'core', status: 'passed', storyboards: [{ storyboard_id: 'inline', status: 'passed' }] },
    ]);
  });

  it('the same failure outside an optional phase fails the storyboard', async () => {
    const r = await run(body(false), { behaviours: ['wrong_value'] });
    expect(r.verdicts).toEqual({ required: 'passed', optional_step: 'failed' });
    expect(result(r, 'optional_step').optional).toBeUndefined();
    expect(reportOf(r).storyboards[0]!.status).toBe('failed');
  });
});

// ---------------------------------------------------------------------------
// 15. requires_scenarios
// ---------------------------------------------------------------------------

describe('requires_scenarios', () => {
  const body = [capabilities('caps'), products('discover')];
  const root = { requires_scenarios: ['gm_known_scenario', 'gm_missing_scenario', 'gm_other_missing'] };

  it('references absent from the source tree: every step is not_applicable, one sentence per id, nothing sent', async () => {
    const r = await run(body, { root, knownStoryboardIds: ['gm_known_scenario', 'inline'] });
    expect(r.verdicts).toEqual({ caps: 'skipped:not_applicable', discover: 'skipped:not_applicable' });
    for (const id of ['caps', 'discover']) {
      expect(result(r, id).skip!.detail).toBe(
        [
          'requires_scenarios reference "gm_missing_scenario" did not resolve against the source tree',
          'requires_scenarios reference "gm_other_missing" did not resolve against the source tree',
        ].join('\n'),
      );
    }
    expect(r.calls()).toEqual([]);
  });

  it('every reference resolves: the storyboard runs', async () => {
    const r = await run(body, { root, knownStoryboardIds: root.requires_scenarios });
    expect(r.verdicts).toEqual({ caps: 'passed', discover: 'passed' });
  });
});

// ---------------------------------------------------------------------------
// 17. Checks over the wire (the pure ones: test/checks/grading-checks.test.ts)
// ---------------------------------------------------------------------------

describe('HTTP-level checks and a2a_submitted_artifact over MCP', () => {
  const unauthenticated = [
    creatives('unauth', {
      auth: 'none',
      expect_error: true,
      validations: [
        { check: 'http_status', value: 401 },
        { check: 'http_status_in', allowed_values: [401, 403] },
        { check: 'on_401_require_header', value: 'www-authenticate' },
      ],
    }),
  ];
  const verdictsOf = (r: Ran) =>
    result(r, 'unauth')
      .validations.filter((v) => v.check !== 'invariant')
      .map((v) => [v.check, v.passed]);

  it('auth: none against a protected tool: 401 with WWW-Authenticate passes all three', async () => {
    const r = await run(unauthenticated);
    expect(r.verdicts).toEqual({ unauth: 'passed' });
    expect(verdictsOf(r)).toEqual([
      ['http_status', true],
      ['http_status_in', true],
      ['on_401_require_header', true],
    ]);
    expect(r.calls('list_creatives')).toMatchObject([{ auth: 'none', rejected: true }]);
  });

  it('no_www_authenticate fails on_401_require_header only', async () => {
    const r = await run(unauthenticated, { behaviours: ['no_www_authenticate'] });
    expect(r.verdicts).toEqual({ unauth: 'failed' });
    expect(verdictsOf(r)).toEqual([
      ['http_status', true],
      ['http_status_in', true],
      ['on_401_require_header', false],
    ]);
    expect(validation(r, 'unauth', 'on_401_require_header')).toMatchObject({
      json_pointer: null,
      expected: 'www-authenticate',
      actual: null,
    });
  });

  it('missing_auth_check fails http_status and http_status_in with the status observed', async () => {
    const r = await run(unauthenticated, { behaviours: ['missing_auth_check'] });
    expect(r.verdicts).toEqual({ unauth: 'failed' });
    expect(validation(r, 'unauth', 'http_status_in')).toMatchObject({
      passed: false,
      expected: [401, 403],
      actual: 200,
    });
    expect(validation(r, 'unauth', 'http_status')).toMatchObject({ passed: false, expected: 401, actual: 200 });
    expect(validation(r, 'unauth', 'on_401_require_header')).toMatchObject({ passed: true });
  });

  it('a2a_submitted_artifact over MCP passes with not_applicable set', async () => {
    const r = await run([capabilities('caps', { validations: [{ check: 'a2a_submitted_artifact' }] })]);
    expect(r.verdicts).toEqual({ caps: 'passed' });
    expect(result(r, 'caps').validations[0]).toMatchObject({
      check: 'a2a_submitted_artifact',
      passed: true,
      not_applicable: 'the agent was reached over mcp, not A2A',
    });
  });

  it('refs_resolve with scope $agent_url against the agent the run reached', async () => {
    const r = await run([
      products('discover', { context_outputs: [{ name: 'products', path: 'products' }] }),
      formats('formats', {
        validations: [
          {
            check: 'refs_resolve',
            source: { from: 'context', path: 'products[*].format_ids[*]' },
            target: { from: 'current_step', path: 'formats[*].format_id' },
            match_keys: ['agent_url', 'id'],
            scope: { key: 'agent_url', equals: '$agent_url' },
            on_out_of_scope: 'fail',
          },
        ],
      }),
    ]);
    expect(r.verdicts).toEqual({ discover: 'passed', formats: 'passed' });
    expect(result(r, 'formats').validations[0]).toMatchObject({
      check: 'refs_resolve',
      passed: true,
      json_pointer: '/products',
    });
  });
});

// ---------------------------------------------------------------------------
// The runner's own HTTP probes (protected_resource_metadata, oauth_auth_server_metadata)
// ---------------------------------------------------------------------------

describe('OAuth discovery probes', () => {
  const body: InlineStep[] = [
    {
      id: 'prm',
      task: 'protected_resource_metadata',
      validations: [
        { check: 'http_status', value: 200 },
        { check: 'field_present', path: 'authorization_servers' },
        { check: 'resource_equals_agent_url' },
      ],
    },
    {
      id: 'as',
      task: 'oauth_auth_server_metadata',
      validations: [
        { check: 'http_status', value: 200 },
        { check: 'field_present', path: 'issuer' },
      ],
    },
    products('after_probes'),
  ];

  it('fetch RFC 9728 metadata at the path-inserted well-known URL and the RFC 8414 metadata of its first server; never call the agent as tools', async () => {
    const r = await run(body);
    expect(r.verdicts).toEqual({ prm: 'passed', as: 'passed', after_probes: 'passed' });
    const origin = new URL(agent.url).origin;
    expect(result(r, 'prm').request).toMatchObject({
      transport: 'http',
      operation: 'protected_resource_metadata',
      url: expect.stringMatching(new RegExp(`^${origin}/\\.well-known/oauth-protected-resource/x/`)),
    });
    expect(result(r, 'as').request!.url).toBe(`${origin}/.well-known/oauth-authorization-server`);
    expect(r.calls().map((c) => c.tool)).toEqual(['get_products']);
  });

  it('no_oauth (404 metadata): the probe and the rest of its phase are not_applicable, oauth_not_advertised', async () => {
    const r = await run(
      [
        { id: 'oauth', steps: body.slice(0, 2) },
        { id: 'later', steps: [body[2]!] },
      ],
      { behaviours: ['no_oauth'] },
    );
    expect(r.verdicts).toEqual({ prm: 'skipped:not_applicable', as: 'skipped:not_applicable', after_probes: 'passed' });
    expect(result(r, 'as').skip!.detail).toMatch(
      /^oauth_not_advertised: the agent serves no protected-resource metadata \(HTTP 404 at http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/x\//,
    );
  });

  it('the authorization-server probe without a protected-resource probe before it fails without fetching anything', async () => {
    const r = await run([body[1]!, body[0]!]);
    expect(r.verdicts).toEqual({ as: 'failed', prm: 'passed' });
    expect(result(r, 'as').error).toBe(
      'no authorization server to probe: the protected_resource_metadata step did not run, failed, or named no authorization_servers',
    );
    expect(result(r, 'as').request).toBeUndefined();
  });

  it('no_oauth skips only the phase whose probe found nothing: a later phase probes again', async () => {
    const r = await run(
      [
        { id: 'first', steps: [body[0]!] },
        { id: 'second', steps: [{ ...body[0]!, id: 'prm_again' }, products('after')] },
      ],
      { behaviours: ['no_oauth'] },
    );
    expect(r.verdicts).toEqual({
      prm: 'skipped:not_applicable',
      prm_again: 'skipped:not_applicable',
      after: 'skipped:not_applicable',
    });
    expect(result(r, 'prm_again').request).toMatchObject({
      transport: 'http',
      operation: 'protected_resource_metadata',
    });
    expect(result(r, 'after').request).toBeUndefined();
  });

  it('wrong_resource fails resource_equals_agent_url, naming both URLs', async () => {
    const r = await run(body, { behaviours: ['wrong_resource'] });
    expect(r.verdicts.prm).toBe('failed');
    expect(validation(r, 'prm', 'resource_equals_agent_url')).toMatchObject({
      passed: false,
      json_pointer: '/resource',
      expected: expect.stringContaining('/mcp'),
    });
  });
});

// ---------------------------------------------------------------------------
// Hard-coded fixture ids without a fixtures: entry
// ---------------------------------------------------------------------------

describe('unseeded literal fixture ids', () => {
  const discover = products('discover', {
    context_outputs: [
      { name: 'product_id', path: 'products[0].product_id' },
      { name: 'pricing_option_id', path: 'products[0].pricing_options[0].pricing_option_id' },
    ],
  });
  const literal = { packages: [{ product_id: 'test-product', pricing_option_id: 'test-pricing', budget: 5000 }] };

  it('are replaced by the ids an earlier step captured, with a warning naming both', async () => {
    const r = await run([discover, createBuy('create', {}, literal)]);
    expect(r.verdicts).toEqual({ discover: 'passed', create: 'passed' });
    const [packageSent] = sent(r, 'create_media_buy')[0]!.packages;
    const captured = (result(r, 'discover').response!.payload as any).structuredContent.products[0];
    expect(packageSent).toMatchObject({
      product_id: captured.product_id,
      pricing_option_id: captured.pricing_options[0].pricing_option_id,
    });
    expect(result(r, 'create').warnings).toEqual([
      `packages[0].product_id = ${JSON.stringify(captured.product_id)} replaced "test-product": the storyboard hard-codes product_id "test-product", which no fixtures: entry seeds; step "discover" captured the agent's own`,
      `packages[0].pricing_option_id = ${JSON.stringify(captured.pricing_options[0].pricing_option_id)} replaced "test-pricing": the storyboard hard-codes pricing_option_id "test-pricing", which no fixtures: entry seeds; step "discover" captured the agent's own`,
    ]);
  });

  it('an id the step is creating is sent as written; a reference beside it still gets the capture', async () => {
    // deterministic-testing.yaml > sync_fresh_creative_for_rejection's shape, on the tasks the fixture serves: the
    // library creative captured first must not turn the new upload into a re-write of that creative.
    const library = creatives('library', {
      context_outputs: [{ name: 'creative_id', path: 'creatives[0].creative_id' }],
    });
    const book = createBuy('book', { context_outputs: [{ name: 'media_buy_id', path: 'media_buy_id' }] });
    const upload = {
      ...MEDIA_BUY.packages[0],
      creatives: [{ creative_id: 'fresh-upload-probe', name: 'Fresh upload' }],
      creative_assignments: [{ creative_id: 'assigned-literal' }],
    };
    const again = createBuy('again', { validations: [] }, { media_buy_id: 'new-buy-literal', packages: [upload] });
    const change = {
      id: 'change',
      task: 'update_media_buy',
      sample_request: { media_buy_id: 'old-buy-literal', paused: true },
      validations: [],
    };
    const r = await run([library, book, again, change]);
    const libraryCreative = (result(r, 'library').response!.payload as any).structuredContent.creatives[0].creative_id;
    const booked = (result(r, 'book').response!.payload as any).structuredContent.media_buy_id;
    const [, created] = sent(r, 'create_media_buy');
    expect(created!.media_buy_id).toBe('new-buy-literal');
    expect(created!.packages[0].creatives[0].creative_id).toBe('fresh-upload-probe');
    expect(created!.packages[0].creative_assignments[0].creative_id).toBe(libraryCreative);
    expect(result(r, 'again').warnings).toEqual([
      `packages[0].creative_assignments[0].creative_id = ${JSON.stringify(libraryCreative)} replaced "assigned-literal": the storyboard hard-codes creative_id "assigned-literal", which no fixtures: entry seeds; step "library" captured the agent's own`,
    ]);
    expect(sent(r, 'update_media_buy')[0]!.media_buy_id).toBe(booked);
  });

  it('a negative test (expect_error) keeps its literal, and so does an id the fixtures declare', async () => {
    const negative = await run([
      discover,
      createBuy(
        'create',
        { expect_error: true, validations: [{ check: 'error_code', value: 'PRODUCT_NOT_FOUND' }] },
        literal,
      ),
    ]);
    expect(sent(negative, 'create_media_buy')[0]!.packages[0].product_id).toBe('test-product');
    expect(negative.verdicts.create).toBe('passed');
    const declared = await run([discover, createBuy('create', {}, literal)], {
      root: {
        fixtures: {
          products: [{ product_id: 'test-product' }],
          pricing_options: [{ product_id: 'test-product', pricing_option_id: 'test-pricing' }],
        },
      },
    });
    expect(sent(declared, 'create_media_buy')[0]!.packages[0].product_id).toBe('test-product');
    expect(result(declared, 'create').warnings).toBeUndefined();
  });
});
