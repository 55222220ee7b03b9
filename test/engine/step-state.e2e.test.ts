/**
 * What one step leaves for the next, against the real fixture agent:
 * `context_inputs` put captured values on the wire, a failed step captures
 * nothing (and null or "" is nothing to capture), `contributes_if` gates a
 * branch contribution, a not-applicable stateful step cascades only when its
 * phase has nothing else to stand on — and how a step is graded when the
 * answer is an error, or a check is one the runner cannot grade (a failure,
 * never a pass).
 *
 * "Sent" is read from the agent's call log (each test on its own
 * `session_<key>`), never inferred from our own records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent, type FixtureCall } from '../../fixtures/agent/server.mjs';
import type { StepOutcome } from '../../src/model/records.js';
import { phasedStoryboard, runInline, storyboard, type InlineRunOptions } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

let sessions = 0;

/** Runs `yaml` on a fresh sandbox of the agent; `calls(tool)` is what that sandbox received. */
async function run(
  yaml: string,
  behaviours: string[] = [],
  options: InlineRunOptions = {},
): Promise<{ steps: Record<string, StepOutcome>; calls: (tool: string) => FixtureCall[] }> {
  const session = `state${++sessions}`;
  const steps = await runInline(yaml, agent.urlFor([...behaviours, `session_${session}`]), options);
  return { steps, calls: (tool) => agent.callsFor(tool).filter((c) => c.session === session) };
}

const verdicts = (steps: Record<string, StepOutcome>) =>
  Object.fromEntries(Object.entries(steps).map(([id, o]) => [id, o.status]));

/** A wholesale get_products that captures the first product id; `check` decides whether the step passes. */
const discover = (check: string) => `- id: discover
  task: get_products
  sample_request: { buying_mode: wholesale }
  context_outputs:
    - { name: product_id, path: "products[0].product_id" }
  validations:
    - ${check}`;

describe('context_inputs', () => {
  it('puts the captured value into the request at inject_at, after the sample_request is built', async () => {
    const yaml = storyboard(
      discover('{ check: field_present, path: products }'),
      `- id: refine
  task: get_products
  sample_request:
    buying_mode: wholesale
    filters: { product_ids: ["placeholder"] }
  context_inputs:
    - { key: product_id, inject_at: "filters.product_ids[0]" }
    - { key: product_id, inject_at: "context.injected" }
    - { key: never_captured, inject_at: "context.absent" }
  validations:
    - { check: field_present, path: "products[0]" }`,
    );
    // strictKeys: false — never_captured is a load error otherwise (unknown_context_reference); its run-time skip is tested.
    const r = await run(yaml, [], { strictKeys: false });
    expect(verdicts(r.steps)).toEqual({ discover: 'passed', refine: 'passed' });
    const captured = (r.steps.discover!.result.response!.payload as any).structuredContent.products[0].product_id;
    expect(captured).toMatch(/^prod_/);
    const [, second] = r.calls('get_products');
    // On the wire: the placeholder replaced, a new path created, an uncaptured key left out.
    expect(second!.arguments).toMatchObject({ filters: { product_ids: [captured] }, context: { injected: captured } });
    expect(second!.arguments.context).not.toHaveProperty('absent');
    expect(r.calls('get_products')).toHaveLength(2);
  });
});

describe('captures are kept only when the step passes', () => {
  const consumer = `- id: consume
  task: get_products
  sample_request:
    buying_mode: wholesale
    filters: { product_ids: ["$context.product_id"] }
  validations:
    - { check: field_present, path: products }`;

  it('a step whose capture resolved but whose validation failed captures nothing: the consumer is unresolved and not sent', async () => {
    const r = await run(
      storyboard(
        discover('{ check: field_value, path: "products[0].product_id", value: "not-the-first-product" }'),
        consumer,
      ),
    );
    expect(verdicts(r.steps)).toEqual({ discover: 'failed', consume: 'failed' });
    // The producer did answer with a product id: only its verdict stops the capture.
    expect((r.steps.discover!.result.response!.payload as any).structuredContent.products[0].product_id).toMatch(
      /^prod_/,
    );
    expect(r.steps.consume!.result.validations).toEqual([
      expect.objectContaining({
        check: 'unresolved_substitution',
        passed: false,
        expected: ['$context.product_id'],
        error: expect.stringMatching(/^\$context\.product_id did not resolve/),
      }),
    ]);
    expect(r.calls('get_products')).toHaveLength(1);
  });

  it('the same producer passing: the consumer sends the captured id', async () => {
    const r = await run(storyboard(discover('{ check: field_present, path: "products[0].product_id" }'), consumer));
    expect(verdicts(r.steps)).toEqual({ discover: 'passed', consume: 'passed' });
    const [first, second] = r.calls('get_products');
    expect(first!.arguments).not.toHaveProperty('filters');
    expect(second!.arguments.filters).toEqual({ product_ids: [expect.stringMatching(/^prod_/)] });
  });
});

