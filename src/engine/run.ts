/**
 * Runs one storyboard against one agent, step by step, and says when each
 * step's verdict is final. Knows no test framework: the Vitest and Jest
 * adapters ask `settle(phase, step)` from inside their `it` and render the
 * outcome.
 *
 * This file is the scheduler. What it delegates:
 *   gate.ts       whether a step runs at all (skips and cascades)
 *   grade.ts      the verdict of a step that ran (pure)
 *   seeding.ts    the injected controller-seeding phase
 *   polling.ts    async tasks polled to their end for `task_completion.` captures
 *   substitute.ts placeholders; idempotency.ts keys; invariants.ts run-wide rules
 *
 * Why "settle": a step's verdict is not always known when the step has run.
 * In an `any_of` branch set (storyboard-schema.yaml > "Branch sets") a failing
 * step in one branch becomes `peer_branch_taken` once a peer branch —
 * possibly a later one — contributes; a `missing_tool` step becomes
 * `peer_substituted` when a later peer that `provides_state_for` it passes.
 * So `settle` runs the storyboard forward (in order, each step once) until
 * nothing that runs later can change the asked step's verdict, then returns
 * it. Steps that a test filter skipped still run, silently, when a later step
 * needs their state: that is how running one step from the IDE replays the
 * steps it depends on.
 */
import type { Phase, Step, Storyboard, TestKit } from '../model/storyboard.js';
import type { Exchange } from '../checks/index.js';
import type { SchemaRegistry } from '../schemas/registry.js';
import type { AgentTransport, CallOptions } from '../transport/types.js';
import { CredentialResolver, CredentialsError } from './credentials.js';
import { CascadeState, runnerOnlyTaskSkip, type AgentTools } from './gate.js';
import { FALLBACK_BRAND_DOMAIN } from './enrich/create-media-buy.js';
import {
  declaredFixtureIds,
  Discovery,
  enrichRequest,
  flightAnchor,
  type CapturedValue,
  type RequestMode,
} from './enrich/index.js';
import { answerError, CONTROLLER_TASK } from '../model/answer-error.js';
import { gradeStep } from './grade.js';
import { withIdempotencyKey } from './idempotency.js';
import { IMPLEMENTED_INVARIANTS } from './invariants.js';
import { PathSyntaxError, setPath } from '../model/path.js';
import { explainUnresolved } from './unresolved.js';
import { followAsync, type TaskCompletion } from './polling.js';
import type { SkipResult, StepOutcome, StepResult, ValidationResult } from '../model/records.js';
import { scenarioVerdict, seedVerdict } from './controller.js';
import { OAuthProbes } from './oauth-probes.js';
import { RequestSigningProbes } from './request-signing-probe.js';
import { REQUEST_SIGNING_PROBE_TASK, type VectorStep } from './request-signing-steps.js';
import { authorizationHeader } from '../transport/types.js';
import { executionPhases, isSeedStep, planSeeding, SEEDING_PHASE_ID } from './seeding.js';
import { evaluateSkipIf } from './skip-if.js';
import { resolveTask, substitute } from './substitute.js';
import { PROBE_TASKS } from '../transport/probe.js';
import type { UrlGuardOptions } from '../transport/url-guard.js';
import type { JwksSource } from '../signing/index.js';
import type { WebhookSink } from '../webhooks/receiver.js';
import { WEBHOOK_TASKS, WebhookRun } from './webhooks.js';

export interface StoryboardRunOptions {
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
  /** Pause between `tasks/get` polls of an async task. @default 1000 */
  pollIntervalMs?: number;
  /**
   * A configuration problem that makes every step fail before reaching the
   * agent (e.g. no agent URL). Reported on each step instead of a stack trace.
   */
  configurationError?: string;
  /**
   * Ids of the storyboards in the compliance tree, for `requires_scenarios`:
   * a reference that names none of them grades the storyboard `not_applicable`
   * (storyboard-schema.yaml > unresolved_scenario_reference). Absent: not checked.
   */
  knownStoryboardIds?: ReadonlySet<string>;
  /** Other secrets to scrub from every message and record (e.g. credentials written into the agent URL). */
  knownSecrets?: readonly string[];
  /** Compliance tree root: where the signed_requests vectors are found when the storyboard file is not in a tree. */
  corpusRoot?: string;
  /** signed_requests options (request-signing-probe.ts). */
  requestSigning?: { skipRateAbuse?: boolean };
  /** The webhook receiver this run mints `{{runner.webhook_url:…}}` URLs on; absent: no receiver (webhook steps not applicable). */
  webhooks?: WebhookSink;
  /** Keys that verify the agent's webhook signatures, instead of discovering them from its brand.json. */
  webhookSignerKeys?: JwksSource;
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
}

