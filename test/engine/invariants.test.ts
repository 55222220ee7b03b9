/**
 * The run-wide invariants (src/engine/invariants.ts) on hand-made exchanges:
 * the edges of each rule. The fixture-agent runs in grading-model.e2e.test.ts
 * show them on the wire.
 */
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/model/exchange.js';
import { checkInvariants, IMPLEMENTED_INVARIANTS } from '../../src/engine/invariants.js';

const SECRET = 'secret-token-0123456789';

function exchange(payload: Record<string, unknown>, data: unknown, extra: Partial<Exchange> = {}): Exchange {
  return {
    request: { transport: 'mcp', operation: 'get_products', payload },
    response: { transport: 'mcp', payload: {}, status: 200 },
    extraction: { path: 'structured_content' },
    data,
    ...extra,
  };
}
const byId = (e: Exchange, secrets: string[] = [SECRET]) =>
  Object.fromEntries(checkInvariants(e, secrets).map((v) => [v.id, v]));

describe('context.echo', () => {
  it('passes a verbatim echo, fails a missing or altered one', () => {
    const ctx = { correlation_id: 'c-1', n: [1, 2] };
    expect(
      byId(exchange({ context: ctx }, { context: { n: [1, 2], correlation_id: 'c-1' } }))['context.echo'],
    ).toMatchObject({ passed: true, json_pointer: '/context' });
    expect(byId(exchange({ context: ctx }, { products: [] }))['context.echo']).toMatchObject({
      passed: false,
      expected: ctx,
      actual: null,
      error: 'the answer does not echo the request context',
    });
    expect(byId(exchange({ context: ctx }, { context: null }))['context.echo']).toMatchObject({
      passed: false,
      actual: null,
      error: 'the answer does not echo the request context',
    });
    expect(
      byId(exchange({ context: ctx }, { context: { correlation_id: 'c-2', n: [1, 2] } }))['context.echo'],
    ).toMatchObject({
      passed: false,
      actual: { correlation_id: 'c-2', n: [1, 2] },
      error: 'the echoed context differs from the one sent',
    });
    expect(byId(exchange({ context: ctx }, null))['context.echo']).toMatchObject({ passed: false, actual: null });
  });

  it('no context sent: none may come back (null counts as none)', () => {
    expect(byId(exchange({}, { products: [] }))['context.echo']).toBeUndefined();
    expect(byId(exchange({}, { context: null }))['context.echo']).toBeUndefined();
    expect(byId(exchange({}, { context: { invented: true } }))['context.echo']).toMatchObject({
      passed: false,
      expected: null,
      json_pointer: '/context',
      actual: { invented: true },
      error: 'the agent answered with a context the request did not send',
    });
  });

  it('does not apply to transport errors, missing data, or HTTP-level rejections', () => {
    expect(checkInvariants(exchange({ context: { a: 1 } }, { x: 1 }, { transportError: 'timeout' }), [SECRET])).toEqual(
      [],
    );
    expect(checkInvariants(exchange({ context: { a: 1 } }, undefined), [SECRET])).toEqual([]);
    const rejected = byId(
      exchange(
        { context: { a: 1 } },
        { error: 'unauthorized' },
        { extraction: { path: 'none', note: 'HTTP 401: not an MCP answer' } },
      ),
    );
    expect(rejected['context.echo']).toBeUndefined();
    expect(rejected['context.no_secret_echo']).toMatchObject({ passed: true });
    const noted = byId(
      exchange(
        { context: { a: 1 } },
        { x: 1 },
        { extraction: { path: 'text_fallback', note: 'parsed text; HTTP 200' } },
      ),
    );
    expect(noted['context.echo']).toMatchObject({ passed: false });
  });
});

