/**
 * The options of `adcpStoryboards()` (plugin.ts). check-options.ts mirrors their keys, and the type checker keeps
 * the two in step.
 */
import type { CorpusSelection } from '../storyboard/select.js';
import type { StoryboardBounds } from '../storyboard/bounds.js';
import type { WebhookOptions } from '../webhooks/options.js';
import type { AgentStartOptions } from '../agent/agent-start.js';

export interface AdcpStoryboardsOptions {
  /**
   * Globs (relative to the project root) of your own storyboard files, added
   * to Vitest's `include` — your own test globs stay as they are.
   * @default ['**\/*.storyboard.yaml', '**\/*.storyboard.yml']
   */
  include?: string | string[];
  /** Explicit storyboard files (any name) to run as well. */
  files?: string[];
  /**
   * Storyboards from the AdCP compliance corpus of the installed `@adcp/sdk`
   * (or of `version` / `path`): by storyboard id, bundle or track, and/or the
   * ones the agent's capabilities call for (`fromCapabilities`). The scenarios
   * a selected storyboard requires (`requires_scenarios`) run too.
   * Env: ADCP_COMPLIANCE (a version, or a path to a compliance tree).
   * @default undefined (no corpus storyboards run)
   */
  compliance?: CorpusSelection & {
    /**
     * Also run what the agent must pass, chosen from its `get_adcp_capabilities`
     * as `npx adcp storyboard run <url>` chooses: `universal`, a bundle per
     * declared `supported_protocols` entry, each declared specialism. Asked once
     * per run, before any test file is collected; an unreachable agent fails
     * the run with one error. Unknown protocols/specialisms are warnings.
     * @default false
     */
    fromCapabilities?: boolean;
    /**
     * The corpus version: one the installed `@adcp/sdk` ships, or any published one, which is then fetched from
     * `<baseUrl>/protocol/<version>.tgz`, checked against its `.sha256` (and its cosign signature when one is
     * published and `cosign` is installed; env ADCP_REQUIRE_SIGNATURE=1 refuses a bundle without one) and kept in
     * the per-user cache, so later runs are offline. Env: ADCP_COMPLIANCE.
     * @default the version the installed @adcp/sdk pins
     */
    version?: string;
    /** A compliance tree on disk (`…/compliance`, holding index.json) instead of a version. */
    path?: string;
    /**
     * Where published corpora are fetched from. Plain http only for a loopback host or with `agent.allowHttp`.
     * Env: ADCP_BASE_URL. @default 'https://adcontextprotocol.org'
     */
    baseUrl?: string;
    /**
     * Capability selection (`fromCapabilities`) stops the run when the agent declares `adcp.supported_versions` and
     * the corpus's AdCP release is not among them, as the grader does. `true` runs that corpus deliberately.
     * Env: ADCP_ALLOW_UNSUPPORTED_VERSION=1. @default false
     */
    allowUnsupportedVersion?: boolean;
  };
  /** The agent under test. Env fallbacks: ADCP_AGENT_URL, ADCP_PROTOCOL, ADCP_AUTH_TOKEN. */
  agent?: {
    url?: string;
    /** @default 'mcp' */
    protocol?: 'mcp' | 'a2a';
    /** Bearer token sent on steps that do not declare their own `auth:`. */
    auth?: { token?: string };
    /**
     * Local development only: allow a plain-http agent URL that is not loopback (otherwise a
     * configuration error: credentials would go out in cleartext), and let the runner fetch
     * agent-supplied URLs (OAuth issuer, A2A endpoint) over http or on private addresses.
     * Results are then not publishable. Env: ADCP_ALLOW_HTTP=1. @default false
     */
    allowHttp?: boolean;
    /**
     * Start the agent for the run, as Playwright's `webServer` starts a web app: `command` (a string run by the shell,
     * or an argv array) in `cwd` with `env` added, waited for until it answers at `url` as the run talks to it (MCP
     * `initialize`, the A2A agent card) for up to `timeoutMs` (default 60000), and stopped with its whole process
     * group when the run ends. `reuseExisting` (default true, false when `CI` is set): an agent already answering at
     * `url` is used as it is, and left running. With a JSON report configured, its output is kept beside it
     * (`<report>.agent.log`). `watch` (globs of the agent's source, relative to `cwd`): in `vitest --watch` a save of a
     * matching file restarts the agent before the storyboard files re-run. CLI `--start "<command>"`,
     * `--start-timeout <ms>`.
     */
    start?: AgentStartOptions;
  };
  /** Per-step bound on the call to the agent, in ms. @default 30000 */
  timeoutMs?: number;
  /** Largest agent response read, in bytes. @default 10485760 (10 MiB) */
  maxResponseBytes?: number;
  /**
   * The signed_requests storyboard. `skipRateAbuse`: do not send vector 020's
   * N+1 requests (the test kit's per-keyid cap); it grades unsatisfied_contract
   * (`rate_abuse_opt_out`). Env: ADCP_SKIP_RATE_ABUSE=1. @default false
   */
  signedRequests?: { skipRateAbuse?: boolean };
  /**
   * Run storyboard files with Vitest's per-file module isolation, in your own
   * project. By default they run in a project of their own (`vitest-adcp`)
   * with `isolate: false`, which is several times faster: each worker loads
   * the engine and compiles the schemas once instead of once per file — and,
   * where Vitest's default would give them a single worker (2 cores), with two,
   * after your own tests. Your own tests keep their settings either way.
   * @default false
   */
  isolate?: boolean;
  /**
   * Run storyboard files one at a time, in the reference runner's order
   * (`npx adcp storyboard run`), as the official grader does — for agents that
   * keep state per account or brand, where one storyboard's leftovers (a
   * governance plan, a media buy) change a later one's verdict. The order:
   * the corpus selection as the reference runs it — ids named in
   * `compliance.storyboards` in the order given, the capability-selected ones
   * in the order `resolveStoryboardsForCapabilities` returns them, then
   * `bundles`, then `tracks`, each expanded in the reference's corpus order; a
   * required scenario just before the first storyboard that requires it —
   * then `files` in the order given, then files matched by `include`, by
   * path (docs/conformance.md, "Run order on stateful agents"). One worker
   * (`maxWorkers: 1`), after your own tests; the rest of the run keeps
   * Vitest's order. With `isolate: true` the storyboards run in your project,
   * which then runs all its files one at a time.
   * By default storyboard files run in Vitest's order (larger and slower files
   * first), two at a time where Vitest would give them one worker.
   * @default false
   */
  sequential?: boolean;
  /**
   * How many storyboards are in flight at once. The plugin's main process runs the storyboard files of a run itself,
   * up to this many at a time, from the moment the run starts, and each step test shows its step's outcome from there
   * (docs/architecture.md, "Storyboards in flight"): a storyboard waits on the agent nearly all the time, so a remote
   * agent costs its latency times the longest storyboard's calls instead of times all of them. `1` runs one storyboard
   * after another, in the run's order, as the reference runner does (`sequential: true` implies it). Lower it for an
   * agent that cannot take parallel requests; a rate-limited answer (HTTP 429, `RATE_LIMITED`) slows the run down on
   * its own. A run that a filter narrows (`-t`, a line, a test id) runs in the workers instead, as before.
   * @default 32
   */
  concurrency?: number;
  /**
   * Directories (relative to the project root) that storyboards may read test
   * kits from, besides the project itself and the compliance corpus. A kit's
   * values are sent to the agent and written to reports, so nothing else on
   * disk can be named as one.
   */
  testKitDirs?: string[];
  /** Directory of AdCP JSON Schemas. @default the installed @adcp/sdk's, matching the corpus version */
  schemasDir?: string;
  /**
   * Where compiled AdCP schema validators are kept between runs, so a worker
   * loads them instead of compiling each response schema again (about a
   * quarter of a second per worker over the corpus). Entries are keyed by the
   * schemas' own text: a changed or reinstalled schema set gets new ones.
   * Relative to the project root; `false`: no cache.
   * @default `vitest-adcp/` in Vite's cacheDir (`node_modules/.vite/vitest-adcp`); outside any package (no
   * `package.json` up the tree), `vitest-adcp/cache` in the OS's per-user cache directory (`~/.cache` on Linux)
   */
  cacheDir?: string | false;
  /**
   * A key the storyboard format does not define (`validation:`, `sample_requst:`)
   * or a `check` it does not define is a load error naming file:line:col and the
   * key meant — a misspelt key would otherwise disable what it names and let the
   * step pass. `false` is for storyboards written for a newer format version:
   * near misses are then warnings (in the terminal and on the storyboard's first
   * step in reports), other unknown keys are kept, and an unknown check passes
   * with a note that it was not graded (the runner-output contract's forward
   * compatibility). A storyboard of a newer AdCP corpus (3.2 under this 3.1
   * runner) loads that way by itself, every unknown key a warning naming it.
   * Your own annotations never need it: prefix them `x-`.
   * @default true
   */
  strictKeys?: boolean;
  /**
   * Size and complexity bounds on each storyboard file, checked before it is read (bytes) or parsed (anchors,
   * aliases) and after (expanded size, phases, steps); a file over one fails only itself, with a `storyboard_bound`
   * load error naming the bound. Raise one for a storyboard meant to be that big. @default `{ maxBytes: 524288,
   * maxAnchors: 100, maxAliases: 100, maxExpandedBytes: 2097152, maxPhases: 100, maxSteps: 500 }`
   */
  storyboardBounds?: StoryboardBounds;
  /**
   * The runner's webhook receiver (test-kits/webhook-receiver-runner.yaml), for
   * `expect_webhook*` steps and `{{runner.webhook_url:…}}`: `receiver: 'loopback'`
   * (127.0.0.1, for an agent on this machine), or a public base URL (proxy
   * mode; env ADCP_RUNNER_WEBHOOK_BASE_URL, https) routing to `port`. Hosted
   * once per run in the main process. Without one, those steps grade
   * not_applicable. @default off (proxy when ADCP_RUNNER_WEBHOOK_BASE_URL is set)
   */
  webhooks?: WebhookOptions;
  /**
   * How requests are built. `'enriched'`: the per-task request builder the
   * storyboards are written for completes each request — a field the storyboard
   * wrote is sent as written; what it leaves out (a webhook trigger's packages,
   * an auction's bid_price) is filled from what the run discovered, and a past
   * flight is moved forward — each change a warning on the step (terminal,
   * JUnit, report). `'as-written'`: only `sample_request` after substitution,
   * for storyboard authors who want to see what their text alone sends.
   * Env: ADCP_REQUESTS=as-written. @default 'enriched'
   */
  requests?: 'enriched' | 'as-written';
  /**
   * You declare that the prerequisite state of the storyboards tagged `requires: [seeded_state]` was provisioned out
   * of band (AdCP 3.1 storyboard-schema.yaml > requires). Without it those storyboards are skipped
   * `requirement_unmet`. Env: ADCP_SEEDED_STATE=1; CLI `--seeded-state`. @default false
   */
  seededState?: boolean;
  /**
   * The runner contracts (AdCP 3.1 test kits) this run hosts. `parallel_dispatch_runner` (default on): a step with
   * `parallel_dispatch` sends its request 2–10 times at once with one idempotency key. `rate_limit_trip_runner`
   * (default off: it sends up to `max_attempts` — 200 in the corpus — mutating requests to trip the agent's rate
   * limiter; point it at a sandbox): `expect_rate_limit_not_replayed`. Out of scope, their steps are skipped
   * `not_applicable` naming the contract. Env: ADCP_RATE_LIMIT_TRIP=1; CLI `--rate-limit-trip`.
   */
  runnerContracts?: { parallel_dispatch_runner?: boolean; rate_limit_trip_runner?: boolean };
}
