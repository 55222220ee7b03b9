/**
 * Runs one storyboard against one agent, step by step, and says when each
 * step's verdict is final. Knows no test framework: the Vitest and Jest
 * adapters ask `settle(phase, step)` from inside their `it` and render the
 * outcome.
 *
 * This file is the scheduler. What it delegates:
 *   gate.ts       whether a step runs at all (skips and cascades)
 *   grade.ts      the verdict of a step that ran (pure)
 *   role.ts       the runner's protocol roles (src/roles/: request signing, the
 *                 webhook receiver, the OAuth probes, controller seeding),
 *                 handed in by whoever opens the run: their planned steps,
 *                 gates, own tasks and verdicts
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
import { randomUUID } from 'node:crypto';
import type { Phase, Step, Storyboard } from '../model/storyboard.js';
import type { Exchange, PriorAnswer } from '../checks/index.js';
import type { AgentTransport, CallOptions, Credentials } from '../transport/types.js';
import { assertContribution, contributionAllowed, peerBranchTaken, type Contributions } from './contributions.js';
import { CredentialResolver, CredentialsError } from './credentials.js';
import { CascadeState, runnerOnlyTaskSkip, unresolvedScenarioSkip } from './gate.js';
import { AgentFacts } from './agent-facts.js';
import { capabilityUnmet, phaseScenarios, phaseScenarioUnmet } from './applicability.js';
import { observeUpstream } from './upstream.js';
import { conventionalCaptures, undeclaredContextReads } from './conventional-captures.js';
import { contractRules, type ContractRules } from '../model/contract-rules.js';
import { RunEnricher } from './enrich/run-enricher.js';
import { gradeStep, type GradeInput } from './grade.js';
import { SeedsTogether } from './seeds-together.js';
import { settleBoundMs } from './settle-bound.js';
import { RunHalt } from './halt.js';
import { withIdempotencyKey } from './idempotency.js';
import { IMPLEMENTED_INVARIANTS } from './invariants.js';
import { PathSyntaxError, setPath } from '../model/path.js';
import { runnerPreflightSkip, unresolvedRecord } from './unresolved.js';
import { followAsync, pollingTool, type TaskCompletion } from './polling.js';
import type { SkipResult, StepOutcome, StepResult } from '../model/records.js';
import { planPhases, RoleSessions, type AgentStep, type RoleOutcome, type RoleStep, type RunnerRole } from './role.js';
import type { RunSettings, StepTurns } from './run-settings.js';
import { evaluateSkipIf } from './skip-if.js';
import { CANCELLED_STEP, emptyRecord, StepEnd } from './step-end.js';
import { resolveTask, substitute, type SubstitutionScope } from './substitute.js';

export interface StoryboardRunOptions extends RunSettings {
  /**
   * The runner's protocol roles this run dispatches to (engine/role.ts), in order: `roles/index.ts` `BUILTIN_ROLES`
   * for a run as the reference runner makes it. The engine imports none of them.
   */
  roles: readonly RunnerRole[];
}

type Entry = { index: number; phase: Phase; step: Step };

/** A step's request, ready to go out: or the record of why it cannot. */
type Call = { payload: Record<string, unknown>; callOptions: CallOptions } | { record: StepResult };

