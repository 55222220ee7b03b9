/**
 * Something expensive made once per `vitest run` and shared by every test file, across worker processes: the packed
 * tarball (packed.ts) and the `--noCheck` build of src (built.ts).
 *
 * The global setup test/setup/shared-builds.ts creates a per-run directory and provides its path (`sharedRunDir`). The
 * first caller of a given `name` takes the lock `<dir>/<name>.lock` (an atomic `mkdir`, with its pid inside), makes the
 * thing into `<dir>`, and writes `<dir>/<name>.done` (its result: a path) — or, if it failed, `<dir>/<name>.error`
 * with the error. Every other caller, in any worker, waits for one of the two markers (bounded) and gets the same
 * result, or fails with the maker's error. The setup's teardown removes the directory.
 *
 * Under a config without that global setup (vitest.matrix.config.ts), each test file makes its own, in a private
 * directory `.vitest-adcp/private-<pid>-*`, removed when the process exits, or by the next fallback once it has gone.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { inject } from 'vitest';
import { alive } from './alive.js';

export const repoRoot = resolve(import.meta.dirname, '..', '..');

/** Results of this process, by name: a second caller in the same worker neither locks nor polls. */
const made = new Map<string, Promise<string>>();
let privateDir: string | undefined;

/**
 * The result of `make(dir)` for `name`, made once per test run (see above). `make` writes only under `dir` (shared by
 * every name: use paths of your own in it) and resolves to a path; callers must not write where it points.
 */
export function oncePerRun(
  name: string,
  make: (dir: string) => Promise<string>,
  options: { timeoutMs?: number } = {},
): Promise<string> {
  let result = made.get(name);
  if (!result) {
    result = acquire(name, make, options.timeoutMs ?? 300_000);
    made.set(name, result);
  }
  return result;
}

function runDir(): string {
  const shared = inject('sharedRunDir');
  if (shared) return shared;
  if (!privateDir) {
    const parent = join(repoRoot, '.vitest-adcp');
    mkdirSync(parent, { recursive: true });
    // Vitest may end a worker with a signal, before 'exit' handlers run: the dirs of processes gone go here.
    for (const name of readdirSync(parent)) {
      const pid = Number(/^private-(\d+)-/.exec(name)?.[1]);
      if (pid && !alive(pid)) rmSync(join(parent, name), { recursive: true, force: true });
    }
    const dir = mkdtempSync(join(parent, `private-${process.pid}-`));
    privateDir = dir;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return privateDir;
}

async function acquire(name: string, make: (dir: string) => Promise<string>, timeoutMs: number): Promise<string> {
  const dir = runDir();
  const lock = join(dir, `${name}.lock`);
  const done = join(dir, `${name}.done`);
  const failed = join(dir, `${name}.error`);
  let mine = false;
  try {
    mkdirSync(lock);
    mine = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (mine) {
    writeFileSync(join(lock, 'pid'), String(process.pid));
    try {
      const result = await make(dir);
      writeFileSync(done, result);
      return result;
    } catch (error) {
      writeFileSync(failed, error instanceof Error ? (error.stack ?? error.message) : String(error));
      throw error;
    }
  }
  const started = Date.now();
  for (;;) {
    if (existsSync(done)) return readFileSync(done, 'utf8');
    if (existsSync(failed))
      throw new Error(
        `${name}: made once per test run, by another worker, which failed:\n${readFileSync(failed, 'utf8')}`,
      );
    const owner = Number(readText(join(lock, 'pid')));
    if (owner && !alive(owner) && !existsSync(done) && !existsSync(failed)) {
      throw new Error(
        `${name}: the worker making it (pid ${owner}) exited before it finished (no ${done}, no ${failed})`,
      );
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        `${name}: waited ${Math.round(timeoutMs / 1000)} s for another worker${owner ? ` (pid ${owner})` : ''} to make it; neither ${done} nor ${failed} appeared`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Runs a command to completion; rejects with its output if it exits non-zero. */
export async function exec(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<string> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code: number | null = await new Promise((r, reject) => {
    child.on('error', reject);
    child.on('close', r);
  });
  if (code !== 0) throw new Error(`\`${[command, ...args].join(' ')}\` in ${options.cwd} exited ${code}:\n${output}`);
  return output;
}
