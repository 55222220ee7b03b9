/**
 * Capability-driven assessment: the storyboards an agent must pass, chosen from
 * what it declares in `get_adcp_capabilities` the way the reference CLI
 * (`npx adcp storyboard run <url>`, no storyboard argument) chooses them —
 * `universal`, a bundle per declared `supported_protocols` entry, each declared
 * specialism, and the scenarios those require. The bundles are what the
 * corpus's own index obligates (storyboard/obligations.ts); we ask the agent
 * (over the run's own transport, MCP or A2A), turn what the corpus cannot
 * assess into warnings, and list the bundles' storyboards.
 */
import { answerError } from '../model/answer-error.js';
import { ConfigurationError } from '../model/errors.js';
import { sanitizeLine, sanitizeOutput, scrubSecrets } from '../model/redact.js';
import { corpusVersionOf } from '../corpus.js';
import { obligations } from '../storyboard/obligations.js';
import { storyboardIdsUnder } from '../storyboard/select.js';
import { createTransport } from '../transport/create.js';
import { agentSecrets, credentialError, type AgentAccess } from './agent-preflight.js';

export type { AgentAccess } from './agent-preflight.js';

/** What the selection reads from the agent's `get_adcp_capabilities` answer. */
export interface DeclaredCapabilities {
  supported_protocols?: string[];
  specialisms?: string[];
  /**
   * The AdCP releases the agent speaks, at release precision (`adcp.supported_versions`, 3.1 schema: `["3.0", "3.1"]`);
   * absent or empty when it does not say (a 3.0 agent): then every corpus is taken to apply, as the grader takes it.
   */
  supported_versions?: string[];
}

/** The agent does not claim the AdCP release of the run's corpus (`adcp.supported_versions`): the run stops. */
export class UnsupportedCorpusVersionError extends ConfigurationError {}

/**
 * Whether the agent's `adcp.supported_versions` cover the corpus version `corpus` (a full version, `3.1.15`), as the
 * grader reads them: an entry names a release (`3.1`) or a full version (`3.1.15`, any patch of that release); a
 * pre-release corpus (`3.2.0-beta.5`) is covered only by an entry naming it, or its pre-release line (`3.2-beta`).
 * An agent that declares none claims nothing, and nothing is refused.
 */
export function corpusVersionSupported(corpus: string, supported: readonly string[]): boolean {
  if (supported.length === 0) return true;
  const match = /^(\d+)\.(\d+)(?:\.\d+)?(?:-([A-Za-z]+)[\w.]*)?$/.exec(corpus.trim());
  if (!match) return supported.includes(corpus);
  const [, major, minor, pre] = match;
  const line = `${major}.${minor}`;
  const accepted = pre ? new Set([corpus, `${line}-${pre}`]) : new Set([corpus, line]);
  return supported.some((entry) => {
    const v = entry.trim().replace(/^v/, '');
    if (accepted.has(v)) return true;
    // A full version names its release: `3.1.10` covers the 3.1 corpus (not a pre-release's).
    const release = /^(\d+)\.(\d+)\.\d+$/.exec(v);
    return !pre && release !== null && `${release[1]}.${release[2]}` === line;
  });
}

/**
 * The run's stop when the agent declares `adcp.supported_versions` and the corpus version is not among them (the
 * grader refuses the same: "Compliance cache version … is not supported by this seller"): one line naming the corpus,
 * the agent's list and the ways forward.
 */
function unsupportedCorpusVersion(
  corpusVersion: string | undefined,
  capabilities: DeclaredCapabilities,
  secrets: readonly string[] = [],
): UnsupportedCorpusVersionError | undefined {
  const supported = capabilities.supported_versions ?? [];
  if (!corpusVersion || corpusVersionSupported(corpusVersion, supported)) return undefined;
  const list = supported.map((v) => quoted(v, secrets)).join(', ');
  return new UnsupportedCorpusVersionError(
    `vitest-adcp cannot run the storyboards: the compliance corpus is AdCP ${corpusVersion}, and the agent does not speak it (its get_adcp_capabilities declares adcp.supported_versions [${list}]). Name a corpus of a release it declares (--compliance-version / compliance.version / ADCP_COMPLIANCE, e.g. an @adcp/sdk that pins it), or run this one deliberately with --allow-unsupported-version (compliance.allowUnsupportedVersion, ADCP_ALLOW_UNSUPPORTED_VERSION=1).`,
  );
}

