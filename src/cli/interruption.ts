/** SIGINT/SIGTERM during a bin run: the run cancelled, its reports still written, the exit status a shell expects. */
import type { Reporter } from 'vitest/node';

/** The exit status of a run ended by a signal, as a shell reports it: 128 + the signal's number. */
const SIGNAL_EXIT: Record<'SIGINT' | 'SIGTERM', number> = { SIGINT: 130, SIGTERM: 143 };

/**
 * SIGINT/SIGTERM during a run. Vitest's own handlers exit the process at once, so the reporters never end the run and
 * no report is written: they are replaced, as soon as Vitest exists (its \`configureVitest\` hook), by these. The first
 * signal cancels the run the way Vitest's own cancel key does (\`cancelCurrentRun\`: the steps under way have their
 * calls to the agent aborted, their records say cancelled, the rest are not run) and the run ends normally — every reporter's end, the contract report with what ran — with
 * 128 + the signal's number; a second signal exits at once. Before Vitest exists (the capability check), a signal
 * exits at once: nothing ran.
 */
export class Interruption {
  /** Set by the first signal: the status the run exits with. */
  exitCode: number | undefined;
  private vitest: { cancelCurrentRun(reason: never): Promise<void> } | undefined;
  private readonly handler = (signal: NodeJS.Signals) => this.onSignal(signal);
  private readonly theirs = new Set<(...args: unknown[]) => void>();

  constructor() {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      for (const listener of process.listeners(signal)) this.theirs.add(listener as (...args: unknown[]) => void);
      process.on(signal, this.handler);
    }
  }

  /** The plugin that hands us the run's Vitest and takes Vitest's own signal handlers away. */
  plugin(): {
    name: string;
    configureVitest(context: { vitest: { cancelCurrentRun(reason: never): Promise<void> } }): void;
  } {
    return {
      name: 'vitest-adcp:interruption',
      configureVitest: ({ vitest }) => {
        this.vitest ??= vitest;
        for (const signal of ['SIGINT', 'SIGTERM'] as const) {
          for (const listener of process.listeners(signal)) {
            if (listener !== this.handler && !this.theirs.has(listener as (...args: unknown[]) => void))
              process.off(signal, listener as (...args: unknown[]) => void);
          }
        }
      },
    };
  }

  /** Whether the run has started its test files (Vitest's first onTestModuleQueued). */
  private filesStarted = false;

  /**
   * The reporter that tells us when the run's files start. A cancel before that — during the run's start, while the
   * storyboard project's preflight calls the agent — is one Vitest drops (runFiles clears `isCancelling` before it
   * starts the pool), so it is made again as the first file is queued: every step is then not run, and reported so.
   */
  reporter(): Reporter {
    return {
      onTestModuleQueued: () => {
        if (this.filesStarted) return;
        this.filesStarted = true;
        if (this.exitCode !== undefined) void this.vitest?.cancelCurrentRun('keyboard-input' as never).catch(() => {});
      },
    };
  }

  private onSignal(signal: NodeJS.Signals): void {
    const code = SIGNAL_EXIT[signal as keyof typeof SIGNAL_EXIT] ?? 1;
    if (this.exitCode !== undefined || !this.vitest) {
      // A second signal, or one before the run: at once.
      process.exit(this.exitCode ?? code);
    }
    this.exitCode = code;
    process.exitCode = code;
    console.error(
      `vitest-adcp: ${signal}: cancelling the run (the calls under way are aborted, the rest are not run); the report is still written. Send it again to exit at once.`,
    );
    void this.vitest.cancelCurrentRun('keyboard-input' as never).catch(() => {});
  }

  /**
   * After the run. Not interrupted: a signal is Node's again (it ends the process). Interrupted: the handler stays, so
   * a second signal still exits at once while Vitest closes.
   */
  stopListening(): void {
    if (this.exitCode === undefined)
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, this.handler);
  }
}
