/**
 * A storyboard run the plugin's main process drives (plugin/run-host.ts), seen from a test worker.
 *
 * Why: a storyboard spends nearly all its time waiting on the agent, and a Vitest worker runs one test file at a time,
 * so two workers meant two storyboards in flight. The main process runs every storyboard file of the run at once (up
 * to the `concurrency` option) as soon as the run starts; a worker's step test then only reads its step's final
 * outcome from there. The step protocol (step-session.ts) is unchanged: it asks this object what it would ask the
 * engine's `StoryboardRun`.
 *
 *   POST <url>/settle  { file, fingerprint, phase_id, step_id, have: ["phase/step", …] }
 *     200 { outcome, secrets, before, all? }  (node:v8 serialised) the step's final outcome; `before`: earlier
 *                                        steps that ran, minus `have`; `all`, once the host's run has gone through:
 *                                        every step's outcome in run order, from which the worker answers the rest
 *     404 { hosted: false }              the host does not run this file (a filtered run, a file it could not load):
 *                                        the worker runs it itself, as without a host
 *     409 { error }                      the host's storyboard is not the worker's (fingerprint): the worker runs it
 *     410 { error, preflight? }          the run was cancelled, or did not start: `preflight` is the failed preflight's
 *                                        one line (a watch-mode re-run goes on after it), which the step fails with
 *   no answer at all (the host cannot be reached): the step fails, and the worker never runs the file itself — the
 *   host may have started it, and a step must not reach the agent twice
 *
 *   POST <url>/release { file }          the file's tests are done: the host drops its run's records
 *   POST <url>/ended { run, from }       the files whose runs have ended, in the order they ended, from the
 *     200 { run, files }                 `from`-th of run number `run` on (from the first for another run): the
 *                                        worker shows those next (vitest/worker-order.ts)
 *
 * The fingerprint is the storyboard's JSON: both sides load the same file with the same loader, and a module compiled
 * before an edit must not read the outcomes of the edited file.
 */
import { deserialize } from 'node:v8';
import { storyboardDigest } from '../cache/stored-storyboards.js';
import { ConfigurationError } from '../model/errors.js';
import { controlRequest } from '../transport/control-server.js';
import type { RunHostConfig } from '../config.js';
import type { StoryboardRun } from '../engine/run.js';
import type { StepOutcome } from '../model/records.js';
import type { Storyboard } from '../model/storyboard.js';
import type { SettlingRun } from './step-session.js';

/** The body of a 200 answer of `/settle`. */
export interface HostedSettle {
  outcome: StepOutcome;
  /** The run's secrets (step-session.ts scrubs rendered text with them). */
  secrets: string[];
  /** Steps before this one that ran, each once, and that the worker did not settle itself (`have`). */
  before: StepOutcome[];
  /**
   * When the host's run has gone through: every step's final outcome, in run order. The worker answers its later
   * steps from these (and `secrets`) without asking again.
   */
  all?: StepOutcome[];
}

/** A settle request's body. */
export interface SettleRequest {
  file: string;
  fingerprint: string;
  phase_id: string;
  step_id: string;
  have: string[];
}

/** What identifies a storyboard's content to both sides: the digest a test module names it by when it is stored. */
export function storyboardFingerprint(storyboard: Storyboard): string {
  return storyboardDigest(JSON.stringify(storyboard));
}

export class HostedRun implements SettlingRun {
  private localRun: StoryboardRun | undefined;
  /** Until the host says it does not run this file. */
  private hosted = true;
  private last: HostedSettle | undefined;
  private readonly settled: string[] = [];
  private readonly fingerprint: string;
  private bound: number | undefined;

  constructor(
    private readonly host: RunHostConfig,
    private readonly storyboard: Storyboard,
    /** The engine's run in this worker: its steps when the host does not run the file. */
    private readonly openLocal: () => StoryboardRun,
    /** The bound of a settle (open-run.ts `settleBoundOf`): what a local run would say, without opening one. */
    private readonly settleBound: () => number,
  ) {
    this.fingerprint = storyboardFingerprint(storyboard);
  }

  private local(): StoryboardRun {
    return (this.localRun ??= this.openLocal());
  }

