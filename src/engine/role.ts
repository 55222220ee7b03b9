/**
 * The runner's protocol roles as the engine sees them (issue 22, step 3): request signing, the webhook receiver, the
 * OAuth probes, controller seeding — each a folder of `src/roles/` that the engine never imports. Whoever opens a run
 * hands it the roles (`StoryboardRunOptions.roles`; `roles/index.ts` lists the built-in ones), so a new role is a new
 * folder there and nothing here changes.
 *
 * A role declares the runner tasks it runs itself (never sent to the agent), plans its steps into the storyboard
 * (injected phases, synthesized steps), and opens a session per run. The session answers the engine at fixed points of
 * a step's life, in this order (run.ts `execute`): storyboard-wide skips before the agent is reached, gates once the
 * agent's tools are known, its own tasks' runs, what a cascade skip or an agent's graded answer means for the rest of
 * the storyboard (a halt), and the request's preparation (URLs minted before substitution).
 */
import type { ResponseSet } from '../checks/types.js';
import type { Exchange } from '../model/exchange.js';
import type { SkipResult, StepResult } from '../model/records.js';
import type { Phase, Step, Storyboard } from '../model/storyboard.js';
import type { SigningVectorSource } from '../plan/signing-vectors.js';
import type { AgentTransport, CallOptions, Credentials } from '../transport/types.js';
import type { AgentTools } from './gate.js';
import type { RunSettings } from './run-settings.js';
import type { RunnerVariables, SubstitutionScope } from './substitute.js';

/**
 * What a role's `plan` may read besides the storyboard: a run's settings carry it (`RunSettings` extends it), and the
 * compiler gives it alone — with the vectors its caller read, so no plan reads a file while compiling.
 */
export interface PlanSettings {
  /** Compliance tree root: where the signed_requests vectors are found when the storyboard file is not in a tree. */
  corpusRoot?: string;
  /** The request-signing vectors, read by the caller (roles/request-signing/vectors.ts); absent: the role reads them. */
  signingVectors?: SigningVectorSource;
}

/** What a step's bound depends on (RunnerRole.stepBoundMs): the run's settings, or a worker's reading of them. */
export type BoundSettings = Pick<RunSettings, 'timeoutMs' | 'testKit' | 'requestSigning' | 'runnerContracts'>;

export interface RunnerRole {
  /** Names the role in the engine's own errors. */
  readonly name: string;
  /** Runner tasks this role runs itself: a step with one of them never becomes a call to the agent. */
  readonly tasks: ReadonlySet<string>;
  /**
   * The phases with this role's steps planned in; given the phases the roles before it planned. The compiler, the
   * adapters and the engine all plan through here (`planPhases`), so every step a role injects has its test.
   */
  plan?(phases: Phase[], storyboard: Storyboard, settings: PlanSettings): Phase[];
  /**
   * The longest one of this role's steps can take, when it is not the run's per-step bound. Of the step and the
   * settings alone, not of a run: a worker whose steps the plugin's run host runs asks it without opening one
   * (engine/settle-bound.ts).
   */
  stepBoundMs?(step: Step, settings: BoundSettings): number | undefined;
  /** This role's state for one run. */
  open(run: RoleRun): RoleSession;
}

/** What a role's session may read of the run it serves. */
export interface RoleRun {
  readonly storyboard: Storyboard;
  readonly settings: RunSettings;
  /** The agent's transport; opened before any step reaches a role's `gate`, `run`, `prepare` or `verdict`. */
  transport(): AgentTransport;
  /** The run's own credentials (no step `auth`). */
  defaultCredentials(): Credentials;
  /** What a placeholder resolves against now (context, prior steps, test kit, generated values, runner variables). */
  scope(): SubstitutionScope;
  /** The records so far, by step index. */
  readonly results: ReadonlyMap<number, StepResult>;
}

/** A step as the engine schedules it: `task` is resolved (`task_default`, `$test_kit.`). */
export interface RoleStep {
  readonly index: number;
  readonly phase: Phase;
  readonly step: Step;
  readonly task: string;
}

/** A step once the agent's tool list is known. */
export interface AgentStep extends RoleStep {
  readonly tools: AgentTools;
}

/**
 * A request ready to go out, built as the engine builds a step's own (run.ts `request`: substituted, with the step's
 * credentials, completed by the request builder, keyed, with the step's `context_inputs`), or the step's record of why
 * it cannot go out (an unresolved placeholder, a credential the run lacks).
 */
type RoleRequest = { payload: Record<string, unknown>; callOptions: CallOptions } | { record: StepResult };

/** What the engine does for a role while the role runs one of its steps (per step: the warnings go on its record). */
export interface RoleStepHelp {
  /**
   * The request of `task` from `sample_request`, built as the engine builds a step's own, the request builder's
   * warnings on this step's record: for a role whose step sends another task's request (rate_limit_trip's target).
   */
  request(target: { task: string; sample_request: unknown }): Promise<RoleRequest>;
}

