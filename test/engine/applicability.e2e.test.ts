/**
 * AdCP 3.1's storyboard- and phase-level gates (src/engine/applicability.ts) and the per-phase stateful cascade
 * (src/engine/gate.ts: depends_on, the branch-set exemption), against the real fixture agent: each gate lets a
 * storyboard run when it holds, and skips it — with the contract's reason and detail, nothing sent — when it does not.
 * The runner-output contract's rules (model/contract-rules.ts) decide the reason a 3.0 run reports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent, type FixtureCall } from '../../fixtures/agent/server.mjs';
import type { StepOutcome } from '../../src/model/records.js';
import { phasedStoryboard, runInline, type InlinePhase, type InlineRunOptions } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

let sessions = 0;

interface Ran {
  steps: Record<string, StepOutcome>;
  verdicts: Record<string, string>;
  calls(tool?: string): FixtureCall[];
}

async function run(
  phases: InlinePhase[],
  root: Record<string, unknown> = {},
  options: InlineRunOptions & { behaviours?: string[] } = {},
): Promise<Ran> {
  const session = `ap${++sessions}`;
  const url = agent.urlFor([...(options.behaviours ?? []), `session_${session}`]);
  const steps = await runInline(phasedStoryboard(phases, root), url, options);
  const verdicts = Object.fromEntries(
    Object.entries(steps).map(([id, o]) => [
      id,
      o.status === 'skipped' ? `skipped:${o.result.skip!.reason}` : o.status,
    ]),
  );
  return {
    steps,
    verdicts,
    calls: (tool) => agent.calls.filter((c) => c.session === session && (tool === undefined || c.tool === tool)),
  };
}

const caps = (id: string) => ({ id, task: 'get_adcp_capabilities' });
const formats = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  task: 'list_creative_formats',
  ...extra,
});
const one = (...steps: ReturnType<typeof caps>[]): InlinePhase[] => [{ id: 'main', steps }];
const detail = (r: Ran, id: string) => r.steps[id]!.result.skip?.detail;

describe('requires_capability (storyboard)', () => {
  it('runs when the predicate holds: equals, contains, present', async () => {
    for (const predicate of [
      { path: 'adcp.idempotency.supported', equals: true },
      { path: 'supported_protocols', contains: 'creative' },
      { path: 'creative.has_creative_library', present: true },
      { path: 'specialisms', present: false },
    ]) {
      const r = await run(one(formats('list')), { requires_capability: predicate });
      expect(r.verdicts, JSON.stringify(predicate)).toEqual({ list: 'passed' });
    }
  });

  it('skips the whole storyboard not_applicable, naming the path and the declared value, when it does not', async () => {
    const r = await run(one(caps('a'), formats('b')), {
      requires_capability: { path: 'supported_protocols', contains: 'signals' },
    });
    expect(r.verdicts).toEqual({ a: 'skipped:not_applicable', b: 'skipped:not_applicable' });
    expect(detail(r, 'a')).toBe(
      'requires_capability: supported_protocols must contain "signals"; the agent declares ["media_buy","creative"]',
    );
    expect(r.calls('list_creative_formats')).toEqual([]);
    const absent = await run(one(formats('b')), { requires_capability: { path: 'media_buy.nothing', present: true } });
    expect(detail(absent, 'b')).toBe(
      'requires_capability: media_buy.nothing must be present; the agent does not declare it',
    );
    const declared = await run(one(formats('b')), { requires_capability: { path: 'account.sandbox', equals: false } });
    expect(detail(declared, 'b')).toBe(
      'requires_capability: account.sandbox must equal false; the agent declares true',
    );
  });

  it("reads the capabilities schema's default for a field the agent left out of a section it declares (equals/contains)", async () => {
    const byDefault = await run(one(formats('b')), {
      requires_capability: { path: 'account.required_for_products', equals: false },
    });
    expect(byDefault.verdicts).toEqual({ b: 'passed' });
    const notTrue = await run(one(formats('b')), {
      requires_capability: { path: 'account.required_for_products', equals: true },
    });
    expect(detail(notTrue, 'b')).toBe(
      'requires_capability: account.required_for_products must equal true; the agent declares false',
    );
    // present reads the wire only: a default is no declaration.
    const presence = await run(one(formats('b')), {
      requires_capability: { path: 'account.required_for_products', present: true },
    });
    expect(presence.verdicts).toEqual({ b: 'skipped:not_applicable' });
  });

  it('asks the agent once per run, whatever the number of gates', async () => {
    const r = await run(
      [
        {
          id: 'p1',
          requires_capability: { path: 'supported_protocols', contains: 'media_buy' },
          steps: [formats('a')],
        },
        { id: 'p2', requires_capability: { path: 'supported_protocols', contains: 'creative' }, steps: [formats('b')] },
      ],
      { requires_capability: { path: 'adcp.major_versions', contains: 3 } },
    );
    expect(r.verdicts).toEqual({ a: 'passed', b: 'passed' });
    expect(r.calls('get_adcp_capabilities')).toHaveLength(1);
  });
});

describe('requires_capability (phase)', () => {
  const gatedPhase = (...steps: ReturnType<typeof formats>[]) => ({
    id: 'signals_family',
    requires_capability: { path: 'supported_protocols', contains: 'signals' },
    steps,
  });

  it('skips only that phase, not_applicable; its stateful steps cascade like any not_applicable skip (cascade_rules.default_cascade)', async () => {
    const r = await run([
      gatedPhase(formats('s1', { stateful: true }), formats('s2', { stateful: true })),
      { id: 'after', steps: [formats('later', { stateful: true }), formats('stateless')] },
    ]);
    expect(r.verdicts).toEqual({
      s1: 'skipped:not_applicable',
      s2: 'skipped:not_applicable',
      later: 'skipped:prerequisite_failed',
      stateless: 'passed',
    });
    expect(detail(r, 's1')).toMatch(/^requires_capability: supported_protocols must contain "signals"/);
  });

  it('a later phase that declares depends_on: [] runs anyway (storyboard-schema.yaml > phases[].requires_capability)', async () => {
    const r = await run([
      gatedPhase(formats('s1', { stateful: true }), formats('s2', { stateful: true })),
      { id: 'after', depends_on: [], steps: [formats('later', { stateful: true })] },
    ]);
    expect(r.verdicts).toMatchObject({ s1: 'skipped:not_applicable', later: 'passed' });
  });

  it('a gated sole stateful step trips nothing (cascade_rules.sole_stateful_step_exemption)', async () => {
    const r = await run([
      gatedPhase(formats('s1', { stateful: true }), formats('s2')),
      { id: 'after', steps: [formats('later', { stateful: true })] },
    ]);
    expect(r.verdicts).toEqual({ s1: 'skipped:not_applicable', s2: 'skipped:not_applicable', later: 'passed' });
  });
});

describe('requires', () => {
  it('controller: met when the agent advertises comply_test_controller; else requirement_unmet naming it', async () => {
    expect((await run(one(formats('a')), { requires: ['controller'] })).verdicts).toEqual({ a: 'passed' });
    const r = await run(
      one(formats('a')),
      { requires: ['controller'] },
      { behaviours: ['without@comply_test_controller'] },
    );
    expect(r.verdicts).toEqual({ a: 'skipped:requirement_unmet' });
    expect(detail(r, 'a')).toMatch(/^controller: the agent does not advertise comply_test_controller; agent tools: \[/);
  });

  it('seeded_state: unmet unless the operator declares it', async () => {
    const unmet = await run(one(formats('a')), { requires: ['seeded_state'] });
    expect(unmet.verdicts).toEqual({ a: 'skipped:requirement_unmet' });
    expect(detail(unmet, 'a')).toMatch(/^seeded_state: /);
    expect((await run(one(formats('a')), { requires: ['seeded_state'] }, { seededState: true })).verdicts).toEqual({
      a: 'passed',
    });
  });

  it('real_wire is always met; multi_agent never is in a one-agent run; an unknown value is unmet (forward compatibility)', async () => {
    expect((await run(one(formats('a')), { requires: ['real_wire'] })).verdicts).toEqual({ a: 'passed' });
    const multi = await run(one(formats('a')), { requires: ['multi_agent'] });
    expect(detail(multi, 'a')).toMatch(/^multi_agent: /);
    const unknown = await run(one(formats('a')), { requires: ['quantum_link'] });
    expect(unknown.verdicts).toEqual({ a: 'skipped:requirement_unmet' });
    expect(detail(unknown, 'a')).toMatch(/^quantum_link: a runtime requirement vitest-adcp does not know/);
    expect(unknown.calls('list_creative_formats')).toEqual([]);
  });

  it('is reported not_applicable in a run of contract 1.1.0, which has no requirement_unmet', async () => {
    const r = await run(one(formats('a')), { requires: ['seeded_state'] }, { contract: '1.1.0' });
    expect(r.verdicts).toEqual({ a: 'skipped:not_applicable' });
  });

  it('comes after requires_capability: an agent that does not opt in is not_applicable, whatever the run lacks', async () => {
    const r = await run(one(formats('a')), {
      requires: ['seeded_state'],
      requires_capability: { path: 'supported_protocols', contains: 'signals' },
    });
    expect(r.verdicts).toEqual({ a: 'skipped:not_applicable' });
  });
});

describe('required_any_of_tools', () => {
  it('runs when each family has an advertised tool; else requirement_unmet with the canonical detail', async () => {
    const families = [
      { tools: ['list_accounts', 'list_creative_formats'] },
      { tools: ['get_products', 'get_signals'] },
    ];
    expect((await run(one(formats('a')), { required_any_of_tools: families })).verdicts).toEqual({ a: 'passed' });
    const r = await run(one(formats('a')), {
      required_any_of_tools: [
        ...families,
        { tools: ['list_accounts', 'sync_accounts', 'sync_plans'], rationale: 'AdCP 3.0.9 §accounts/overview' },
      ],
    });
    expect(r.verdicts).toEqual({ a: 'skipped:requirement_unmet' });
    expect(detail(r, 'a')).toBe(
      'missing_required_tool_family: needs list_accounts or sync_accounts or sync_plans (AdCP 3.0.9 §accounts/overview)',
    );
  });
});

describe('the stateful cascade per phase (runner-output-contract.yaml > cascade_rules)', () => {
  const failing = (id: string) => ({
    id,
    task: 'get_adcp_capabilities',
    stateful: true,
    validations: [{ check: 'field_present', path: 'not_there' }],
  });

  it('by default a phase depends on every earlier one; depends_on: [] runs whatever tripped; depends_on names its own', async () => {
    const r = await run([
      { id: 'setup', steps: [failing('create')] },
      { id: 'other', steps: [formats('independent_setup', { stateful: true })] },
      { id: 'dependent', steps: [formats('read_back', { stateful: true })] },
      { id: 'independent', depends_on: [], steps: [formats('own_state', { stateful: true })] },
      { id: 'targeted', depends_on: ['other'], steps: [formats('other_only', { stateful: true })] },
    ]);
    expect(r.verdicts).toEqual({
      create: 'failed',
      independent_setup: 'skipped:prerequisite_failed',
      read_back: 'skipped:prerequisite_failed',
      own_state: 'passed',
      other_only: 'skipped:prerequisite_failed',
    });
    // A cascade skip trips its own phase in turn, citing the step that started it.
    expect(detail(r, 'other_only')).toMatch(/^prerequisite step "create" \(phase setup\) failed/);
  });

  it('a depends_on naming a phase that did not trip runs', async () => {
    const r = await run([
      { id: 'setup', steps: [failing('create')] },
      { id: 'fine', steps: [formats('ok', { stateful: true })] },
      { id: 'targeted', depends_on: ['fine'], steps: [formats('runs', { stateful: true })] },
    ]);
    expect(r.verdicts).toMatchObject({ ok: 'skipped:prerequisite_failed', runs: 'skipped:prerequisite_failed' });
    const clean = await run([
      { id: 'setup', steps: [failing('create')] },
      { id: 'fine', depends_on: [], steps: [formats('ok', { stateful: true })] },
      { id: 'targeted', depends_on: ['fine'], steps: [formats('runs', { stateful: true })] },
    ]);
    expect(clean.verdicts).toMatchObject({ ok: 'passed', runs: 'passed' });
  });

  it('an any_of branch-set peer never cascades onto another peer of its set (contract 2.6.0); it did under 1.1.0', async () => {
    const phases: InlinePhase[] = [
      {
        id: 'path_a',
        optional: true,
        branch_set: { id: 'handled', semantics: 'any_of' },
        steps: [{ ...failing('try_a'), contributes_to: 'handled' }],
      },
      {
        id: 'path_b',
        optional: true,
        branch_set: { id: 'handled', semantics: 'any_of' },
        steps: [formats('try_b', { stateful: true, contributes_to: 'handled' })],
      },
      {
        id: 'assert',
        steps: [
          { id: 'gate', task: 'assert_contribution', validations: [{ check: 'any_of', allowed_values: ['handled'] }] },
        ],
      },
    ];
    const r = await run(phases);
    expect(r.verdicts).toEqual({ try_a: 'skipped:peer_branch_taken', try_b: 'passed', gate: 'passed' });
    const old = await run(phases, {}, { contract: '1.1.0' });
    expect(old.verdicts).toMatchObject({ try_b: 'skipped:prerequisite_failed', gate: 'failed' });
  });
});

describe('context_outputs.generate', () => {
  it('mints a value once per run, before any step, that every step reads', async () => {
    const r = await run(
      one(
        {
          id: 'early',
          task: 'get_adcp_capabilities',
          sample_request: { context: { correlation_id: '$context.corr' } },
        } as never,
        {
          id: 'minter',
          task: 'get_adcp_capabilities',
          context_outputs: [{ name: 'corr', generate: 'uuid_v4' }],
          sample_request: { context: { correlation_id: '$context.corr' } },
        } as never,
      ),
    );
    expect(r.verdicts).toEqual({ early: 'passed', minter: 'passed' });
    const sent = r
      .calls('get_adcp_capabilities')
      .map((c) => (c.arguments as { context: { correlation_id: string } }).context.correlation_id);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(sent[1]).toBe(sent[0]);
  });
});

describe('context the 3.1 corpus assumes (engine/conventional-captures.ts)', () => {
  const MEDIA_BUY = {
    account: { brand: { domain: 'fixture-brand.example' }, operator: 'pinnacle-agency.example' },
    brand: { domain: 'fixture-brand.example' },
    start_time: 'asap',
    end_time: '2027-06-30T23:59:59Z',
    packages: [{ product_id: 'prod_video_preroll', pricing_option_id: 'po_video_preroll_cpm', budget: 5000 }],
  };
  const phases = (readBack: Record<string, unknown>): InlinePhase[] =>
    one(
      { id: 'book', task: 'create_media_buy', sample_request: MEDIA_BUY } as never,
      { id: 'read', task: 'get_media_buys', sample_request: readBack } as never,
    );

  it('contract 2.6.0: a passing create_media_buy provides media_buy_id to a storyboard that reads it and never captures it', async () => {
    // strictKeys: false — an author's own storyboard names its captures (the loader refuses an undeclared name).
    const r = await run(
      phases({ account: MEDIA_BUY.account, media_buy_ids: ['$context.media_buy_id'] }),
      {},
      { strictKeys: false },
    );
    expect(r.verdicts).toEqual({ book: 'passed', read: 'passed' });
    const booked = (r.steps.book!.result.response!.payload as { structuredContent: { media_buy_id: string } })
      .structuredContent.media_buy_id;
    expect((r.calls('get_media_buys')[0]!.arguments as { media_buy_ids: string[] }).media_buy_ids).toEqual([booked]);
  });

  it('contract 1.1.0 keeps the text: the name is unresolved and the step fails unsent', async () => {
    const r = await run(
      phases({ account: MEDIA_BUY.account, media_buy_ids: ['$context.media_buy_id'] }),
      {},
      {
        contract: '1.1.0',
        strictKeys: false,
      },
    );
    expect(r.verdicts).toEqual({ book: 'passed', read: 'failed' });
    expect(r.calls('get_media_buys')).toEqual([]);
  });

  it('an explicit capture decides: a name a step captures is never filled by convention', async () => {
    const r = await run(
      one(
        { id: 'book', task: 'create_media_buy', sample_request: MEDIA_BUY } as never,
        {
          id: 'caps',
          task: 'get_adcp_capabilities',
          context_outputs: [{ name: 'media_buy_id', path: 'adcp.major_versions[0]' }],
        } as never,
        {
          id: 'read',
          task: 'get_media_buys',
          sample_request: { account: MEDIA_BUY.account, media_buy_ids: ['$context.media_buy_id'] },
        } as never,
      ),
      {},
      { strictKeys: false },
    );
    expect((r.calls('get_media_buys')[0]!.arguments as { media_buy_ids: unknown[] }).media_buy_ids).toEqual([3]);
  });
});

describe('replay_webhook_vector (universal/webhook-receiver-envelope.yaml)', () => {
  it('is not applicable without a buyer receiver URL, and nothing is sent', async () => {
    const r = await run(
      one({ id: 'post', task: 'replay_webhook_vector', vector_ref: 'test-vectors/x.json#positive/a' } as never),
    );
    expect(r.verdicts).toEqual({ post: 'skipped:not_applicable' });
    expect(detail(r, 'post')).toMatch(/^replay_webhook_vector tests a buyer or orchestrator webhook receiver/);
    expect(r.calls()).toEqual([]);
  });
});

describe('controller scenarios a phase drives (deterministic-testing.yaml > prerequisites)', () => {
  const force = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    task: 'comply_test_controller',
    sample_request: {
      scenario: 'force_creative_status',
      params: { creative_id: 'cr_trail_hero_300x250', status: 'approved' },
    },
    ...extra,
  });

  it('a phase driving a scenario the controller does not list is skipped not_applicable as a whole, before any call', async () => {
    const phases: InlinePhase[] = [
      {
        id: 'creative_states',
        steps: [formats('before', { stateful: true }), force('approve', { stateful: true }) as never],
      },
      { id: 'after', steps: [formats('later', { stateful: true })] },
      { id: 'independent', depends_on: [], steps: [formats('own', { stateful: true })] },
    ];
    const r = await run(phases, {}, { behaviours: ['no_force'] });
    expect(r.verdicts).toEqual({
      before: 'skipped:not_applicable',
      approve: 'skipped:not_applicable',
      later: 'skipped:prerequisite_failed',
      own: 'passed',
    });
    expect(detail(r, 'before')).toBe(
      'phase "creative_states" drives the comply_test_controller scenario "force_creative_status", which the agent\'s list_scenarios does not list',
    );
    expect(r.calls('list_creative_formats')).toHaveLength(1);
    expect(r.calls('comply_test_controller').map((c) => (c.arguments as { scenario: string }).scenario)).toEqual([
      'list_scenarios',
    ]);
    const listed = await run(phases);
    expect(listed.verdicts).toEqual({ before: 'passed', approve: 'passed', later: 'passed', own: 'passed' });
  });

  it('a 3.0 run (contract 1.1.0) keeps its verdicts: the phase runs and meets UNKNOWN_SCENARIO step by step', async () => {
    const r = await run(
      [{ id: 'creative_states', steps: [formats('before'), force('approve') as never, formats('after')] }],
      {},
      { behaviours: ['no_force'], contract: '1.1.0' },
    );
    expect(r.verdicts).toEqual({
      before: 'passed',
      approve: 'skipped:not_applicable',
      after: 'skipped:not_applicable',
    });
    expect(detail(r, 'approve')).toMatch(/does not implement scenario "force_creative_status" \(UNKNOWN_SCENARIO\)/);
    expect(r.calls('comply_test_controller').map((c) => (c.arguments as { scenario: string }).scenario)).toEqual([
      'force_creative_status',
    ]);
  });

  it('a step that expects an error (testing the refusal) runs: UNKNOWN_SCENARIO is an answer it may accept', async () => {
    const refusal = force('refused', {
      expect_error: true,
      validations: [{ check: 'error_code', allowed_values: ['INVALID_PARAMS', 'UNKNOWN_SCENARIO'] }],
    });
    const r = await run(one(refusal as never), {}, { behaviours: ['no_force'] });
    expect(r.verdicts).toEqual({ refused: 'passed' });
  });
});
