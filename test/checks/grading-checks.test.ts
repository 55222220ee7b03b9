/**
 * The pure checks of the grading model (src/checks/): envelope_field_present,
 * status_code, refs_resolve, the HTTP-status checks and a2a_submitted_artifact,
 * on hand-made exchanges. Over the wire against the fixture agent:
 * test/engine/grading-model.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { checks, type CheckInput, type Exchange } from '../../src/checks/index.js';
import type { Step, Validation } from '../../src/model/storyboard.js';

const at = { line: 1, column: 1 };
const STEP: Step = { id: 'step', task: 'get_products', validations: [], loc: at };

function exchange(data: unknown, overrides: Partial<Exchange> = {}): Exchange {
  return {
    request: { transport: 'mcp', operation: 'get_products', payload: {} },
    response: { transport: 'mcp', payload: {}, status: 200 },
    extraction: { path: 'structured_content' },
    data,
    ...overrides,
  };
}

function check(written: { check: string; [key: string]: unknown }, ex: Exchange, more: Partial<CheckInput> = {}) {
  const run = checks[written.check];
  if (!run) throw new Error(`no check ${written.check}`);
  return run({ validation: { loc: at, ...written } as Validation, step: STEP, task: STEP.task, exchange: ex, ...more });
}

describe('envelope_field_present', () => {
  it('over MCP reads the envelope fields at the top of the result', () => {
    expect(
      check({ check: 'envelope_field_present', path: 'task_id' }, exchange({ status: 'submitted', task_id: 'task_1' })),
    ).toEqual({ passed: true, json_pointer: '/task_id' });
  });

  it('reads the transport envelope, not the payload, when the transport keeps them apart', () => {
    const apart = exchange({ context_id: 'in-payload-only' }, { envelope: { task_id: 'task_1' } });
    expect(check({ check: 'envelope_field_present', path: 'task_id' }, apart).passed).toBe(true);
    expect(check({ check: 'envelope_field_present', path: 'context_id' }, apart)).toEqual({
      passed: false,
      json_pointer: '/context_id',
      expected: 'context_id',
      actual: null,
      error: '"context_id" is missing from the protocol envelope',
    });
  });

  it('a null field is missing', () => {
    expect(check({ check: 'envelope_field_present', path: 'task_id' }, exchange({ task_id: null }))).toMatchObject({
      passed: false,
      json_pointer: '/task_id',
      actual: null,
    });
  });
});

describe('status_code', () => {
  it('passes on the expected status, or one of allowed_values', () => {
    expect(check({ check: 'status_code', value: 200 }, exchange({}))).toEqual({ passed: true, json_pointer: null });
    const created = exchange({}, { response: { transport: 'mcp', payload: {}, status: 201 } });
    expect(check({ check: 'status_code', allowed_values: [200, 201] }, created).passed).toBe(true);
  });

  it('fails on another status with expected and actual, and when no status was observed', () => {
    const denied = exchange({}, { response: { transport: 'mcp', payload: {}, status: 401 } });
    expect(check({ check: 'status_code', value: 200 }, denied)).toMatchObject({
      passed: false,
      json_pointer: null,
      expected: 200,
      actual: 401,
    });
    expect(check({ check: 'status_code', allowed_values: [200, 201] }, denied)).toMatchObject({
      passed: false,
      expected: [200, 201],
      actual: 401,
    });
    expect(check({ check: 'status_code', value: 200 }, exchange({}, { response: undefined }))).toMatchObject({
      passed: false,
      expected: 200,
      actual: null,
    });
  });
});

describe('http_status, http_status_in, on_401_require_header', () => {
  const answered = (status: number, headers: Record<string, string> = {}) =>
    exchange({}, { response: { transport: 'mcp', payload: {}, status, headers } });

  it('http_status / http_status_in compare the observed status; no status is a failure, not a pass', () => {
    expect(check({ check: 'http_status', value: 401 }, answered(401)).passed).toBe(true);
    expect(check({ check: 'http_status', value: 401 }, answered(200))).toMatchObject({
      passed: false,
      expected: 401,
      actual: 200,
    });
    expect(check({ check: 'http_status_in', allowed_values: [401, 403] }, answered(403)).passed).toBe(true);
    expect(check({ check: 'http_status_in', allowed_values: [401, 403] }, answered(200))).toMatchObject({
      passed: false,
      expected: [401, 403],
      actual: 200,
    });
    for (const kind of ['http_status', 'http_status_in']) {
      expect(
        check({ check: kind, value: 401, allowed_values: [401] }, exchange({}, { response: undefined })),
      ).toMatchObject({ passed: false, actual: null });
    }
  });

  it('on_401_require_header: a 401 must carry the header (any case, default WWW-Authenticate); other statuses pass', () => {
    expect(
      check(
        { check: 'on_401_require_header', value: 'www-authenticate' },
        answered(401, { 'WWW-Authenticate': 'Bearer realm="x"' }),
      ).passed,
    ).toBe(true);
    expect(check({ check: 'on_401_require_header' }, answered(401, { 'www-authenticate': 'Bearer' })).passed).toBe(
      true,
    );
    expect(check({ check: 'on_401_require_header' }, answered(401))).toEqual({
      passed: false,
      json_pointer: null,
      expected: 'www-authenticate',
      actual: null,
      error: 'the 401 answer has no www-authenticate header',
    });
    expect(check({ check: 'on_401_require_header' }, answered(403)).passed).toBe(true);
  });
});

describe('a2a_submitted_artifact', () => {
  it('over MCP: passed, with not_applicable saying why', () => {
    expect(check({ check: 'a2a_submitted_artifact' }, exchange({ status: 'submitted' }))).toEqual({
      passed: true,
      json_pointer: null,
      not_applicable: 'the agent was reached over mcp, not A2A',
    });
  });

  const overA2a = (task: unknown, more: Partial<Exchange> = {}) =>
    exchange(
      { status: 'submitted' },
      {
        request: { transport: 'a2a', operation: 'create_media_buy', payload: {} },
        response: { transport: 'a2a', payload: task, status: 200 },
        ...more,
      },
    );
  const submitted = (
    over: Record<string, unknown> = {},
    data: Record<string, unknown> = { status: 'submitted', task_id: 'task_1' },
  ) => ({
    kind: 'task',
    id: 'a2a-1',
    contextId: 'ctx-1',
    status: { state: 'completed' },
    artifacts: [
      {
        artifactId: 'art-1',
        parts: [
          { kind: 'text', text: 'queued' },
          { kind: 'data', data },
        ],
        metadata: { adcp_task_id: 'task_1' },
      },
    ],
    ...over,
  });

  it('over A2A: passes on the submitted arm of an A2A Task (0.3 and 1.0 spellings)', () => {
    expect(check({ check: 'a2a_submitted_artifact' }, overA2a(submitted()))).toEqual({
      passed: true,
      json_pointer: null,
    });
    expect(
      check(
        { check: 'a2a_submitted_artifact' },
        overA2a({ task: submitted({ kind: undefined, status: { state: 'TASK_STATE_COMPLETED' } }) }),
      ),
    ).toEqual({ passed: true, json_pointer: null });
  });

  it('over A2A: fails on a Task left submitted, pointing at its state', () => {
    expect(check({ check: 'a2a_submitted_artifact' }, overA2a(submitted({ status: { state: 'submitted' } })))).toEqual({
      passed: false,
      json_pointer: '/status/state',
      expected: 'completed',
      actual: 'submitted',
      error:
        'Task.state is "submitted": a submitted AdCP arm completes the A2A call (the AdCP task, not the A2A one, is submitted)',
    });
  });

  it('over A2A: names every broken invariant, the first one in the pointer', () => {
    const verdict = check(
      { check: 'a2a_submitted_artifact' },
      overA2a(submitted({ id: '', contextId: undefined }, { status: 'completed' })),
    );
    expect(verdict).toMatchObject({ passed: false, json_pointer: '/id', expected: 'a non-empty string', actual: '' });
    expect(verdict.error).toBe(
      '3 A2A envelope invariants failed: /id: Task.id is not a non-empty string; /contextId: Task.contextId is not a non-empty string; /artifacts/0/parts/1/data/status: the AdCP payload\'s status is "completed", not "submitted"',
    );
    expect(check({ check: 'a2a_submitted_artifact' }, overA2a(submitted({ artifacts: [] })))).toMatchObject({
      passed: false,
      json_pointer: '/artifacts/0/parts',
      error: 'no DataPart carries the AdCP response',
    });
  });

  it('over A2A: a JSON-RPC error or a Message is no Task to check', () => {
    const rpcError = { code: -32602, message: 'bad' };
    expect(check({ check: 'a2a_submitted_artifact' }, overA2a({ error: rpcError }, { rpcError }))).toMatchObject({
      passed: false,
      actual: { error: rpcError },
      error: 'the agent answered with a JSON-RPC error (-32602), not an A2A Task',
    });
    expect(check({ check: 'a2a_submitted_artifact' }, overA2a({ kind: 'message', parts: [] }))).toMatchObject({
      passed: false,
      actual: { kind: 'message' },
      error: expect.stringMatching(/not an A2A Task/),
    });
  });
});

describe('refs_resolve', () => {
  const AGENT = 'http://127.0.0.1:4000/mcp';
  const ref = (id: string, agent_url: string = AGENT) => ({ agent_url, id, width: 300 });
  const target = exchange({ formats: [{ format_id: ref('a') }, { format_id: ref('b') }] });
  const productsWith = (...formatIds: unknown[][]) =>
    new Map<string, unknown>([['products', formatIds.map((format_ids) => ({ format_ids }))]]);
  const integrity = (extra: Record<string, unknown> = {}) => ({
    check: 'refs_resolve',
    source: { from: 'context', path: 'products[*].format_ids[*]' },
    target: { from: 'current_step', path: 'formats[*].format_id' },
    match_keys: ['agent_url', 'id'],
    ...extra,
  });

  it('passes when every ref resolves on the match keys', () => {
    expect(check(integrity(), target, { context: productsWith([ref('a'), ref('b')], [ref('a')]) })).toEqual({
      passed: true,
      json_pointer: '/products',
    });
  });

  it('lists the unresolved refs in actual.missing, projected to the match keys, duplicates collapsed', () => {
    const verdict = check(integrity(), target, {
      context: productsWith([ref('x'), ref('a')], [ref('x'), ref('y')], [ref('x', 'https://other.example/mcp')]),
    });
    expect(verdict).toEqual({
      passed: false,
      json_pointer: '/products',
      expected: { every_ref_in: 'formats[*].format_id', match_keys: ['agent_url', 'id'] },
      actual: {
        missing: [
          { agent_url: AGENT, id: 'x' },
          { agent_url: AGENT, id: 'y' },
          { agent_url: 'https://other.example/mcp', id: 'x' },
        ],
      },
      error: '3 ref(s) from products[*].format_ids[*] do not resolve to formats[*].format_id on [agent_url, id]',
    });
  });

  it('a ref missing a match key never matches, not even a target missing the same key', () => {
    const keyless = exchange({ formats: [{ format_id: { id: 'a' } }] });
    const verdict = check(integrity(), keyless, { context: productsWith([{ id: 'a' }]) });
    expect(verdict).toMatchObject({ passed: false, actual: { missing: [{ agent_url: null, id: 'a' }] } });
  });

  it('refs that are not objects never match, and are listed with null keys', () => {
    const verdict = check(integrity(), target, { context: productsWith(['a', 7]) });
    expect(verdict).toMatchObject({ passed: false, actual: { missing: [{ agent_url: null, id: null }] } });
  });

  it('an empty or absent source set passes: there is nothing to resolve', () => {
    expect(check(integrity(), target, { context: productsWith([]) })).toEqual({
      passed: true,
      json_pointer: '/products',
    });
    expect(check(integrity(), target, { context: new Map() })).toMatchObject({ passed: true });
  });

  it('caps the fan-out of a hostile source at 10,000 refs and says so', () => {
    const many = Array.from({ length: 10_050 }, () => ref('a'));
    const verdict = check(integrity(), target, { context: productsWith(many) });
    expect(verdict).toEqual({
      passed: true,
      json_pointer: '/products',
      observations: ['fan-out capped at 10000 values'],
    });
  });

  it('reads both sets from the current step when told to', () => {
    const both = exchange({ products: [{ format_ids: [ref('a'), ref('z')] }], formats: [{ format_id: ref('a') }] });
    const verdict = check(integrity({ source: { from: 'current_step', path: 'products[*].format_ids[*]' } }), both);
    expect(verdict).toMatchObject({ passed: false, actual: { missing: [{ agent_url: AGENT, id: 'z' }] } });
  });

  describe('scope', () => {
    const context = productsWith([
      ref('a', 'HTTP://127.0.0.1:4000/MCP/'),
      ref('z', 'https://other.example/mcp'),
      ref('z', 'https://other.example/mcp/'),
    ]);
    const scoped = (onOutOfScope?: string) =>
      integrity({
        scope: { key: 'agent_url', equals: '$agent_url' },
        ...(onOutOfScope ? { on_out_of_scope: onOutOfScope } : {}),
      });

    it('$agent_url is the agent the run reached; url keys compare without case or trailing slash; warn (the default) passes with observations', () => {
      for (const mode of [undefined, 'warn']) {
        expect(check(scoped(mode), target, { context, agentUrl: AGENT })).toEqual({
          passed: true,
          json_pointer: '/products',
          // The other agent's ref appears twice (with and without a trailing slash): one ref once normalised.
          observations: [
            `1 ref(s) outside scope agent_url = ${AGENT} were not checked: [{"agent_url":"https://other.example/mcp","id":"z"}]`,
          ],
        });
      }
    });

    it('ignore: passes silently', () => {
      expect(check(scoped('ignore'), target, { context, agentUrl: AGENT })).toEqual({
        passed: true,
        json_pointer: '/products',
      });
    });

    /** The ref at the other agent (written twice, up to a trailing slash), as `actual.missing` lists it when graded and unresolved. */
    const otherAgentRefs = {
      passed: false,
      actual: { missing: [{ agent_url: 'https://other.example/mcp', id: 'z' }] },
    };

    it('fail: the out-of-scope refs count as missing', () => {
      expect(check(scoped('fail'), target, { context, agentUrl: AGENT })).toMatchObject(otherAgentRefs);
    });

    it('a literal scope value: refs equal to it up to a trailing slash are in scope (and here unresolved), the rest is not', () => {
      const literal = integrity({
        scope: { key: 'agent_url', equals: 'https://other.example/mcp' },
        on_out_of_scope: 'ignore',
      });
      expect(check(literal, target, { context, agentUrl: AGENT })).toMatchObject(otherAgentRefs);
    });
  });

  it('without source, target or match_keys it fails, saying what is missing', () => {
    expect(
      check(
        { check: 'refs_resolve', source: { from: 'context', path: 'p' }, target: { from: 'current_step', path: 'f' } },
        target,
      ),
    ).toMatchObject({
      passed: false,
      error: 'refs_resolve needs source: { from, path }, target: { from, path } and a non-empty match_keys list',
    });
  });
});

describe('refs_resolve duplicates', () => {
  it('collapse on the compared form: a URL with and without its trailing slash is one missing ref', async () => {
    const { refsResolve } = await import('../../src/checks/refs-resolve.js');
    const verdict = refsResolve({
      validation: {
        check: 'refs_resolve',
        source: { from: 'current_step', path: 'refs[*]' },
        target: { from: 'current_step', path: 'formats[*]' },
        match_keys: ['agent_url', 'id'],
        loc: { line: 1, column: 1 },
      },
      step: { id: 's', task: 't', validations: [], loc: { line: 1, column: 1 } },
      task: 't',
      exchange: {
        request: { transport: 'mcp', operation: 't', payload: {} },
        extraction: { path: 'structured_content' },
        data: {
          refs: [
            { agent_url: 'https://a.example/mcp', id: 'x' },
            { agent_url: 'https://a.example/mcp/', id: 'x' },
          ],
          formats: [],
        },
      },
    });
    expect(verdict.passed).toBe(false);
    expect((verdict.actual as { missing: unknown[] }).missing).toEqual([
      { agent_url: 'https://a.example/mcp', id: 'x' },
    ]);
  });
});