/** A role that sends a step's request itself, once the engine built it: the step's outcome. */
export type RoleSender = (
  request: Exclude<RoleRequest, { record: StepResult }>,
  result: StepResult,
) => Promise<RoleOutcome>;

/**
 * What a role's run of its own task comes to: a record (the engine times it), a skip (with what was exchanged), or an
 * exchange the engine grades as it grades the agent's answers (validations, captures, context).
 */
export type RoleOutcome =
  | { result: StepResult }
  | { skip: SkipResult; record?: Pick<StepResult, 'request' | 'response'> }
  | {
      exchange: Exchange;
      /** The resolved response set of a multi-dispatch step (the cross_response kinds). */ responses?: ResponseSet;
    };

/** A role's reading of a graded agent answer: the step's record, and what every later step becomes (`halt`). */
interface RoleVerdict {
  result: StepResult;
  halt?: SkipResult;
}

/** Every hook is optional: a role implements the points it acts at. */
export interface RoleSession {
  /** Problems that concern the whole storyboard, shown on its first step. */
  storyboardWarnings?(): string[];
  /** A skip before the agent is reached (the storyboard cannot apply to this run). */
  storyboardSkip?(step: RoleStep): SkipResult | undefined;
  /** Whether a phase's steps still run once a halt decided the rest of the storyboard. */
  runsAfterHalt?(phase: Phase): boolean;
  /** A skip once the agent's tools are known, before the step runs or the cascade gates it. */
  gate?(step: AgentStep): SkipResult | undefined;
  /** Runs one of the role's `tasks`. `result` is the engine's empty record for the step. */
  run?(step: AgentStep, result: StepResult, help: RoleStepHelp): Promise<RoleOutcome>;
  /**
   * Sends an agent step's request in place of the engine's one call (a `parallel_dispatch` step: N calls at once),
   * after the gates, the cascade and the request's preparation; undefined: the engine sends it. The outcome is graded
   * as a role's run is, its response set handed to every check.
   */
  sender?(step: AgentStep): RoleSender | undefined;
  /** The cascade skipped a step: a halt for every later step, if that decides the storyboard. */
  gateSkipped?(step: RoleStep, skip: SkipResult): SkipResult | undefined;
  /** Before the step's request is substituted; a message fails the step. */
  prepare?(step: RoleStep): Promise<string | undefined>;
  /** `{{runner.*}}` values this role provides. */
  readonly variables?: RunnerVariables;
  /** The step's record for a graded agent answer this role decides, or undefined. */
  verdict?(step: AgentStep, exchange: Exchange, graded: StepResult): RoleVerdict | undefined;
  /** Values this role put on the wire that no output may show. */
  secrets?(): string[];
  close?(): Promise<void>;
}

/**
 * The storyboard's phases with every role's steps planned in, in the roles' order: the one plan the compiler's tests,
 * the adapters' planned steps and a run's schedule share.
 */
export function planPhases(roles: readonly RunnerRole[], storyboard: Storyboard, settings: PlanSettings): Phase[] {
  return roles.reduce((phases, role) => role.plan?.(phases, storyboard, settings) ?? phases, storyboard.phases);
}

/** One run's role sessions: what `StoryboardRun` dispatches through (the first session that answers wins). */
export class RoleSessions {
  private readonly sessions: readonly RoleSession[];
  private readonly owners = new Map<string, { role: string; session: RoleSession }>();

  constructor(roles: readonly RunnerRole[], run: RoleRun) {
    // Opened in the roles' order, each role's tasks claimed before the next role is opened.
    this.sessions = roles.map((role) => {
      const session = role.open(run);
      for (const task of role.tasks) {
        const claimed = this.owners.get(task);
        if (claimed) throw new Error(`runner task "${task}" is claimed by the roles ${claimed.role} and ${role.name}`);
        this.owners.set(task, { role: role.name, session });
      }
      return session;
    });
  }

  /** The session that runs `task`, if a role claims it. */
  owner(task: string): RoleSession | undefined {
    return this.owners.get(task)?.session;
  }

  /** The first answer of the sessions, in the roles' order. */
  first<T>(ask: (session: RoleSession) => T | undefined): T | undefined {
    for (const session of this.sessions) {
      const answer = ask(session);
      if (answer !== undefined) return answer;
    }
    return undefined;
  }

  /** Every session's answers, in the roles' order. */
  all<T>(ask: (session: RoleSession) => T[] | undefined): T[] {
    return this.sessions.flatMap((session) => ask(session) ?? []);
  }

  /** The first problem a session's preparation reports, each prepared in turn. */
  async prepare(step: RoleStep): Promise<string | undefined> {
    for (const session of this.sessions) {
      const problem = await session.prepare?.(step);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }

  async close(): Promise<void> {
    for (const session of this.sessions) await session.close?.();
  }
}