/** The agent could not be asked (no answer at all, as opposed to an answer without capabilities). */
export class AgentUnreachableError extends ConfigurationError {
  /** `reason` can quote the agent (an error it answered): scrubbed of `secrets` and sanitised here, before anyone prints it. */
  constructor(url: string, reason: string, secrets: readonly string[] = []) {
    super(
      `cannot ask the agent at ${safeText(url, secrets)} for its capabilities: ${safeText(reason, secrets)}. Capability-driven selection (compliance.fromCapabilities, the default of \`npx vitest-adcp <url>\`) needs the agent running: check that it is up and that the URL is its MCP endpoint (often ending in /mcp) or, with protocol a2a, where its agent card is, or name the storyboards to run instead (compliance.storyboards / --storyboards).`,
    );
  }
}

/**
 * Agent-supplied text on the capability path (a declared specialism, an error it answered) as it may be printed or
 * cached: the run's secrets scrubbed, then the output sanitiser (control characters, CI-command line starts).
 */
function safeText(text: string, secrets: readonly string[]): string {
  return sanitizeOutput(scrubSecrets(text, secrets));
}

/** An agent-supplied name quoted on one line, cut short: `"…"`. */
function quoted(text: string, secrets: readonly string[]): string {
  const clean = sanitizeLine(scrubSecrets(text, secrets));
  return `"${clean.length > 120 ? `${clean.slice(0, 119)}…` : clean}"`;
}

/** Capability-driven selection cannot work in this run (the agent it would ask is not configured). */
export class CapabilitySelectionError extends ConfigurationError {}

/**
 * Calls `get_adcp_capabilities` once. Throws AgentUnreachableError when no
 * answer arrives; an answer without capabilities (the tool missing or failing)
 * gives empty capabilities and a `problem` — the reference then runs the
 * universal storyboards only, and so do we.
 */
export async function readAgentCapabilities(
  agent: AgentAccess,
): Promise<{ capabilities: DeclaredCapabilities; problem?: string }> {
  const secrets = agentSecrets(agent);
  const transport = createTransport(agent.protocol ?? 'mcp', {
    url: agent.url,
    maxResponseBytes: agent.maxResponseBytes,
    urlGuard: { allowHttp: agent.allowHttp === true },
  });
  try {
    const exchange = await transport.call(
      'get_adcp_capabilities',
      {},
      {
        credentials: agent.authToken ? { kind: 'bearer', token: agent.authToken } : { kind: 'none' },
        timeoutMs: agent.timeoutMs,
      },
    );
    // The agent refusing the run's credential is the preflight's error (agent-preflight.ts), the same wherever it is
    // met: selecting the universal storyboards for it instead would turn one missing token into a failure per step.
    const rejected = credentialError(agent, 'get_adcp_capabilities', exchange);
    if (rejected) throw rejected;
    if (exchange.transportError) throw new AgentUnreachableError(agent.url, exchange.transportError, secrets);
    const data = exchange.data as Record<string, unknown> | undefined;
    if (answerError(exchange) || exchange.extraction.path === 'none' || !data || typeof data !== 'object') {
      const said = exchange.rpcError?.message ?? exchange.extraction.note ?? 'no capabilities in the answer';
      // Agent-controlled text: scrubbed, sanitised, quoted on one line and cut short.
      return {
        capabilities: {},
        problem: `get_adcp_capabilities at ${safeText(agent.url, secrets)} answered without capabilities (${quoted(said.slice(0, 400), secrets)})`,
      };
    }
    answers.set(answerKey(agent), data);
    const adcp = data.adcp as { supported_versions?: unknown } | undefined;
    const versions = strings(adcp && typeof adcp === 'object' ? adcp.supported_versions : undefined);
    return {
      capabilities: {
        supported_protocols: strings(data.supported_protocols),
        specialisms: strings(data.specialisms),
        ...(versions.length > 0 ? { supported_versions: versions } : {}),
      },
    };
  } finally {
    await transport.close();
  }
}

