/**
 * Nothing left of an agent a run started (issue 33): no process of its group, nothing listening on its port. Shared
 * by the `agent.start` tests on the fixture agent (test/e2e/agent-start.test.ts) and on an @adcp/sdk example seller
 * from the packed package (test/e2e/newcomer.test.ts). The commands there write their shell's pid (`$$`: the leader
 * of the group) to a file.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { expect } from 'vitest';

/** The process group a command's shell recorded in `pidFile`. */
export function groupOf(pidFile: string): number {
  return Number(readFileSync(pidFile, 'utf8').trim());
}

/** Whether any process of the group is left (`kill(-pgid, 0)`: ESRCH when none is). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
}

/** Resolves to the connect's outcome on 127.0.0.1:port: `refused` when nothing listens. */
export function connectTo(port: number): Promise<'connected' | 'refused'> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNREFUSED' ? resolve('refused') : reject(error),
    );
  });
}

/** Nothing of the agent left: the port refuses connections and the group has no process. */
export async function expectGone(pidFile: string, port: number): Promise<void> {
  const pgid = groupOf(pidFile);
  expect(pgid).toBeGreaterThan(1);
  // A run that ends on a signal stops the agent from its exit handler, where it cannot reap its shell: the shell is a
  // zombie of the group until init reaps it, a moment after the run's exit. A live process would stay past this wait.
  const until = Date.now() + 3_000;
  while (groupAlive(pgid) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(groupAlive(pgid)).toBe(false);
  expect(await connectTo(port)).toBe('refused');
}
