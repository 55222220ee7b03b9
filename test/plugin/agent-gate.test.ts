/**
 * The run host's admission to the agent, step by step (src/plugin/agent-gate.ts): shared steps together, seeding windows
 * together, an alone window by itself; a waiting turn never overtaken by later ones; each mode's waiters admitted
 * together once the agent is idle. And `RunTurns`: a run's steps taking the turns its plan gives them.
 */
import { describe, expect, it } from 'vitest';
import { AgentGate, RunTurns, type Leave } from '../../src/plugin/agent-gate.js';
import type { AgentMode, StepTurn } from '../../src/plan/agent-windows.js';

/** Enters the gate and records when it is admitted; `leave` once admitted. */
function enter(gate: AgentGate, name: string, mode: AgentMode, log: string[]) {
  let leave: Leave | undefined;
  const admitted = gate.enter(mode).then((l) => {
    log.push(name);
    leave = l;
  });
  return { admitted, leave: () => leave!() };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('AgentGate', () => {
  it('admits shared steps together, and seeding windows together', async () => {
    for (const mode of ['shared', 'seed'] as const) {
      const gate = new AgentGate();
      const log: string[] = [];
      const [a, b] = [enter(gate, 'a', mode, log), enter(gate, 'b', mode, log)];
      await Promise.all([a.admitted, b.admitted]);
      expect(log).toEqual(['a', 'b']);
    }
  });

  it('admits an alone window once the steps before it have left, and the ones after it once it has', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const a = enter(gate, 'a', 'shared', log);
    const x = enter(gate, 'x', 'alone', log);
    const b = enter(gate, 'b', 'shared', log);
    await turn();
    expect(log).toEqual(['a']);
    a.leave();
    await turn();
    expect(log).toEqual(['a', 'x']);
    x.leave();
    await b.admitted;
    expect(log).toEqual(['a', 'x', 'b']);
  });

  it('admits two alone windows one after the other, and counts a second leave of a turn once', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const x = enter(gate, 'x', 'alone', log);
    const y = enter(gate, 'y', 'alone', log);
    await turn();
    expect(log).toEqual(['x']);
    x.leave();
    x.leave();
    await y.admitted;
    const a = enter(gate, 'a', 'shared', log);
    await turn();
    expect(log).toEqual(['x', 'y']);
    y.leave();
    await a.admitted;
    expect(log).toEqual(['x', 'y', 'a']);
  });

  it('keeps seeding windows and shared steps apart', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const s = enter(gate, 's', 'seed', log);
    const a = enter(gate, 'a', 'shared', log);
    await turn();
    expect(log).toEqual(['s']);
    s.leave();
    await a.admitted;
    const t = enter(gate, 't', 'seed', log);
    await turn();
    expect(log).toEqual(['s', 'a']);
    a.leave();
    await t.admitted;
    expect(log).toEqual(['s', 'a', 't']);
  });

  it('lets no step join the turns in flight past a waiting turn of another mode', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const a = enter(gate, 'a', 'shared', log);
    const s = enter(gate, 's', 'seed', log);
    const b = enter(gate, 'b', 'shared', log);
    await turn();
    // b would share with a, but s came first.
    expect(log).toEqual(['a']);
    a.leave();
    await s.admitted;
    await turn();
    expect(log).toEqual(['a', 's']);
    s.leave();
    await b.admitted;
  });

  it("once idle, admits every waiter of the longest waiter's mode at once, the others after them", async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const x = enter(gate, 'x', 'alone', log);
    const s1 = enter(gate, 's1', 'seed', log);
    const a = enter(gate, 'a', 'shared', log);
    const s2 = enter(gate, 's2', 'seed', log);
    const y = enter(gate, 'y', 'alone', log);
    const b = enter(gate, 'b', 'shared', log);
    await x.admitted;
    x.leave();
    await Promise.all([s1.admitted, s2.admitted]);
    await turn();
    expect(log).toEqual(['x', 's1', 's2']);
    s1.leave();
    await turn();
    expect(log).toEqual(['x', 's1', 's2']);
    s2.leave();
    await Promise.all([a.admitted, b.admitted]);
    expect(log).toEqual(['x', 's1', 's2', 'a', 'b']);
    // An alone window is admitted by itself even when others of its mode wait.
    const z = enter(gate, 'z', 'alone', log);
    a.leave();
    b.leave();
    await y.admitted;
    await turn();
    expect(log).toEqual(['x', 's1', 's2', 'a', 'b', 'y']);
    y.leave();
    await z.admitted;
  });

  it('counts a shared step that leaves twice once: an alone window still waits for the other one', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const a = enter(gate, 'a', 'shared', log);
    const b = enter(gate, 'b', 'shared', log);
    const x = enter(gate, 'x', 'alone', log);
    await Promise.all([a.admitted, b.admitted]);
    a.leave();
    a.leave();
    await turn();
    expect(log).toEqual(['a', 'b']);
    b.leave();
    await x.admitted;
    expect(log).toEqual(['a', 'b', 'x']);
  });
});