export class StoryboardRun {
  private readonly entries: Entry[];
  private readonly results = new Map<number, StepResult>();
  private readonly context = new Map<string, unknown>();
  private readonly priorSteps = new Map<string, unknown>();
  /** `$generate:<kind>#<alias>` values of this run. */
  private readonly generated = new Map<string, string>();
  /** Branch-set flag → the step that first contributed it. */
  private readonly contributions: Contributions = new Map();
  private readonly credentials: CredentialResolver;
  private readonly cascade: CascadeState;
  /** Problems that concern the whole storyboard, shown on its first step. */
  private readonly storyboardWarnings: string[] = [];
  /** The agent's tools, capabilities, controller scenarios and the storyboard gates' verdict, asked once per run. */
  private readonly facts: AgentFacts;
  private readonly rules: ContractRules;
  /** The steps that reached the agent (or a role's own exchange), oldest first: what checks reading earlier answers see. */
  private readonly history: PriorAnswer[] = [];
  /** The last A2A Task of this run with its step, for a2a_context_continuity. */
  private lastA2a?: { step: string; contextId?: string };
  /** When the runner sent each step's request (ms since the epoch): upstream_traffic windows. */
  private readonly requestStarts = new Map<string, number>();
  /** Names the storyboard reads from the context and never declares (conventional-captures.ts). */
  private readonly undeclaredReads: ReadonlySet<string>;
  private transport?: AgentTransport;
  /** What a role decided every later step becomes (halt.ts). */
  private readonly halt = new RunHalt();
  /** The seeding phase's seeds of one kind sent together (seedsTogether). */
  private readonly seeds: SeedsTogether<Entry>;
  /** A `{{runner.*}}` placeholder no step can resolve: every step's skip (after a role's own: webhook_emission's). */
  private readonly runnerPreflight?: SkipResult;
  /** The per-task request builder with what this run learnt for it (enrich/run-enricher.ts). */
  private readonly enricher: RunEnricher;
  private readonly roles: RoleSessions;
  private next = 0;
  private queue: Promise<void> = Promise.resolve();
  private turns?: StepTurns;
  /** Aborted by `stop()`: no step starts after the one under way, whose call (polls, enrichment calls) ends at once. */
  private readonly cancel = new AbortController();

  constructor(
    readonly storyboard: Storyboard,
    private readonly options: StoryboardRunOptions,
  ) {
    this.entries = planPhases(options.roles, storyboard, options).flatMap((phase) =>
      phase.steps.map((step) => ({ phase, step, index: 0 })),
    );
    this.entries.forEach((entry, index) => (entry.index = index));
    for (const [name, value] of Object.entries(storyboard.context ?? {})) this.context.set(name, value);
    // storyboard-schema.yaml > context_outputs.generate: minted once per run, before any step, readable by every step.
    for (const entry of this.entries)
      for (const output of entry.step.context_outputs ?? [])
        if (output.generate !== undefined && !this.context.has(output.name))
          this.context.set(output.name, randomUUID());
    this.credentials = new CredentialResolver({
      defaultToken: options.authToken,
      testKit: options.testKit,
      audience: () => this.transport?.url,
    });
    this.rules = options.rules ?? contractRules(undefined);
    this.undeclaredReads = this.rules.conventionalCaptures ? undeclaredContextReads(storyboard) : new Set();
    this.facts = new AgentFacts(storyboard, options, this.rules, () => ({
      transport: (this.transport ??= options.transport()),
      credentials: this.credentials.resolve(undefined),
    }));
    this.seeds = new SeedsTogether(options.seedsTogether === true, this.entries, (entry) => this.execute(entry));
    this.cascade = new CascadeState(
      this.entries.map((e) => ({ phase: e.phase, step: e.step })),
      (storyboard.required_tools ?? []).filter((t) => typeof t === 'string'),
      { branchSetExemption: this.rules.branchSetCascadeExemption },
    );
    this.enricher = new RunEnricher(storyboard, {
      testKit: options.testKit,
      ...(options.now ? { now: options.now } : {}),
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      timeoutMs: options.timeoutMs,
      ...(options.schemas ? { requestFields: (task: string) => options.schemas!.requestProperties(task) } : {}),
    });
    this.roles = new RoleSessions(options.roles, {
      storyboard,
      settings: options,
      transport: () => (this.transport ??= options.transport()),
      defaultCredentials: () => this.credentials.resolve(undefined),
      scope: () => this.scope(),
      results: this.results,
    });
    // `{{runner.*}}` values come from the roles (the webhook receiver's URLs): none when the run hosts no receiver.
    this.runnerPreflight = runnerPreflightSkip(this.entries, this.roles.first((s) => s.variables) !== undefined);
    this.storyboardWarnings.push(...(options.loadWarnings ?? []));
    this.storyboardWarnings.push(...this.roles.all((session) => session.storyboardWarnings?.()));
    const unchecked = (Array.isArray(storyboard.invariants) ? storyboard.invariants : []).filter(
      (id) => typeof id === 'string' && !IMPLEMENTED_INVARIANTS.has(id),
    );
    if (unchecked.length > 0)
      this.storyboardWarnings.push(`invariants ${unchecked.join(', ')} are not checked by this version of vitest-adcp`);
  }

