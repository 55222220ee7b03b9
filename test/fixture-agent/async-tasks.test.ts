/**
 * The async task layer over real sockets: create_media_buy answering the
 * submitted envelope, tasks/get (the tool name buyer SDKs poll) advancing one
 * step per poll to a completed / failed terminal state or never, and the
 * controller-driven arm (force_create_media_buy_arm + force_task_completion).
 * Polls are counted through the agent's call log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { schemaErrors } from './adcp-schemas.js';
import { callTool, freshCredential, mediaBuyRequest, textJson } from './helpers.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(async () => {
  await agent?.close();
});

const CONTEXT = { correlation_id: 'async-test' };

/** A valid create_media_buy with the test context; `extra` overrides top-level fields. */
const mediaBuy = (extra: Record<string, unknown> = {}) => ({ ...mediaBuyRequest(), context: CONTEXT, ...extra });

/** One tasks/get poll; every answer must be a valid tasks-get-response. */
async function poll(
  url: string,
  taskId: string,
  auth: string,
  extra: Record<string, unknown> = {},
  tool = 'tasks/get',
) {
  const result = await callTool(
    url,
    tool,
    { task_id: taskId, include_result: true, adcp_major_version: 3, ...extra },
    auth,
  );
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  expect(schemaErrors('core/tasks-get-response.json', result.structuredContent)).toEqual([]);
  expect(textJson(result)).toEqual(result.structuredContent);
  return result.structuredContent!;
}

const pollsOf = (taskId: string) =>
  [...agent.callsFor('tasks/get'), ...agent.callsFor('tasks_get')].filter((c) => c.arguments.task_id === taskId).length;