describe('AgentGate usage', () => {
  it("counts how long each mode held the agent, from the first turn taken while idle to the last given back, and each mode's turns", async () => {
    let clock = 0;
    const gate = new AgentGate(() => clock);
    const log: string[] = [];
    expect(gate.usage()).toEqual({
      shared: { ms: 0, turns: 0 },
      seed: { ms: 0, turns: 0 },
      alone: { ms: 0, turns: 0 },
    });
    // Seeding windows from 0 to 30 (one joining at 10, one leaving at 20), then an alone window to 45, then two shared
    // steps.
    const s1 = enter(gate, 's1', 'seed', log);
    const s2 = enter(gate, 's2', 'seed', log);
    const x = enter(gate, 'x', 'alone', log);
    const a = enter(gate, 'a', 'shared', log);
    const b = enter(gate, 'b', 'shared', log);
    await Promise.all([s1.admitted, s2.admitted]);
    clock = 10;
    const s3 = enter(gate, 's3', 'seed', log);
    await s3.admitted;
    clock = 20;
    s1.leave();
    s3.leave();
    clock = 30;
    s2.leave();
    await x.admitted;
    clock = 45;
    x.leave();
    await Promise.all([a.admitted, b.admitted]);
    clock = 50;
    a.leave();
    // A hold under way counts up to now.
    clock = 52;
    expect(gate.usage()).toEqual({
      shared: { ms: 7, turns: 2 },
      seed: { ms: 30, turns: 3 },
      alone: { ms: 15, turns: 1 },
    });
    clock = 60;
    b.leave();
    expect(gate.usage().shared).toEqual({ ms: 15, turns: 2 });
    expect(log).toEqual(['s1', 's2', 's3', 'x', 'a', 'b']);
  });
});

describe('RunTurns', () => {
  /** A run's turns over `plan`, and another run's single steps in `mode` to see who holds the agent. */
  function setup(plan: StepTurn[]) {
    const gate = new AgentGate();
    const turns = new RunTurns(gate, plan);
    /** Whether a step of another run in `mode` is admitted within a turn of the event loop. */
    const othersAdmitted = async (mode: AgentMode) => {
      let leave: Leave | undefined;
      const admitted = gate.enter(mode).then((l) => (leave = l));
      await turn();
      const now = leave !== undefined;
      // Not admitted: leave once it is, so that the next probe starts from the same gate.
      void admitted.then((l) => l());
      if (now) leave!();
      await turn();
      return now;
    };
    return { turns, othersAdmitted };
  }

  it('steps of a window asking at once (seeds of one kind sent together) take one turn, given back at its last step', async () => {
    const gate = new AgentGate();
    const turns = new RunTurns(gate, [
      { mode: 'seed', until: 2 },
      { mode: 'seed', until: 2 },
      { mode: 'seed', until: 2 },
    ]);
    await Promise.all([turns.before(0), turns.before(1), turns.before(2)]);
    expect(gate.usage().seed.turns).toBe(1);
    turns.after(0);
    turns.after(1);
    turns.after(2);
    // Given back: an alone window is admitted at once.
    let admitted = false;
    void gate.enter('alone').then(() => (admitted = true));
    await turn();
    expect(admitted).toBe(true);
  });

  it('holds a window from its first step through its last, and a single step for itself', async () => {
    const { turns, othersAdmitted } = setup([
      { mode: 'shared', until: 0 },
      { mode: 'alone', until: 2 },
      { mode: 'alone', until: 2 },
      { mode: 'shared', until: 3 },
    ]);
    await turns.before(0);
    expect(await othersAdmitted('shared')).toBe(true);
    turns.after(0);
    await turns.before(1);
    expect(await othersAdmitted('shared')).toBe(false);
    turns.after(1);
    expect(await othersAdmitted('shared')).toBe(false);
    await turns.before(2);
    turns.after(2);
    expect(await othersAdmitted('shared')).toBe(true);
    await turns.before(3);
    expect(await othersAdmitted('alone')).toBe(false);
    turns.after(3);
    expect(await othersAdmitted('alone')).toBe(true);
  });

  it('a seeding window admits other seeding windows, not shared steps; release() gives back a turn still held', async () => {
    const { turns, othersAdmitted } = setup([
      { mode: 'seed', until: 1 },
      { mode: 'seed', until: 1 },
      { mode: 'alone', until: 3 },
      { mode: 'alone', until: 3 },
    ]);
    await turns.before(0);
    turns.after(0);
    expect(await othersAdmitted('seed')).toBe(true);
    expect(await othersAdmitted('shared')).toBe(false);
    await turns.before(1);
    turns.after(1);
    await turns.before(2);
    turns.after(2);
    expect(await othersAdmitted('seed')).toBe(false);
    turns.release();
    turns.release();
    expect(await othersAdmitted('shared')).toBe(true);
  });

  it('a step the plan does not know is shared, for itself', async () => {
    const { turns, othersAdmitted } = setup([]);
    await turns.before(5);
    expect(await othersAdmitted('shared')).toBe(true);
    expect(await othersAdmitted('alone')).toBe(false);
    turns.after(5);
    expect(await othersAdmitted('alone')).toBe(true);
  });
});
