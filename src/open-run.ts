/**
 * One way to get from a loaded storyboard and a run configuration to a ready
 * `StoryboardRun`: resolve the configuration (with ADCP_* fallbacks), load the
 * storyboard's test kit, pick the schema registry and the transport. The
 * Vitest and Jest adapters, the plugin's run host, the benches and the tests
 * all open runs through it, so they all run storyboards the same way.
 */
import { realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { resolveRuntimeConfig, type RuntimeConfig } from './config.js';
import { listCorpus } from './storyboard/select.js';
import { contractVersionOf, defaultSchemasDir } from './corpus.js';
import type { AgentCapabilities } from './engine/applicability.js';
import { contractRules } from './model/contract-rules.js';
import { planPhases, type BoundSettings, type RunnerRole } from './engine/role.js';
import type { RunSettings } from './engine/run-settings.js';
import { StoryboardRun } from './engine/run.js';
import { settleBoundMs } from './engine/settle-bound.js';
import { secretsInUrl } from './model/redact.js';
import { BUILTIN_ROLES } from './roles/index.js';
import { schemaRegistryFor } from './schemas/registry.js';
import { loadTestKit, resolveTestKitPath } from './storyboard/test-kit.js';
import type { Step, Storyboard, TestKit } from './model/storyboard.js';
import { createTransport } from './transport/create.js';
import { workerSessions } from './transport/mcp.js';
import { RateLimitedTransport } from './transport/rate-limit.js';
import { signerJwksFor } from './webhooks/operator-jwks.js';
import type { WebhookSink } from './webhooks/receiver.js';
import { RemoteWebhookSink } from './webhooks/remote.js';

export interface OpenRunOptions {
  /** Environment for the ADCP_* fallbacks. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** A webhook receiver in this process (instead of the plugin's, `config.webhooks`). */
  webhooks?: WebhookSink;
  /** The loader's warnings for the storyboard file (StoryboardRunOptions.loadWarnings). */
  loadWarnings?: readonly string[];
  /**
   * Share MCP sessions with the other runs of this process (transport/mcp.ts `workerSessions`): for a runner that
   * runs many storyboards one after another in one process and can close them at its end (`closeSharedSessions`).
   * @default false
   */
  shareSessions?: boolean;
  /**
   * Send a storyboard's seeds of one kind (seed_product, …) together, each kind after the one before (the spec's
   * foreign-key order): for a runner with several storyboards in flight at once, whose seeding phases already reach
   * the agent side by side (the plugin's run host, at a concurrency above 1). @default false: one seed after another
   */
  seedsTogether?: boolean;
  /** The runner's protocol roles (engine/role.ts). @default BUILTIN_ROLES (roles/index.ts) */
  roles?: readonly RunnerRole[];
}

/** Closes the MCP sessions runs opened with `shareSessions` left open for the next run. */
export function closeSharedSessions(): Promise<void> {
  return workerSessions.close();
}

export function openStoryboardRun(
  storyboard: Storyboard,
  given: RuntimeConfig = {},
  options: OpenRunOptions = {},
): StoryboardRun {
  const config = resolveRuntimeConfig(given, options.env ?? process.env);
  const { testKit, configurationError } = testKitOf(storyboard, config);
  const schemasDir = config.schemasDir ?? defaultSchemasDir();
  return new StoryboardRun(storyboard, {
    roles: options.roles ?? BUILTIN_ROLES,
    // A rate-limited answer waits and resends, every run of this process waiting with it (transport/rate-limit.ts).
    transport: () =>
      new RateLimitedTransport(
        createTransport(config.protocol, {
          url: config.agentUrl!,
          maxResponseBytes: config.maxResponseBytes,
          urlGuard: { allowHttp: config.allowHttp === true },
          ...(options.shareSessions ? { mcpSessions: workerSessions } : {}),
        }),
      ),
    schemas: schemasDir ? schemaRegistryFor(schemasDir, config.cacheDir) : undefined,
    testKit,
    authToken: config.authToken,
    ...boundSettingsOf(config),
    maxResponseBytes: config.maxResponseBytes,
    configurationError,
    knownSecrets: secretsInUrl(config.agentUrl),
    corpusRoot: config.corpusRoot,
    loadWarnings: options.loadWarnings,
    requests: config.requests,
    rules: contractRules(contractVersionOf(config.corpusRoot)),
    seededState: config.seededState === true,
    seedsTogether: options.seedsTogether === true,
    capabilities: (ask) => sharedCapabilities(`${config.protocol} ${config.agentUrl} ${config.authToken ?? ''}`, ask),
    urlGuard: { allowHttp: config.allowHttp === true },
    ...operatorSignerJwks(config),
    ...(options.webhooks || config.webhooks
      ? { webhooks: options.webhooks ?? new RemoteWebhookSink(config.webhooks!) }
      : {}),
    ...(storyboard.requires_scenarios?.length && config.corpusRoot
      ? { knownStoryboardIds: () => storyboardIdsIn(config.corpusRoot!) }
      : {}),
  });
}

/**
 * The bound of one settle of this storyboard (StoryboardRun.worstCaseMs, engine/settle-bound.ts) as a run opened here
 * would compute it, without opening one: for a worker whose steps the plugin's run host runs (adapter/hosted-run.ts).
 * The test kit is read only if a step's bound depends on it (a `rate_abuse` vector's window).
 */
export function settleBoundOf(
  storyboard: Storyboard,
  given: RuntimeConfig = {},
  options: Pick<OpenRunOptions, 'env' | 'roles'> & {
    /** The storyboard's planned steps, when the caller has planned it with these roles and `given.corpusRoot`. */
    steps?: readonly Step[];
  } = {},
): number {
  const config = resolveRuntimeConfig(given, options.env ?? process.env);
  const roles = options.roles ?? BUILTIN_ROLES;
  const steps =
    options.steps ?? planPhases(roles, storyboard, { corpusRoot: config.corpusRoot }).flatMap((phase) => phase.steps);
  let kit: { testKit?: TestKit } | undefined;
  return settleBoundMs(roles, steps, {
    ...boundSettingsOf(config),
    get testKit() {
      return (kit ??= testKitOf(storyboard, config)).testKit;
    },
  });
}

/**
 * What a step's bound reads of the configuration besides the test kit (RunnerRole.stepBoundMs): one place for an opened
 * run and for settleBoundOf, so that the two bounds cannot drift apart.
 */
function boundSettingsOf(config: ReturnType<typeof resolveRuntimeConfig>): Omit<BoundSettings, 'testKit'> {
  return {
    timeoutMs: config.timeoutMs,
    requestSigning: { skipRateAbuse: config.skipRateAbuse === true },
    ...(config.runnerContracts ? { runnerContracts: config.runnerContracts } : {}),
  };
}

/** The run's loader of the operator's webhook signer JWKS, when the configuration names one. */
function operatorSignerJwks(config: ReturnType<typeof resolveRuntimeConfig>): Pick<RunSettings, 'webhookSignerJwks'> {
  const location = config.webhookSignerJwks;
  if (location === undefined) return {};
  const options = {
    timeoutMs: config.timeoutMs,
    allowHttp: config.allowHttp === true,
    baseDir: config.projectRoot ?? process.cwd(),
  };
  return { webhookSignerJwks: () => signerJwksFor(location, options) };
}

/** The storyboard's test kit, or the configuration error of a kit that cannot be loaded (or of the config itself). */
function testKitOf(
  storyboard: Storyboard,
  config: ReturnType<typeof resolveRuntimeConfig>,
): { testKit?: TestKit; configurationError?: string } {
  const kitRef = storyboard.prerequisites?.test_kit;
  if (!kitRef || config.error) return { configurationError: config.error };
  try {
    const kitPath = resolveTestKitPath(kitRef, { storyboardFile: storyboard.file, corpusRoot: config.corpusRoot });
    assertTestKitAllowed(kitPath, [
      config.corpusRoot,
      config.projectRoot ?? process.cwd(),
      ...(config.testKitDirs ?? []),
    ]);
    const cache =
      config.cacheDir && config.corpusRoot ? { dir: config.cacheDir, corpusRoot: config.corpusRoot } : undefined;
    return { testKit: loadTestKit(kitPath, cache ? { cache } : {}) };
  } catch (error) {
    return {
      configurationError: `cannot load test kit "${kitRef}": ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/**
 * A test kit's values are sent to the agent (`from_test_kit`, `$test_kit.…`)
 * and land in reports, so a storyboard may only name a kit below the corpus
 * root, the project root or a directory the user allowed (`testKitDirs`) —
 * never, say, a CLI's token file elsewhere on disk. Links are followed first.
 */
function assertTestKitAllowed(kitPath: string, roots: (string | undefined)[]): void {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const kit = real(kitPath);
  const allowed = roots.filter((r): r is string => Boolean(r)).map(real);
  if (allowed.some((root) => kit === root || kit.startsWith(root.endsWith(sep) ? root : root + sep))) return;
  throw new Error(
    `${kit} is outside the project (${allowed[1] ?? allowed[0]}) and the compliance corpus; a storyboard may only name a test kit below them. To allow another directory, add it to adcpStoryboards({ testKitDirs: [...] })`,
  );
}

const idsByRoot = new Map<string, ReadonlySet<string>>();

/**
 * The ids of the storyboards of a compliance tree, listed once per worker
 * (storyboard/select.ts's listing, which reads plain top-level lines): what a
 * `requires_scenarios` reference must name.
 */
function storyboardIdsIn(root: string): ReadonlySet<string> {
  let ids = idsByRoot.get(root);
  if (!ids) idsByRoot.set(root, (ids = new Set(listCorpus(root).map((entry) => entry.id))));
  return ids;
}

const capabilitiesByAgent = new Map<string, Promise<AgentCapabilities>>();

/**
 * The agent's get_adcp_capabilities answer, asked once per process and agent (protocol, URL and credentials): the
 * `requires_capability` gates of every storyboard read the same answer, as the reference runner's one discovery call.
 * An answer that was an error is asked again by the next run that needs it.
 */
function sharedCapabilities(key: string, ask: () => Promise<AgentCapabilities>): Promise<AgentCapabilities> {
  let answer = capabilitiesByAgent.get(key);
  if (!answer) {
    answer = ask();
    capabilitiesByAgent.set(key, answer);
    void answer.then((a) => {
      if (a.error !== undefined && capabilitiesByAgent.get(key) === answer) capabilitiesByAgent.delete(key);
    });
  }
  return answer;
}