describe('async_submitted', () => {
  it('answers the submitted envelope: schema-valid, task_id, no media_buy_id or packages, context echoed', async () => {
    const url = agent.urlFor(['async_submitted@create_media_buy']);
    const result = await callTool(url, 'create_media_buy', mediaBuy(), freshCredential());
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      status: 'submitted',
      task_id: expect.stringMatching(/^task_/),
      message: expect.any(String),
      context: CONTEXT,
    });
    expect(schemaErrors('media-buy/create-media-buy-response.json', result.structuredContent)).toEqual([]);
    expect(textJson(result)).toEqual(result.structuredContent);
  });

  it('async_polls_3: tasks/get answers working twice, then completed with the media buy as result; polls are counted', async () => {
    const auth = freshCredential();
    const url = agent.urlFor(['async_submitted@create_media_buy', 'async_polls_3']);
    const { task_id: taskId } = (await callTool(url, 'create_media_buy', mediaBuy(), auth)).structuredContent!;

    const first = await poll(url, taskId, auth);
    const second = await poll(url, taskId, auth);
    const third = await poll(url, taskId, auth);
    expect([first.status, second.status, third.status]).toEqual(['working', 'working', 'completed']);
    expect(first).toMatchObject({
      task_id: taskId,
      task_type: 'create_media_buy',
      protocol: 'media-buy',
      progress: { step_number: 1, total_steps: 3 },
    });
    expect(first).not.toHaveProperty('result');
    expect(third).toMatchObject({
      completed_at: expect.any(String),
      result: { media_buy_id: expect.stringMatching(/^mb_/), status: 'pending_creatives', context: CONTEXT },
    });
    expect(schemaErrors('media-buy/create-media-buy-response.json', third.result)).toEqual([]);
    expect(pollsOf(taskId)).toBe(3);

    // Terminal is terminal; include_result: false leaves the artifact out.
    expect((await poll(url, taskId, auth, { include_result: false })).status).toBe('completed');
    expect(await poll(url, taskId, auth, { include_result: false })).not.toHaveProperty('result');
  });

  it('registers the media buy only once the task completes', async () => {
    const auth = freshCredential();
    const url = agent.urlFor(['async_submitted@create_media_buy']);
    const { task_id: taskId } = (await callTool(url, 'create_media_buy', mediaBuy(), auth)).structuredContent!;
    const force = async (id: string) =>
      (
        await callTool(
          agent.url,
          'comply_test_controller',
          { scenario: 'force_media_buy_status', params: { media_buy_id: id, status: 'active' } },
          auth,
        )
      ).structuredContent!;
    const done = await poll(url, taskId, auth);
    expect(done.status).toBe('completed');
    expect((await force(done.result.media_buy_id)).success).toBe(true);
  });

  it('polls under tasks_get count toward the same task', async () => {
    const auth = freshCredential();
    const url = agent.urlFor(['async_submitted', 'async_polls_2']);
    const { task_id: taskId } = (await callTool(url, 'create_media_buy', mediaBuy(), auth)).structuredContent!;
    expect((await poll(url, taskId, auth, {}, 'tasks_get')).status).toBe('working');
    expect((await poll(url, taskId, auth, {}, 'tasks/get')).status).toBe('completed');
  });

  it('async_working answers status working on the immediate envelope (no such arm in the 3.0.6 create response schema)', async () => {
    const auth = freshCredential();
    const url = agent.urlFor(['async_working@create_media_buy']);
    const result = await callTool(url, 'create_media_buy', mediaBuy(), auth);
    expect(result.structuredContent).toMatchObject({ status: 'working', task_id: expect.any(String) });
    expect(schemaErrors('media-buy/create-media-buy-response.json', result.structuredContent)).not.toEqual([]);
    expect((await poll(url, result.structuredContent!.task_id, auth)).status).toBe('completed');
  });

  it('async_never stays working on every poll until force_task_completion ends it', async () => {
    const auth = freshCredential();
    const url = agent.urlFor(['async_submitted@create_media_buy', 'async_never']);
    const { task_id: taskId } = (await callTool(url, 'create_media_buy', mediaBuy(), auth)).structuredContent!;
    for (let i = 0; i < 5; i++) {
      const view = await poll(url, taskId, auth);
      expect(view.status).toBe('working');
      expect(view).not.toHaveProperty('progress');
    }
    const forced = await callTool(
      agent.url,
      'comply_test_controller',
      {
        scenario: 'force_task_completion',
        params: { task_id: taskId, result: { media_buy_id: 'mb_forced', packages: [] } },
      },
      auth,
    );
    expect(forced.structuredContent).toMatchObject({
      success: true,
      previous_state: 'working',
      current_state: 'completed',
    });
    expect((await poll(url, taskId, auth)).result).toEqual({ media_buy_id: 'mb_forced', packages: [] });
  });

  it("async_failed ends failed with an error (its recovery the schema's: correctable) and no result", async () => {
    const auth = freshCredential();
    const url = agent.urlFor(['async_submitted@create_media_buy', 'async_failed', 'async_polls_2']);
    const { task_id: taskId } = (await callTool(url, 'create_media_buy', mediaBuy(), auth)).structuredContent!;
    expect((await poll(url, taskId, auth)).status).toBe('working');
    const failed = await poll(url, taskId, auth);
    expect(failed).toMatchObject({
      status: 'failed',
      completed_at: expect.any(String),
      error: { code: 'PRODUCT_UNAVAILABLE', message: expect.any(String), recovery: 'correctable' },
    });
    expect(failed).not.toHaveProperty('result');
  });

  it('answers REFERENCE_NOT_FOUND for an unknown task, or a task of another credential', async () => {
    const auth = freshCredential();
    const url = agent.urlFor(['async_submitted@create_media_buy']);
    const { task_id: taskId } = (await callTool(url, 'create_media_buy', mediaBuy(), auth)).structuredContent!;
    for (const [id, credential] of [
      ['task_nope', auth],
      [taskId, freshCredential()],
    ]) {
      const result = await callTool(url, 'tasks/get', { task_id: id, context: CONTEXT }, credential);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toEqual({
        adcp_error: expect.objectContaining({ code: 'REFERENCE_NOT_FOUND', field: 'task_id', recovery: 'correctable' }),
        context: CONTEXT,
      });
    }
  });

  it('does not touch a create_media_buy that fails validation, nor other tools', async () => {
    const url = agent.urlFor(['async_submitted']);
    const bad = await callTool(
      url,
      'create_media_buy',
      mediaBuy({ packages: [{ product_id: 'prod_nope', pricing_option_id: 'x', budget: 1 }] }),
      freshCredential(),
    );
    expect(bad.structuredContent!.adcp_error.code).toBe('PRODUCT_NOT_FOUND');
    expect((await callTool(url, 'list_creatives')).structuredContent!.creatives).toHaveLength(3);
    expect(() => agent.urlFor(['async_submitted@get_products'])).toThrow(/can only be scoped to: create_media_buy/);
    expect(() => agent.urlFor(['async_polls_0'])).toThrow(/Unknown fixture behaviour/);
  });
});

