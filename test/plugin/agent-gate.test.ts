/**
 * The run host's admission to the agent (src/plugin/agent-gate.ts): shared runs together, an exclusive one alone, first
 * come first admitted.
 */
import { describe, expect, it } from 'vitest';
import { AgentGate, type Turn } from '../../src/plugin/agent-gate.js';

/** Enters the gate and records when it is admitted; `leave` and `share` once admitted. */
function enter(gate: AgentGate, name: string, exclusive: boolean, log: string[]) {
  let turn: Turn | undefined;
  const admitted = gate.enter(exclusive).then((t) => {
    log.push(name);
    turn = t;
  });
  return { admitted, leave: () => turn!.leave(), share: () => turn!.share() };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('AgentGate', () => {
  it('admits shared runs together', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const [a, b] = [enter(gate, 'a', false, log), enter(gate, 'b', false, log)];
    await Promise.all([a.admitted, b.admitted]);
    expect(log).toEqual(['a', 'b']);
  });

  it('admits an exclusive run once the shared ones before it have left, and the ones after it once it has', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const a = enter(gate, 'a', false, log);
    const x = enter(gate, 'x', true, log);
    const b = enter(gate, 'b', false, log);
    await turn();
    expect(log).toEqual(['a']);
    a.leave();
    await turn();
    expect(log).toEqual(['a', 'x']);
    x.leave();
    await b.admitted;
    expect(log).toEqual(['a', 'x', 'b']);
  });

  it('admits two exclusive runs one after the other, and counts a second leave of a turn once', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const x = enter(gate, 'x', true, log);
    const y = enter(gate, 'y', true, log);
    await turn();
    expect(log).toEqual(['x']);
    x.leave();
    x.leave();
    await y.admitted;
    const a = enter(gate, 'a', false, log);
    await turn();
    expect(log).toEqual(['x', 'y']);
    y.leave();
    await a.admitted;
    expect(log).toEqual(['x', 'y', 'a']);
  });

  it('an exclusive run that shares (its seeding done) admits the shared runs behind it, and waits for none of them', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const x = enter(gate, 'x', true, log);
    const a = enter(gate, 'a', false, log);
    const y = enter(gate, 'y', true, log);
    const b = enter(gate, 'b', false, log);
    await turn();
    expect(log).toEqual(['x']);
    x.share();
    x.share();
    await a.admitted;
    await turn();
    // y is exclusive: it waits for x and a, and b behind it waits for y.
    expect(log).toEqual(['x', 'a']);
    x.leave();
    await turn();
    expect(log).toEqual(['x', 'a']);
    a.leave();
    await y.admitted;
    y.leave();
    await b.admitted;
    expect(log).toEqual(['x', 'a', 'y', 'b']);
  });

  it('counts a shared run that leaves twice once: an exclusive run still waits for the other shared one', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const a = enter(gate, 'a', false, log);
    const b = enter(gate, 'b', false, log);
    const x = enter(gate, 'x', true, log);
    await Promise.all([a.admitted, b.admitted]);
    a.leave();
    a.leave();
    a.share();
    await turn();
    expect(log).toEqual(['a', 'b']);
    b.leave();
    await x.admitted;
    expect(log).toEqual(['a', 'b', 'x']);
  });

  it('an exclusive run that has left cannot share any more', async () => {
    const gate = new AgentGate();
    const log: string[] = [];
    const x = enter(gate, 'x', true, log);
    await x.admitted;
    x.leave();
    x.share();
    const y = enter(gate, 'y', true, log);
    await y.admitted;
    const a = enter(gate, 'a', false, log);
    await turn();
    // y is alone: a waits, though x "shared" after it left.
    expect(log).toEqual(['x', 'y']);
    y.leave();
    await a.admitted;
  });
});
