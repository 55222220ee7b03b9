/**
 * The engine over A2A, against the fixture agent's A2A endpoint: what only an
 * A2A run can show — `a2a_submitted_artifact` graded on the A2A Task, the
 * AdCP async follow-up through the `tasks/get` skill, `missing_tool` from the
 * agent card, credentials per step. (That A2A grades every storyboard as MCP
 * does: test/transport/a2a-parity.e2e.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent, type FixtureCall } from '../../fixtures/agent/server.mjs';
import type { StepOutcome, ValidationResult } from '../../src/model/records.js';
import { phasedStoryboard, runInline, type InlineStep } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

const MEDIA_BUY = {
  account: { brand: { domain: 'fixture-brand.example' }, operator: 'pinnacle-agency.example' },
  brand: { domain: 'fixture-brand.example' },
  start_time: 'asap',
  end_time: '2027-06-30T23:59:59Z',
  packages: [{ product_id: 'prod_video_preroll', pricing_option_id: 'po_video_preroll_cpm', budget: 5000 }],
  context: { correlation_id: 'a2a-engine' },
};
const createBuy = (id: string, extra: Partial<InlineStep> = {}): InlineStep => ({
  id,
  title: id,
  task: 'create_media_buy',
  sample_request: MEDIA_BUY,
  ...extra,
});
const SUBMITTED_ARTIFACT = { check: 'a2a_submitted_artifact', description: 'the A2A envelope of a submitted arm' };

let sessions = 0;

/** Runs steps (one phase) on a fresh sandbox of the A2A endpoint with these behaviours; the call log of that sandbox. */
async function runA2a(steps: InlineStep[], behaviours: string[] = [], protocol: 'a2a' | 'mcp' = 'a2a') {
  const session = `a2a_engine_${++sessions}`;
  const tokens = [...behaviours, `session_${session}`];
  const url = protocol === 'a2a' ? agent.a2aUrlFor(tokens) : agent.urlFor(tokens);
  const outcomes = await runInline(phasedStoryboard([{ id: 'main', steps }]), url, { protocol, pollIntervalMs: 1 });
  return {
    outcomes,
    step: (id: string): StepOutcome => outcomes[id]!,
    check: (id: string, check: string): ValidationResult | undefined =>
      outcomes[id]!.result.validations.find((v) => v.check === check),
    calls: (tool: string): FixtureCall[] => agent.calls.filter((c) => c.session === session && c.tool === tool),
  };
}

describe('a2a_submitted_artifact over A2A', () => {
  it('passes on a submitted arm: the A2A call completed, the DataPart says submitted', async () => {
    const r = await runA2a(
      [
        createBuy('book', {
          validations: [SUBMITTED_ARTIFACT, { check: 'field_value', path: 'status', value: 'submitted' }],
        }),
      ],
      ['async_submitted@create_media_buy'],
    );
    expect(r.step('book').status, JSON.stringify(r.step('book').result.validations)).toBe('passed');
    const v = r.check('book', 'a2a_submitted_artifact')!;
    expect(v).toMatchObject({ passed: true, json_pointer: null });
    expect(v.not_applicable).toBeUndefined();
    // The step checks the envelope itself: graded on the immediate answer, not polled.
    expect(r.calls('tasks/get')).toEqual([]);
  });

  it("fails on a synchronous answer, pointing into the Task at the DataPart's status", async () => {
    const r = await runA2a([createBuy('book', { validations: [SUBMITTED_ARTIFACT] })]);
    expect(r.step('book').status).toBe('failed');
    expect(r.check('book', 'a2a_submitted_artifact')).toMatchObject({
      passed: false,
      json_pointer: '/artifacts/0/parts/1/data/status',
      expected: 'submitted',
      actual: 'pending_creatives',
      response: { transport: 'a2a', task_state: 'completed' },
    });
  });

  it('names every broken invariant of a Task left in an interim state', async () => {
    const r = await runA2a(
      [createBuy('book', { validations: [SUBMITTED_ARTIFACT] })],
      ['a2a_input_required@create_media_buy'],
    );
    const v = r.check('book', 'a2a_submitted_artifact')!;
    expect(v).toMatchObject({
      passed: false,
      json_pointer: '/status/state',
      expected: 'completed',
      actual: 'input-required',
    });
    expect(v.error).toMatch(
      /^2 A2A envelope invariants failed: \/status\/state: .*; \/status\/message\/parts\/1\/data\/status: the AdCP payload's status is "input-required", not "submitted"$/,
    );
  });

  it('fails on a JSON-RPC error (no Task), and is not applicable over MCP', async () => {
    const a2a = await runA2a(
      [createBuy('book', { validations: [SUBMITTED_ARTIFACT], expect_error: true })],
      ['error_jsonrpc'],
    );
    expect(a2a.check('book', 'a2a_submitted_artifact')).toMatchObject({
      passed: false,
      error: 'the agent answered with a JSON-RPC error (-32602), not an A2A Task',
    });
    const mcp = await runA2a(
      [createBuy('book', { validations: [SUBMITTED_ARTIFACT] })],
      ['async_submitted@create_media_buy'],
      'mcp',
    );
    expect(mcp.check('book', 'a2a_submitted_artifact')).toMatchObject({
      passed: true,
      not_applicable: 'the agent was reached over mcp, not A2A',
    });
  });
});

