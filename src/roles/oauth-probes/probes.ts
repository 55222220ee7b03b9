/**
 * The runner's own discovery probes within one storyboard run
 * (universal/security.yaml > oauth_discovery): where each goes, and what a
 * missing metadata document means. An agent that serves no protected-resource
 * metadata (404) has not advertised OAuth: that probe and the rest of its
 * phase are `not_applicable` — a coverage gap, like an undeclared protocol —
 * rather than failures.
 */
import type { Exchange } from '../../model/exchange.js';
import type { Phase } from '../../model/storyboard.js';
import {
  authorizationServerMetadataUrl,
  probe,
  protectedResourceMetadataUrl,
  refuseAgentSuppliedUrl,
} from '../../transport/probe.js';
import type { UrlGuardOptions } from '../../transport/url-guard.js';
import type { SkipResult } from '../../model/records.js';

export type ProbeOutcome = { exchange: Exchange } | { skip: SkipResult; exchange?: Exchange } | { error: string };

export class OAuthProbes {
  /** Phases whose metadata probe found nothing: the rest of the phase is not applicable. */
  private readonly notAdvertised = new Map<Phase, string>();
  /** The agent's RFC 9728 metadata, once fetched: where the authorization-server probe goes. */
  private resourceMetadata?: unknown;

  constructor(
    private readonly options: {
      agentUrl: string;
      timeoutMs: number;
      maxResponseBytes: number;
      guard?: Omit<UrlGuardOptions, 'agentUrl'>;
    },
  ) {}

  /** The not_applicable skip for any step of a phase whose OAuth turned out not to exist. */
  skipFor(phase: Phase): SkipResult | undefined {
    const detail = this.notAdvertised.get(phase);
    return detail ? { reason: 'not_applicable', detail } : undefined;
  }

  async run(task: string, phase: Phase): Promise<ProbeOutcome> {
    const { agentUrl } = this.options;
    let url: string;
    if (task === 'protected_resource_metadata') url = protectedResourceMetadataUrl(agentUrl);
    else {
      const issuer = (this.resourceMetadata as { authorization_servers?: unknown[] } | undefined)
        ?.authorization_servers?.[0];
      if (typeof issuer !== 'string')
        return {
          error:
            'no authorization server to probe: the protected_resource_metadata step did not run, failed, or named no authorization_servers',
        };
      const refused = refuseAgentSuppliedUrl(issuer, agentUrl, this.options.guard?.allowHttp);
      if (refused) return { error: `the runner will not fetch the authorization server the agent named: ${refused}` };
      url = authorizationServerMetadataUrl(issuer);
    }
    const exchange = await probe(task, url, this.options);
    if (task !== 'protected_resource_metadata') return { exchange };
    if (exchange.response?.status === 404) {
      const detail = `oauth_not_advertised: the agent serves no protected-resource metadata (HTTP 404 at ${url}), so it does not offer OAuth`;
      this.notAdvertised.set(phase, detail);
      return { skip: { reason: 'not_applicable', detail }, exchange };
    }
    if (!exchange.transportError && exchange.extraction.path !== 'error') this.resourceMetadata = exchange.data;
    return { exchange };
  }
}
