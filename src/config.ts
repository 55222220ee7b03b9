/**
 * Run configuration: what the plugin was given, with environment fallbacks so
 * one `vitest.config.ts` runs in CI against any agent.
 *
 *   ADCP_AGENT_URL    the agent's MCP endpoint, or its A2A base URL (where its agent card is)
 *   ADCP_AUTH_TOKEN   Bearer token sent when a step does not say otherwise
 *   ADCP_PROTOCOL     mcp | a2a (default mcp)
 *   ADCP_COMPLIANCE   a corpus version of the installed @adcp/sdk, or a path
 *   ADCP_ALLOW_HTTP   1: local development — a plain-http agent that is not loopback, and
 *                     agent-supplied URLs (OAuth issuer, A2A endpoint) that are http or private
 *   ADCP_SEEDED_STATE 1: the operator declares `requires: [seeded_state]` met (state provisioned out of band)
 *   ADCP_RATE_LIMIT_TRIP 1: the run hosts rate_limit_trip_runner (it trips the agent's rate limiter)
 *   ADCP_PARALLEL_DISPATCH 0: the run does not host parallel_dispatch_runner (its steps skip not_applicable), as a
 *                     runner without it grades them — the reference runner of @adcp/sdk 13.0.0, for one
 *   ADCP_RUNNER_WEBHOOK_SIGNER_JWKS  local development: a JWKS file or URL webhook signatures are verified against,
 *                     instead of the spec's brand.json discovery (webhooks/operator-jwks.ts)
 */

import { isLoopbackHost } from './model/addresses.js';
import { SIGNER_JWKS_ENV, signerJwksLocationProblem } from './webhooks/operator-jwks.js';
import type { RemoteWebhookConfig } from './webhooks/remote.js';

/** Where a worker reads the outcomes of the storyboard runs the plugin's main process drives (plugin/run-host.ts). */
export interface RunHostConfig {
  url: string;
  token: string;
}