  async settle(phaseId: string, stepId: string): Promise<StepOutcome> {
    const known = this.hosted ? this.indexInAll(phaseId, stepId) : -1;
    if (known !== -1) {
      this.settled.push(`${phaseId}/${stepId}`);
      return this.last!.all![known]!;
    }
    if (this.hosted) {
      const answer = await this.ask(phaseId, stepId);
      if (answer) {
        this.last = answer;
        this.settled.push(`${phaseId}/${stepId}`);
        return answer.outcome;
      }
      this.hosted = false;
    }
    return this.local().settle(phaseId, stepId);
  }

  secrets(): string[] {
    return this.hosted && this.last ? this.last.secrets : this.local().secrets();
  }

  ranBefore(
    phaseId: string,
    stepId: string,
    wanted: (phaseId: string, stepId: string) => boolean = () => true,
  ): StepOutcome[] {
    if (!this.hosted || !this.last) return this.local().ranBefore(phaseId, stepId, wanted);
    const at = this.indexInAll(phaseId, stepId);
    // From the whole run: the steps before this one that this worker has not settled — what the host's `before`
    // would have been had it been asked.
    const before =
      at === -1
        ? this.last.before
        : this.last.all!.slice(0, at).filter((o) => !this.settled.includes(`${o.result.phase_id}/${o.result.step_id}`));
    return before.filter((o) => wanted(o.result.phase_id, o.result.step_id));
  }

  /** Where a step is in the host's whole run (`all`), -1 when the host has not sent it or the step is not in it. */
  private indexInAll(phaseId: string, stepId: string): number {
    return this.last?.all?.findIndex((o) => o.result.phase_id === phaseId && o.result.step_id === stepId) ?? -1;
  }

  /** Asked for each step test's timeout, at collection: computed once, and no local run opened for it. */
  worstCaseMs(): number {
    return (this.bound ??= this.settleBound());
  }

  /** The test run was cancelled: this worker's own run, if it has one (the host's runs hear the cancel themselves). */
  stop(): void {
    this.localRun?.stop();
  }

  /** The file's tests are done: the host lets its run's records go (and this worker's own run, if it had one). */
  async close(): Promise<void> {
    await this.localRun?.close();
    if (!this.hosted || this.settled.length === 0) return;
    await this.post('/release', { file: this.storyboard.file }).catch(() => {});
  }

  /** No timeout of its own: a settle is bounded by the engine's bounds, and the step test's by Vitest's. */
  private post(path: string, body: unknown): Promise<{ status: number; bytes: Buffer }> {
    return controlRequest(this.host, 'POST', path, { body });
  }

  /** The host's outcome, or undefined when the worker is to run the file itself. */
  private async ask(phaseId: string, stepId: string): Promise<HostedSettle | undefined> {
    const body: SettleRequest = {
      file: this.storyboard.file,
      fingerprint: this.fingerprint,
      phase_id: phaseId,
      step_id: stepId,
      have: this.settled,
    };
    let answer: { status: number; bytes: Buffer };
    try {
      answer = await this.post('/settle', body);
    } catch (error) {
      throw unreachableHost(error);
    }
    if (answer.status === 200) return deserialize(answer.bytes) as HostedSettle;
    if ((answer.status === 404 || answer.status === 409) && this.settled.length === 0) return undefined;
    const preflight = answer.status === 410 ? preflightLine(answer.bytes) : undefined;
    if (preflight) throw new ConfigurationError(preflight);
    throw new Error(
      `vitest-adcp's run host answered ${answer.status} for step ${phaseId}/${stepId}: ${answer.bytes.toString('utf8').slice(0, 500)}`,
    );
  }
}

/** The failed preflight's line in a 410 answer: what the step fails with, said as the run's start says it. */
function preflightLine(bytes: Buffer): string | undefined {
  try {
    const preflight = (JSON.parse(bytes.toString('utf8')) as { preflight?: unknown }).preflight;
    return typeof preflight === 'string' ? preflight : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The host could not be asked. The step fails, and the worker never runs the file itself: the host runs its files
 * ahead of their tests, so it may already have sent this storyboard's steps to the agent — running them here would
 * send them twice (a second create_media_buy, a second sync), and grade the agent on state the first run changed.
 */
function unreachableHost(error: unknown): Error {
  return new Error(
    `vitest-adcp's run host (the Vitest main process) cannot be reached: ${error instanceof Error ? error.message : String(error)}. The step is not run here: the host may already have sent this storyboard's steps to the agent, and running them again would call the agent twice`,
    { cause: error },
  );
}
