import { describe, expect, it } from 'vitest';
import { MemoryReplayCache } from '../../src/signing/index.js';

describe('MemoryReplayCache', () => {
  it('knows a (keyid, nonce) until it expires, per keyid', () => {
    const cache = new MemoryReplayCache();
    cache.insert('k1', 'n', 100);
    expect(cache.has('k1', 'n', 99)).toBe(true);
    expect(cache.has('k1', 'n', 100)).toBe(false);
    expect(cache.has('k2', 'n', 99)).toBe(false);
  });

  it('reaches its per-keyid cap with live entries only', () => {
    const cache = new MemoryReplayCache({ perKeyidCap: 2 });
    cache.insert('k', 'a', 50);
    expect(cache.isCapReached('k', 0)).toBe(false);
    cache.insert('k', 'b', 100);
    expect(cache.isCapReached('k', 0)).toBe(true);
    expect(cache.isCapReached('other', 0)).toBe(false);
    // At 50, "a" has expired: one live entry left, under the cap.
    expect(cache.isCapReached('k', 50)).toBe(false);
    expect(cache.has('k', 'b', 50)).toBe(true);
  });
});
