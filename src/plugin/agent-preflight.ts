/**
 * The auth and reachability preflight: one look at the agent, with the run's own credential, before any storyboard
 * runs — called by the plugin when a run with storyboard files starts (run-start.ts `preflightRun`; the `vitest-adcp`
 * bin starts it earlier, as it asks for the capabilities, and the plugin takes that one: `startPreflight`), and its
 * credential verdict by capability selection (capabilities.ts). Without it a missing or wrong token made every step
 * fail with a schema headline (the 401 on a secondary line), and an agent that was down failed every step with the
 * same connection error.
 *
 * It judges the run's configured credential only, never what a storyboard sends on its own (`auth: none`, a test
 * kit's key, the deliberately invalid ones of security_baseline):
 *
 * - The agent must answer MCP `initialize` (A2A: the fetch of its agent card). No answer at all — connection refused,
 *   DNS, TLS, timeout — stops the run, naming the URL and the error. Any HTTP answer is an answer: what it says is for
 *   the steps to grade.
 * - Discovery is public in AdCP's tiered model (security.yaml: `get_adcp_capabilities`, `list_creative_formats`,
 *   `get_products` without pricing). An agent that rejects it (401/403, or `AUTH_REQUIRED`) wants credentials at the
 *   door: with no token configured that is the forgotten `ADCP_AUTH_TOKEN` this preflight exists for, and with one,
 *   a rejected token.
 * - A configured token is also sent once on the protected read the compliance test kits name as their probe
 *   (`list_creatives`, else another protected read the agent serves): an agent whose discovery is public (as the spec
 *   asks) rejects a wrong token only there. Without a configured token this call is not made — storyboards then send
 *   their test kit's key or nothing, on purpose, and anonymous access is theirs to judge.
 *
 * Anything else (an error answer, a slow tool, a tool the agent does not serve) is not this preflight's business:
 * the steps grade it.
 */
import { debuglog } from 'node:util';
import type { ResolvedRuntimeConfig } from '../config.js';
import { findErrorCode } from '../model/answer-error.js';
import type { Exchange } from '../model/exchange.js';
import { ConfigurationError } from '../model/errors.js';
import { sanitizeLine, scrubSecrets, secretsInUrl } from '../model/redact.js';
import { createTransport, type Protocol } from '../transport/create.js';
import type { CallOptions } from '../transport/types.js';
import { parseWwwAuthenticate } from '../transport/www-authenticate.js';

export interface AgentAccess {
  url: string;
  /** @default 'mcp' */
  protocol?: Protocol;
  authToken?: string;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Local development: the SSRF guard's https and address rules lifted (url-guard.ts). */
  allowHttp?: boolean;
}

const debug = debuglog('vitest-adcp');

/** How a run reaches its agent, from its resolved configuration: what the preflight and capability selection call with. */
export function agentAccess(config: ResolvedRuntimeConfig): AgentAccess {
  return {
    url: config.agentUrl!,
    protocol: config.protocol,
    authToken: config.authToken,
    timeoutMs: config.timeoutMs,
    maxResponseBytes: config.maxResponseBytes,
    allowHttp: config.allowHttp,
  };
}

/** Where docs/troubleshooting.md explains the preflight's messages. */
const AUTH_TROUBLESHOOTING = 'docs/troubleshooting.md#the-agent-rejects-the-credential-or-cannot-be-reached';

/**
 * Protected, read-only tasks that accept an empty body, in the order the compliance test kits name them as
 * `auth.probe_task` (list_creatives is the spec's default): the first one the agent serves judges a configured token.
 */
const PROTECTED_PROBE_TASKS = [
  'list_creatives',
  'get_media_buy_delivery',
  'get_signals',
  'get_media_buys',
  'list_accounts',
] as const;

/** The bound on a preflight tool call: an auth layer answers at once; a slow tool is the steps' business, not ours. */
const PROBE_CALL_MS = 5_000;

/**
 * Calls the agent as described above; resolves when the run can go on, rejects with a ConfigurationError when it
 * cannot (the agent rejects the run's credential, or does not answer at all).
 *
 * Through the transport the steps use (MCP: the SDK client over Streamable HTTP; A2A: the agent card and JSON-RPC),
 * so the preflight sees an answer as a step would: `listTools` opens the door (MCP `initialize`, the initialized
 * notification and `tools/list`; A2A the agent card), then one call of the probe task.
 */
