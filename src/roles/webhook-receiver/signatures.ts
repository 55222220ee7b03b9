/**
 * The RFC 9421 webhook-profile verdict on each delivery (expect_webhook_signature_valid, the retry step under 9421):
 * keys from the agent's brand.json `agents[]` `jwks_uri` (webhooks/signer-keys.ts), one (keyid, nonce) replay store
 * per storyboard run (test kit > client_primitives.signature_replay_store), and each delivery verified once.
 */
import {
  MemoryReplayCache,
  verifySignedMessage,
  WEBHOOK_SIGNING,
  type JwksSource,
  type SigningProfile,
  type WebhookSignatureErrorCode,
} from '../../signing/index.js';
import type { UrlGuardOptions } from '../../transport/url-guard.js';
import type { WebhookDelivery } from '../../webhooks/receiver.js';
import { SignerKeys } from '../../webhooks/signer-keys.js';
import { parseStrictJson } from '../../webhooks/strict-json.js';
import type { Verdict } from './deliveries.js';

export class DeliverySignatures {
  private readonly replay = new MemoryReplayCache({ perKeyidCap: 100_000 });
  private readonly verdicts = new Map<number, Promise<Verdict>>();
  private keys?: { agentUrl: string; keys: SignerKeys };

  /** `timeoutMs` bounds key discovery (at most 10 s); `urlGuard` is the SSRF guard on brand.json / JWKS URLs. */
  constructor(private readonly options: { timeoutMs: number; urlGuard?: Omit<UrlGuardOptions, 'agentUrl'> }) {}

  /** Verifies one delivery once per run (a second verification would see its own nonce as a replay). */
  verify(delivery: WebhookDelivery, tag: string, agentUrl: string): Promise<Verdict> {
    let verdict = this.verdicts.get(delivery.seq);
    if (!verdict) {
      verdict = this.verifyOnce(delivery, tag, agentUrl);
      this.verdicts.set(delivery.seq, verdict);
    }
    return verdict;
  }

  private async verifyOnce(delivery: WebhookDelivery, tag: string, agentUrl: string): Promise<Verdict> {
    const profile: SigningProfile<WebhookSignatureErrorCode> =
      tag === WEBHOOK_SIGNING.tag ? WEBHOOK_SIGNING : { ...WEBHOOK_SIGNING, tag };
    const headers: Record<string, string[]> = {};
    for (const [name, value] of delivery.headers) (headers[name] ??= []).push(value);
    const keys = this.signerKeys(agentUrl);
    const result = await verifySignedMessage(
      { method: delivery.method, url: delivery.url, headers, body: delivery.body },
      { profile, jwks: keys.source, now: Math.floor(delivery.receivedAt / 1000), replayCache: this.replay },
    );
    if (!result.ok) {
      const where = result.code === 'webhook_signature_key_unknown' ? await keys.where() : '';
      return { ok: false, code: result.code, step: result.step, detail: `${result.detail}${where}` };
    }
    if (!result.signed)
      return { ok: false, code: 'webhook_signature_header_malformed', step: 0, detail: 'the delivery is not signed' };
    // Checklist step 14: a signature over a body two parsers read differently is not accepted.
    const strict = parseStrictJson(delivery.body.toString('utf8'));
    if (!strict.ok && strict.duplicateKey !== undefined)
      return { ok: false, code: 'webhook_body_malformed', step: 14, detail: `the signed body has a ${strict.error}` };
    return { ok: true, keyid: result.keyid };
  }

  private signerKeys(agentUrl: string): { source: JwksSource; where: () => Promise<string> } {
    if (!this.keys || this.keys.agentUrl !== agentUrl)
      this.keys = {
        agentUrl,
        keys: new SignerKeys(agentUrl, {
          timeoutMs: Math.min(this.options.timeoutMs, 10_000),
          ...(this.options.urlGuard ? { guard: this.options.urlGuard } : {}),
        }),
      };
    const keys = this.keys.keys;
    return {
      source: (keyid) => keys.lookup(keyid),
      where: async () => {
        const source = await keys.source();
        return source.problem
          ? ` — key discovery: ${source.problem}`
          : ` (JWKS ${source.jwksUri}, from ${source.brandJsonUrl})`;
      },
    };
  }
}
