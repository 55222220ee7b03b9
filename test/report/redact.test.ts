import { describe, expect, it } from 'vitest';
import { fence, filterResponseHeaders, redactPayload, redactRequestHeaders, scrubSecrets } from '../../src/report/redact.js';
import { redactStepResult } from '../../src/report/record.js';

describe('contract security rules', () => {
  it('redacts every key of the contract pattern at any depth, case-insensitively', () => {
    const keys = ['authorization', 'credential', 'credentials', 'token', 'api_key', 'api-key', 'apikey', 'password', 'secret', 'client_secret', 'refresh-token', 'access_token', 'bearer', 'session_token', 'offering_token', 'cookie', 'set-cookie', 'Authorization', 'API_KEY'];
    const payload = { nested: [{ ...Object.fromEntries(keys.map((k) => [k, 'x'])), keep: 'y' }] };
    const out = redactPayload(payload) as any;
    for (const k of keys) expect(out.nested[0][k]).toBe('[redacted]');
    expect(out.nested[0].keep).toBe('y');
    expect((payload.nested[0] as Record<string, string>).token).toBe('x');
  });

  it('redacts inside strings that hold JSON (MCP text content), leaving other strings alone', () => {
    const payload = { content: [{ type: 'text', text: JSON.stringify({ context: { token: 't0p' }, ok: 1 }) }, { type: 'text', text: '{not json' }] };
    const out = redactPayload(payload) as any;
    expect(JSON.parse(out.content[0].text)).toEqual({ context: { token: '[redacted]' }, ok: 1 });
    expect(out.content[1].text).toBe('{not json');
    expect(redactPayload('{"a":1}')).toBe('{"a":1}');
  });

  it('does not redact keys that merely contain a pattern word', () => {
    expect(redactPayload({ token_count: 1, tokenizer: 'a' })).toEqual({ token_count: 1, tokenizer: 'a' });
  });

  it('drops response headers outside the allowlist', () => {
    expect(filterResponseHeaders([['Content-Type', 'application/json'], ['WWW-Authenticate', 'Bearer'], ['X-Evil', 'plant'], ['set-cookie', 's=1']])).toEqual({ 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
    expect(redactRequestHeaders({ Authorization: 'Bearer t', 'x-request-id': '1', 'x-other': 'z' })).toEqual({ authorization: '[redacted]', 'x-request-id': '1' });
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
        storyboard_id: 's', phase_id: 'p', step_id: 'x', task: 't', passed: false, duration_ms: 1, extraction: { path: 'structured_content' },
        validations: [{ check: 'field_value', passed: false, description: 'd', actual: { api_key: 'k' }, response: { transport: 'mcp', payload: { echoed: 'my-token-value' }, headers: { 'x-evil': '1' } } }],
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