describe('a capture must read a value', () => {
  it('null or "" is nothing to capture: the step fails capture_path_not_resolvable and the consumer is unresolved', async () => {
    const yaml = storyboard(
      `- id: produce
  task: get_adcp_capabilities
  sample_request:
    context: { correlation_id: capture, nothing: null, empty: "", kept: "v" }
  context_outputs:
    - { name: nothing, path: context.nothing }
    - { name: empty, path: context.empty }
    - { name: kept, path: context.kept }`,
      `- id: consume
  task: get_adcp_capabilities
  sample_request:
    context: { correlation_id: "$context.kept" }`,
    );
    const r = await run(yaml);
    expect(verdicts(r.steps)).toEqual({ produce: 'failed', consume: 'failed' });
    const failures = r.steps.produce!.result.validations.filter((v) => !v.passed);
    expect(failures).toEqual([
      expect.objectContaining({
        check: 'capture_path_not_resolvable',
        json_pointer: '/context/nothing',
        expected: 'context.nothing',
        actual: null,
        error: 'context_outputs "nothing" reads "context.nothing", which is not in the response',
        // The runner's own validation sits at the step: line 7 of the inline storyboard, `      - id: produce`.
        source: { file: '/virtual/inline.storyboard.yaml', line: 7, column: 9 },
      }),
      expect.objectContaining({
        check: 'capture_path_not_resolvable',
        json_pointer: '/context/empty',
        expected: 'context.empty',
        actual: '',
      }),
    ]);
    // The step failed, so even the value that did resolve is not kept.
    expect(r.steps.consume!.result.validations).toEqual([
      expect.objectContaining({ check: 'unresolved_substitution', expected: ['$context.kept'] }),
    ]);
    expect(r.calls('get_adcp_capabilities')).toHaveLength(1);
  });
});

describe('contributes_if', () => {
  /** One optional branch: `gate` (capabilities, checks the echoed context), then `contribute` gated on it; then the assertion. */
  const yaml = phasedStoryboard([
    {
      id: 'branch',
      optional: true,
      branch_set: { id: 'handled', semantics: 'any_of' },
      steps: [
        {
          id: 'gate',
          task: 'get_adcp_capabilities',
          sample_request: { context: { correlation_id: 'gate' } },
          validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'gate' }],
        },
        {
          id: 'contribute',
          task: 'list_creatives',
          sample_request: {},
          contributes: true,
          contributes_if: 'prior_step.gate.passed',
          validations: [{ check: 'field_present', path: 'creatives' }],
        },
      ],
    },
    {
      id: 'enforce',
      steps: [
        {
          id: 'assert_handled',
          task: 'assert_contribution',
          validations: [{ check: 'any_of', allowed_values: ['handled'] }],
        },
      ],
    },
  ]);

  it('the gate step passed: the contribution counts', async () => {
    const r = await run(yaml);
    expect(verdicts(r.steps)).toEqual({ gate: 'passed', contribute: 'passed', assert_handled: 'passed' });
  });

  it('the gate step failed: the contributing step still passes, but contributes nothing', async () => {
    const r = await run(yaml, ['wrong_value@get_adcp_capabilities']);
    expect(verdicts(r.steps)).toEqual({ gate: 'failed', contribute: 'passed', assert_handled: 'failed' });
    expect(r.steps.assert_handled!.result.validations).toEqual([
      expect.objectContaining({
        check: 'any_of',
        passed: false,
        expected: ['handled'],
        actual: [],
        error: 'no branch contributed any of the allowed flags',
      }),
    ]);
  });
});