/** The serialisable configuration a test worker receives from the plugin. */
export interface RuntimeConfig {
  agentUrl?: string;
  protocol?: 'mcp' | 'a2a';
  authToken?: string;
  /** Per-step bound on the call to the agent. @default 30000 */
  timeoutMs?: number;
  /** Largest response body the runner reads. @default 10 MiB */
  maxResponseBytes?: number;
  /** Compliance tree root, for test kits referenced by corpus-relative paths. */
  corpusRoot?: string;
  /** AdCP version of that tree (`3.0.6`), for the contract report's run envelope. */
  corpusVersion?: string;
  /** Why the run took that corpus (corpus.ts `Corpus.choice`), for the 2.6.0 report's run envelope. */
  corpusChoice?: string;
  /** AdCP JSON Schema directory (`.../schemas-data/<major.minor>`). */
  schemasDir?: string;
  /** Where compiled schema validators are kept between runs (schemas/validator-cache.ts). @default none: no cache */
  cacheDir?: string;
  /** The project's root: test kits may be read from below it (and from the corpus root). @default process.cwd() */
  projectRoot?: string;
  /** More directories test kits may be read from (plugin option `testKitDirs`). */
  testKitDirs?: string[];
  /** signed_requests: skip vector 020's N+1-request flood (graded unsatisfied_contract, `rate_abuse_opt_out`). Env: ADCP_SKIP_RATE_ABUSE=1. */
  skipRateAbuse?: boolean;
  /** The run's webhook receiver (hosted by the plugin in the main process): its base URL and control endpoint. */
  webhooks?: RemoteWebhookConfig;
  /** The plugin's run host: the storyboard runs in flight in the main process (adapter/hosted-run.ts). */
  runHost?: RunHostConfig;
  /**
   * This user's cache directory as the main process sees it (cache/disk-cache.ts `userCacheRoot`): the workers read the
   * storyboards it stored there (cache/stored-storyboards.ts) and authenticate cache entries with its key, whatever
   * their own environment says (`test.env` may set `XDG_CACHE_HOME` or `HOME` for the tests alone).
   */
  userCacheRoot?: string;
  /**
   * Local development only: allow a plain-http agent URL that is not loopback, and lift the SSRF guard's
   * https and address rules on URLs the agent supplies (results are then not publishable). Env: ADCP_ALLOW_HTTP=1.
   */
  allowHttp?: boolean;
  /**
   * `enriched`: each request is completed by the per-task request builder the storyboards are written for (an
   * authored field is sent as written; what the storyboard leaves out is filled, each fill a step warning).
   * `as-written`: sample_request after substitution only, for storyboard authors who want to see what their
   * text alone sends. Env: ADCP_REQUESTS=as-written. @default 'enriched'
   */
  requests?: 'enriched' | 'as-written';
  /**
   * The operator declares that the state storyboards tagged `requires: [seeded_state]` need was provisioned out of
   * band (storyboard-schema.yaml > requires). Env: ADCP_SEEDED_STATE=1. @default false
   */
  seededState?: boolean;
  /**
   * The runner contracts the run hosts (RunSettings.runnerContracts). Env: ADCP_RATE_LIMIT_TRIP=1 puts
   * `rate_limit_trip_runner` in scope, ADCP_PARALLEL_DISPATCH=0 `parallel_dispatch_runner` out of it. @default { parallel_dispatch_runner: true, rate_limit_trip_runner: false }
   */
  runnerContracts?: { parallel_dispatch_runner?: boolean; rate_limit_trip_runner?: boolean };
  /**
   * Local development only: the webhook signer's JWKS — a file path (relative to `projectRoot`) or a URL (https, or
   * http to a loopback host) — that webhook signatures are verified against instead of the spec's brand.json
   * discovery; each such verdict says so (webhooks/operator-jwks.ts). Plugin option `webhooks.signerJwks`.
   * Env: ADCP_RUNNER_WEBHOOK_SIGNER_JWKS.
   */
  webhookSignerJwks?: string;
  /**
   * The log of the agent `agent.start` started (`<report>.agent.log`, written when the run stops it): a failing step
   * names it. Set by the plugin and the Jest preset's global setup, not by users.
   */
  agentLog?: string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export interface ResolvedRuntimeConfig
  extends
    Omit<RuntimeConfig, 'protocol' | 'timeoutMs' | 'maxResponseBytes'>,
    Required<Pick<RuntimeConfig, 'protocol' | 'timeoutMs' | 'maxResponseBytes'>> {
  /** Set when the configuration cannot work; every step reports it instead of calling the agent. */
  error?: string;
}

export function resolveRuntimeConfig(
  given: RuntimeConfig = {},
  env: NodeJS.ProcessEnv = process.env,
): ResolvedRuntimeConfig {
  const protocolRaw = given.protocol ?? nonEmpty(env.ADCP_PROTOCOL)?.toLowerCase() ?? 'mcp';
  const config = withEnvFallbacks(given, env, protocolRaw);
  setConfigurationError(config, protocolRaw, given, env);
  return config;
}

/** What was given, each setting it leaves out taken from its env variable, else its default. */
function withEnvFallbacks(given: RuntimeConfig, env: NodeJS.ProcessEnv, protocolRaw: string): ResolvedRuntimeConfig {
  return {
    ...given,
    agentUrl: given.agentUrl ?? nonEmpty(env.ADCP_AGENT_URL),
    authToken: given.authToken ?? nonEmpty(env.ADCP_AUTH_TOKEN),
    protocol: protocolRaw === 'a2a' ? 'a2a' : 'mcp',
    timeoutMs: given.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxResponseBytes: given.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    skipRateAbuse: given.skipRateAbuse ?? envFlag(env.ADCP_SKIP_RATE_ABUSE),
    allowHttp: given.allowHttp ?? envFlag(env.ADCP_ALLOW_HTTP),
    seededState: given.seededState ?? envFlag(env.ADCP_SEEDED_STATE),
    runnerContracts: {
      ...given.runnerContracts,
      rate_limit_trip_runner: given.runnerContracts?.rate_limit_trip_runner ?? envFlag(env.ADCP_RATE_LIMIT_TRIP),
      ...(given.runnerContracts?.parallel_dispatch_runner === undefined && envOff(env.ADCP_PARALLEL_DISPATCH)
        ? { parallel_dispatch_runner: false }
        : {}),
    },
    requests:
      given.requests ?? (nonEmpty(env.ADCP_REQUESTS)?.toLowerCase() === 'as-written' ? 'as-written' : 'enriched'),
    webhookSignerJwks: given.webhookSignerJwks ?? nonEmpty(env[SIGNER_JWKS_ENV]),
  };
}

/** Sets `config.error` when the resolved configuration cannot work (every step then reports it). */
function setConfigurationError(
  config: ResolvedRuntimeConfig,
  protocolRaw: string,
  given: RuntimeConfig,
  env: NodeJS.ProcessEnv,
): void {
  const { agentUrl } = config;
  const requestsEnv = nonEmpty(env.ADCP_REQUESTS);
  if (!agentUrl) {
    config.error =
      'no agent to test: set ADCP_AGENT_URL (e.g. ADCP_AGENT_URL=http://127.0.0.1:3000/mcp npx vitest run) or pass adcpStoryboards({ agent: { url } }) in vitest.config.ts';
  } else if (!/^https?:\/\//i.test(agentUrl)) {
    config.error = `agent URL "${agentUrl}" is not an http(s) URL: ADCP_AGENT_URL / agent.url must look like http://127.0.0.1:3000/mcp`;
  } else if (protocolRaw !== 'mcp' && protocolRaw !== 'a2a') {
    config.error = `ADCP_PROTOCOL / agent.protocol is "${protocolRaw}": use "mcp" or "a2a"`;
  } else if (given.requests === undefined && requestsEnv && !/^(as-written|enriched)$/i.test(requestsEnv)) {
    config.error = `ADCP_REQUESTS is "${requestsEnv}": use "as-written" (sample_request only) or "enriched" (the default)`;
  } else if (!config.allowHttp && plainHttpRemote(agentUrl)) {
    config.error =
      `agent URL ${agentUrl} is plain http to a host that is not loopback: the credentials would go out in cleartext. ` +
      'Use https://, or for a development agent set agent.allowHttp: true in adcpStoryboards() (env ADCP_ALLOW_HTTP=1, CLI --allow-http); results are then not publishable';
  } else if (config.webhookSignerJwks !== undefined) {
    // The location's text only; the file or URL itself is read once the run starts (operator-jwks.ts signerJwksFor).
    config.error = signerJwksLocationProblem(config.webhookSignerJwks, config.allowHttp);
  }
}

/** An env switch: on for 1, true or yes (any case). */
export function envFlag(value: string | undefined): boolean {
  return /^(1|true|yes)$/i.test(value ?? '');
}

/** A flag set off (`0`, `false`, `no`): for what is on unless turned off. */
function envOff(value: string | undefined): boolean {
  return /^(0|false|no)$/i.test(value ?? '');
}

/** Plain http to a host that is not loopback: credentials would go out in cleartext (refused unless `allowHttp`). */
export function plainHttpRemote(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname);
  } catch {
    return false;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== '' ? value.trim() : undefined;
}