export async function agentPreflight(agent: AgentAccess): Promise<void> {
  const secrets = agentSecrets(agent);
  const credentials: CallOptions['credentials'] = agent.authToken
    ? { kind: 'bearer', token: agent.authToken }
    : { kind: 'none' };
  const transport = createTransport(agent.protocol ?? 'mcp', {
    url: agent.url,
    maxResponseBytes: agent.maxResponseBytes,
    urlGuard: { allowHttp: agent.allowHttp === true },
  });
  try {
    const listed = await transport.listTools({ credentials, timeoutMs: agent.timeoutMs });
    const tools = 'tools' in listed ? listed.tools : undefined;
    const probe = probeTask(agent, tools);
    // When the door did not open (listTools says why only in words), this call goes through it again and brings back
    // what it met: the status and WWW-Authenticate of the refused `initialize` or agent card, or no answer at all.
    // The door's answer is then reported as the probe task's (`get_adcp_capabilities answered HTTP 401`), as
    // capability selection reports it: the transport does not say which of a call's requests was refused.
    const exchange = await transport.call(
      probe,
      {},
      { credentials, timeoutMs: tools ? Math.min(agent.timeoutMs, PROBE_CALL_MS) : agent.timeoutMs },
    );
    const rejected = credentialError(agent, probe, exchange);
    if (rejected) throw rejected;
    // Only when the door did not open either: a tool that does not answer in time after it did is the steps' business.
    if (!tools && !exchange.response && exchange.transportError && unreachable(exchange.transportError))
      throw unreachableError(agent, exchange.transportError, secrets);
  } finally {
    await transport.close();
  }
}

/**
 * Preflights started ahead of their run, by what they judge (agentKey): the bin starts its run's as it asks the agent
 * for its capabilities, while Vitest loads (cli.ts), and the plugin takes it when the run starts (run-start.ts) instead
 * of making its own then — the run's first calls wait for the preflight, and this one has passed by then.
 */
const early = new Map<string, Promise<void>>();

/** What a preflight judges: the agent, the credential and the bounds; two equal keys make the same calls. */
function agentKey(agent: AgentAccess): string {
  return JSON.stringify([
    agent.url,
    agent.protocol ?? 'mcp',
    agent.authToken ?? null,
    agent.timeoutMs,
    agent.maxResponseBytes,
    agent.allowHttp === true,
  ]);
}

/** Starts the preflight of a run that is about to start (its outcome is for `takePreflight`, once). */
export function startPreflight(agent: AgentAccess): void {
  const preflight = agentPreflight(agent);
  // Judged when the run takes it: a rejection before then is not unhandled.
  preflight.catch(() => {});
  early.set(agentKey(agent), preflight);
}

/** The preflight started for this agent, credential and bounds (startPreflight), once; undefined when there is none. */
export function takePreflight(agent: AgentAccess): Promise<void> | undefined {
  const key = agentKey(agent);
  const preflight = early.get(key);
  early.delete(key);
  if (preflight) debug('the run takes the preflight started ahead of it');
  return preflight;
}

/** With a token, the protected read judges it; without, public discovery tells whether the door needs one. */
function probeTask(agent: AgentAccess, tools: readonly string[] | undefined): string {
  return agent.authToken
    ? (PROTECTED_PROBE_TASKS.find((task) => tools?.includes(task)) ?? 'get_adcp_capabilities')
    : 'get_adcp_capabilities';
}

/**
 * The secrets a call to the agent sends or holds: the operator's token and the credentials written into the agent URL
 * (their other spellings are scrubbed too: model/redact.ts `secretForms`). The preflight's, capability selection's and
 * the gates graded before a run (up-front.ts) alike.
 */
export function agentSecrets(agent: Pick<AgentAccess, 'url' | 'authToken'>): string[] {
  return [...(agent.authToken ? [agent.authToken] : []), ...secretsInUrl(agent.url)];
}

function unreachableError(agent: AgentAccess, reason: string, secrets: readonly string[]): ConfigurationError {
  const url = sanitizeLine(scrubSecrets(agent.url, secrets));
  // A ConfigurationError by name too (never a subclass): the bin maps that name to exit 2 wherever it comes from.
  return new ConfigurationError(
    `vitest-adcp cannot run the storyboards: the agent at ${url} cannot be reached (${sanitizeLine(scrubSecrets(reason, secrets)).slice(0, 300)}). Check that it is running and that the URL is its MCP endpoint (often ending in /mcp) or, with protocol a2a, where its agent card is (ADCP_AGENT_URL / agent.url / the URL given to npx vitest-adcp). See ${AUTH_TROUBLESHOOTING}`,
  );
}

