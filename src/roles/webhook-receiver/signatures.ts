/**
 * The RFC 9421 webhook-profile verdict on each delivery (expect_webhook_signature_valid, the retry step under 9421):
 * keys from the agent's brand.json `agents[]` `jwks_uri` (webhooks/signer-keys.ts) — or, when the operator gave one for
 * local development, from their JWKS instead (webhooks/operator-jwks.ts; each such verdict carries its location) —,
 * one (keyid, nonce) replay store per storyboard run (test kit > client_primitives.signature_replay_store), and each
 * delivery verified once.
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
import type { OperatorJwks } from '../../webhooks/operator-jwks.js';
import type { WebhookDelivery } from '../../webhooks/receiver.js';
import { SignerKeys } from '../../webhooks/signer-keys.js';
import { parseStrictJson } from '../../webhooks/strict-json.js';
import type { Verdict } from './deliveries.js';

/** Where a delivery's keys are looked up, and what to add to a verdict about it. */
interface KeyLookup {
  source: JwksSource;
  /** Appended to a `webhook_signature_key_unknown` detail: where the keyid was looked for. */
  where: () => Promise<string>;
  /** The operator's JWKS location, when the keys are theirs. */
  operatorJwks?: string;
}

/** Said where the spec's discovery found no keys: the way to test signing before the agent publishes them. */
const LOCAL_DEVELOPMENT_HINT =
  "; for an agent in local development that publishes no brand.json, webhooks.signerJwks (--webhook-signer-jwks) verifies against a JWKS you give, outside the spec's discovery";

export interface DeliverySignaturesOptions {
  /** Bounds key discovery (at most 10 s). */
  timeoutMs: number;
  /** The SSRF guard on brand.json / JWKS URLs. */
  urlGuard?: Omit<UrlGuardOptions, 'agentUrl'>;
  /** The operator's JWKS (local development): used instead of the spec's discovery. */
  signerJwks?: () => Promise<OperatorJwks>;
}

export class DeliverySignatures {
  private readonly replay = new MemoryReplayCache({ perKeyidCap: 100_000 });
  private readonly verdicts = new Map<number, Promise<Verdict>>();
  private keys?: { agentUrl: string; keys: SignerKeys };

  constructor(private readonly options: DeliverySignaturesOptions) {}

  /** Why the operator's JWKS cannot be used (a one-line configuration error), or undefined: checked before grading. */
  async keysProblem(): Promise<string | undefined> {
    try {
      await this.options.signerJwks?.();
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /** Where the operator's JWKS is, when the run verifies against one (after it loaded). */
  async operatorJwksLocation(): Promise<string | undefined> {
    return (await this.options.signerJwks?.())?.location;
  }

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
    const keys = this.options.signerJwks
      ? await operatorKeys(await this.options.signerJwks())
      : this.signerKeys(agentUrl);
    const marked = keys.operatorJwks === undefined ? {} : { operatorJwks: keys.operatorJwks };
    const result = await verifySignedMessage(
      { method: delivery.method, url: delivery.url, headers, body: delivery.body },
      { profile, jwks: keys.source, now: Math.floor(delivery.receivedAt / 1000), replayCache: this.replay },
    );
    if (!result.ok) {
      const where = result.code === 'webhook_signature_key_unknown' ? await keys.where() : '';
      return { ok: false, code: result.code, step: result.step, detail: `${result.detail}${where}`, ...marked };
    }
    if (!result.signed)
      return {
        ok: false,
        code: 'webhook_signature_header_malformed',
        step: 0,
        detail: 'the delivery is not signed',
        ...marked,
      };
    // Checklist step 14: a signature over a body two parsers read differently is not accepted.
    const strict = parseStrictJson(delivery.body.toString('utf8'));
    if (!strict.ok && strict.duplicateKey !== undefined)
      return {
        ok: false,
        code: 'webhook_body_malformed',
        step: 14,
        detail: `the signed body has a ${strict.error}`,
        ...marked,
      };
    return { ok: true, keyid: result.keyid, ...marked };
  }

  /** The spec's discovery: brand.json at the agent's origin, its agents[] entry's jwks_uri (signer-keys.ts). */
  private signerKeys(agentUrl: string): KeyLookup {
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
          ? ` — key discovery: ${source.problem}${LOCAL_DEVELOPMENT_HINT}`
          : ` (JWKS ${source.jwksUri}, from ${source.brandJsonUrl})`;
      },
    };
  }
}

/** The operator's keys: a keyid is looked up there alone (no discovery, no refetch: the file or URL is the run's). */
function operatorKeys(jwks: OperatorJwks): KeyLookup {
  const kids = jwks.keys.map((k) => k.kid).join(', ');
  return {
    source: async (keyid) => jwks.keys.find((k) => k.kid === keyid),
    where: async () =>
      ` — not in the operator-supplied JWKS ${jwks.location} (webhooks.signerJwks, which replaces the spec's brand.json discovery; its kids: ${kids})`,
    operatorJwks: jwks.location,
  };
}
