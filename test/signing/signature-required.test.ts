import { describe, expect, it } from 'vitest';
import { isSignatureRequired } from '../../src/signing/index.js';

describe('isSignatureRequired', () => {
  it('requires a signature for operations in required_for', () => {
    expect(isSignatureRequired({ operation: 'create_media_buy', requiredFor: ['create_media_buy'] })).toBe(true);
    expect(isSignatureRequired({ operation: 'get_products', requiredFor: ['create_media_buy'] })).toBe(false);
    expect(isSignatureRequired({})).toBe(false);
  });

  it.each([
    ['at the top level', { push_notification_config: { url: 'u', authentication: { scheme: 'HMAC-SHA256' } } }, true],
    [
      'nested in arrays',
      { packages: [{ updates: [{ push_notification_config: { authentication: { credentials: 'c' } } }] }] },
      true,
    ],
    ['an empty authentication object', { push_notification_config: { authentication: {} } }, false],
    ['a config without authentication', { push_notification_config: { url: 'u' } }, false],
  ])('looks for push_notification_config.authentication %s', (_where, body, required) => {
    expect(isSignatureRequired({ body: JSON.stringify(body) })).toBe(required);
    expect(isSignatureRequired({ body: Buffer.from(JSON.stringify(body)) })).toBe(required);
  });

  it('does not require a signature for a body that is not JSON, and survives a very deep one', () => {
    expect(isSignatureRequired({ body: 'push_notification_config=authentication' })).toBe(false);
    expect(isSignatureRequired({ body: '['.repeat(5000) + ']'.repeat(5000) })).toBe(false);
  });
});
