/**
 * A second opinion on the controller and async task layer: the storyboard
 * runner that ships with @adcp/sdk seeds fixtures through comply_test_controller,
 * skips seeding when the tool is missing, and resolves `task_completion.<path>`
 * captures by polling tasks/get — against the fixture agent, with the call log
 * proving what it sent and how often.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseStoryboard, runStoryboard } from '@adcp/sdk/testing';
import { FIXTURE_TEST_KIT_PATH, startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';

const kit = parseYaml(readFileSync(FIXTURE_TEST_KIT_PATH, 'utf8'));

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(async () => {
  await agent?.close();
});

/** The runner reads these at call time; keep polling fast and bounded. */
const POLL_ENV = { STORYBOARD_TASK_POLL_INTERVAL_MS: '5', STORYBOARD_TASK_POLL_TIMEOUT_MS: '10000' };
const savedEnv = { ...process.env };
afterEach(() => {
  for (const key of Object.keys(POLL_ENV)) {
    if (savedEnv[key] === undefined) delete process.env[key];
    else process.env[key] = savedEnv[key];
  }
});

const SEEDED = parseStoryboard(`
id: fixture_seeded_buy
version: "1.0.0"
title: "Seeded product, discovered and booked"
category: media_buy_seller
summary: "Controller seeding makes a product the buyer then finds and books."
narrative: "Fixtures are seeded through comply_test_controller before the phases."
agent: { interaction_model: media_buy_seller, capabilities: [sells_media] }
caller: { role: buyer_agent }
prerequisites:
  description: "The agent exposes comply_test_controller."
  controller_seeding: true
fixtures:
  products:
    - product_id: "seeded_video_q3"
      delivery_type: "guaranteed"
      channels: ["olv"]
      format_ids: [{ id: "video_30s" }]
  pricing_options:
    - product_id: "seeded_video_q3"
      pricing_option_id: "cpm_seeded"
      pricing_model: "cpm"
      currency: "USD"
      fixed_price: 18.0
phases:
  - id: buy
    title: "Find and book the seeded product"
    steps:
      - id: find_seeded
        title: "get_products sees the seeded product"
        task: get_products
        stateful: true
        sample_request:
          buying_mode: "wholesale"
          filters: { product_ids: ["seeded_video_q3"] }
        validations:
          - check: field_value
            path: "products[0].product_id"
            value: "seeded_video_q3"
      - id: book_seeded
        title: "create_media_buy books it"
        task: create_media_buy
        stateful: true
        sample_request:
          brand: { domain: "fixture-brand.example" }
          packages:
            - product_id: "seeded_video_q3"
              pricing_option_id: "cpm_seeded"
              budget: 3000
        validations:
          - check: field_value
            path: "packages[0].product_id"
            value: "seeded_video_q3"
`);

const ASYNC = parseStoryboard(`
id: fixture_async_buy
version: "1.0.0"
title: "Async media buy, completed through tasks/get"
category: media_buy_seller
summary: "create_media_buy answers submitted; the media_buy_id is captured from the completion artifact."
narrative: "The runner polls tasks/get for task_completion captures."
agent: { interaction_model: media_buy_seller, capabilities: [sells_media] }
caller: { role: buyer_agent }
phases:
  - id: buy
    title: "Book and use the media buy"
    steps:
      - id: create_submitted
        title: "create_media_buy answers submitted"
        task: create_media_buy
        stateful: true
        sample_request:
          brand: { domain: "fixture-brand.example" }
          packages:
            - product_id: "prod_video_preroll"
              pricing_option_id: "po_video_preroll_cpm"
              budget: 5000
          context: { correlation_id: "fixture_async_buy--create" }
        context_outputs:
          - name: media_buy_id
            path: "task_completion.media_buy_id"
        validations:
          - check: response_schema
          - check: field_value
            path: "status"
            value: "submitted"
      - id: activate
        title: "The captured id is a real media buy"
        task: comply_test_controller
        stateful: true
        sample_request:
          scenario: "force_media_buy_status"
          params: { media_buy_id: "$context.media_buy_id", status: "active" }
        validations:
          - check: field_value
            path: "current_state"
            value: "active"
`);

type Result = Awaited<ReturnType<typeof runStoryboard>>;

async function run(storyboard: typeof SEEDED, url: string): Promise<Result> {
  return runStoryboard(url, storyboard, {
    allow_http: true,
    test_kit: kit,
    auth: { type: 'bearer', token: kit.auth.api_key },
  });
}

function steps(result: Result) {
  return Object.fromEntries(
    result.phases.flatMap((phase) => phase.steps.map((step) => [`${phase.phase_id}.${step.step_id}`, step])),
  );
}

const sessionCalls = (tool: string, session: string) => agent.callsFor(tool).filter((call) => call.session === session);

