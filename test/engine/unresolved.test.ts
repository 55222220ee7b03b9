/**
 * Why a placeholder did not resolve names the step to look at and what became
 * of it — the sentence a user running one step with `-t` reads about its
 * prerequisites (src/engine/unresolved.ts), pure, then on a real run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import type { StepResult } from '../../src/model/records.js';
import { explainUnresolved, runnerPreflightSkip, type EarlierStep } from '../../src/engine/unresolved.js';
import { formatStepFailure } from '../../src/report/format.js';
import type { Phase, Step } from '../../src/model/storyboard.js';
import { phasedStoryboard, runInline } from '../helpers/inline-run.js';

const loc = { line: 1, column: 1 };
const phase = { id: 'setup', title: 'Setup', steps: [], loc } as unknown as Phase;
const step = (id: string, captures: string[] = []): Step =>
  ({
    id,
    task: 'get_products',
    validations: [],
    loc,
    context_outputs: captures.map((name) => ({ name, path: 'x' })),
  }) as unknown as Step;
const result = (over: Partial<StepResult>): StepResult => ({
  storyboard_id: 's',
  phase_id: 'setup',
  step_id: 'x',
  task: 't',
  passed: true,
  duration_ms: 1,
  validations: [],
  extraction: { path: 'none' },
  ...over,
});

describe('explainUnresolved', () => {
  const earlier = (r?: Partial<StepResult>): EarlierStep[] => [
    { phase, step: step('discover', ['product_id']), ...(r ? { result: result(r) } : {}) },
  ];

  it('names the capturing step and its failed check', () => {
    expect(
      explainUnresolved(
        ['$context.product_id'],
        earlier({
          passed: false,
          validations: [
            { check: 'field_present', passed: false, description: 'products are listed', json_pointer: '/products' },
          ],
        }),
      ),
    ).toBe(
      '$context.product_id did not resolve: step "discover" (phase setup) failed (field_present at /products — products are listed)',
    );
    expect(
      explainUnresolved(['$context.product_id.x'], earlier({ passed: false, error: 'connect ECONNREFUSED\nstack' })),
    ).toBe('$context.product_id.x did not resolve: step "discover" (phase setup) failed (connect ECONNREFUSED)');
    expect(explainUnresolved(['$context.product_id'], earlier({ passed: false }))).toContain(
      'failed (no reason recorded)',
    );
  });

  it('says when the capturing step was skipped, has not run, or passed without the value', () => {
    expect(
      explainUnresolved(
        ['$context.product_id'],
        earlier({ skip: { reason: 'missing_tool', detail: 'no get_products' } }),
      ),
    ).toBe(
      '$context.product_id did not resolve: step "discover" (phase setup) was skipped (missing_tool: no get_products)',
    );
    expect(explainUnresolved(['$context.product_id'], earlier())).toBe(
      '$context.product_id did not resolve: step "discover" (phase setup) has not run',
    );
    expect(explainUnresolved(['$context.product_id'], earlier({}))).toBe(
      '$context.product_id did not resolve: step "discover" (phase setup) passed, but what it captures was not in its answer',
    );
  });

  it('says when nothing captures the name, and reads prior_step references and several tokens', () => {
    expect(explainUnresolved(['$context.other'], earlier())).toBe(
      '$context.other did not resolve: no earlier step captures "other" (context_outputs), and the storyboard\'s context does not set it',
    );
    expect(
      explainUnresolved(
        ['{{prior_step.discover.products}}', '{{prior_step.nope.x}}', '$test_kit.a'],
        earlier({ passed: false, error: 'boom' }),
      ).split('\n'),
    ).toEqual([
      '{{prior_step.discover.products}} did not resolve: step "discover" (phase setup) failed (boom)',
      '{{prior_step.nope.x}} did not resolve: no earlier step has the id "nope"',
      '$test_kit.a did not resolve',
    ]);
  });
});

describe('on a real run', () => {
  let agent: FixtureAgent;
  beforeAll(async () => {
    agent = await startFixtureAgent();
  });
  afterAll(() => agent?.close());

  it('a consumer of a failed capture names it, and its message says nothing was sent', async () => {
    const steps = await runInline(
      phasedStoryboard([
        {
          id: 'setup',
          steps: [
            {
              id: 'caps',
              task: 'get_adcp_capabilities',
              sample_request: { context: { correlation_id: 'c' } },
              context_outputs: [{ name: 'first_protocol', path: 'supported_protocols[0]' }],
              validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'c' }],
            },
          ],
        },
        {
          id: 'use',
          steps: [
            {
              id: 'caps_filtered',
              task: 'get_adcp_capabilities',
              sample_request: { protocols: ['$context.first_protocol'] },
            },
          ],
        },
      ]),
      agent.urlFor(['wrong_value']),
    );
    const consumer = steps.caps_filtered!.result;
    expect(consumer.validations[0]!.error).toBe(
      '$context.first_protocol did not resolve: step "caps" (phase setup) failed (field_value at /context/correlation_id — field_value)',
    );
    const message = formatStepFailure(consumer, { cwd: '/' }).message;
    expect(message).toContain(
      '  not sent (a placeholder did not resolve); it would have been mcp get_adcp_capabilities: {"protocols":["$context.first_protocol"]}',
    );
    expect(message).not.toMatch(/\n {2}sent \(/);
    expect(message).not.toContain('received: nothing');
  });
});

describe('runnerPreflightSkip: {{runner.*}} placeholders no step can resolve', () => {
  const writes = (id: string, extra: Partial<Step>) => ({ step: { ...step(id), ...extra } as Step });
  const hook = { push_notification_config: { url: '{{runner.webhook_url:book}}' } };

  it('none, or every one resolvable with the receiver: nothing to skip', () => {
    expect(runnerPreflightSkip([{ step: step('plain') }], false)).toBeUndefined();
    expect(runnerPreflightSkip([writes('book', { sample_request: hook })], true)).toBeUndefined();
  });

  it('without a receiver: each token once, with every step that writes it, rate_limit_trip targets and interpolations included', () => {
    const skip = runnerPreflightSkip(
      [
        writes('book', { sample_request: hook }),
        writes('trip', {
          rate_limit_trip: { trip_target_task: 'create_media_buy', trip_target_sample_request: hook, max_attempts: 1 },
        } as unknown as Partial<Step>),
        writes('base', { sample_request: { notes: ['at {{ runner.webhook_base }}/x'] } }),
      ],
      false,
    );
    expect(skip).toEqual({
      reason: 'not_applicable',
      detail: `unresolved_substitution: {{runner.webhook_url:book}} (step "book", step "trip"), {{ runner.webhook_base }} (step "base") needs the runner's webhook receiver, and this run hosts none (plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver) — so no step of this storyboard runs`,
    });
  });

  it('a variable no runner provides: unresolvable with a receiver too, said apart from the receiver ones', () => {
    const steps = [writes('a', { sample_request: { x: '{{runner.nope}}', url: '{{runner.webhook_base}}' } })];
    expect(runnerPreflightSkip(steps, true)!.detail).toBe(
      'unresolved_substitution: {{runner.nope}} (step "a") names no runner variable vitest-adcp provides ({{runner.webhook_base}}, {{runner.webhook_url:<step_id>}}) — so no step of this storyboard runs',
    );
    expect(runnerPreflightSkip(steps, false)!.detail).toMatch(
      /^unresolved_substitution: \{\{runner\.webhook_base\}\} \(step "a"\) needs the runner's webhook receiver, .*; \{\{runner\.nope\}\} \(step "a"\) names no runner variable/,
    );
  });
});
