/**
 * The `(keyid, nonce)` replay cache a verifier consults at checklist step 9a
 * (per-keyid cap, before crypto) and step 12 (replay), and fills at step 13.
 */

/** What the verifier needs from a replay store. Methods may be async (a shared store across receivers). */
export interface ReplayCache {
  /** True when `keyid` already holds as many live entries as allowed: new signatures from it are refused, not evicted for. */
  isCapReached(keyid: string, now: number): boolean | Promise<boolean>;
  /** True when `(keyid, nonce)` was accepted before and its entry has not expired at `now`. */
  has(keyid: string, nonce: string, now: number): boolean | Promise<boolean>;
  /** Remembers `(keyid, nonce)` until `expiresAt` (Unix seconds). */
  insert(keyid: string, nonce: string, expiresAt: number): void | Promise<void>;
}

export interface MemoryReplayCacheOptions {
  /**
   * Live entries allowed per keyid. The spec recommends at least 1,000,000
   * for requests and 100,000 for webhooks; the signed-requests test kit
   * grades against 100.
   */
  perKeyidCap?: number;
}

/**
 * An in-process replay cache: one per verifier (for the webhook receiver, one
 * per storyboard run, shared by every delivery, as the test kit requires).
 * Expired entries are dropped lazily, when their keyid reaches the cap.
 */
export class MemoryReplayCache implements ReplayCache {
  private readonly entries = new Map<string, Map<string, number>>();
  private readonly perKeyidCap: number;

  constructor(options: MemoryReplayCacheOptions = {}) {
    this.perKeyidCap = options.perKeyidCap ?? 1_000_000;
  }

  isCapReached(keyid: string, now: number): boolean {
    const nonces = this.entries.get(keyid);
    if (nonces === undefined || nonces.size < this.perKeyidCap) return false;
    // Only a full keyid pays for the sweep; expired entries must not count against the cap.
    for (const [nonce, expiresAt] of nonces) if (expiresAt <= now) nonces.delete(nonce);
    return nonces.size >= this.perKeyidCap;
  }

  has(keyid: string, nonce: string, now: number): boolean {
    const expiresAt = this.entries.get(keyid)?.get(nonce);
    return expiresAt !== undefined && expiresAt > now;
  }

  insert(keyid: string, nonce: string, expiresAt: number): void {
    const nonces = this.entries.get(keyid) ?? new Map<string, number>();
    nonces.set(nonce, expiresAt);
    this.entries.set(keyid, nonces);
  }
}