describe('the AdCP async follow-up over A2A (src/engine/polling.ts)', () => {
  it('task_completion captures poll the tasks/get skill to the end and read the completion', async () => {
    const r = await runA2a(
      [
        createBuy('book', {
          context_outputs: [{ name: 'media_buy_id', path: 'task_completion.media_buy_id' }],
          validations: [{ check: 'field_value', path: 'status', value: 'submitted' }],
        }),
        {
          id: 'use',
          title: 'use',
          task: 'get_adcp_capabilities',
          sample_request: { context: { correlation_id: '$context.media_buy_id' } },
          validations: [{ check: 'field_present', path: 'context.correlation_id' }],
        },
      ],
      ['async_submitted@create_media_buy', 'async_polls_2'],
    );
    expect(r.step('book').status).toBe('passed');
    expect(r.step('use').status).toBe('passed');
    // Graded on the immediate answer (it checks the async status): the A2A Task carrying the submitted arm.
    const taskId = (r.step('book').result.response!.payload as any).artifacts[0].parts[1].data.task_id;
    expect(taskId).toEqual(expect.any(String));
    expect(r.calls('tasks/get').map((c) => c.arguments)).toEqual([
      { task_id: taskId, include_result: true },
      { task_id: taskId, include_result: true },
    ]);
    expect((r.step('use').result.request!.payload as any).context.correlation_id).toMatch(/^mb_/);
  });

  it('an answer that is only the async envelope is graded on the completion, which the note says', async () => {
    const r = await runA2a(
      [createBuy('book', { validations: [{ check: 'field_present', path: 'media_buy_id' }] })],
      ['async_submitted@create_media_buy', 'async_polls_3'],
    );
    expect(r.step('book').status).toBe('passed');
    expect(r.step('book').result.extraction.note).toMatch(
      /^the agent answered submitted \(task [^)]+\); graded on the task's completion after 3 tasks\/get poll\(s\)$/,
    );
    expect(r.step('book').result.response).toMatchObject({ transport: 'a2a', task_state: 'completed' });
  });

  it('an A2A task that is still working is awaited by the transport (A2A tasks/get), then graded as usual', async () => {
    const r = await runA2a(
      [createBuy('book', { validations: [{ check: 'field_present', path: 'media_buy_id' }] })],
      ['a2a_working'],
    );
    expect(r.step('book').status).toBe('passed');
    expect(r.step('book').result.extraction.note).toBe(
      'A2A task completed: artifacts[0].parts[] last DataPart after 1 A2A tasks/get poll(s)',
    );
    expect(r.calls('tasks/get')).toEqual([]);
  });
});

describe('gates and credentials over A2A', () => {
  it("missing_tool is graded from the agent card's skills", async () => {
    const r = await runA2a(
      [{ id: 'list', title: 'list', task: 'list_creatives', sample_request: {} }],
      ['without@list_creatives'],
    );
    expect(r.step('list').status).toBe('skipped');
    expect(r.step('list').result.skip).toMatchObject({
      reason: 'missing_tool',
      detail: expect.stringMatching(
        /^the agent does not advertise the tool "list_creatives"; agent tools: \[comply_test_controller, /,
      ),
    });
    expect(r.calls('list_creatives')).toEqual([]);
  });

  it('auth: none on a protected task: the 401 with WWW-Authenticate passes the HTTP checks', async () => {
    const r = await runA2a([
      {
        id: 'unauth',
        title: 'unauth',
        task: 'list_creatives',
        sample_request: {},
        auth: 'none',
        expect_error: true,
        validations: [
          { check: 'http_status_in', allowed_values: [401, 403] },
          { check: 'on_401_require_header', value: 'www-authenticate' },
          { check: 'error_code', value: 'AUTH_REQUIRED' },
        ],
      },
    ]);
    expect(r.step('unauth').status, JSON.stringify(r.step('unauth').result.validations)).toBe('passed');
    expect(r.calls('list_creatives')).toMatchObject([{ auth: 'none', rejected: true }]);
  });
});