  /**
   * Secrets this run may put on the wire, for scrubbing rendered messages: the credentials, and what the roles put
   * there that no output may show (the operation ids of the webhook URLs minted: only the agent may know a URL the
   * receiver accepts).
   */
  secrets(): string[] {
    return [...this.credentialSecrets(), ...this.roles.all((session) => session.secrets?.())];
  }

  /** The credentials alone (context.no_secret_echo: an agent may echo its webhook URL back, never a credential). */
  private credentialSecrets(): string[] {
    return [...this.credentials.secrets(), ...(this.options.knownSecrets ?? [])];
  }

  /** The longest one `settle` can take while every bound holds (engine/settle-bound.ts). */
  worstCaseMs(): number {
    return settleBoundMs(
      this.options.roles,
      this.entries.map((entry) => entry.step),
      this.options,
    );
  }

  /** Runs forward as far as needed, then returns the final verdict of one step. */
  async settle(phaseId: string, stepId: string): Promise<StepOutcome> {
    const entry = this.entryOf(phaseId, stepId);
    if (!entry) throw new Error(`storyboard "${this.storyboard.id}" has no step "${phaseId}/${stepId}"`);
    await this.runThrough(this.settlesAt(entry));
    if (!this.results.has(entry.index))
      throw new Error(`the run of storyboard "${this.storyboard.id}" was stopped before step "${phaseId}/${stepId}"`);
    return this.outcome(entry);
  }

  /**
   * Opens the way to the agent before the first step: its session and the tool list, which the first step that reaches
   * the agent would wait for. No tool is called. For a runner that opens its runs while it may not call the agent yet
   * (the run host, while the preflight runs): the first calls then go out as soon as it may. Nothing for a run whose
   * configuration failed (no step reaches the agent) or that was stopped.
   */
  prepare(): Promise<void> {
    if (this.options.configurationError || this.cancel.signal.aborted) return Promise.resolve();
    this.transport ??= this.options.transport();
    return this.facts.agentTools().then(() => undefined);
  }