const AUTH_CODES = new Set(['AUTH_REQUIRED', 'AUTH_INVALID']);

/** No answer at all, as opposed to an answer we could not read: the agent is down, or the URL is wrong. */
function unreachable(reason: string): boolean {
  return /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNRESET|timed? ?out|timeout|refused|getaddrinfo|certificate|TLS|socket hang up|fetch failed|other side closed/i.test(
    reason,
  );
}

interface AuthRejection {
  status?: number;
  /** The auth schemes the agent's WWW-Authenticate asks for, as a phrase: `Bearer (OAuth …) or Basic`. */
  mechanism?: string;
  /** The agent's own error code (AUTH_REQUIRED) when there is one. */
  code?: string;
}

/** Whether an answer is the agent refusing the call's credential: HTTP 401/403, or AUTH_REQUIRED (JSON-RPC -32028). */
function authRejection(exchange: Exchange): AuthRejection | undefined {
  const status = exchange.response?.status;
  const code = findErrorCode(exchange)?.code;
  const byCode = (code !== undefined && AUTH_CODES.has(code)) || exchange.rpcError?.code === -32028;
  if (status !== 401 && status !== 403 && !byCode) return undefined;
  const header = exchange.response?.headers?.['www-authenticate'];
  const mechanism = header ? mechanismOf(header) : undefined;
  return {
    ...(status === 401 || status === 403 ? { status } : {}),
    ...(mechanism ? { mechanism } : {}),
    ...(byCode && code ? { code } : {}),
  };
}

/** `Bearer (OAuth: …resource_metadata) or Basic`: the schemes a WWW-Authenticate header asks for. */
function mechanismOf(header: string): string | undefined {
  const schemes = parseWwwAuthenticate(header).challenges.map((challenge) => {
    const scheme = sanitizeLine(challenge.scheme).slice(0, 40);
    if (/^bearer$/i.test(challenge.scheme) && challenge.params.resource_metadata)
      return `${scheme} (OAuth: a token from the authorization server its resource metadata names)`;
    return scheme;
  });
  return schemes.length > 0 ? [...new Set(schemes)].join(' or ') : undefined;
}

/**
 * The run's stop when `exchange` (a call made with the run's configured credential, or with none when none is
 * configured) is the agent refusing that credential; undefined otherwise. Capability selection uses it too: a 401 to
 * `get_adcp_capabilities` is this error, never a silent fallback to the universal storyboards.
 */
export function credentialError(
  agent: Pick<AgentAccess, 'url' | 'authToken'>,
  task: string,
  exchange: Exchange,
): ConfigurationError | undefined {
  const rejection = authRejection(exchange);
  return rejection ? authError(agent, task, rejection, agentSecrets(agent)) : undefined;
}

function authError(
  agent: Pick<AgentAccess, 'url' | 'authToken'>,
  task: string,
  rejection: AuthRejection,
  secrets: readonly string[],
): ConfigurationError {
  const url = sanitizeLine(scrubSecrets(agent.url, secrets));
  const tokenGiven = agent.authToken !== undefined;
  const answer = [
    rejection.status !== undefined ? `HTTP ${rejection.status}` : undefined,
    rejection.code ? sanitizeLine(scrubSecrets(rejection.code, secrets)).slice(0, 60) : undefined,
  ]
    .filter(Boolean)
    .join(', ');
  const asks = rejection.mechanism ? `it asks for ${rejection.mechanism}` : 'it names no scheme: no WWW-Authenticate';
  return tokenGiven
    ? new ConfigurationError(
        `vitest-adcp cannot run the storyboards: the agent at ${url} rejected the configured token (${task} answered ${answer}; ${asks}). Pass \`--auth\` / \`--auth-file\` or set \`ADCP_AUTH_TOKEN\` (in a config: adcpStoryboards({ agent: { auth: { token } } })) with a credential this agent accepts. See ${AUTH_TROUBLESHOOTING}`,
      )
    : new ConfigurationError(
        `vitest-adcp cannot run the storyboards: the agent at ${url} requires authentication and no token is configured (${task} answered ${answer}; ${asks}). Pass \`--auth\` / \`--auth-file\` or set \`ADCP_AUTH_TOKEN\` (in a config: adcpStoryboards({ agent: { auth: { token } } })) with a credential this agent accepts. See ${AUTH_TROUBLESHOOTING}`,
      );
}