describe('context.no_secret_echo', () => {
  it('finds a run credential anywhere in the answer, with its pointer', () => {
    const v = byId(exchange({}, { items: [{ 'a/b': { note: `token ${SECRET} here` } }] }))['context.no_secret_echo'];
    expect(v).toEqual({
      id: 'context.no_secret_echo',
      passed: false,
      description: 'context.no_secret_echo: the answer carries no credential of the run and no credential-named field',
      json_pointer: '/items/0/a~1b/note',
      expected: 'no credential in the answer',
      actual: '[redacted]',
      error: 'the answer carries a credential this run sent',
    });
    expect(byId(exchange({}, { k: { '~x': SECRET } }))['context.no_secret_echo']!.json_pointer).toBe('/k/~0x');
    expect(byId(exchange({}, SECRET))['context.no_secret_echo']).toMatchObject({ passed: false, json_pointer: '' });
  });

  it('ignores short secrets (under 12 characters) and answers without them', () => {
    expect(byId(exchange({}, { note: 'short-key1 abc' }), ['short-key1'])['context.no_secret_echo']).toMatchObject({
      passed: true,
      json_pointer: null,
    });
    expect(byId(exchange({}, { note: 'twelve-chars' }), ['twelve-chars'])['context.no_secret_echo']).toMatchObject({
      passed: false,
    });
  });

  it('flags credential-named fields that carry a value, whatever the case', () => {
    for (const key of ['authorization', 'API_KEY', 'api-key', 'apikey', 'X-Api-Key', 'Bearer']) {
      expect(byId(exchange({}, { meta: { [key]: 'v' } }))['context.no_secret_echo']).toMatchObject({
        passed: false,
        json_pointer: `/meta/${key}`,
        error: `the answer carries a credential-named field "${key}"`,
      });
    }
    for (const value of [null, ''])
      expect(byId(exchange({}, { meta: { authorization: value } }))['context.no_secret_echo']).toMatchObject({
        passed: true,
      });
    for (const key of ['authorization_url', 'my_api_key', 'bearer_token'])
      expect(byId(exchange({}, { [key]: 'v' }))['context.no_secret_echo']).toMatchObject({ passed: true });
  });

  it('the verbatim echo of the request context is not a leak; an altered one is checked', () => {
    const ctx = { note: `carries ${SECRET}` };
    expect(byId(exchange({ context: ctx }, { context: ctx }))['context.no_secret_echo']).toMatchObject({
      passed: true,
    });
    expect(
      byId(exchange({ context: ctx }, { context: { note: `still ${SECRET}` } }))['context.no_secret_echo'],
    ).toMatchObject({ passed: false, json_pointer: '/context/note' });
    expect(byId(exchange({ context: ctx }, { context: ctx, other: SECRET }))['context.no_secret_echo']).toMatchObject({
      passed: false,
      json_pointer: '/other',
    });
  });

  it('stops descending past 64 levels', () => {
    const nested = (levels: number) => {
      let value: unknown = SECRET;
      for (let i = 0; i < levels; i++) value = { d: value };
      return value;
    };
    expect(byId(exchange({}, nested(65)))['context.no_secret_echo']).toMatchObject({ passed: true });
    expect(byId(exchange({}, nested(64)))['context.no_secret_echo']).toMatchObject({ passed: false });
  });

  it('a request without a payload: nothing was sent to echo or to excuse', () => {
    const e = exchange({}, { context: { a: 1 }, note: SECRET });
    e.request.payload = undefined;
    expect(byId(e)).toMatchObject({
      'context.echo': { passed: false },
      'context.no_secret_echo': { passed: false, json_pointer: '/note' },
    });
  });
});

describe('idempotency.conflict_no_payload_leak', () => {
  const conflict = {
    code: 'IDEMPOTENCY_CONFLICT',
    message: 'key reused',
    field: 'idempotency_key',
    suggestion: 's',
    recovery: 'correctable',
    retry_after: 1,
    retryable: false,
  };

  it('applies only to IDEMPOTENCY_CONFLICT', () => {
    expect(
      byId(exchange({}, { adcp_error: { code: 'INVALID_REQUEST', cached: {} } }))[
        'idempotency.conflict_no_payload_leak'
      ],
    ).toBeUndefined();
    expect(byId(exchange({}, { products: [] }))['idempotency.conflict_no_payload_leak']).toBeUndefined();
  });

  it('passes the error and the envelope alone', () => {
    const data = {
      adcp_error: conflict,
      errors: [conflict],
      context: { a: 1 },
      ext: {},
      status: 'failed',
      message: 'm',
      task_id: 't',
      context_id: 'c',
      timestamp: 'now',
      // core/version-envelope.json (3.1): composed into every response.
      adcp_version: '3.1',
      adcp_major_version: 3,
    };
    expect(byId(exchange({ context: { a: 1 } }, data))['idempotency.conflict_no_payload_leak']).toEqual({
      id: 'idempotency.conflict_no_payload_leak',
      passed: true,
      description:
        'idempotency.conflict_no_payload_leak: an IDEMPOTENCY_CONFLICT error carries no cached payload, request or fingerprint',
      json_pointer: null,
    });
  });

  it('fails on anything else, at the top, in adcp_error, or in an errors item', () => {
    const data = {
      adcp_error: { ...conflict, fingerprint: 'f' },
      errors: ['not an object', { ...conflict, cached_response: {} }],
      media_buy: {},
    };
    expect(byId(exchange({}, data))['idempotency.conflict_no_payload_leak']).toMatchObject({
      passed: false,
      json_pointer: '/media_buy',
      actual: ['/media_buy', '/adcp_error/fingerprint', '/errors/1/cached_response'],
      error:
        'the conflict error carries fields beyond the error and envelope: /media_buy, /adcp_error/fingerprint, /errors/1/cached_response',
    });
    expect(
      byId(exchange({}, { errors: [{ code: 'IDEMPOTENCY_CONFLICT', original_request: {} }] }))[
        'idempotency.conflict_no_payload_leak'
      ],
    ).toMatchObject({
      passed: false,
      expected: 'only the error (code, message, field, suggestion, recovery) and the envelope',
      actual: ['/errors/0/original_request'],
    });
  });

  it('reads adcp_error only when it is an object, errors only when it is a list', () => {
    expect(
      byId(exchange({}, { adcp_error: 'conflict', errors: [{ code: 'IDEMPOTENCY_CONFLICT' }] }))[
        'idempotency.conflict_no_payload_leak'
      ],
    ).toMatchObject({ passed: true });
    expect(
      byId(exchange({}, { adcp_error: { code: 'IDEMPOTENCY_CONFLICT' }, errors: 'none' }))[
        'idempotency.conflict_no_payload_leak'
      ],
    ).toMatchObject({ passed: true });
    expect(
      byId(exchange({}, { adcp_error: { code: 'IDEMPOTENCY_CONFLICT' } }))['idempotency.conflict_no_payload_leak'],
    ).toMatchObject({ passed: true });
  });
});

it('names the invariants it implements', () => {
  expect([...IMPLEMENTED_INVARIANTS].sort()).toEqual([
    'context.echo',
    'context.no_secret_echo',
    'idempotency.conflict_no_payload_leak',
  ]);
});
