/**
 * The agent under test as a child process of the run (agent-start.ts decides when): started in a process group of its
 * own, its output captured, and stopped with its whole group — a shell command's children (`npm run dev` → node)
 * included, which a kill of the shell alone would orphan.
 *
 * The group is also Ctrl-C's safety: a terminal sends SIGINT to its foreground group, which the agent is not in, so
 * it never dies half-way through a run's cancel; the run takes it down itself (`stop`), and on any exit of the run's
 * process — a crash, a second Ctrl-C, Vitest's own signal handler — the `exit` handler does (`stopNow`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { OutputTail } from './output-tail.js';

export interface AgentCommand {
  /** A string runs through the shell (`npm run dev -- --port 4100`); an array is the argv, run without one. */
  command: string | readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** How the process ended: its exit code, or the signal that ended it. */
export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How long the agent has to stop on SIGTERM before its group is sent SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** At the run's exit (nothing can be awaited there), how long the process waits for the group after SIGTERM. */
const EXIT_GRACE_MS = 1_000;

export class AgentProcess {
  readonly output = new OutputTail();
  /** Settles when the process (the group's leader) has exited. */
  readonly exited: Promise<AgentExit>;
  exit: AgentExit | undefined;
  private readonly child: ChildProcess;
  private readonly onExit = () => this.stopNow();

  constructor(command: AgentCommand) {
    const argv = typeof command.command === 'string' ? undefined : command.command;
    const options = {
      cwd: command.cwd,
      env: command.env,
      // Its own process group (pid = pgid): the whole group is signalled on stop.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
    };
    this.child = argv
      ? spawn(argv[0]!, argv.slice(1), options)
      : spawn(command.command as string, { ...options, shell: true });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      stream?.on('data', (chunk: Buffer) => this.output.append(chunk));
      // The run's end is not held by the agent's pipes; `stop` (or the exit handler) ends it.
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    }
    this.child.unref();
    this.exited = new Promise((resolve) => {
      this.child.once('error', (error) => {
        // No process at all (ENOENT for an argv's program): said as its output, and as an exit with no code.
        this.output.append(`${error.message}\n`);
        this.exit ??= { code: null, signal: null };
        resolve(this.exit);
      });
      this.child.once('exit', (code, signal) => {
        this.exit ??= { code, signal };
        resolve(this.exit);
      });
    });
    process.once('exit', this.onExit);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * SIGTERM to the whole group, then SIGKILL when any of it is still there after the grace period. Resolves once
   * nothing of the group is left (or the SIGKILL was sent and a moment has passed).
   */
  async stop(graceMs: number = STOP_GRACE_MS): Promise<void> {
    process.off('exit', this.onExit);
    if (!this.signalGroup('SIGTERM')) return;
    if (await this.groupGone(graceMs)) return;
    this.signalGroup('SIGKILL');
    await this.groupGone(2_000);
  }

  /** The last resort at the run's exit: nothing can be awaited, so SIGTERM, a short wait, then SIGKILL. */
  private stopNow(): void {
    if (!this.signalGroup('SIGTERM')) return;
    const until = Date.now() + EXIT_GRACE_MS;
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    while (this.groupAlive() && Date.now() < until) Atomics.wait(sleeper, 0, 0, 50);
    if (this.groupAlive()) this.signalGroup('SIGKILL');
  }

  /** Sends `signal` to the group; false when there is no group left to signal. */
  private signalGroup(signal: NodeJS.Signals): boolean {
    const pid = this.child.pid;
    if (pid === undefined) return false;
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  private groupAlive(): boolean {
    return this.signalGroup(0 as unknown as NodeJS.Signals);
  }

  private async groupGone(withinMs: number): Promise<boolean> {
    const until = Date.now() + withinMs;
    while (this.groupAlive()) {
      if (Date.now() >= until) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return true;
  }
}
