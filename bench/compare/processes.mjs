/**
 * Child processes of the compare bench: each in its own process group (so
 * `tsx`'s own child and anything else it spawns go with it), output to a log
 * file, readiness by polling, and a group kill at the end — also on Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

const live = new Set();

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // already gone
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of live) killGroup(child.pid, 'SIGKILL');
    process.exit(130);
  });
}
process.on('exit', () => {
  for (const child of live) killGroup(child.pid, 'SIGKILL');
});

/** A port that was free on 127.0.0.1 a moment ago (the OS picks it). */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts `command args` detached (own process group), stdout+stderr to `logFile`.
 * @returns {{ pid: number, name: string, logFile: string, exited: () => boolean, exitCode: () => number|null, done: Promise<number|null> }}
 */
export function startProcess(name, command, args, { env, cwd, logFile }) {
  const fd = openSync(logFile, 'a');
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = false;
  let code = null;
  const done = new Promise((resolve) => {
    child.once('exit', (c, signal) => {
      exited = true;
      code = c ?? (signal ? 128 : null);
      live.delete(handle);
      resolve(code);
    });
    child.once('error', () => {
      exited = true;
      live.delete(handle);
      resolve(null);
    });
  });
  const handle = { pid: child.pid, name, logFile, exited: () => exited, exitCode: () => code, done };
  live.add(handle);
  return handle;
}

/** SIGTERM to the group, then SIGKILL if it has not exited within `graceMs`. */
export async function stopProcess(handle, graceMs = 3000) {
  if (!handle) return;
  killGroup(handle.pid, 'SIGTERM');
  const timeout = delay(graceMs).then(() => 'timeout');
  if ((await Promise.race([handle.done, timeout])) === 'timeout') {
    killGroup(handle.pid, 'SIGKILL');
    await handle.done;
  }
  // Grandchildren that outlived the group leader.
  killGroup(handle.pid, 'SIGKILL');
  live.delete(handle);
}

/** Runs to completion; output to `logFile` (stdout to `stdoutFile` when given). Killed (group) after `timeoutMs`. */
export async function runToEnd(name, command, args, { env, cwd, logFile, stdoutFile, timeoutMs }) {
  const out = openSync(stdoutFile ?? logFile, 'a');
  const err = openSync(logFile, 'a');
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', out, err] });
  closeSync(out);
  closeSync(err);
  const handle = { pid: child.pid, name };
  live.add(handle);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid, 'SIGKILL');
  }, timeoutMs);
  const started = Date.now();
  const code = await new Promise((resolve) => {
    child.once('exit', (c) => resolve(c));
    child.once('error', () => resolve(null));
  });
  clearTimeout(timer);
  killGroup(child.pid, 'SIGKILL');
  live.delete(handle);
  return { code, timedOut, ms: Date.now() - started };
}

/**
 * Polls until `probe()` resolves true (every `intervalMs`, each probe bounded by
 * its own timeout), the process exits (error with its log tail), or `timeoutMs`.
 */
export async function waitUntilReady(handle, probe, { timeoutMs = 60_000, intervalMs = 150 } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (handle.exited())
      throw new Error(
        `${handle.name} exited (code ${handle.exitCode()}) before it was ready:\n${tail(handle.logFile)}`,
      );
    if (await probe().catch(() => false)) return;
    await delay(intervalMs);
  }
  throw new Error(`${handle.name} not ready after ${timeoutMs} ms:\n${tail(handle.logFile)}`);
}

/** True once anything answers HTTP at `url` (any status: a 401 means listening too). */
export function answersHttp(url, init = {}) {
  return async () => {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer().catch(() => undefined);
    return true;
  };
}

export function tail(file, lines = 30) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** A probe for waitUntilReady: the MCP endpoint answers `tools/list` (with the bearer token, when one is given). */
export function answersMcp(url, auth) {
  return answersHttp(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(auth ? { authorization: `Bearer ${auth}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: {} }),
  });
}