describe('controller seeding (the reference runner)', () => {
  it('seeds once per fixture, in DAG order, and the buyer flow sees the seeds', async () => {
    const result = await run(SEEDED, agent.urlFor(['session_ref-seed']));
    const byId = steps(result);
    expect(Object.keys(byId)).toEqual([
      '__controller_seeding__.seed_product.seeded_video_q3',
      '__controller_seeding__.seed_pricing_option.seeded_video_q3.cpm_seeded',
      'buy.find_seeded',
      'buy.book_seeded',
    ]);
    expect(Object.values(byId).map((s) => s.passed)).toEqual([true, true, true, true]);
    expect(result.overall_passed).toBe(true);

    const seeds = sessionCalls('comply_test_controller', 'ref-seed').map((call) => call.arguments);
    expect(seeds).toEqual([
      expect.objectContaining({
        scenario: 'seed_product',
        params: { product_id: 'seeded_video_q3', fixture: expect.objectContaining({ delivery_type: 'guaranteed' }) },
      }),
      expect.objectContaining({
        scenario: 'seed_pricing_option',
        params: expect.objectContaining({ product_id: 'seeded_video_q3', pricing_option_id: 'cpm_seeded' }),
      }),
    ]);
  });

  it('skips seeding as missing_test_controller when the agent does not list comply_test_controller, and calls it never', async () => {
    const result = await run(SEEDED, agent.urlFor(['without@comply_test_controller', 'session_ref-missing']));
    // Seeding and the stateful steps that depend on it: skipped, not failed.
    expect(Object.values(steps(result)).map((s) => [s.passed, s.skipped, s.skip_reason])).toEqual(
      Array(4).fill([true, true, 'missing_test_controller']),
    );
    expect(sessionCalls('comply_test_controller', 'ref-missing')).toEqual([]);
  });

  it('fails seeding with UNKNOWN_SCENARIO under no_seed and does not run the buyer flow', async () => {
    const result = await run(SEEDED, agent.urlFor(['no_seed', 'session_ref-noseed']));
    const byId = steps(result);
    expect(byId['__controller_seeding__.seed_product.seeded_video_q3']).toMatchObject({
      passed: false,
      error: expect.stringMatching(/UNKNOWN_SCENARIO/),
    });
    expect(byId['buy.find_seeded']).toMatchObject({ skipped: true });
    expect(sessionCalls('get_products', 'ref-noseed')).toEqual([]);
  });
});

describe('task_completion captures (the reference runner)', () => {
  it('polls tasks/get until completed, captures media_buy_id from the artifact, and the next step uses it', async () => {
    Object.assign(process.env, POLL_ENV);
    const result = await run(
      ASYNC,
      agent.urlFor(['async_submitted@create_media_buy', 'async_polls_3', 'session_ref-async']),
    );
    const byId = steps(result);
    expect(byId['buy.create_submitted']!.passed).toBe(true);
    expect(byId['buy.create_submitted']!.validations.find((v) => v.check === 'response_schema')).toMatchObject({
      passed: true,
    });
    expect(byId['buy.activate']!.passed).toBe(true);

    const polls = sessionCalls('tasks/get', 'ref-async');
    expect(polls).toHaveLength(3);
    expect(polls[0]!.arguments).toEqual({
      task_id: expect.stringMatching(/^task_/),
      include_result: true,
      adcp_major_version: 3,
    });
    expect(sessionCalls('create_media_buy', 'ref-async')).toHaveLength(1);
    expect(sessionCalls('comply_test_controller', 'ref-async')[0]!.arguments).toMatchObject({
      params: { media_buy_id: expect.stringMatching(/^mb_/) },
    });
  });

  it('fails the capture when the task ends failed', async () => {
    Object.assign(process.env, POLL_ENV);
    const result = await run(
      ASYNC,
      agent.urlFor(['async_submitted@create_media_buy', 'async_failed', 'session_ref-failed']),
    );
    const byId = steps(result);
    expect(byId['buy.create_submitted']!.passed).toBe(false);
    expect(byId['buy.create_submitted']!.validations.filter((v) => !v.passed).map((v) => v.check)).toEqual([
      'capture_task_failed',
    ]);
    expect(byId['buy.activate']!.passed).toBe(false);
    expect(sessionCalls('tasks/get', 'ref-failed')).toHaveLength(1);
  });

  it('times out a bounded poll on a task that never completes', async () => {
    Object.assign(process.env, {
      ...POLL_ENV,
      STORYBOARD_TASK_POLL_INTERVAL_MS: '20',
      STORYBOARD_TASK_POLL_TIMEOUT_MS: '300',
    });
    const result = await run(
      ASYNC,
      agent.urlFor(['async_submitted@create_media_buy', 'async_never', 'session_ref-never']),
    );
    const create = steps(result)['buy.create_submitted']!;
    expect(create.passed).toBe(false);
    expect(create.validations.filter((v) => !v.passed).map((v) => v.check)).toEqual(['capture_poll_timeout']);
    const polls = sessionCalls('tasks/get', 'ref-never');
    expect(polls.length).toBeGreaterThan(0);

    // The SDK keeps polling in the background after its timeout; completing the task stops it.
    const taskId = polls[0]!.arguments.task_id;
    const auth = {
      authorization: `Bearer ${kit.auth.api_key}`,
      'content-type': 'application/json',
      accept: 'application/json',
    };
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'comply_test_controller',
        arguments: {
          scenario: 'force_task_completion',
          params: { task_id: taskId, result: { media_buy_id: 'mb_x', packages: [] } },
        },
      },
    };
    const done = (await (
      await fetch(agent.urlFor(['session_ref-never']), { method: 'POST', headers: auth, body: JSON.stringify(body) })
    ).json()) as any;
    expect(done.result.structuredContent).toMatchObject({ success: true, current_state: 'completed' });
  });
});