describe('a stateful step that is not applicable', () => {
  /** `expect_substitution_safe` needs a runner contract this run lacks: skipped not_applicable, never sent. */
  const observe = (id: string) => ({ id, task: 'expect_substitution_safe', stateful: true });
  const caps = (id: string, stateful = true) => ({
    id,
    task: 'get_adcp_capabilities',
    stateful,
    validations: [{ check: 'field_present', path: 'adcp' }],
  });
  const later = { id: 'use', steps: [caps('later')] };

  it('cascades at the end of its phase when no stateful peer passed: later stateful steps skip, citing it, unsent', async () => {
    // Passes that do not count: a stateless step of the phase, a stateful step of an earlier phase.
    const r = await run(
      phasedStoryboard([
        { id: 'before', steps: [caps('earlier')] },
        { id: 'setup', steps: [observe('observe'), observe('observe_again'), caps('plain', false)] },
        later,
      ]),
    );
    expect(verdicts(r.steps)).toEqual({
      earlier: 'passed',
      observe: 'skipped',
      observe_again: 'skipped',
      plain: 'passed',
      later: 'skipped',
    });
    expect(r.steps.observe!.result.skip!.reason).toBe('not_applicable');
    expect(r.steps.later!.result).toMatchObject({
      passed: false,
      skip: {
        reason: 'prerequisite_failed',
        detail:
          'prerequisite step "observe" (phase setup) was skipped (not_applicable), so the state this stateful step needs never materialised',
      },
    });
    expect(r.calls('get_adcp_capabilities')).toHaveLength(2);
  });

  it('a stateful peer that passed carries the phase: nothing cascades, within the phase or after it', async () => {
    const r = await run(
      phasedStoryboard([
        { id: 'setup', steps: [caps('establish'), observe('observe'), observe('observe_again')] },
        later,
      ]),
    );
    expect(verdicts(r.steps)).toEqual({
      establish: 'passed',
      observe: 'skipped',
      observe_again: 'skipped',
      later: 'passed',
    });
    expect(r.calls('get_adcp_capabilities')).toHaveLength(2);
  });

  it('once the cascade has tripped, a later stateful step whose tool the agent lacks is missing_tool, not prerequisite_failed', async () => {
    const failing = {
      ...caps('fails'),
      sample_request: { context: { correlation_id: 'x' } },
      validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'x' }],
    };
    const r = await run(
      phasedStoryboard([
        { id: 'setup', steps: [failing] },
        { id: 'use', steps: [{ id: 'absent', task: 'list_creatives', stateful: true }, caps('later')] },
      ]),
      ['wrong_value', 'without@list_creatives'],
    );
    expect(verdicts(r.steps)).toEqual({ fails: 'failed', absent: 'skipped', later: 'skipped' });
    expect(r.steps.absent!.result.skip!.reason).toBe('missing_tool');
    expect(r.steps.later!.result.skip!.reason).toBe('prerequisite_failed');
  });

  it("the phase's only stateful step: nothing depends on it, nothing cascades", async () => {
    const r = await run(phasedStoryboard([{ id: 'setup', steps: [observe('observe'), caps('plain', false)] }, later]));
    expect(verdicts(r.steps)).toEqual({ observe: 'skipped', plain: 'passed', later: 'passed' });
  });
});

describe('error answers', () => {
  it('an unexpected error fails the step with the code and message the agent gave, in each AdCP shape', async () => {
    const yaml = storyboard(
      `- id: adcp_error
  task: get_products
  sample_request: { buying_mode: wholesale }`,
      `- id: controller_error
  task: comply_test_controller
  sample_request: { scenario: force_media_buy_status, params: { media_buy_id: mb_never_created, status: active } }`,
    );
    const r = await run(yaml, ['error_response@get_products']);
    expect(verdicts(r.steps)).toEqual({ adcp_error: 'failed', controller_error: 'failed' });
    const answer = (id: string) => (r.steps[id]!.result.response!.payload as any).structuredContent;
    const adcp = answer('adcp_error').adcp_error;
    expect(r.steps.adcp_error!.result.error).toBe(`the agent returned an error ${adcp.code}: ${adcp.message}`);
    const controller = answer('controller_error');
    expect(controller).toMatchObject({ success: false, error: 'NOT_FOUND', error_detail: expect.any(String) });
    expect(r.steps.controller_error!.result.error).toBe(
      `the agent returned an error NOT_FOUND: ${controller.error_detail}`,
    );
  });

  it('expect_error with an error_code check: a success answer fails that check, with no extra expect_error verdict', async () => {
    const yaml = storyboard(`- id: must_reject
  task: get_adcp_capabilities
  expect_error: true
  validations:
    - { check: error_code, value: INVALID_REQUEST }
    - { check: field_present, path: adcp }`);
    const r = await run(yaml);
    expect(verdicts(r.steps)).toEqual({ must_reject: 'failed' });
    const checks = r.steps
      .must_reject!.result.validations.filter((v) => v.check !== 'invariant')
      .map((v) => [v.check, v.passed]);
    expect(checks).toEqual([
      ['error_code', false],
      ['field_present', true],
    ]);
  });
});

describe('checks the runner cannot grade fail, never pass', () => {
  it('any_of outside assert_contribution fails a step that nothing else fails; an unknown kind passes with a note (forward compatibility)', async () => {
    const yaml = storyboard(`- id: ungradable
  task: get_adcp_capabilities
  validations:
    - { check: teleport_receipt, path: adcp }
    - { check: any_of, allowed_values: [handled] }`);
    // An unknown kind is a load error by default; a storyboard of a newer format version loads with strictKeys: false.
    const r = await run(yaml, [], { strictKeys: false });
    expect(verdicts(r.steps)).toEqual({ ungradable: 'failed' });
    const [unknown, anyOf, ...rest] = r.steps.ungradable!.result.validations;
    expect(unknown).toMatchObject({
      check: 'teleport_receipt',
      passed: true,
      note: expect.stringContaining('teleport_receipt'),
    });
    expect(anyOf).toMatchObject({
      check: 'any_of',
      passed: false,
      expected: null,
      actual: null,
      error:
        'check "any_of" grades only an assert_contribution step, where the run\'s branch-set contributions are read',
    });
    // The agent answered correctly: the run-wide invariants pass; only the ungradable checks fail the step.
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((v) => v.passed)).toBe(true);
    expect(r.steps.ungradable!.result.error).toBeUndefined();
  });
});