interface Entry {
  index: number;
  phase: Phase;
  step: Step;
}

export class StoryboardRun {
  private readonly entries: Entry[];
  private readonly results = new Map<number, StepResult>();
  private readonly context = new Map<string, unknown>();
  private readonly priorSteps = new Map<string, unknown>();
  /** `$generate:<kind>#<alias>` values of this run. */
  private readonly generated = new Map<string, string>();
  /** Branch-set flag → the step that first contributed it. */
  private readonly contributions = new Map<string, { phase: string; step: string }>();
  private readonly credentials: CredentialResolver;
  private readonly cascade: CascadeState;
  /** Problems that concern the whole storyboard, shown on its first step. */
  private readonly storyboardWarnings: string[] = [];
  private tools?: Promise<AgentTools>;
  private transport?: AgentTransport;
  private seeding: { state: 'ok' } | { state: 'skip'; skip: SkipResult } = { state: 'ok' };
  /** Values captured by `context_outputs`, with the step that captured each (for unseeded fixture ids). */
  private readonly captured = new Map<string, CapturedValue>();
  private readonly declaredFixtureIds: ReadonlySet<string>;
  /** What the run learnt for the request enrichers: the agent's products, the storyboard's brand and account. */
  private readonly discovery = new Discovery();
  /** The runner's own get_products, once per run, when a request needs a product and the storyboard discovered none. */
  private ownDiscovery?: Promise<string | undefined>;
  /** Opening time, fixed for the run: enriched flights start on the next UTC day, the same for every step (replays hash alike). */
  private readonly flightAnchorMs: number;
  private probes?: OAuthProbes;
  private signing?: RequestSigningProbes;
  private readonly webhooks: WebhookRun;
  private next = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly storyboard: Storyboard,
    private readonly options: StoryboardRunOptions,
  ) {
    this.entries = executionPhases(storyboard, { corpusRoot: options.corpusRoot }).flatMap((phase) =>
      phase.steps.map((step) => ({ phase, step, index: 0 })),
    );
    this.entries.forEach((entry, index) => (entry.index = index));
    for (const [name, value] of Object.entries(storyboard.context ?? {})) this.context.set(name, value);
    this.credentials = new CredentialResolver({
      defaultToken: options.authToken,
      testKit: options.testKit,
      audience: () => this.transport?.url,
    });
    this.cascade = new CascadeState(
      this.entries.map((e) => ({ phase: e.phase, step: e.step })),
      (storyboard.required_tools ?? []).filter((t) => typeof t === 'string'),
    );
    this.declaredFixtureIds = declaredFixtureIds(storyboard);
    this.flightAnchorMs = flightAnchor((options.now ?? Date.now)());
    this.webhooks = new WebhookRun(storyboard, {
      sink: options.webhooks,
      timeoutMs: options.timeoutMs,
      schemas: options.schemas,
      file: storyboard.file,
      signerKeys: options.webhookSignerKeys,
      ...(options.urlGuard ? { urlGuard: options.urlGuard } : {}),
    });
    this.storyboardWarnings.push(...(options.loadWarnings ?? []));
    const unknownFixtures = planSeeding(storyboard).unknownKeys;
    if (unknownFixtures.length > 0) {
      this.storyboardWarnings.push(
        `fixtures ${unknownFixtures.map((k) => `"${k}"`).join(', ')} map to no seed scenario of storyboard-schema.yaml (products, pricing_options, creatives, plans, media_buys) and were not seeded`,
      );
    }
    const unchecked = (Array.isArray(storyboard.invariants) ? storyboard.invariants : []).filter(
      (id) => typeof id === 'string' && !IMPLEMENTED_INVARIANTS.has(id),
    );
    if (unchecked.length > 0)
      this.storyboardWarnings.push(`invariants ${unchecked.join(', ')} are not checked by this version of vitest-adcp`);
  }

  /**
   * Secrets this run may put on the wire, for scrubbing rendered messages: the credentials, and the operation ids of
   * the webhook URLs it minted (only the agent may know a URL the receiver accepts: webhooks.ts).
   */
  secrets(): string[] {
    return [...this.credentialSecrets(), ...this.webhooks.secrets()];
  }

  /** The credentials alone (context.no_secret_echo: an agent may echo its webhook URL back, never a credential). */
  private credentialSecrets(): string[] {
    return [...this.credentials.secrets(), ...(this.options.knownSecrets ?? [])];
  }

  /**
   * The longest one `settle` can take while every bound holds: a settle may
   * run every step of the storyboard (a `-t` replay, a branch set), each
   * within its own bound (`stepBoundMs`), plus the tool list and the OAuth
   * probes. A test framework's own timer must be above it.
   */
  worstCaseMs(): number {
    return this.entries.reduce((sum, entry) => sum + this.stepBoundMs(entry.step), 3 * this.options.timeoutMs);
  }

  /**
   * How long one step can take: its call (polling included) and every webhook wait are bounded by `timeoutMs`; the
   * signed_requests vectors with a stateful contract send more than one request — 016 two, 020 a flood that stops
   * when the contract's window closes, then the graded one.
   */
  private stepBoundMs(step: Step): number {
    const timeoutMs = this.options.timeoutMs;
    const contract = (step as Partial<VectorStep>).vector?.requires_contract;
    if (contract === 'replay_window') return 2 * timeoutMs;
    if (contract === 'rate_abuse' && !this.options.requestSigning?.skipRateAbuse) {
      const terms = (
        this.options.testKit?.stateful_vector_contract as { rate_abuse?: { window_seconds?: unknown } } | undefined
      )?.rate_abuse;
      const windowSeconds =
        typeof terms?.window_seconds === 'number' && terms.window_seconds > 0 ? terms.window_seconds : 0;
      // The flood stops once the window has passed; the request in flight then and the graded one are each bounded.
      return windowSeconds * 1000 + 2 * timeoutMs;
    }
    return timeoutMs;
  }

  /** Runs forward as far as needed, then returns the final verdict of one step. */
  async settle(phaseId: string, stepId: string): Promise<StepOutcome> {
    const entry = this.entryOf(phaseId, stepId);
    if (!entry) throw new Error(`storyboard "${this.storyboard.id}" has no step "${phaseId}/${stepId}"`);
    await this.runThrough(this.settlesAt(entry));
    return this.outcome(entry);
  }

  /**
   * The outcomes of the steps before `phaseId/stepId` that have run — for an adapter whose test runner filtered their
   * own tests out (`-t`, a line filter) while this step's settle ran them silently, so that they are reported with the
   * verdict they had rather than as never run. `wanted` picks the steps (by phase and step id) before any outcome is
   * worked out: an adapter asks on every step test and wants only the few no test of its own reported.
   */
  ranBefore(
    phaseId: string,
    stepId: string,
    wanted: (phaseId: string, stepId: string) => boolean = () => true,
  ): StepOutcome[] {
    const entry = this.entryOf(phaseId, stepId);
    if (!entry) return [];
    return this.entries
      .filter((e) => e.index < entry.index && this.results.has(e.index) && wanted(e.phase.id, e.step.id))
      .map((e) => this.outcome(e));
  }

  private entryOf(phaseId: string, stepId: string): Entry | undefined {
    return this.entries.find((e) => e.phase.id === phaseId && e.step.id === stepId);
  }

  /** Runs every remaining step (for reporters or a plain CLI run). */
  async runAll(): Promise<StepOutcome[]> {
    await this.runThrough(this.entries.length - 1);
    return this.entries.map((entry) => this.outcome(entry));
  }

  async close(): Promise<void> {
    await this.queue.catch(() => {});
    await this.webhooks.close();
    await this.transport?.close();
  }

  /** Index of the last step whose result can still change this step's verdict. */
  private settlesAt(entry: Entry): number {
    let last = entry.index;
    const branchSet = entry.phase.branch_set?.id;
    for (const other of this.entries) {
      // A later peer branch may contribute: peer_branch_taken.
      if (branchSet && other.phase.branch_set?.id === branchSet) last = Math.max(last, other.index);
      // A same-phase substitute may pass: peer_substituted, decided at the end of the phase.
      if (other.phase === entry.phase && entry.phase.steps.some((s) => s.provides_state_for?.includes(entry.step.id)))
        last = Math.max(last, other.index);
    }
    return last;
  }

  private runThrough(lastIndex: number): Promise<void> {
    this.queue = this.queue.then(async () => {
      while (this.next <= lastIndex && this.next < this.entries.length) {
        const entry = this.entries[this.next++]!;
        let result: StepResult;
        try {
          result = await this.execute(entry);
        } catch (error) {
          // A bug of ours must cost one step, not the run and its report.
          const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
          result = {
            ...this.base(entry, entry.step.task),
            error: `vitest-adcp internal error (please report it): ${message}`,
          };
        }
        if (entry.index === 0 && this.storyboardWarnings.length > 0)
          result.warnings = [...this.storyboardWarnings, ...(result.warnings ?? [])];
        if (entry.phase.optional === true) result.optional = true;
        this.results.set(entry.index, result);
        this.cascade.record(entry.index, result);
        if (this.isLastOfPhase(entry)) this.cascade.endPhase(entry.phase, this.results);
      }
    });
    return this.queue;
  }

  private isLastOfPhase(entry: Entry): boolean {
    return this.entries[entry.index + 1]?.phase !== entry.phase;
  }

  private outcome(entry: Entry): StepOutcome {
    const result = this.results.get(entry.index)!;
    if (result.skip) return { status: 'skipped', result };
    if (result.passed) return { status: 'passed', result };
    const branchSet = entry.phase.branch_set?.id;
    const contributor = branchSet ? this.contributions.get(branchSet) : undefined;
    if (contributor && contributor.phase !== entry.phase.id) {
      // storyboard-schema.yaml > Branch sets > Runner grading; detail shape from
      // runner-output-contract.yaml > skip_result.reasons.peer_branch_taken.
      const regraded: StepResult = {
        ...result,
        skip: {
          reason: 'peer_branch_taken',
          detail: `${branchSet} contributed by ${contributor.phase}.${contributor.step} — ${entry.phase.id} is moot`,
        },
      };
      return { status: 'skipped', result: regraded };
    }
    return { status: 'failed', result };
  }

  private base(entry: Entry, task: string): StepResult {
    return {
      storyboard_id: this.storyboard.id,
      phase_id: entry.phase.id,
      step_id: entry.step.id,
      task,
      passed: false,
      duration_ms: 0,
      validations: [],
      extraction: { path: 'none' },
    };
  }

  private async execute(entry: Entry): Promise<StepResult> {
    const { step, phase } = entry;
    const started = performance.now();
    const task = resolveTask(step.task, step.task_default, this.options.testKit) ?? step.task;
    const result = this.base(entry, task);
    const finish = (r: StepResult) => ({ ...r, duration_ms: Math.round(performance.now() - started) });
    // A prerequisite_failed skip is the one whose state is lost: `passed: false`, whatever skipped it.
    const skipped = (skip: SkipResult, extra: Partial<StepResult> = {}) =>
      finish({ ...result, passed: skip.reason !== 'prerequisite_failed', skip, ...extra });

    const unresolvedScenarios = this.unresolvedScenarios();
    if (unresolvedScenarios) return skipped(unresolvedScenarios);
    const noReceiver = this.webhooks.storyboardSkip(this.options.testKit);
    if (noReceiver) return skipped(noReceiver);
    // Seeding (or a controller scenario) decided the rest of the storyboard; seeds themselves are all attempted.
    if (this.seeding.state === 'skip' && phase.id !== SEEDING_PHASE_ID) return skipped(this.seeding.skip);

    const skipIf = evaluateSkipIf(phase.skip_if, phase.id, this.options.testKit);
    if (skipIf.kind === 'skip') return skipped({ reason: 'not_applicable', detail: skipIf.detail });
    const warnings = skipIf.kind === 'unknown' ? [skipIf.warning] : [];
    const withWarnings = (r: StepResult) =>
      warnings.length > 0 ? { ...r, warnings: [...(r.warnings ?? []), ...warnings] } : r;

    if (this.options.configurationError) return finish({ ...result, error: this.options.configurationError });

    // Creating the transport is cheap (it connects on first call); it names the protocol in records.
    this.transport ??= this.options.transport();
    const tools = await this.agentTools();
    if (tools.error && entry.index === 0)
      warnings.push(
        `the agent's tool list could not be read (${tools.error}), so missing tools are not told apart from failures`,
      );
    // A storyboard whose required_tools the agent has none of does not apply to it, runner-only steps included.
    const notForThisAgent = this.cascade.storyboardGate(tools);
    if (notForThisAgent) return withWarnings(skipped(notForThisAgent));

    if (task === 'assert_contribution') return withWarnings(finish(this.assertContribution(entry, result)));
    const runnerOnly = runnerOnlyTaskSkip(step, task, this.webhooks.hasReceiver);
    if (runnerOnly) return withWarnings(skipped(runnerOnly));
    if (WEBHOOK_TASKS.has(task)) {
      // Runner-only, and the state it needs is its `triggered_by` step's webhook: that step, not the cascade, gates it (webhooks.ts).
      const scope = {
        context: this.context,
        priorSteps: this.priorSteps,
        testKit: this.options.testKit,
        generated: this.generated,
        runner: this.webhooks.variables,
      };
      return withWarnings(
        finish(await this.webhooks.assert(step, task, result, scope, this.results, this.transport.url)),
      );
    }
    if (step.task.startsWith('$test_kit.') && task === step.task) {
      return withWarnings(
        finish({
          ...result,
          error: `task "${step.task}" did not resolve: the test kit has no such value and the step has no task_default`,
        }),
      );
    }
    // signed_requests vectors: the runner's own signed HTTP requests (request-signing-probe.ts).
    if (task === REQUEST_SIGNING_PROBE_TASK)
      return withWarnings(finish(await this.requestSigning().run(step, result, tools)));
    this.probes ??= new OAuthProbes({
      agentUrl: this.transport.url,
      timeoutMs: this.options.timeoutMs,
      maxResponseBytes: this.options.maxResponseBytes ?? 10 * 1024 * 1024,
      guard: this.options.urlGuard,
    });
    const oauthAbsent = this.probes.skipFor(phase);
    if (oauthAbsent) return withWarnings(skipped(oauthAbsent));
    if (PROBE_TASKS.has(task)) {
      const outcome = await this.probes.run(task, phase);
      if ('error' in outcome) return withWarnings(finish({ ...result, error: outcome.error }));
      if ('skip' in outcome)
        return withWarnings(
          skipped(
            outcome.skip,
            outcome.exchange ? { request: outcome.exchange.request, response: outcome.exchange.response } : {},
          ),
        );
      return withWarnings(
        finish(this.keep(entry, outcome.exchange, this.graded(entry, task, outcome.exchange, result))),
      );
    }
    const gate = this.cascade.gate(entry.index, task, tools);
    if (gate) {
      if (isSeedStep(step) && this.seeding.state === 'ok') this.seeding = { state: 'skip', skip: gate.skip };
      return withWarnings(skipped(gate.skip, gate.passed === false ? { passed: false } : {}));
    }

    const receiverProblem = await this.webhooks.prepare(step.sample_request);
    if (receiverProblem) return withWarnings(finish({ ...result, error: receiverProblem }));
    const scope = {
      context: this.context,
      priorSteps: this.priorSteps,
      testKit: this.options.testKit,
      generated: this.generated,
      runner: this.webhooks.variables,
    };
    const transport = this.transport;
    const requestOf = (payload: unknown) => ({
      transport: transport.kind,
      operation: task,
      payload,
      url: transport.url,
    });
    const substituted = substitute(step.sample_request ?? {}, scope);
    if (substituted.unresolved.length > 0) {
      // storyboard-schema.yaml > "Unresolved substitution behavior": never ship the token.
      const request = requestOf(substituted.value);
      return withWarnings(this.unresolved(entry, result, request, substituted.unresolved, finish));
    }
    let credentials;
    try {
      credentials = this.credentials.resolve(step.auth);
    } catch (error) {
      if (error instanceof CredentialsError)
        return withWarnings(finish({ ...result, request: requestOf(substituted.value), error: error.message }));
      throw error;
    }
    const callOptions: CallOptions = { credentials, timeoutMs: this.options.timeoutMs };
    const built = substituted.value as Record<string, unknown>;
    if (this.options.requests !== 'as-written' && built && typeof built === 'object' && !Array.isArray(built)) {
      warnings.push(...(await this.enrich(task, step, built, tools, callOptions)));
    }
    let payload = withIdempotencyKey(built, task, step, this.options.schemas) as Record<string, unknown>;
    const request = requestOf(payload);
    try {
      for (const input of step.context_inputs ?? []) {
        if (this.context.has(input.key) && payload && typeof payload === 'object')
          setPath(payload, input.inject_at, this.context.get(input.key));
      }
    } catch (error) {
      // The loader refuses such paths (rule context_input_path); a storyboard built in code may not have been loaded.
      if (error instanceof PathSyntaxError)
        return withWarnings(finish({ ...result, request, error: `context_inputs: ${error.message}` }));
      throw error;
    }
    this.discovery.observeRequest(payload);

    const answered = await this.transport.call(task, payload, callOptions);
    const remaining = Math.max(0, this.options.timeoutMs - (performance.now() - started));
    const { exchange, completion, warning } = await followAsync(this.transport, step, answered, {
      ...callOptions,
      intervalMs: this.options.pollIntervalMs ?? 1000,
      deadlineMs: remaining,
    });
    if (warning) warnings.push(warning);
    this.discovery.observeAnswer(task, exchange);
    const graded = this.graded(entry, task, exchange, result, completion);
    let verdict;
    if (isSeedStep(step)) verdict = seedVerdict(step, exchange, graded.result, this.storyboard.file);
    else if (task === CONTROLLER_TASK && !step.expect_error) verdict = scenarioVerdict(exchange, graded.result);
    else if (this.requestSigning().isCapabilityStep(phase, task))
      verdict = this.requestSigning().capabilityVerdict(step, phase, exchange, graded.result);
    if (verdict?.halt && this.seeding.state === 'ok') this.seeding = { state: 'skip', skip: verdict.halt };
    return withWarnings(finish(this.keep(entry, exchange, { ...graded, result: verdict?.result ?? graded.result })));
  }

  /**
   * Grades an answer (gradeStep, with the context as it was before this step)
   * into the step's record, and what it would capture.
   */
  /** The steps before `entry` and their results so far: what an unresolved placeholder's message names. */
  private earlierSteps(entry: Entry): { phase: Entry['phase']; step: Entry['step']; result: StepResult | undefined }[] {
    return this.entries
      .slice(0, entry.index)
      .map((e) => ({ phase: e.phase, step: e.step, result: this.results.get(e.index) }));
  }

  private graded(
    entry: Entry,
    task: string,
    exchange: Exchange,
    result: StepResult,
    completion?: TaskCompletion,
  ): { result: StepResult; captures: Map<string, unknown> } {
    const graded = gradeStep({
      file: this.storyboard.file,
      step: entry.step,
      task,
      exchange,
      schemas: this.options.schemas,
      scope: {
        context: new Map(this.context),
        priorSteps: this.priorSteps,
        testKit: this.options.testKit,
        generated: this.generated,
      },
      agentUrl: this.transport!.url,
      completion,
      secrets: this.credentialSecrets(),
      earlier: this.earlierSteps(entry),
    });
    const recorded: StepResult = {
      ...result,
      request: exchange.request,
      response: exchange.response,
      extraction: exchange.extraction,
      validations: graded.validations,
      passed: graded.passed,
      ...(graded.error ? { error: graded.error } : {}),
    };
    return { result: recorded, captures: graded.captures };
  }

  /** storyboard-schema.yaml > context_outputs: only a step that passed (not skipped) populates the accumulator. */
  private keep(
    entry: Entry,
    exchange: Exchange,
    graded: { result: StepResult; captures: Map<string, unknown> },
  ): StepResult {
    if (graded.result.passed && !graded.result.skip) this.recordPass(entry, exchange, graded.captures);
    return graded.result;
  }

  /** The signed_requests vector grader of this run (created on first use). */
  private requestSigning(): RequestSigningProbes {
    this.signing ??= new RequestSigningProbes({
      storyboard: this.storyboard,
      agentUrl: this.transport!.url,
      protocol: this.transport!.kind,
      authorization: () => authorizationHeader(this.credentials.resolve(undefined)),
      timeoutMs: this.options.timeoutMs,
      maxResponseBytes: this.options.maxResponseBytes ?? 10 * 1024 * 1024,
      testKit: this.options.testKit,
      skipRateAbuse: this.options.requestSigning?.skipRateAbuse,
      fetchCapabilities: () =>
        this.transport!.call(
          'get_adcp_capabilities',
          {},
          { credentials: this.credentials.resolve(undefined), timeoutMs: this.options.timeoutMs },
        ),
    });
    return this.signing;
  }

  /** The per-task request builder (enrich/index.ts) on this step's request, in place: its warning lines. */
  private enrich(
    task: string,
    step: Step,
    payload: Record<string, unknown>,
    tools: AgentTools,
    callOptions: CallOptions,
  ): Promise<string[]> {
    const brand = (this.options.testKit as { brand?: { house?: { domain?: unknown } } } | undefined)?.brand?.house
      ?.domain;
    return enrichRequest({
      task,
      step,
      payload,
      discovery: this.discovery,
      declared: this.declaredFixtureIds,
      captured: this.captured,
      ...(typeof brand === 'string' ? { kitBrandDomain: brand } : {}),
      anchorMs: this.flightAnchorMs,
      nowMs: (this.options.now ?? Date.now)(),
      discover: () => (this.ownDiscovery ??= this.discoverProducts(tools, callOptions)),
    });
  }

  /**
   * The runner's own get_products, for a request that needs a product in a
   * storyboard that discovers none (webhook_emission's triggers). Once per run;
   * it says what it asked, so the warning on the step can.
   */
  private async discoverProducts(tools: AgentTools, callOptions: CallOptions): Promise<string> {
    if (tools.tools && !tools.tools.has('get_products'))
      return 'the agent has no get_products tool to list products with';
    const brand = this.discovery.sentBrand ?? { domain: FALLBACK_BRAND_DOMAIN };
    const request = { buying_mode: 'brief', brief: 'Any available inventory for a short test flight.', brand };
    const answered = await this.transport!.call('get_products', request, callOptions);
    const { exchange } = await followAsync(
      this.transport!,
      { id: 'runner_discovery', title: 'runner discovery', task: 'get_products' } as Step,
      answered,
      { ...callOptions, intervalMs: this.options.pollIntervalMs ?? 1000, deadlineMs: this.options.timeoutMs },
    );
    if (exchange.transportError)
      return `the runner's own get_products ${JSON.stringify(request)} failed: ${exchange.transportError}`;
    const refused = answerError(exchange);
    if (refused)
      return `the runner's own get_products ${JSON.stringify(request)} answered an error${refused.code ? ` (${refused.code})` : ''}`;
    this.discovery.observeAnswer('get_products', exchange);
    return `the storyboard discovers no products, so the runner asked get_products itself (${JSON.stringify(request)}) and took the first product it listed`;
  }

  /** The agent's tools, listed once per run. */
  private agentTools(): Promise<AgentTools> {
    this.tools ??= (async () => {
      const credentials = this.credentials.resolve(undefined);
      const listed = await this.transport!.listTools({ credentials, timeoutMs: this.options.timeoutMs });
      return 'tools' in listed ? { tools: new Set(listed.tools) } : { error: listed.error };
    })().catch((error): AgentTools => ({ error: error instanceof Error ? error.message : String(error) }));
    return this.tools;
  }

  private unresolvedScenarios(): SkipResult | undefined {
    const known = this.options.knownStoryboardIds;
    if (!known) return undefined;
    const missing = (this.storyboard.requires_scenarios ?? []).filter((id) => !known.has(id));
    if (missing.length === 0) return undefined;
    // storyboard-schema.yaml > unresolved_scenario_reference: canonical not_applicable, one sentence per id.
    return {
      reason: 'not_applicable',
      detail: missing
        .map((id) => `requires_scenarios reference "${id}" did not resolve against the source tree`)
        .join('\n'),
    };
  }

  private unresolved(
    entry: Entry,
    result: StepResult,
    request: StepResult['request'],
    tokens: string[],
    finish: (r: StepResult) => StepResult,
  ): StepResult {
    const runnerTokens = tokens.filter((t) => /^\{\{\s*runner\./.test(t));
    if (runnerTokens.length === tokens.length) {
      // A runner-provided value (the webhook receiver) this run does not have:
      // the spec grades that as not applicable, not as the agent's failure.
      return finish({
        ...result,
        passed: true,
        request,
        skip: {
          reason: 'not_applicable',
          detail: `unresolved_substitution: ${runnerTokens.join(', ')} needs the runner's webhook receiver, and this run hosts none (plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver)`,
        },
      });
    }
    return finish({
      ...result,
      request,
      validations: [
        {
          check: 'unresolved_substitution',
          passed: false,
          description: 'unresolved substitution',
          json_pointer: null,
          expected: tokens,
          actual: null,
          schema_id: null,
          schema_url: null,
          error: explainUnresolved(tokens, this.earlierSteps(entry)),
          request,
          source: { file: this.storyboard.file, line: entry.step.loc.line, column: entry.step.loc.column },
        },
      ],
    });
  }

  /** storyboard-schema.yaml > context_outputs: a failed step MUST NOT populate the accumulator. */
  private recordPass(entry: Entry, exchange: Exchange, captures: Map<string, unknown>): void {
    for (const [name, value] of captures) {
      this.context.set(name, value);
      this.captured.set(name, { value, by: entry.step.id });
    }
    this.priorSteps.set(entry.step.id, exchange.data);
    const flag = entry.step.contributes_to;
    if (flag && this.contributionAllowed(entry.step) && !this.contributions.has(flag)) {
      this.contributions.set(flag, { phase: entry.phase.id, step: entry.step.id });
    }
  }

  /** `contributes_if: "prior_step.<id>.passed"` — the only grammar the spec defines. */
  private contributionAllowed(step: Step): boolean {
    if (!step.contributes_if) return true;
    const match = /^prior_step\.([\w-]+)\.passed$/.exec(step.contributes_if.trim());
    if (!match) return false;
    return this.priorSteps.has(match[1]!);
  }

  private assertContribution(entry: Entry, result: StepResult): StepResult {
    const validations = entry.step.validations.map((validation): ValidationResult => {
      const allowed = (validation.allowed_values ?? []).map(String);
      const contributed = allowed.filter((flag) => this.contributions.has(flag));
      const passed = validation.check === 'any_of' && contributed.length > 0;
      const source = { file: this.storyboard.file, line: validation.loc.line, column: validation.loc.column };
      const description = validation.description ?? validation.check;
      if (passed) return { check: validation.check, passed, description, source, schema_id: null, schema_url: null };
      return {
        check: validation.check,
        passed,
        description,
        json_pointer: null,
        expected: validation.allowed_values ?? [],
        actual: [...this.contributions.keys()],
        error:
          validation.check === 'any_of'
            ? 'no branch contributed any of the allowed flags'
            : `check "${validation.check}" cannot grade an assert_contribution step (only any_of does)`,
        schema_id: null,
        schema_url: null,
        source,
      };
    });
    return { ...result, validations, passed: validations.every((v) => v.passed) };
  }
}
