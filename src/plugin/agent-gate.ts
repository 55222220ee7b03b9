/**
 * The run host's admission to the agent, step by step. Every step of a hosted run asks for a turn before it calls the
 * agent, in one of three modes (plan/agent-windows.ts says which):
 *   - `shared`: an ordinary step, beside any number of other ordinary steps;
 *   - `seed`: a storyboard's seeding window, beside other seeding windows only — seeds write fixtures and read none, so
 *     they do not disturb each other, but no listing may run between a product's seed and its pricing option's;
 *   - `alone`: a window that keeps or reads per-caller state, with no other step in flight.
 * A turn is given while the agent is idle, or in the turn's (non-alone) mode: a shared step joins shared ones only when
 * nobody waits ahead of it, a seeding window joins seeding ones past anybody. When the agent falls idle, the mode of the
 * longest waiter is taken, and every waiter of that mode is admitted at once (alone: that one only). So a waiting
 * window is never overtaken by the steps that keep coming after it, and the seeding windows of the storyboards that
 * start together run together rather than one after another.
 */
import type { StepTurns } from '../engine/run-settings.js';
import type { AgentMode, StepTurn } from '../plan/agent-windows.js';

/** Gives the turn back; a second call does nothing. */
export type Leave = () => void;

/**
 * What the windows cost a run: how long the agent was held in each mode (from the first turn given while it was idle
 * to the last one given back) and how many turns each mode gave. While seeding windows or an alone window hold it, no
 * ordinary step runs: the run's critical path is its longest chain of calls plus these (bench/speed.mjs prints them).
 */
export type GateUsage = Record<AgentMode, { ms: number; turns: number }>;

export class AgentGate {
  private mode: AgentMode | undefined;
  private holders = 0;
  private readonly waiting: { mode: AgentMode; admit: () => void }[] = [];
  /** When the agent was last taken while idle. */
  private heldSince = 0;
  private readonly used: GateUsage = {
    shared: { ms: 0, turns: 0 },
    seed: { ms: 0, turns: 0 },
    alone: { ms: 0, turns: 0 },
  };

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The time held and the turns given so far, per mode (a hold under way counted up to now). */
  usage(): GateUsage {
    const usage = structuredClone(this.used);
    if (this.holders > 0) usage[this.mode!].ms += this.now() - this.heldSince;
    return usage;
  }

  /** Resolves when a step in `mode` may call the agent, with the function that gives the turn back. */
  enter(mode: AgentMode): Promise<Leave> {
    return new Promise((resolve) => {
      let left = false;
      const leave: Leave = () => {
        if (left) return;
        left = true;
        this.holders--;
        if (this.holders === 0) this.used[this.mode!].ms += this.now() - this.heldSince;
        this.admitWaiting();
      };
      this.waiting.push({ mode, admit: () => resolve(leave) });
      this.admitWaiting();
    });
  }

  private admit(index: number): void {
    const [next] = this.waiting.splice(index, 1);
    if (this.holders === 0) this.heldSince = this.now();
    this.mode = next!.mode;
    this.holders++;
    this.used[next!.mode].turns++;
    next!.admit();
  }

  private admitWaiting(): void {
    if (this.holders > 0) {
      // Joining the turns in flight, in their mode: a seeding window past anyone (there is one per storyboard at most,
      // so the wait it adds is bounded), a shared step past nobody (steps keep coming: a window would wait forever).
      if (this.mode === 'seed') this.admitAll('seed');
      while (this.mode === 'shared' && this.waiting[0]?.mode === 'shared') this.admit(0);
      return;
    }
    const head = this.waiting[0];
    if (!head) return;
    this.admit(0);
    if (head.mode !== 'alone') this.admitAll(head.mode);
  }

  private admitAll(mode: AgentMode): void {
    for (let i = 0; i < this.waiting.length;) {
      if (this.waiting[i]!.mode === mode) this.admit(i);
      else i++;
    }
  }
}

/**
 * One run's steps at the gate: each step that reaches the agent asks in its planned mode (plan/agent-windows.ts
 * `agentTurns`), and a window's turn is held from its first such step through the window's last step. A window none
 * of whose steps reaches the agent (its directive not applicable, its phase skipped) never takes the agent from the
 * others.
 */
export class RunTurns implements StepTurns {
  private held: { leave: Leave; until: number } | undefined;
  /** The turn being asked for: steps of a window asking together (a seeding phase's seeds of one kind) wait for it. */
  private entering: Promise<void> | undefined;

  constructor(
    private readonly gate: AgentGate,
    private readonly turns: readonly StepTurn[],
  ) {}

  before(index: number): Promise<void> {
    // Held: this step is in the window (after() gives the turn back at the window's last step).
    if (this.held) return Promise.resolve();
    const turn = this.turns[index] ?? { mode: 'shared', until: index };
    this.entering ??= this.gate.enter(turn.mode).then((leave) => {
      this.held = { leave, until: turn.until };
      this.entering = undefined;
    });
    return this.entering;
  }

  after(index: number): void {
    if (this.held && index >= this.held.until) this.release();
  }

  /** Gives back a turn still held (a run stopped inside a window). */
  release(): void {
    this.held?.leave();
    this.held = undefined;
  }
}