/**
 * The get_adcp_capabilities answers capability selection read in this process, by agent and credential: a run whose
 * storyboards an answer selected grades their `requires_capability` gates against it before it starts (up-front.ts),
 * the bin's selection and the plugin's alike (the bin runs the plugin in its own process). The last answer is kept.
 */
const answers = new Map<string, Record<string, unknown>>();

function answerKey(agent: Pick<AgentAccess, 'url' | 'protocol' | 'authToken'>): string {
  return JSON.stringify([agent.url, agent.protocol ?? 'mcp', agent.authToken ?? null]);
}

/** The agent's get_adcp_capabilities answer, when capability selection read one in this process; else undefined. */
export function capabilitiesAnswered(
  agent: Pick<AgentAccess, 'url' | 'protocol' | 'authToken'>,
): Record<string, unknown> | undefined {
  return answers.get(answerKey(agent));
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export interface CapabilitySelectionOptions {
  /** Where warnings go. @default console.warn */
  warn?: (message: string) => void;
  /** The run's secrets (agentSecrets): scrubbed from every warning before it is printed. */
  secrets?: readonly string[];
  /** Run the corpus even when the agent's `adcp.supported_versions` do not cover its version. @default false */
  allowUnsupportedVersion?: boolean;
}

/**
 * The whole capability-driven choice for an agent: ask it, then select. An
 * agent that answers without capabilities gets the universal storyboards (with
 * a warning), as in the reference; one that does not answer is an error.
 */
export async function storyboardIdsForAgent(
  agent: AgentAccess,
  corpusRoot: string,
  options: CapabilitySelectionOptions = {},
): Promise<string[]> {
  const { capabilities, problem } = await readAgentCapabilities(agent);
  const secrets = [...(options.secrets ?? []), ...agentSecrets(agent)];
  if (!options.allowUnsupportedVersion) {
    const refused = unsupportedCorpusVersion(corpusVersionOf(corpusRoot), capabilities, secrets);
    if (refused) throw refused;
  }
  if (problem)
    (options.warn ?? defaultWarn)(
      safeText(`${problem}: only the universal storyboards are selected, as the reference runner does.`, secrets),
    );
  return storyboardIdsForCapabilities(corpusRoot, capabilities, { ...options, secrets });
}

function defaultWarn(message: string): void {
  console.warn(`[vitest-adcp] ${message}`);
}

/**
 * Ids of the storyboards the reference selects for `capabilities` in the
 * compliance tree at `corpusRoot` (their `requires_scenarios` are added when
 * the ids are turned into files, by selectCorpus), in its order. Protocols the
 * corpus has no baseline for, unknown specialisms, and specialisms whose
 * protocol is not declared are warnings — each once — never an error: the rest
 * of the declaration is still assessed.
 */
export function storyboardIdsForCapabilities(
  corpusRoot: string,
  capabilities: DeclaredCapabilities,
  options: CapabilitySelectionOptions = {},
): string[] {
  const secrets = options.secrets ?? [];
  // Every warning quotes what the agent declared: scrubbed and sanitised before it is printed.
  const warn = (message: string) => (options.warn ?? defaultWarn)(safeText(message, secrets));
  const owed = obligations(corpusRoot, capabilities);
  const corpusName = owed.known.version ? `the AdCP ${owed.known.version} compliance corpus` : 'the compliance corpus';
  for (const protocol of owed.protocolsWithoutBaseline)
    warn(
      `the agent declares protocol ${quoted(protocol, secrets)} in supported_protocols, for which ${corpusName} has no baseline (it has ${owed.known.protocols.join(', ')}); nothing is run for it. A newer corpus may have one.`,
    );
  for (const specialism of owed.unknownSpecialisms)
    warn(
      `the agent declares specialism ${quoted(specialism, secrets)}, which ${corpusName} does not know (it knows ${owed.known.specialisms.join(', ')}); its storyboards are not run. A newer @adcp/sdk may know it.`,
    );
  for (const { specialism, protocol } of owed.orphanSpecialisms)
    warn(
      `the agent declares specialism ${quoted(specialism, secrets)} but not its protocol ${quoted(protocol, secrets)} in supported_protocols (every specialism rolls up to a declared protocol); its storyboards are not run.`,
    );
  return storyboardIdsUnder(
    corpusRoot,
    owed.bundles.map((bundle) => bundle.path),
  );
}