  /**
   * Stops the run: the call of the step under way is aborted (its record says it was cancelled), no later step starts,
   * and a settle of one that did not run rejects. For a runner whose test run was cancelled (the run host's runs go
   * ahead of their tests; the bin's SIGTERM must not wait out a slow agent's answer).
   */
  stop(): void {
    this.cancel.abort(new Error(CANCELLED_STEP));
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

  /** Every step's outcome in run order once all have results (final only then: `outcome`'s moot branches); else undefined. */
  allOutcomes(): StepOutcome[] | undefined {
    return this.entries.every((e) => this.results.has(e.index)) ? this.entries.map((e) => this.outcome(e)) : undefined;
  }

  /** The steps as this run plans them (injected phases included), in run order: what `StepTurns` counts by. */
  planned(): readonly { phase: Phase; step: Step }[] {
    return this.entries;
  }

  /** From the next step on, each step that reaches the agent waits for its turn (the run host, whose runs share it). */
  takeTurns(turns: StepTurns): void {
    this.turns = turns;
  }

  private entryOf(phaseId: string, stepId: string): Entry | undefined {
    return this.entries.find((e) => e.phase.id === phaseId && e.step.id === stepId);
  }

  /** Runs every remaining step (for reporters or a plain CLI run). */
  async runAll(): Promise<StepOutcome[]> {
    await this.runThrough(this.entries.length - 1);
    // All of them, unless the run was stopped: then those that ran.
    return this.entries.filter((entry) => this.results.has(entry.index)).map((entry) => this.outcome(entry));
  }

  async close(): Promise<void> {
    await this.queue.catch(() => {});
    await this.roles.close();
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
      // lastIndex is always a step's index (settlesAt, runAll): no bound of its own is needed.
      while (this.next <= lastIndex && !this.cancel.signal.aborted) {
        const entry = this.entries[this.next++]!;
        let result: StepResult;
        try {
          result = await this.seeds.execution(entry, lastIndex);
        } catch (error) {
          // A bug of ours must cost one step, not the run and its report.
          const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
          result = {
            ...emptyRecord(this.storyboard.id, entry, entry.step.task),
            error: `vitest-adcp internal error (please report it): ${message}`,
          };
        } finally {
          // Every step, whether it took a turn or not: a window ends at its last step, called or skipped.
          this.turns?.after(entry.index);
        }
        if (entry.index === 0 && this.storyboardWarnings.length > 0)
          result.warnings = [...this.storyboardWarnings, ...(result.warnings ?? [])];
        if (entry.phase.optional === true) result.optional = true;
        this.results.set(entry.index, result);
        // A phase its capability or scenario gate skipped is graded not_applicable step by step, and its stateful steps
        // cascade like any other not_applicable skip (runner-output-contract.yaml > cascade_rules.default_cascade;
        // storyboard-schema.yaml > phases[].requires_capability exempts only the siblings that declare depends_on: []).
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
    const moot = peerBranchTaken(entry.phase, this.contributions);
    return moot ? { status: 'skipped', result: { ...result, skip: moot } } : { status: 'failed', result };
  }

  /**
   * One step, start to record. The order is the contract's: storyboard-wide skips and the configuration before the
   * agent is reached; then the agent's tools, the engine's and the roles' own tasks, the cascade; then the call.
   */
  private async execute(entry: Entry): Promise<StepResult> {
    const task = resolveTask(entry.step.task, entry.step.task_default, this.options.testKit) ?? entry.step.task;
    const end = new StepEnd(emptyRecord(this.storyboard.id, entry, task));
    const step: RoleStep = { ...entry, task };
    const result = (await this.applicable(end)) ?? this.beforeAgent(step, end) ?? (await this.withAgent(step, end));
    // A call aborted by stop() failed because we ended it, not because of the agent: no verdict, and said so.
    return this.cancel.signal.aborted && !result.skip ? end.cancelled(result) : result;
  }

  /**
   * The 3.1 storyboard-level gates (applicability.ts) come first — before a role's own storyboard skip (no webhook
   * receiver: the role would say not_applicable, the contract says requirement_unmet), and before the agent is called.
   * They need the agent's tool list (and, for requires_capability, its capabilities); a run whose configuration failed
   * reaches no agent, and a storyboard without such gates asks nothing here.
   */
  private async applicable(end: StepEnd): Promise<StepResult | undefined> {
    if (this.options.configurationError || !this.facts.gated) return undefined;
    this.transport ??= this.options.transport();
    const skip = await this.facts.storyboardGate(await this.facts.agentTools());
    return skip ? end.skipped(skip) : undefined;
  }

  /** What decides a step before the agent is reached: storyboard-wide skips, `skip_if`, the configuration. */
  private beforeAgent(step: RoleStep, end: StepEnd): StepResult | undefined {
    const skip =
      unresolvedScenarioSkip(this.storyboard, this.options.knownStoryboardIds?.()) ??
      this.roles.first((session) => session.storyboardSkip?.(step)) ??
      this.runnerPreflight ??
      // A role decided the rest of the storyboard; the phases a role still runs (the seeds: all attempted) go on.
      (this.halt.skip && !this.roles.first((session) => session.runsAfterHalt?.(step.phase) || undefined)
        ? this.halt.skip
        : undefined);
    if (skip) return end.skipped(skip);
    const skipIf = evaluateSkipIf(step.phase.skip_if, step.phase.id, this.options.testKit);
    if (skipIf.kind === 'skip') return end.skipped({ reason: 'not_applicable', detail: skipIf.detail });
    if (skipIf.kind === 'unknown') end.warnings.push(skipIf.warning);
    // The configuration problem is all its record says.
    if (this.options.configurationError) return end.timed({ ...end.base, error: this.options.configurationError });
    return undefined;
  }

  /** Once the agent's tools are known: the storyboard gate, the runner's own tasks, the cascade, then the call. */
  private async withAgent(step: RoleStep, end: StepEnd): Promise<StepResult> {
    // Creating the transport is cheap (it connects on first call); it names the protocol in records.
    this.transport ??= this.options.transport();
    const tools = await this.facts.agentTools();
    if (tools.error && step.index === 0)
      end.warnings.push(
        `the agent's tool list could not be read (${tools.error}), so missing tools are not told apart from failures`,
      );
    // A storyboard whose required_tools the agent has none of does not apply to it, runner-only steps included; nor
    // does a phase whose capability gate does not hold.
    const notForThisAgent = this.cascade.storyboardGate(tools);
    if (notForThisAgent) return end.skipped(notForThisAgent);
    const phaseGate = step.phase.requires_capability
      ? capabilityUnmet(
          step.phase.requires_capability,
          await this.facts.agentCapabilities(tools),
          this.facts.capabilityDefault,
        )
      : undefined;
    const scenarioGate =
      phaseGate ??
      (this.rules.phaseScenarioGate &&
      phaseScenarios(step.phase).length > 0 &&
      tools.tools?.has('comply_test_controller')
        ? phaseScenarioUnmet(step.phase, await this.facts.controllerScenarios())
        : undefined);
    if (scenarioGate) return end.skipped({ reason: 'not_applicable', detail: scenarioGate });
    const agentStep: AgentStep = { ...step, tools };
    const own = await this.runnerTask(agentStep, end);
    if (own) return own;
    const gate = this.cascade.gate(step.index, step.task, tools);
    if (gate) {
      const halt = this.roles.first((session) => session.gateSkipped?.(step, gate.skip));
      this.halt.decide(halt, step.index);
      // A cascade skip (`passed: false`) is prerequisite_failed, which StepEnd records as not passed.
      return end.skipped(gate.skip);
    }
    // Reaching the agent: the step waits for its turn (StepTurns), and its clock starts then.
    await end.startAfter(this.turns?.before(step.index));
    return this.callAgent(agentStep, end);
  }

  /** The tasks the runner grades itself: assert_contribution, runner-only contracts, and every task a role claims. */
  private async runnerTask(step: AgentStep, end: StepEnd): Promise<StepResult | undefined> {
    if (step.task === 'assert_contribution')
      return end.done(assertContribution(step.step, end.base, this.contributions, this.storyboard.file));
    const runnerOnly = runnerOnlyTaskSkip(step.step, step.task);
    if (runnerOnly) return end.skipped(runnerOnly);
    if (step.step.task.startsWith('$test_kit.') && step.task === step.step.task) {
      return end.done({
        ...end.base,
        error: `task "${step.step.task}" did not resolve: the test kit has no such value and the step has no task_default`,
      });
    }
    const roleSkip = this.roles.first((session) => session.gate?.(step));
    if (roleSkip) return end.skipped(roleSkip);
    const owner = this.roles.owner(step.task);
    if (!owner?.run) return undefined;
    await end.startAfter(this.turns?.before(step.index));
    // The role's step may send another task's request (rate_limit_trip's target), built as a step's own. A record
    // comes back as the role's outcome, which `end` finishes again: the step's warnings go on it once.
    const request = async (target: { task: string; sample_request: unknown }) => {
      const at = { ...step, task: target.task, step: { ...step.step, sample_request: target.sample_request } };
      const call = await this.request(at, end);
      if (!('record' in call)) return call;
      const { warnings: _once, ...record } = call.record;
      return { record };
    };
    return this.roleRecord(step, await owner.run(step, end.base, { request }), end);
  }

  /** A role's outcome as the step's record: an exchange is graded as an agent's answer is. */
  private roleRecord(step: AgentStep, outcome: RoleOutcome, end: StepEnd): StepResult {
    if ('result' in outcome) return end.done(outcome.result);
    if ('skip' in outcome) return end.skipped(outcome.skip, outcome.record ?? {});
    return end.done(
      this.keep(
        step,
        outcome.exchange,
        this.graded(step, step.task, outcome.exchange, end.base, undefined, { responses: outcome.responses }),
      ),
    );
  }

  /** The call to the agent: prepared, substituted, sent, followed to its end, graded; a role may decide the verdict. */
  private async callAgent(step: AgentStep, end: StepEnd): Promise<StepResult> {
    const problem = await this.roles.prepare(step);
    if (problem) return end.done({ ...end.base, error: problem });
    const call = await this.request(step, end);
    if ('record' in call) return call.record;
    this.enricher.observeRequest(call.payload);
    // A role that sends the request itself (parallel_dispatch: N calls at once): its outcome is the step's.
    const sender = this.roles.first((session) => session.sender?.(step));
    if (sender) return this.roleRecord(step, await sender(call, end.base), end);
    const transport = this.transport!;
    const startedAt = Date.now();
    this.requestStarts.set(step.step.id, startedAt);
    const answered = await transport.call(step.task, call.payload, call.callOptions);
    const { exchange, completion, warning } = await followAsync(transport, step.step, answered, {
      ...call.callOptions,
      pollTool: pollingTool(step.tools.tools),
      intervalMs: this.options.pollIntervalMs ?? 1000,
      deadlineMs: end.remainingMs(this.options.timeoutMs),
    });
    if (warning) end.warnings.push(warning);
    // Cancelled: no upstream observation (more calls), nor grading of an answer cut off: execute says cancelled.
    if (this.cancel.signal.aborted) return end.cancelled({ ...end.base, request: exchange.request });
    this.enricher.observeAnswer(step.task, exchange);
    const upstream = await observeUpstream(step.step, startedAt, {
      transport,
      credentials: this.credentials.resolve(undefined),
      timeoutMs: this.options.timeoutMs,
      tools: step.tools,
      scenarios: () => this.facts.controllerScenarios(),
      startedAt: (id) => this.requestStarts.get(id),
    });
    const graded = this.graded(step, step.task, exchange, end.base, completion, upstream ? { upstream } : {});
    const verdict = this.roles.first((session) => session.verdict?.(step, exchange, graded.result));
    this.halt.decide(verdict?.halt, step.index);
    return end.done(this.keep(step, exchange, { ...graded, result: verdict?.result ?? graded.result }));
  }

  /** The step's request as it goes out: substituted, with its credentials, enriched, keyed, with its context inputs. */
  private async request(step: AgentStep, end: StepEnd): Promise<Call> {
    const transport = this.transport!;
    const requestOf = (payload: unknown) => ({
      transport: transport.kind,
      operation: step.task,
      payload,
      url: transport.url,
    });
    const substituted = substitute(step.step.sample_request ?? {}, this.scope());
    if (substituted.unresolved.length > 0) {
      // storyboard-schema.yaml > "Unresolved substitution behavior": never ship the token.
      const source = { file: this.storyboard.file, line: step.step.loc.line, column: step.step.loc.column };
      const request = requestOf(substituted.value);
      return {
        record: end.done(unresolvedRecord(end.base, request, substituted.unresolved, this.earlierSteps(step), source)),
      };
    }
    const credentials = this.stepCredentials(step);
    if (typeof credentials === 'string')
      return { record: end.done({ ...end.base, request: requestOf(substituted.value), error: credentials }) };
    const callOptions: CallOptions = { credentials, timeoutMs: this.options.timeoutMs, signal: this.cancel.signal };
    // A step that checks A2A context continuity continues the run's conversation: it names the last Task's context.
    if (this.lastA2a?.contextId && step.step.validations.some((v) => v.check === 'a2a_context_continuity'))
      callOptions.a2aContextId = this.lastA2a.contextId;
    const built = substituted.value as Record<string, unknown>;
    if (this.options.requests !== 'as-written' && built && typeof built === 'object' && !Array.isArray(built)) {
      end.warnings.push(...(await this.enricher.enrich(step, built, this.transport!, callOptions)));
    }
    const payload = withIdempotencyKey(built, step.task, step.step, this.options.schemas) as Record<string, unknown>;
    const request = requestOf(payload);
    const injected = this.injectContextInputs(step.step, payload);
    if (injected) return { record: end.done({ ...end.base, request, error: injected }) };
    return { payload, callOptions };
  }

  /** The step's credentials, or why it has none (a CredentialsError's message). */
  private stepCredentials(step: RoleStep): Credentials | string {
    try {
      return this.credentials.resolve(step.step.auth);
    } catch (error) {
      if (error instanceof CredentialsError) return error.message;
      throw error;
    }
  }

  /** `context_inputs` into the request, in place: a problem's message, or undefined. */
  private injectContextInputs(step: Step, payload: Record<string, unknown>): string | undefined {
    try {
      step.context_inputs?.forEach((input) => {
        if (this.context.has(input.key) && payload && typeof payload === 'object')
          setPath(payload, input.inject_at, this.context.get(input.key));
      });
    } catch (error) {
      // The loader refuses such paths (rule context_input_path); a storyboard built in code may not have been loaded.
      if (error instanceof PathSyntaxError) return `context_inputs: ${error.message}`;
      throw error;
    }
    return undefined;
  }

  /** What a placeholder resolves against now; `{{runner.*}}` from the roles (the webhook receiver's URLs). */
  private scope(): SubstitutionScope {
    return {
      context: this.context,
      priorSteps: this.priorSteps,
      testKit: this.options.testKit,
      generated: this.generated,
      runner: this.roles.first((session) => session.variables),
    };
  }

  /** The steps before `entry` and their results so far: what an unresolved placeholder's message names. */
  private earlierSteps(entry: Entry): { phase: Entry['phase']; step: Entry['step']; result: StepResult | undefined }[] {
    return this.entries
      .slice(0, entry.index)
      .map((e) => ({ phase: e.phase, step: e.step, result: this.results.get(e.index) }));
  }

  /**
   * Grades an answer (gradeStep, with the context as it was before this step)
   * into the step's record, and what it would capture.
   */
  private graded(
    entry: Entry,
    task: string,
    exchange: Exchange,
    result: StepResult,
    completion?: TaskCompletion,
    observed: GradeInput['observed'] = {},
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
      observed: { history: this.history, ...this.priorA2a(entry.step.id, exchange), ...observed },
    });
    this.history.push({
      step: entry.step.id,
      task,
      request: exchange.request.payload,
      data: exchange.data,
      passed: graded.passed,
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

  /**
   * The previous A2A step's Task `contextId` for this answer's a2a_context_continuity, and this answer's kept for the
   * next: over A2A the Task is the answer's `response.payload` (the JSON-RPC result).
   */
  private priorA2a(stepId: string, exchange: Exchange): { priorA2a?: { step: string; contextId?: string } } {
    const prior = this.lastA2a;
    if (exchange.request.transport === 'a2a' && !exchange.rpcError && !exchange.transportError) {
      const task = exchange.response?.payload as { contextId?: unknown } | undefined;
      const contextId = typeof task?.contextId === 'string' && task.contextId !== '' ? task.contextId : undefined;
      this.lastA2a = { step: stepId, ...(contextId ? { contextId } : {}) };
    }
    return prior ? { priorA2a: prior } : {};
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

  /** storyboard-schema.yaml > context_outputs: a failed step MUST NOT populate the accumulator. */
  private recordPass(entry: Entry, exchange: Exchange, captures: Map<string, unknown>): void {
    for (const [name, value] of captures) {
      this.context.set(name, value);
      this.enricher.captures(name, value, entry.step.id);
    }
    if (this.rules.conventionalCaptures)
      for (const [name, value] of conventionalCaptures(entry.step.task, exchange.data, this.undeclaredReads)) {
        this.context.set(name, value);
        this.enricher.captures(name, value, entry.step.id);
      }
    this.priorSteps.set(entry.step.id, exchange.data);
    const flag = entry.step.contributes_to;
    if (flag && contributionAllowed(entry.step, this.priorSteps) && !this.contributions.has(flag)) {
      this.contributions.set(flag, { phase: entry.phase.id, step: entry.step.id });
    }
  }
}
