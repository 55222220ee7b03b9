import { describe, expect, it } from 'vitest';
import { evaluateSkipIf } from '../../src/engine/skip-if.js';

const kit = { auth: { api_key: 'k-1', empty: '', zero: 0, off: false, none: null, list: ['a'] } };
const skip = (expression: string) => ({
  kind: 'skip',
  detail: `phase "p" skipped: skip_if "${expression}" is true for this test kit`,
});

describe('skip_if', () => {
  it('no expression, or a blank one, runs the phase', () => {
    expect(evaluateSkipIf(undefined, 'p', kit)).toEqual({ kind: 'run' });
    expect(evaluateSkipIf('  ', 'p', kit)).toEqual({ kind: 'run' });
  });

  it('test_kit.<path> skips when the value is truthy', () => {
    expect(evaluateSkipIf('test_kit.auth.api_key', 'p', kit)).toEqual(skip('test_kit.auth.api_key'));
    expect(evaluateSkipIf(' test_kit.auth.list[0] ', 'p', kit)).toEqual(skip(' test_kit.auth.list[0] '));
    for (const falsy of ['empty', 'zero', 'off', 'none', 'missing'])
      expect(evaluateSkipIf(`test_kit.auth.${falsy}`, 'p', kit)).toEqual({ kind: 'run' });
    expect(evaluateSkipIf('test_kit.auth.api_key', 'p', undefined)).toEqual({ kind: 'run' });
  });

  it('!test_kit.<path> skips when the value is falsy or absent', () => {
    expect(evaluateSkipIf('!test_kit.auth.api_key', 'p', kit)).toEqual({ kind: 'run' });
    for (const falsy of ['empty', 'zero', 'off', 'none', 'missing'])
      expect(evaluateSkipIf(`! test_kit.auth.${falsy}`, 'p', kit)).toEqual(skip(`! test_kit.auth.${falsy}`));
  });

  it('any other expression is a warning and the phase runs', () => {
    for (const expression of [
      "agent.webhook_auth_mode == 'hmac_legacy'",
      'test_kit.auth.api_key && x',
      'xtest_kit.a',
      '!!test_kit.a',
    ]) {
      expect(evaluateSkipIf(expression, 'p', kit)).toEqual({
        kind: 'unknown',
        warning: `phase "p": skip_if "${expression}" is not an expression vitest-adcp can evaluate (supported: "test_kit.<path>" and "!test_kit.<path>"), so the phase ran`,
      });
    }
  });
});
