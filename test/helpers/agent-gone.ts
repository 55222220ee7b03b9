/**
 * Nothing left of an agent a run started (issue 33): no process of its group, nothing listening on its port. Shared
 * by the `agent.start` tests on the fixture agent (test/e2e/agent-start.test.ts) and on an @adcp/sdk example seller
 * from the packed package (test/e2e/newcomer.test.ts). The commands there write their shell's pid (`$$`: the leader
 * of the group) to a file.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { expect } from 'vitest';
import { repoRoot } from './run-vitest.js';

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

/**
 * Starts `node <args>` (a run), waits until the agent's shell has written its pid file, sends the run `signal`, and
 * resolves to the run's exit code once it has ended.
 */
export async function interrupted(
  args: string[],
  env: Record<string, string | undefined>,
  pid: string,
  signal: NodeJS.Signals,
  cwd: string = repoRoot,
) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '0', ...env };
  for (const key of Object.keys(childEnv))
    if (childEnv[key] === undefined || key.startsWith('VITEST')) delete childEnv[key];
  const run = spawn(process.execPath, args, { cwd, env: childEnv, stdio: 'ignore' });
  const ended = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
  const until = Date.now() + 60_000;
  while (!existsSync(pid) || readFileSync(pid, 'utf8').trim() === '') {
    if (Date.now() > until) throw new Error('the agent was never started');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  run.kill(signal);
  return ended;
}
