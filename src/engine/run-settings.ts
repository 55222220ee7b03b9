/**
 * What a storyboard run is configured with, apart from its roles (`StoryboardRunOptions` in run.ts adds them): what
 * the scheduler reads and what it hands each role's session (engine/role.ts `RoleRun.settings`).
 */
import type { ContractRules } from '../model/contract-rules.js';
import type { TestKit } from '../model/storyboard.js';
import type { SchemaRegistry } from '../schemas/registry.js';
import type { AgentTransport } from '../transport/types.js';
import type { UrlGuardOptions } from '../transport/url-guard.js';
import type { OperatorJwks } from '../webhooks/operator-jwks.js';
import type { WebhookSink } from '../webhooks/receiver.js';
import type { AgentCapabilities } from './applicability.js';
import type { RequestMode } from './enrich/index.js';
import type { PlanSettings } from './role.js';

/** `PlanSettings` (role.ts): what the roles plan the run's steps with — the corpus root, signing vectors read already. */
export interface RunSettings extends PlanSettings {
  /** Opens the transport lazily (first step that needs the agent). */
  transport: () => AgentTransport;
  schemas?: SchemaRegistry;
  testKit?: TestKit;
  /** Operator's Bearer token (option `auth.token` / ADCP_AUTH_TOKEN). */
  authToken?: string;
  /** Per-step bound on the call to the agent (and on polling an async task to its end). */
  timeoutMs: number;
  /** Largest body read by the runner's own HTTP probes. @default 10485760 */
  maxResponseBytes?: number;
  /** Pause between task-status polls (`get_task_status`, `tasks/get`) of an async task. @default 1000 */
  pollIntervalMs?: number;
  /**
   * A configuration problem that makes every step fail before reaching the
   * agent (e.g. no agent URL). Reported on each step instead of a stack trace.
   */
  configurationError?: string;
  /**
   * Ids of the storyboards in the compliance tree, for `requires_scenarios`:
   * a reference that names none of them grades the storyboard `not_applicable`
   * (storyboard-schema.yaml > unresolved_scenario_reference). Absent: not checked. Asked when a step first needs it:
   * listing a corpus reads the head of each of its files, and a run opened only for its bounds never does.
   */
  knownStoryboardIds?: () => ReadonlySet<string>;
  /** Other secrets to scrub from every message and record (e.g. credentials written into the agent URL). */
  knownSecrets?: readonly string[];
  /** signed_requests options (roles/request-signing/probe.ts). */
  requestSigning?: { skipRateAbuse?: boolean };
  /** The webhook receiver this run mints `{{runner.webhook_url:…}}` URLs on; absent: no receiver (webhook steps not applicable). */
  webhooks?: WebhookSink;
  /**
   * Local development: the operator's webhook signer JWKS (config `webhookSignerJwks`), loaded on first use; webhook
   * signatures are then verified against it instead of the spec's brand.json discovery. Rejects with a
   * ConfigurationError when it cannot be loaded. Absent: the spec's discovery.
   */
  webhookSignerJwks?: () => Promise<OperatorJwks>;
  /** The SSRF guard on URLs the agent supplies (url-guard.ts): `allowHttp` for local development; tests' lookup / dial. */
  urlGuard?: Omit<UrlGuardOptions, 'agentUrl'>;
  /** The loader's warnings for the storyboard file (`file:line:col: warning: [rule] …`), reported with the storyboard-wide warnings. */
  loadWarnings?: readonly string[];
  /**
   * `enriched`: the per-task request builder completes each request as the storyboards assume (enrich/index.ts),
   * every change a step warning; `as-written`: sample_request after substitution only. @default 'enriched'
   */
  requests?: RequestMode;
  /** The clock enrichment reads (past flights, the flight anchor). @default Date.now */
  now?: () => number;
  /** The runner-output contract's rules this run follows (model/contract-rules.ts). @default the newest */
  rules?: ContractRules;
  /**
   * Shares the agent's get_adcp_capabilities answer (read by `requires_capability` gates) between the runs of a
   * process: given the run's own way to ask, it answers with the first answer any run got for the same agent. Absent:
   * each run asks once, when a gate first needs it.
   */
  capabilities?: (ask: () => Promise<AgentCapabilities>) => Promise<AgentCapabilities>;
  /** The operator declares the prerequisite state seeded out of band (`requires: [seeded_state]`). @default false */
  seededState?: boolean;
  /**
   * The injected seeding phase sends the seeds of one kind (seed_product, …) together, each kind after the one before
   * (the spec's foreign-key order): for a runner that already has storyboards seeding beside each other at the agent
   * (the run host). @default false: one seed after another, as the reference runner sends them
   */
  seedsTogether?: boolean;
  /**
   * The AdCP 3.1 runner contracts that send more than a step's one request, each in scope for this run or not (a step
   * that needs one out of scope grades not_applicable): `parallel_dispatch_runner` sends a step's request 2–10 times
   * at once (roles/parallel-dispatch/), `rate_limit_trip_runner` sends up to 500 mutating requests to trip the agent's
   * rate limiter (roles/rate-limit-trip/; its test kit: "Graders MUST target a sandbox/staging endpoint", so only on
   * the operator's word). @default { parallel_dispatch_runner: true, rate_limit_trip_runner: false }
   */
  runnerContracts?: { parallel_dispatch_runner?: boolean; rate_limit_trip_runner?: boolean };
  /**
   * How long a `parallel_dispatch` step may take to resolve its IDEMPOTENCY_IN_FLIGHT answers (waiting each
   * `retry_after` and resending the key) before it grades `step_timeout`. test-kits/parallel-dispatch-runner.yaml
   * bounds it by "the runner's documented timeout (default 60s; CI configurable)". @default the larger of timeoutMs
   * and 60 s
   */
  inFlightBudgetMs?: number;
}

/**
 * A runner that shares the agent between runs (the run host: plugin/agent-gate.ts) is asked before each step of a run
 * that reaches the agent — its call, or a role's run of it (`StoryboardRun.takeTurns`) —, by its index in `planned()`,
 * and told when each step has ended, whether it asked or not. A step decided without the agent (skipped, not
 * applicable, graded by the runner) asks nothing, so a window whose steps all skip never stops the other runs. The
 * step's clock starts with its turn: the wait is the other storyboards', not the agent's, and uses up none of the
 * step's timeout.
 */
export interface StepTurns {
  before(index: number): Promise<void>;
  after(index: number): void;
}
