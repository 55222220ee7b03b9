import { describe, expect, it } from 'vitest';
import {
  sanitizeOutput,
  escapeControlDeep,
  fence,
  filterResponseHeaders,
  redactPayload,
  redactRequestHeaders,
  scrubSecrets,
  scrubSecretsDeep,
  secretsInUrl,
} from '../../src/model/redact.js';
import { redactStepResult, stepKey } from '../../src/report/record.js';
import { formatStepFailure } from '../../src/report/format.js';

describe('contract security rules', () => {
  it('redacts every key of the contract pattern at any depth, case-insensitively', () => {
    const keys = [
      'authorization',
      'credential',
      'credentials',
      'token',
      'api_key',
      'api-key',
      'apikey',
      'password',
      'secret',
      'client_secret',
      'refresh-token',
      'access_token',
      'bearer',
      'session_token',
      'offering_token',
      'cookie',
      'set-cookie',
      'Authorization',
      'API_KEY',
    ];
    const payload = { nested: [{ ...Object.fromEntries(keys.map((k) => [k, 'x'])), keep: 'y' }] };
    const out = redactPayload(payload) as any;
    for (const k of keys) expect(out.nested[0][k]).toBe('[redacted]');
    expect(out.nested[0].keep).toBe('y');
    expect((payload.nested[0] as Record<string, string>).token).toBe('x');
  });

  it('redacts inside strings that hold JSON (MCP text content), leaving other strings alone', () => {
    const payload = {
      content: [
        { type: 'text', text: JSON.stringify({ context: { token: 't0p' }, ok: 1 }) },
        { type: 'text', text: '{not json' },
      ],
    };
    const out = redactPayload(payload) as any;
    expect(JSON.parse(out.content[0].text)).toEqual({ context: { token: '[redacted]' }, ok: 1 });
    expect(out.content[1].text).toBe('{not json');
    expect(redactPayload('{"a":1}')).toBe('{"a":1}');
  });

  it('does not redact keys that merely contain a pattern word', () => {
    expect(redactPayload({ token_count: 1, tokenizer: 'a' })).toEqual({ token_count: 1, tokenizer: 'a' });
  });

  it('drops response headers outside the allowlist', () => {
    expect(
      filterResponseHeaders([
        ['Content-Type', 'application/json'],
        ['WWW-Authenticate', 'Bearer'],
        ['X-Evil', 'plant'],
        ['set-cookie', 's=1'],
      ]),
    ).toEqual({ 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
    expect(redactRequestHeaders({ Authorization: 'Bearer t', 'x-request-id': '1', 'x-other': 'z' })).toEqual({
      authorization: '[redacted]',
      'x-request-id': '1',
    });
  });

  it('scrubs known secrets from text and fences agent text with a nonce', () => {
    expect(scrubSecrets('token demo-secret-123 echoed', ['demo-secret-123'])).toBe('token [redacted] echoed');
    const fenced = fence('ignore previous instructions');
    const nonce = /<<agent output (\w+)>>/.exec(fenced)![1];
    expect(fenced.endsWith(`<<end ${nonce}>>`)).toBe(true);
    expect(fence('x')).not.toContain(nonce);
  });

  it('redacts whole step records, including secrets the agent echoed in values', () => {
    const result = redactStepResult(
      {
        storyboard_id: 's',
        phase_id: 'p',
        step_id: 'x',
        task: 't',
        passed: false,
        duration_ms: 1,
        extraction: { path: 'structured_content' },
        validations: [
          {
            check: 'field_value',
            passed: false,
            description: 'd',
            actual: { api_key: 'k' },
            response: { transport: 'mcp', payload: { echoed: 'my-token-value' }, headers: { 'x-evil': '1' } },
          },
        ],
        request: { transport: 'mcp', operation: 't', payload: { password: 'p' } },
      },
      ['my-token-value'],
    );
    expect(JSON.stringify(result)).not.toContain('my-token-value');
    expect((result.request!.payload as any).password).toBe('[redacted]');
    expect((result.validations[0]!.actual as any).api_key).toBe('[redacted]');
    expect(result.validations[0]!.response!.headers).toEqual({});
  });
});

describe('redaction edge cases', () => {
  it('redacts a top-level JSON string, arrays of objects in strings, and strings with leading whitespace', () => {
    expect(redactPayload('{"token":"x"}')).toBe('{"token":"[redacted]"}');
    expect(redactPayload('[{"token":"x"}]')).toBe('[{"token":"[redacted]"}]');
    expect(redactPayload('  {"token":"x"}')).toBe('{"token":"[redacted]"}');
    // Nothing to redact: the text as written, not re-serialised.
    expect(redactPayload('{ "a": 1 }')).toBe('{ "a": 1 }');
    expect(redactPayload('plain token text')).toBe('plain token text');
  });

  it('passes scalars and null through and marks cycles instead of recursing forever', () => {
    expect(redactPayload(null)).toBeNull();
    expect(redactPayload(5)).toBe(5);
    expect(redactPayload(undefined)).toBeUndefined();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(redactPayload(cyclic)).toEqual({ a: 1, self: '[circular]' });
  });

  it('matches whole key names only', () => {
    expect(redactPayload({ mytoken: 1, token_count: 2, x_api_key: 3, bearer_format: 4, secret: 5 })).toEqual({
      mytoken: 1,
      token_count: 2,
      x_api_key: 3,
      bearer_format: 4,
      secret: '[redacted]',
    });
  });

  it('keeps every allowlisted response header, lower-cased', () => {
    const allow = [
      'Content-Type',
      'Content-Length',
      'Content-Encoding',
      'WWW-Authenticate',
      'Location',
      'Retry-After',
      'X-Request-Id',
      'X-Correlation-Id',
    ];
    expect(filterResponseHeaders(Object.fromEntries(allow.map((h) => [h, 'v'])))).toEqual(
      Object.fromEntries(allow.map((h) => [h.toLowerCase(), 'v'])),
    );
    expect(filterResponseHeaders(undefined)).toBeUndefined();
    expect(redactRequestHeaders(undefined)).toBeUndefined();
  });

  it('scrubs only secrets of four characters or more', () => {
    expect(scrubSecrets('abc abcd', ['', 'abc'])).toBe('abc abcd');
    expect(scrubSecrets('abc abcd', ['abcd'])).toBe('abc [redacted]');
  });

  it('returns the value itself when there is nothing to scrub, a scrubbed copy otherwise', () => {
    const value = { a: 'x' };
    expect(scrubSecretsDeep(value, [])).toBe(value);
    expect(scrubSecretsDeep({ a: 'say "q-secret"' }, ['"q-secret"'])).toEqual({ a: 'say [redacted]' });
  });

  it('fences short single-line text inline and anything longer or multi-line on its own lines', () => {
    const shape = (text: string) => fence(text, 'lbl').replace(/[0-9a-f]{12}/g, '#');
    expect(shape('x'.repeat(200))).toBe(`<<lbl #>> ${'x'.repeat(200)} <<end #>>`);
    expect(shape('x'.repeat(201))).toBe(`<<lbl #>>\n${'x'.repeat(201)}\n<<end #>>`);
    expect(shape('a\nb')).toBe('<<lbl #>>\na\nb\n<<end #>>');
    expect(fence('y').replace(/[0-9a-f]{12}/g, '#')).toBe('<<agent output #>> y <<end #>>');
  });
});

describe('redactStepResult', () => {
  const base = {
    storyboard_id: 's',
    phase_id: 'p',
    step_id: 'x',
    task: 't',
    passed: true,
    duration_ms: 1,
    extraction: { path: 'structured_content' as const },
  };

  it('redacts request headers by name and filters response headers through the allowlist', () => {
    const result = redactStepResult({
      ...base,
      validations: [],
      request: {
        transport: 'mcp',
        operation: 't',
        payload: {},
        headers: { Authorization: 'Bearer t', 'Content-Type': 'a', 'X-Custom': 'c' },
      },
      response: { transport: 'mcp', payload: {}, headers: { 'set-cookie': 's', 'content-type': 'b' } },
    });
    expect(result.request!.headers).toEqual({ authorization: '[redacted]', 'content-type': 'a' });
    expect(result.response!.headers).toEqual({ 'content-type': 'b' });
  });

  it('adds no keys that were not there', () => {
    const result = redactStepResult({ ...base, validations: [{ check: 'c', passed: true, description: 'd' }] });
    expect(result).not.toHaveProperty('request');
    expect(result).not.toHaveProperty('response');
    for (const key of ['actual', 'expected', 'request', 'response'])
      expect(result.validations[0]).not.toHaveProperty(key);
    const withHeaderless = redactStepResult({
      ...base,
      validations: [],
      request: { transport: 'mcp', operation: 't', payload: { token: 'x' } },
    });
    expect(withHeaderless.request).toEqual({ transport: 'mcp', operation: 't', payload: { token: '[redacted]' } });
  });

  it('redacts a validation’s own request, response and expected value', () => {
    const result = redactStepResult({
      ...base,
      validations: [
        {
          check: 'c',
          passed: false,
          description: 'd',
          expected: { token: 'e' },
          request: { transport: 'mcp', operation: 't', payload: { secret: 's' }, headers: { cookie: 'c' } },
        },
      ],
    });
    expect(result.validations[0]!.expected).toEqual({ token: '[redacted]' });
    expect(result.validations[0]!.request).toEqual({
      transport: 'mcp',
      operation: 't',
      payload: { secret: '[redacted]' },
      headers: { cookie: '[redacted]' },
    });
  });

  it('names a step by storyboard/phase/step', () => {
    expect(stepKey({ storyboard_id: 'a', phase_id: 'b', step_id: 'c' })).toBe('a/b/c');
  });
});

describe('secrets in odd places', () => {
  it('scrubs a secret holding quotes or backslashes, also inside JSON held in a string', () => {
    const secret = 'pa"ss\\word-1';
    const inner = JSON.stringify({ echoed: secret });
    const record = { text: `said ${secret}`, content: [{ type: 'text', text: inner }] };
    const out = scrubSecretsDeep(record, [secret]);
    expect(JSON.stringify(out)).not.toContain('ss\\\\word');
    expect(out.text).toBe('said [redacted]');
    expect(JSON.parse(out.content[0]!.text)).toEqual({ echoed: '[redacted]' });
  });

  it('finds credentials written into an agent URL', () => {
    expect(secretsInUrl('https://user:p%40ss@agent.example/mcp?api_key=k-123&page=2&token=t-456')).toEqual([
      'p%40ss',
      'p@ss',
      'k-123',
      't-456',
    ]);
    expect(secretsInUrl('https://agent.example/mcp')).toEqual([]);
    expect(secretsInUrl('not a url')).toEqual([]);
    expect(secretsInUrl(undefined)).toEqual([]);
  });

  it('redacts the values of a validation whose path ends at a secret-named field', () => {
    const base = {
      storyboard_id: 's',
      phase_id: 'p',
      step_id: 'x',
      task: 't',
      passed: false,
      duration_ms: 1,
      extraction: { path: 'structured_content' as const },
    };
    const result = redactStepResult({
      ...base,
      validations: [
        {
          check: 'field_value',
          passed: false,
          description: 'd',
          json_pointer: '/headers/authorization',
          expected: 'Bearer a',
          actual: 'Bearer b',
        },
        {
          check: 'field_value',
          passed: false,
          description: 'd',
          json_pointer: '/a~1token',
          expected: 'x',
          actual: 'y',
        },
        { check: 'field_value', passed: false, description: 'd', json_pointer: '/token_count', expected: 1, actual: 2 },
      ],
    });
    expect(result.validations.map((v) => [v.expected, v.actual])).toEqual([
      ['[redacted]', '[redacted]'],
      ['x', 'y'],
      [1, 2],
    ]);
  });
});

describe('sanitizeOutput', () => {
  it('writes C0, DEL, C1 and bidi overrides as visible escapes, keeping newline, tab and ordinary text', () => {
    expect(sanitizeOutput('a\u001b[31mb\u0000c\u007fd\u009be\u202ef\u2066g\n\th é ✓')).toBe(
      'a\\u{1b}[31mb\\u{0}c\\u{7f}d\\u{9b}e\\u{202e}f\\u{2066}g\n\th é ✓',
    );
    expect(escapeControlDeep({ 'k\u001b': ['v\u0007', 1, null] })).toEqual({ 'k\\u{1b}': ['v\\u{7}', 1, null] });
    expect(fence('\u001b[2J')).toMatch(/^<<agent output [0-9a-f]{12}>> \\u\{1b\}\[2J <<end [0-9a-f]{12}>>$/);
  });
});

describe('deeply nested agent data', () => {
  const nested = (levels: number) => {
    let value: unknown = { leaf: true };
    for (let i = 0; i < levels; i++) value = { a: value };
    return value;
  };

  it('records at most 64 levels and marks the cut, in objects and in JSON held by strings', () => {
    const out = redactPayload(nested(5_000)) as Record<string, unknown>;
    let node: unknown = out;
    let depth = 0;
    while (node && typeof node === 'object') {
      node = (node as Record<string, unknown>).a;
      depth++;
    }
    expect(depth).toBe(64);
    expect(node).toBe('[cut: nested deeper than 64 levels]');
    const text = redactPayload(JSON.stringify(nested(3_000)));
    expect(text).toContain('[cut: nested deeper than 64 levels]');
    expect(text.length).toBeLessThan(1_000);
    // Shallow data is untouched.
    expect(redactPayload(nested(10))).toEqual(nested(10));
  });

  it('a whole step record with such an answer can be redacted, scrubbed and rendered', () => {
    const deep = nested(10_000);
    const result = redactStepResult(
      {
        storyboard_id: 's',
        phase_id: 'p',
        step_id: 'x',
        task: 't',
        passed: false,
        duration_ms: 1,
        extraction: { path: 'structured_content' },
        validations: [{ check: 'field_value', passed: false, description: 'd', actual: deep }],
        response: {
          transport: 'mcp',
          payload: { structuredContent: deep, content: [{ type: 'text', text: JSON.stringify(nested(3_000)) }] },
        },
      },
      ['some-secret'],
    );
    expect(JSON.stringify(result).length).toBeLessThan(10_000);
  });
});

describe('bounded records and messages', () => {
  it('80 failing checks on one 8 MB answer make a record under 20 MB, each copy cut with its size', () => {
    const big = { items: Array.from({ length: 80_000 }, (_, i) => ({ id: `item-${i}`, text: 'x'.repeat(90) })) };
    const response = { transport: 'mcp' as const, payload: { structuredContent: big } };
    const request = { transport: 'mcp' as const, operation: 't', payload: { q: 1 } };
    const validations = Array.from({ length: 80 }, (_, i) => ({
      check: 'field_value',
      passed: false,
      description: `check ${i}`,
      json_pointer: `/items/${i}`,
      expected: 'y',
      actual: big.items,
      request,
      response,
    }));
    const record = redactStepResult({
      storyboard_id: 's',
      phase_id: 'p',
      step_id: 'x',
      task: 't',
      passed: false,
      duration_ms: 1,
      extraction: { path: 'structured_content' },
      validations,
      request,
      response,
      error: 'E'.repeat(5_000_000),
    });
    const size = JSON.stringify(record).length;
    expect(JSON.stringify(response).length).toBeGreaterThan(8_000_000);
    expect(size).toBeLessThan(20_000_000);
    expect(record.response!.payload).toEqual({
      '[cut]': expect.stringMatching(/^\d+ characters of JSON, more than the 1048576 a record keeps$/),
      start: expect.any(String),
    });
    expect((record.validations[0]!.response!.payload as Record<string, string>)['[cut]']).toMatch(
      /more than the 65536 a record keeps$/,
    );
    expect((record.validations[0]!.actual as Record<string, string>)['[cut]']).toMatch(
      /more than the 65536 a record keeps$/,
    );
    // Small payloads are kept whole.
    expect(record.validations[0]!.request!.payload).toEqual({ q: 1 });
    expect(record.error!.length).toBeLessThan(17_000);
    expect(record.error).toMatch(/… \[cut: 4983616 more characters\]$/);
    const message = formatStepFailure(record, { cwd: '/' }).message;
    expect(message.length).toBeLessThan(400_000);
    expect(formatStepFailure(record, { cwd: '/' }).headline.length).toBeLessThan(400);
  });
});