describe('controller-driven arm', () => {
  it('force_create_media_buy_arm: the next create_media_buy answers the forced task_id and message, once', async () => {
    const auth = freshCredential();
    const directive = await callTool(
      agent.url,
      'comply_test_controller',
      {
        scenario: 'force_create_media_buy_arm',
        params: { arm: 'submitted', task_id: 'task_async_signed_io_q2', message: 'Awaiting IO signature' },
      },
      auth,
    );
    expect(directive.structuredContent).toMatchObject({
      success: true,
      forced: { arm: 'submitted', task_id: 'task_async_signed_io_q2' },
    });

    const submitted = await callTool(agent.url, 'create_media_buy', mediaBuy(), auth);
    expect(submitted.structuredContent).toEqual({
      status: 'submitted',
      task_id: 'task_async_signed_io_q2',
      message: 'Awaiting IO signature',
      context: CONTEXT,
    });
    expect(schemaErrors('media-buy/create-media-buy-response.json', submitted.structuredContent)).toEqual([]);
    // Consumed: the call after is synchronous again.
    expect((await callTool(agent.url, 'create_media_buy', mediaBuy(), auth)).structuredContent).toHaveProperty(
      'media_buy_id',
    );

    // The forced task waits for the controller, however often it is polled.
    expect((await poll(agent.url, 'task_async_signed_io_q2', auth)).status).toBe('submitted');
    expect((await poll(agent.url, 'task_async_signed_io_q2', auth)).status).toBe('submitted');
    const result = { media_buy_id: 'mb_signed_io', packages: [{ package_id: 'pkg_1' }] };
    const completion = await callTool(
      agent.url,
      'comply_test_controller',
      { scenario: 'force_task_completion', params: { task_id: 'task_async_signed_io_q2', result } },
      auth,
    );
    expect(completion.structuredContent).toMatchObject({
      success: true,
      previous_state: 'submitted',
      current_state: 'completed',
    });
    expect((await poll(agent.url, 'task_async_signed_io_q2', auth)).result).toEqual(result);

    const again = await callTool(
      agent.url,
      'comply_test_controller',
      { scenario: 'force_task_completion', params: { task_id: 'task_async_signed_io_q2', result } },
      auth,
    );
    expect(again.structuredContent).toMatchObject({
      success: false,
      error: 'INVALID_TRANSITION',
      current_state: 'completed',
    });
  });

  it('force_task_completion checks the task and the payload', async () => {
    const auth = freshCredential();
    const control = async (params: Record<string, unknown>) =>
      (await callTool(agent.url, 'comply_test_controller', { scenario: 'force_task_completion', params }, auth))
        .structuredContent!;
    expect(await control({ task_id: 'task_nope', result: { media_buy_id: 'x', packages: [] } })).toMatchObject({
      error: 'NOT_FOUND',
    });
    const { task_id: taskId } = (
      await callTool(agent.urlFor(['async_submitted', 'async_never']), 'create_media_buy', mediaBuy(), auth)
    ).structuredContent!;
    expect(await control({ task_id: taskId })).toMatchObject({ error: 'INVALID_PARAMS' });
    expect(await control({ task_id: taskId, result: { status: 'active' } })).toMatchObject({ error: 'INVALID_PARAMS' });
  });
});
