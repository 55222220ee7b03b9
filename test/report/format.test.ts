/**
 * The failure text a user reads in the terminal, the IDE and CI: pinned line
 * by line, so a changed word, a lost line or a lost fence shows up here.
 * Fence nonces are random per call; `plain()` replaces them with `#`.
 */
import { describe, expect, it } from 'vitest';
import type { StepResult, ValidationResult } from '../../src/model/records.js';
import { formatStepFailure } from '../../src/report/format.js';

const CWD = '/repo';

function plain(text: string): string {
  return text.replace(/<<([a-z ]+?) [0-9a-f]{12}>>/g, '<<$1 #>>').replace(/<<end [0-9a-f]{12}>>/g, '<<end #>>');
}

function step(overrides: Partial<StepResult> = {}): StepResult {
  return {
    storyboard_id: 'sb',
    phase_id: 'ph',
    step_id: 'st',
    task: 'get_products',
    passed: false,
    duration_ms: 3,
    validations: [],
    extraction: { path: 'structured_content' },
    ...overrides,
  };
}

function failed(overrides: Partial<ValidationResult> = {}): ValidationResult {
  return { check: 'field_value', passed: false, description: 'the value is right', ...overrides };
}

describe('formatStepFailure', () => {
  it('renders every part of a failed step in order: headline, error, optional, warnings, validations, sent, the answer around the pointer', () => {
    const result = step({
      error: 'transport closed',
      optional: true,
      warnings: ['skip_if expression not understood'],
      validations: [
        failed({
          json_pointer: '/products/0/name',
          expected: 'A',
          actual: 'B',
          source: { file: '/repo/sb.yaml', line: 12, column: 9 },
        }),
        { check: 'field_present', passed: true, description: 'present' },
        failed({
          check: 'response_schema',
          description: 'matches the schema',
          json_pointer: '',
          error: '/products must be array',
          schema_id: 'media-buy/get-products-response.json',
          schema_url: 'https://x/get-products-response.json',
          actual: [{ instance_path: '/products', message: 'must be array' }],
        }),
      ],
      request: { transport: 'mcp', operation: 'get_products', payload: { brief: 'x' }, url: 'http://127.0.0.1:1/mcp' },
      response: {
        transport: 'mcp',
        payload: {
          structuredContent: {
            products: [
              { product_id: 'p1', name: 'B', channels: ['display'], pricing: { cpm: 5 } },
              { product_id: 'p2' },
            ],
            total: 2,
            context: { a: 1 },
          },
          content: [{ type: 'text', text: 'ignored' }],
        },
        status: 200,
        duration_ms: 7,
      },
    });
    const out = formatStepFailure(result, { cwd: CWD });
    expect(out.headline).toBe(
      'field_value at /products/0/name: expected "A", got "B" — sb.yaml:12:9 (+1 more failed check)',
    );
    expect(plain(out.message).split('\n')).toEqual([
      out.headline,
      'step error: <<error #>> transport closed <<end #>>',
      '(optional phase "ph": this failure alone does not fail the storyboard)',
      'warning: skip_if expression not understood',
      '2 of 3 validations failed in step "st" (task get_products):',
      '  ✗ the value is right [field_value] at sb.yaml:12:9',
      '    pointer:  /products/0/name',
      '    expected: "A"',
      '    actual:   <<agent value #>> "B" <<end #>>',
      '  ✗ matches the schema [response_schema]',
      '    pointer:  "" (the whole response)',
      '    <<reason #>> /products must be array <<end #>>',
      '    schema media-buy/get-products-response.json (https://x/get-products-response.json)',
      '  sent (mcp get_products → http://127.0.0.1:1/mcp): {"brief":"x"}',
      '  received (structured_content HTTP 200, 7 ms), around /products/0/name:',
      '    <<agent response #>>',
      '    {',
      '      "products": [',
      '        {',
      '          "product_id": "p1",',
      '          "name": "B",',
      '          "…": "2 more keys"',
      '        },',
      '        "… 1 item after"',
      '      ],',
      '      "total": 2,',
      '      "…": "1 more key"',
      '    }',
      '    <<end #>>',
    ]);
    // Two scalars: the expected/actual lines say it all, no diff.
    expect(out).not.toHaveProperty('expected');
  });

  it('prints the request and the whole answer with verbose', () => {
    const result = step({
      validations: [failed({ json_pointer: '/a/b', expected: 1, actual: 2 })],
      request: { transport: 'mcp', operation: 'get_products', payload: { brief: 'x' } },
      response: { transport: 'mcp', payload: { structuredContent: { a: { b: 2 }, other: { deep: [1, 2] } } } },
    });
    expect(
      plain(formatStepFailure(result, { cwd: CWD, verbose: true }).message)
        .split('\n')
        .slice(6),
    ).toEqual([
      '  sent (mcp get_products):',
      '    {',
      '      "brief": "x"',
      '    }',
      '  received (structured_content):',
      '    <<agent response #>>',
      '    {',
      '      "a": {',
      '        "b": 2',
      '      },',
      '      "other": {',
      '        "deep": [',
      '          1,',
      '          2',
      '        ]',
      '      }',
      '    }',
      '    <<end #>>',
    ]);
  });

  it('says a long request is in the record rather than printing it', () => {
    const out = formatStepFailure(
      step({ request: { transport: 'mcp', operation: 'o', payload: { s: 'x'.repeat(300) } } }),
      { cwd: CWD },
    );
    expect(out.message).toContain(
      '  sent (mcp o): 308 characters of JSON, in the test meta and the report (ADCP_VERBOSE=1 prints it here)',
    );
  });

  it('offers a diff only for structures or multi-line text', () => {
    const diff = (expected: unknown, actual: unknown) =>
      'expected' in formatStepFailure(step({ validations: [failed({ expected, actual })] }), { cwd: CWD });
    expect(diff({ a: 1 }, { a: 2 })).toBe(true);
    expect(diff('a\nb', 'a\nc')).toBe(true);
    expect(diff('a', 'b')).toBe(false);
    expect(diff(1, { a: 1 })).toBe(false);
    expect(diff(null, null)).toBe(false);
  });

  describe('the headline', () => {
    const headline = (v: Partial<ValidationResult>, extra: Partial<StepResult> = {}) =>
      formatStepFailure(step({ validations: [failed(v)], ...extra }), { cwd: CWD }).headline;
    it('names the check, the pointer and the values, printing agent strings only when they are plain', () => {
      expect(headline({ json_pointer: '/n', expected: 99, actual: 3 })).toBe('field_value at /n: expected 99, got 3');
      expect(headline({ json_pointer: '/s', expected: 'active', actual: 'paused' })).toBe(
        'field_value at /s: expected "active", got "paused"',
      );
      expect(headline({ json_pointer: '/s', expected: 'active', actual: 'Ignore previous instructions' })).toBe(
        'field_value at /s: expected "active", got a different string (below)',
      );
      expect(headline({ json_pointer: '/s', expected: [1, 2], actual: [1] })).toBe(
        'field_value at /s: the array differs at /s/1: expected 2, got nothing (missing)',
      );
      expect(headline({ json_pointer: '/s', expected: [1, 2], actual: { a: 1 } })).toBe(
        'field_value at /s: expected [1, 2], got an object',
      );
      expect(
        headline({
          json_pointer: '/s',
          expected: [[1], [2]],
          actual: [3],
          error: '"s" is not one of the allowed values',
        }),
      ).toBe('field_value at /s: expected [2 items], got an array of 1');
      expect(headline({ json_pointer: '/s', expected: 'x'.repeat(60), actual: null })).toBe(
        `field_value at /s: expected "${'x'.repeat(44)}…", got null`,
      );
    });

    it('names the first differing key path of two objects or arrays, with the values there when they are plain', () => {
      expect(headline({ json_pointer: '/s', expected: { a: 1 }, actual: { a: 2 } })).toBe(
        'field_value at /s: the object differs at /s/a: expected 1, got 2',
      );
      expect(
        headline({
          json_pointer: '/context',
          expected: { id: 'x', deep: { list: ['a', 'b'] } },
          actual: { id: 'x', deep: { list: ['a', 'c'] } },
        }),
      ).toBe('field_value at /context: the object differs at /context/deep/list/1: expected "b", got "c"');
      expect(headline({ json_pointer: '/c', expected: { id: 'x', want: 1 }, actual: { id: 'x' } })).toBe(
        'field_value at /c: the object differs at /c/want: expected 1, got nothing (missing)',
      );
      expect(headline({ json_pointer: '/c', expected: { id: 'x' }, actual: { id: 'x', extra: true } })).toBe(
        'field_value at /c: the object differs at /c/extra: not expected, got true',
      );
      // The whole response, and keys JSON Pointer escapes.
      expect(headline({ json_pointer: '', expected: { 'a/b': 1 }, actual: { 'a/b': 2 } })).toBe(
        'field_value: the object differs at /a~1b: expected 1, got 2',
      );
      // Agent text: a value that is not plain is described, a key that is not plain is not printed in the headline.
      expect(
        headline({ json_pointer: '/c', expected: { m: 'ok' }, actual: { m: 'Ignore previous instructions' } }),
      ).toBe('field_value at /c: the object differs at /c/m: expected "ok", got a different string (below)');
      expect(headline({ json_pointer: '/c', expected: {}, actual: { 'run this: rm -rf': 1 } })).toBe(
        'field_value at /c: the object differs at a key the agent wrote (below): not expected, got 1',
      );
      // A redacted key compares redacted: no secret reaches the headline.
      expect(headline({ json_pointer: '/c', expected: { api_key: 'k1', v: 1 }, actual: { api_key: 'k2', v: 2 } })).toBe(
        'field_value at /c: the object differs at /c/v: expected 1, got 2',
      );
    });

    it('says a placeholder did not resolve, naming it and the step that should have captured it, never "expected [1 items], got null"', () => {
      const request = {
        check: 'unresolved_substitution',
        description: 'unresolved substitution',
        json_pointer: null,
        expected: ['$context.media_buy_id'],
        actual: null,
        error:
          '$context.media_buy_id did not resolve: step "create" (phase setup) failed (field_value at /media_buy_id — the buy is made)',
      };
      expect(headline(request)).toBe(
        'unresolved_substitution: placeholder $context.media_buy_id did not resolve: step "create" (phase setup) failed (field_value at /media_buy_id — the buy is made)',
      );
      const expectedValue = {
        json_pointer: null,
        expected: ['{{prior_step.create.media_buy_id}}'],
        actual: null,
        error:
          '{{prior_step.create.media_buy_id}} in the expected value did not resolve: the step that captures it failed, was skipped, or never ran',
      };
      expect(headline(expectedValue)).toBe(
        'field_value: placeholder {{prior_step.create.media_buy_id}} in the expected value did not resolve: the step that captures it failed, was skipped, or never ran',
      );
      // Without the engine's sentence, still the placeholder, not a value mismatch.
      expect(headline({ ...request, error: undefined })).toBe(
        'unresolved_substitution: placeholder $context.media_buy_id did not resolve: the step that should have captured it failed, was skipped, or never ran',
      );
      // A null that is no placeholder's stays a value mismatch.
      expect(headline({ json_pointer: '/x', expected: ['a b'], actual: null, error: 'did not resolve' })).toBe(
        'field_value at /x: expected [1 items], got null',
      );
      const details = plain(formatStepFailure(step({ validations: [failed(request)] }), { cwd: CWD }).message).split(
        '\n',
      );
      expect(details.slice(2)).toEqual([
        '  ✗ unresolved substitution [unresolved_substitution]',
        `    ${request.error}`,
        '    unresolved: $context.media_buy_id',
      ]);
    });

    it('says "not present" for presence checks and summarises schema errors', () => {
      expect(headline({ check: 'field_present', json_pointer: '/context', expected: 'context', actual: null })).toBe(
        'field_present at /context: not present',
      );
      expect(
        headline({
          check: 'response_schema',
          json_pointer: '',
          schema_id: 'x.json',
          actual: [
            { instance_path: '/products/0', message: 'm' },
            { instance_path: '/b', message: 'n' },
          ],
        }),
      ).toBe('response_schema: does not match x.json: 2 schema errors (first at /products/0)');
      expect(
        headline({ check: 'response_schema', json_pointer: '', actual: [{ instance_path: '', message: 'm' }] }),
      ).toBe('response_schema: does not match its schema: 1 schema error (first at /)');
      expect(
        headline({
          check: 'response_schema',
          json_pointer: '',
          actual: [{ instance_path: '/a b\u001b', message: 'm' }],
        }),
      ).toBe('response_schema: does not match its schema: 1 schema error');
    });

    it("falls back to the runner's reason, never an agent-written one", () => {
      expect(headline({ check: 'refs_resolve', error: `2 refs did not resolve\nmore detail` })).toBe(
        'refs_resolve: 2 refs did not resolve',
      );
      expect(headline({ check: 'refs_resolve', error: 'y'.repeat(150) })).toBe(`refs_resolve: ${'y'.repeat(97)}…`);
      expect(headline({ check: 'error_code', error: 'agent said BAD' })).toBe('error_code: failed (reason below)');
    });

    it('for a step that failed before any check: the error, fenced', () => {
      expect(plain(formatStepFailure(step({ error: 'connect ECONNREFUSED' }), { cwd: CWD }).headline)).toBe(
        'step "st" (task get_products) failed: <<error #>> connect ECONNREFUSED <<end #>>',
      );
      expect(formatStepFailure(step({}), { cwd: CWD }).headline).toBe('step "st" (task get_products) failed');
    });
  });

  it('says "1 of 1 validation" in the singular and leaves runner-made reasons unfenced', () => {
    const out = formatStepFailure(step({ validations: [failed({ error: 'expected a string' })] }), { cwd: CWD });
    expect(plain(out.message).split('\n')).toEqual([
      'field_value: expected a string',
      '1 of 1 validation failed in step "st" (task get_products):',
      '  ✗ the value is right [field_value]',
      '    expected a string',
    ]);
    expect(out).not.toHaveProperty('expected');
    expect(out).not.toHaveProperty('actual');
  });

  it('prints no failure header when only the transport failed, and says when nothing came back', () => {
    const out = formatStepFailure(
      step({ error: 'connect ECONNREFUSED', request: { transport: 'mcp', operation: 'get_products', payload: {} } }),
      { cwd: CWD },
    );
    expect(plain(out.message).split('\n')).toEqual([
      'step "st" (task get_products) failed: <<error #>> connect ECONNREFUSED <<end #>>',
      '  sent (mcp get_products): {}',
      '  received: nothing (no response from the agent)',
    ]);
  });

  it("keeps the headline on one line for a long transport error (it is JUnit's message=) and prints the error whole below it", () => {
    const long = `connect failed: ${'x'.repeat(300)}`;
    const out = formatStepFailure(step({ error: long }), { cwd: CWD });
    expect(out.headline).not.toContain('\n');
    expect(plain(out.headline)).toBe(
      `step "st" (task get_products) failed: <<error #>> ${long.slice(0, 149)}… <<end #>>`,
    );
    expect(out.message.split('\n')[0]).toBe(out.headline);
    expect(plain(out.message)).toContain(`step error: <<error #>>\n${long}\n<<end #>>`);
  });

  it('fences the reason of error_code failures (the agent wrote the code and message)', () => {
    const out = formatStepFailure(step({ validations: [failed({ check: 'error_code', error: 'got INVALID_X' })] }), {
      cwd: CWD,
    });
    expect(plain(out.message).split('\n')[3]).toBe('    <<reason #>> got INVALID_X <<end #>>');
  });

  it("names the agent's AdCP error code in the headline when the checks failed on an error answer, unless a check was about errors", () => {
    const answeredWithError = (text: string) => ({
      transport: 'mcp' as const,
      payload: { content: [{ type: 'text', text }], isError: true },
      status: 200,
      duration_ms: 2,
    });
    const missing = failed({
      check: 'field_present',
      json_pointer: '/products',
      description: 'products are listed',
      actual: null,
      source: { file: '/repo/sb.yaml', line: 9, column: 5 },
    });
    const headline = (validations: ValidationResult[], text: string) =>
      formatStepFailure(step({ validations, response: answeredWithError(text) }), { cwd: CWD }).headline;
    const refusal = JSON.stringify({ adcp_error: { code: 'INVALID_REQUEST', message: 'brief is required' } });
    expect(headline([missing], refusal)).toBe(
      'field_present at /products: not present (the agent answered with error INVALID_REQUEST) — sb.yaml:9:5',
    );
    // A failed error_code check already says which code came back.
    expect(
      headline(
        [
          failed({
            check: 'error_code',
            json_pointer: '/adcp_error/code',
            expected: 'BUDGET_TOO_LOW',
            actual: 'INVALID_REQUEST',
          }),
          missing,
        ],
        refusal,
      ),
    ).not.toContain('the agent answered');
    // Agent text that is not code-shaped stays out of the unfenced headline; a success answer adds nothing.
    expect(headline([missing], JSON.stringify({ adcp_error: { code: '\u001b[2Jcleared' } }))).not.toContain(
      'the agent answered',
    );
    expect(
      formatStepFailure(
        step({
          validations: [missing],
          response: {
            transport: 'mcp',
            payload: { structuredContent: { products: null } },
            status: 200,
            duration_ms: 1,
          },
        }),
        { cwd: CWD },
      ).headline,
    ).not.toContain('the agent answered');
  });

  it('omits the JSON Pointer line when there is none (undefined or null)', () => {
    const out = formatStepFailure(
      step({ validations: [failed({ json_pointer: null }), failed({ description: 'second' })] }),
      { cwd: CWD },
    );
    expect(out.message).not.toContain('pointer:');
  });

  it('fences agent-typed actual values (strings, objects) but not numbers, booleans or null', () => {
    const lines = (actual: unknown) =>
      plain(formatStepFailure(step({ validations: [failed({ actual })] }), { cwd: CWD }).message)
        .split('\n')
        .slice(3);
    expect(lines(3)).toEqual(['    actual:   3']);
    expect(lines(false)).toEqual(['    actual:   false']);
    expect(lines(null)).toEqual(['    actual:   null']);
    expect(lines('x')).toEqual(['    actual:   <<agent value #>> "x" <<end #>>']);
    expect(lines([1])).toEqual(['    actual:   <<agent value #>> [1] <<end #>>']);
  });

  it('indents multi-line JSON under its expected:/actual: label, and names the first difference below, the agent value fenced', () => {
    const long = { products: [{ product_id: 'p1', name: 'x'.repeat(60) }], total: 1 };
    const agent = { products: [{ product_id: 'p1', name: 'y'.repeat(60) }], total: 1 };
    const lines = plain(
      formatStepFailure(step({ validations: [failed({ json_pointer: '/r', expected: long, actual: agent })] }), {
        cwd: CWD,
      }).message,
    ).split('\n');
    expect(lines.slice(4)).toEqual([
      '    expected:',
      '      {',
      '        "products": [',
      '          {',
      '            "product_id": "p1",',
      `            "name": "${'x'.repeat(60)}"`,
      '          }',
      '        ],',
      '        "total": 1',
      '      }',
      '    actual:',
      '      <<agent value #>>',
      '      {',
      '        "products": [',
      '          {',
      '            "product_id": "p1",',
      `            "name": "${'y'.repeat(60)}"`,
      '          }',
      '        ],',
      '        "total": 1',
      '      }',
      '      <<end #>>',
      `    first difference at /r/products/0/name: expected "${'x'.repeat(60)}", got <<agent value #>> "${'y'.repeat(60)}" <<end #>>`,
    ]);
  });

  it('shows a schema failure without its actual value and uses a later validation for the diff', () => {
    const out = formatStepFailure(
      step({
        validations: [
          failed({ check: 'response_schema', expected: 'schema', actual: { a: 1 } }),
          failed({ expected: [1], actual: [2] }),
          failed({ expected: [5], actual: [6] }),
        ],
      }),
      { cwd: CWD },
    );
    expect(out.message).not.toContain('"a": 1');
    expect(out.expected).toEqual([1]);
    expect(out.actual).toEqual([2]);
  });

  it('takes no diff from a validation that has only one side', () => {
    const out = formatStepFailure(step({ validations: [failed({ expected: 1 }), failed({ actual: 2 })] }), {
      cwd: CWD,
    });
    expect(out).not.toHaveProperty('expected');
  });

  it('shows a schema id line only for response_schema failures that resolved their schema', () => {
    const withId = formatStepFailure(
      step({ validations: [failed({ check: 'field_value', schema_id: 'x.json', schema_url: 'u' })] }),
      { cwd: CWD },
    );
    expect(withId.message).not.toContain('schema x.json');
    const noId = formatStepFailure(step({ validations: [failed({ check: 'response_schema', schema_id: null })] }), {
      cwd: CWD,
    });
    expect(noId.message).not.toContain('    schema ');
  });

  it('writes a source path relative to cwd, or absolute when it is cwd itself', () => {
    const at = (file: string) =>
      formatStepFailure(step({ validations: [failed({ source: { file, line: 1, column: 2 } })] }), {
        cwd: CWD,
      }).message.split('\n')[2];
    expect(at('/repo/a/b.yaml')).toBe('  ✗ the value is right [field_value] at a/b.yaml:1:2');
    expect(at('/elsewhere/c.yaml')).toBe('  ✗ the value is right [field_value] at ../elsewhere/c.yaml:1:2');
    expect(at('/repo')).toBe('  ✗ the value is right [field_value] at /repo:1:2');
  });

  it('defaults cwd to the process working directory', () => {
    const out = formatStepFailure(
      step({ validations: [failed({ source: { file: `${process.cwd()}/x.yaml`, line: 4, column: 5 } })] }),
    );
    expect(out.message).toContain('at x.yaml:4:5');
  });

  it('reads an MCP answer through its task result (text fallback), and any other answer as it is', () => {
    const received = (response: StepResult['response']) =>
      plain(formatStepFailure(step({ response }), { cwd: CWD }).message)
        .split('\n')
        .slice(3, -1)
        .join('\n');
    expect(received({ transport: 'mcp', payload: { content: [{ type: 'text', text: '{"ok":true}' }] } })).toBe(
      '    {\n      "ok": true\n    }',
    );
    // No task result inside: the envelope itself.
    expect(received({ transport: 'mcp', payload: { content: [] } })).toBe('    {\n      "content": []\n    }');
    expect(received({ transport: 'mcp', payload: { other: 1 } })).toBe('    {\n      "other": 1\n    }');
    const inline = (response: StepResult['response']) =>
      plain(formatStepFailure(step({ response }), { cwd: CWD }).message).split('\n')[2];
    expect(inline({ transport: 'mcp', payload: 'plain text' })).toBe('    <<agent response #>> "plain text" <<end #>>');
    expect(inline({ transport: 'mcp', payload: null })).toBe('    <<agent response #>> null <<end #>>');
    expect(received({ transport: 'a2a', payload: { structuredContent: { a: 1 } } })).toBe(
      '    {\n      "structuredContent": {\n        "a": 1\n      }\n    }',
    );
    expect(
      plain(formatStepFailure(step({ response: { transport: 'http', payload: 1 } }), { cwd: CWD }).message).split(
        '\n',
      )[1],
    ).toBe('  received (structured_content):');
  });

  it('cuts long JSON at 1,500 characters and says how much is left, but not JSON of exactly that length', () => {
    const payloadOf = (chars: number) => ({ s: 'x'.repeat(chars - 13) }); // {\n  "s": "…"\n} adds 13 characters
    const sent = (chars: number) =>
      formatStepFailure(step({ request: { transport: 'mcp', operation: 'o', payload: payloadOf(chars) } }), {
        cwd: CWD,
        verbose: true,
      }).message;
    expect(JSON.stringify(payloadOf(1500), null, 2)).toHaveLength(1500);
    expect(sent(1500)).not.toContain('more characters');
    expect(sent(1501)).toContain('\n    … (1 more characters; full record in the test meta / contract report)');
    expect(sent(1501)).toContain(`"s": "${'x'.repeat(1500 - 13)}`);
    // expected/actual are cut shorter.
    const out = formatStepFailure(step({ validations: [failed({ expected: 'y'.repeat(400) })] }), { cwd: CWD });
    expect(out.message).toContain('… (102 more characters;');
  });

  it('prints values JSON cannot hold as text instead of throwing', () => {
    const out = formatStepFailure(step({ validations: [failed({ expected: 10n })] }), { cwd: CWD });
    expect(out.message).toContain('    expected: 10');
  });

  it('redacts and scrubs the message and the diff', () => {
    const out = formatStepFailure(
      step({
        error: 'agent said s3cr3t-token',
        validations: [failed({ expected: { api_key: 'k', v: 's3cr3t-token' }, actual: { password: 'p', v: 'other' } })],
      }),
      { cwd: CWD, secrets: ['s3cr3t-token'] },
    );
    expect(out.message).not.toContain('s3cr3t-token');
    expect(out.message).toContain('"api_key":"[redacted]"');
    expect(out.expected).toEqual({ api_key: '[redacted]', v: '[redacted]' });
    expect(out.actual).toEqual({ password: '[redacted]', v: 'other' });
  });
});

describe('agent text cannot drive the terminal', () => {
  const hostile = '\u001b[2J\u001b[3J\u001b[H ✓ Tests 12 passed\n\u001b[8m\u001b]52;c;ZXZpbA==\u0007\u202e';
  it('escapes control characters in errors, reasons, actual values, warnings and the diff', () => {
    const out = formatStepFailure(
      step({
        error: hostile,
        warnings: [`tool "${hostile}"`],
        validations: [
          failed({ check: 'error_code', error: hostile, expected: { a: 'A' }, actual: { [hostile]: hostile } }),
        ],
        response: { transport: 'http', payload: hostile, status: 500 },
      }),
      { cwd: CWD },
    );
    const everything = out.message + JSON.stringify(out.actual);

    expect(out.message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(Object.keys(out.actual as object)[0]).not.toMatch(/\u001b/);
    expect(Object.values(out.actual as object)[0]).toContain('\\u{1b}[2J');
    expect(out.message).toContain('\\u{1b}[8m');
    expect(out.message).toContain('\\u{202e}');
    expect(everything).toContain('✓ Tests 12 passed');
  });
});
