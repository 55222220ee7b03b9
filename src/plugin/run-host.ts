/**
 * The run host: the storyboard files of a run, run in the main process, several at once, as soon as the run starts.
 *
 * Why here: a storyboard waits on the agent nearly all the time, and Vitest gives a worker one test file at a time —
 * so two workers meant two storyboards in flight, and an agent across a network cost its latency times half the run's
 * requests. Storyboards in flight in one process cost a few MB each; a worker costs ~220 MB. So the main process runs
 * up to `concurrency` storyboards at once (in the run's file order; a file a worker is waiting for starts at once), and
 * a worker's step test reads its step's final outcome (adapter/hosted-run.ts: the protocol, and the fallback).
 *
 * Kept as without it: each storyboard is its own `StoryboardRun` (open-run.ts), forward, each step once; verdicts are
 * final when a test shows them; MCP sessions are shared only between runs one after another (transport/mcp.ts pool:
 * a session is taken by one run at a time). Not hosted — its worker runs it as before — is a file whose tests a filter
 * picks (`-t`, a line, a test id, tags: only the steps a filter wants, and those they need, may call the agent), and a
 * file that does not load (its module is its load failure).
 */
import { debuglog } from 'node:util';
import { serialize } from 'node:v8';
import type { TestSpecification } from 'vitest/node';
import type { RunHostConfig } from '../config.js';
import { storyboardFingerprint, type HostedSettle, type SettleRequest } from '../adapter/hosted-run.js';
import type { StoryboardRun } from '../engine/run.js';
import type { Storyboard } from '../model/storyboard.js';
import type { ControlAnswer, ControlRequest, ControlServer } from '../transport/control-server.js';
import { agentTurns } from '../plan/agent-windows.js';
import { AgentGate, RunTurns } from './agent-gate.js';

const debug = debuglog('vitest-adcp');

/** One storyboard file of a run. */
export interface HostedFile {
  file: string;
  /** Loads the storyboard and opens its run; undefined when it does not load (its worker reports that). */
  open: () => Promise<{ storyboard: Storyboard; run: StoryboardRun } | undefined>;
}

/** A job's run once opened, its steps taking their turns at the agent (agent-gate.ts). */
type Opened = { storyboard: Storyboard; fingerprint: string; run: StoryboardRun; turns: RunTurns } | undefined;

/** What a run's start may be given besides its files (RunHost.begin). */
export interface RunStart {
  /** The agent preflight: no run calls the agent before it has passed (default: passed). */
  ready?: Promise<void>;
  /** `agent.start`'s agent up: no run prepares before (default: up). */
  agentUp?: Promise<unknown>;
  /**
   * Once every file's job has ended, unless the run was cancelled: when each did (ms from the start; a file that does
   * not load ends at once).
   */
  finished?: (ends: ReadonlyMap<string, number>) => void;
}

/** A run's jobs as they end: when each did (ms from the run's start), for the next run's worker order (finish-times.ts). */
interface RunEnds {
  /** The run's number among this host's runs (watch mode starts several): a worker's count of ends is per run. */
  id: number;
  startedAt: number;
  /** In the order the jobs ended (a Map keeps it): what `/ended` tells the workers, too. */
  ends: Map<string, number>;
  /** Jobs not yet ended. */
  left: number;
  cancelled: boolean;
  finished?: (ends: ReadonlyMap<string, number>) => void;
}

interface Job extends HostedFile {
  state: 'queued' | 'running' | 'done';
  run: RunEnds;
  /** The run once opened and admitted: settled when the job starts (launch), awaited by the settles that came first. */
  opened: Promise<Opened>;
  start: (opened: Promise<Opened>) => void;
}

function job(file: HostedFile, run: RunEnds): Job {
  let start!: Job['start'];
  const opened = new Promise<Opened>((resolve) => (start = resolve));
  return { ...file, state: 'queued', run, opened, start };
}

export class RunHost {
  private jobs = new Map<string, Job>();
  private queue: Job[] = [];
  private running = 0;
  private concurrency = 1;
  /**
   * Whether the run's preflight passed (`true`), else its message: a run is opened before it ends, and calls the agent
   * only when it did.
   */
  private ready: Promise<true | string> = Promise.resolve(true);
  /** Whether the agent is up (`agent.start` has started it, or had nothing to start): a run prepares once it is. */
  private agentUp: Promise<boolean> = Promise.resolve(true);
  private cancelled = false;
  /** The current run's jobs as they end. */
  private runEnds: RunEnds | undefined;
  /** How many runs this host has begun: each one's number. */
  private runsBegun = 0;
  /** Steps of the storyboards in flight share the agent; a window that keeps per-caller state on it has it alone. */
  private readonly gate = new AgentGate();

  /** Set by `start`: the endpoint serves this host. */
  private control!: ControlServer;

  private constructor() {}

  static async start(): Promise<RunHost> {
    const { ControlServer } = await import('../transport/control-server.js');
    const host = new RunHost();
    host.control = await ControlServer.start((request) => host.serve(request));
    return host;
  }

  get config(): RunHostConfig {
    return { url: this.control.url, token: this.control.token };
  }

  /**
   * A run starts: its files, in the run's order. The runs of an earlier start (watch mode) are dropped from the
   * table — a worker of the new run never reads them — and finish on their own.
   */
  begin(
    files: readonly HostedFile[],
    concurrency: number,
    { ready = Promise.resolve(), agentUp = Promise.resolve(), finished }: RunStart = {},
  ): void {
    // A failed preflight stops the run where it is awaited (run-start.ts); here it only means: no run calls the agent,
    // and a step that asks is told why (a watch-mode re-run is not stopped: its steps fail with the preflight's line).
    this.ready = ready.then(
      () => true as const,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    // Nothing to prepare against while `agent.start` starts the agent: a tool list read then would be kept by the run.
    this.agentUp = agentUp.then(
      () => true,
      () => false,
    );
    this.cancelled = false;
    const runEnds: RunEnds = {
      id: ++this.runsBegun,
      startedAt: performance.now(),
      ends: new Map(),
      left: files.length,
      cancelled: false,
    };
    if (finished) runEnds.finished = finished;
    this.runEnds = runEnds;
    this.jobs = new Map(files.map((f) => [f.file, job(f, runEnds)]));
    this.queue = [...this.jobs.values()];
    this.concurrency = Math.max(1, Math.floor(concurrency));
    this.pump();
  }

  /**
   * The test run was cancelled (Vitest's cancel key, the bin's first SIGINT/SIGTERM): as in a worker, the steps under
   * way finish and no other starts — the host's runs are ahead of their tests, so they stop where they are, and the
   * queued ones never start.
   */
  cancel(): void {
    this.cancelled = true;
    if (this.runEnds) this.runEnds.cancelled = true;
    this.queue = [];
    for (const job of this.jobs.values()) if (job.state === 'running') void job.opened.then((o) => o?.run.stop());
  }

  /**
   * At Vitest's close: the endpoint, and the MCP sessions the runs left open for the next run (their sockets, the SSE
   * streams among them, would keep the process alive: Vitest waits its teardown timeout, then says something prevents
   * it from exiting). A run still in flight (a bail, a cancelled run) is closed without waiting for it.
   */
  async close(): Promise<void> {
    this.queue = [];
    for (const job of this.jobs.values())
      if (job.state === 'running') void job.opened.then((o) => o?.run.close()).catch(() => {});
    await this.control.close();
    // The MCP sessions the hosted runs left in this process's pool (open-run.ts shareSessions).
    await (await import('../transport/mcp.js')).workerSessions.close();
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) this.launch(this.queue.shift()!);
  }

  /**
   * A worker waits for this job: it starts now, beside the `concurrency` in flight — at most one more per worker, since
   * a worker waits on one file at a time —, or, with a concurrency of 1 (one storyboard at a time, `sequential`), it
   * goes first in the queue. The worker takes the files in the order their runs ended before (workers.ts finishFirst),
   * the host starts the longest first (plan/launch-order.ts): a file the worker wants that waits in the queue behind
   * those keeps the worker idle and the run's tail long.
   */
  private wanted(job: Job): void {
    if (job.state !== 'queued') return;
    if (this.concurrency > 1) {
      this.launch(job);
      return;
    }
    this.queue = [job, ...this.queue.filter((j) => j !== job)];
    this.pump();
  }

  private launch(job: Job): void {
    if (job.state !== 'queued') return;
    job.state = 'running';
    this.running++;
    this.queue = this.queue.filter((j) => j !== job);
    // Each step of it takes its turn at the agent (plan/agent-windows.ts): whoever drives the run — runAll below, or a
    // worker's settle — waits for the same turns.
    const opened = job
      .open()
      .then((o) => {
        if (!o) return undefined;
        const turns = new RunTurns(this.gate, agentTurns(o.run.planned()));
        o.run.takeTurns(turns);
        return { ...o, fingerprint: storyboardFingerprint(o.storyboard), turns };
      })
      .catch(() => undefined);
    job.start(opened);
    const ready = this.ready;
    const agentUp = this.agentUp;
    void opened
      .then(async (o) => {
        if (!o) return;
        let closed = false;
        try {
          // The session and the tool list while the preflight runs (no tool is called before it passed), once the
          // agent is up: `agent.start`'s agent may still be starting, or restarting after an edit (watch mode).
          void agentUp.then((up) => {
            if (up && !closed) void o.run.prepare();
          });
          if ((await ready) === true) await o.run.runAll();
        } finally {
          closed = true;
          await o.run.close().finally(() => o.turns.release());
        }
      })
      .catch(() => {})
      .finally(() => {
        job.state = 'done';
        ended(job);
        this.running--;
        this.pump();
        // NODE_DEBUG=vitest-adcp: what the agent's windows cost the run so far, each time the host has nothing in flight.
        if (debug.enabled && this.running === 0 && this.queue.length === 0)
          debug(
            'agent gate %s',
            JSON.stringify(this.gate.usage(), (key, value: unknown) =>
              key === 'ms' ? Math.round(value as number) : value,
            ),
          );
      });
  }

  /**
   * A file's tests are done (its module's close): its run's records — the agent's answers among them — are the worker's
   * now, and the host keeps nothing of it. A run still going on (a test failed its file early) is left to end.
   */
  private async release(body: unknown): Promise<ControlAnswer> {
    const file = (body as { file?: unknown } | undefined)?.file;
    const job = typeof file === 'string' ? this.jobs.get(file) : undefined;
    if (job?.state === 'done') this.jobs.delete(job.file);
    return { status: 200, body: { released: job?.state === 'done' } };
  }

  /**
   * The files whose jobs have ended, in the order they ended, from the `from`-th on (how many the asking worker has
   * been told of), or from the first when `run` is not this run's number (the worker's first ask, a watch-mode re-run):
   * the worker shows those of its files next (vitest/worker-order.ts). None with a concurrency of 1: the files then run
   * one at a time in the worker's own order (`sequential`: the reference's), which nothing reorders.
   */
  private endedSince(body: unknown): ControlAnswer {
    const ask = body as { run?: unknown; from?: unknown } | undefined;
    const run = this.runEnds;
    if (!run || this.concurrency === 1) return { status: 200, body: { run: run?.id ?? 0, files: [] } };
    const from = ask?.run === run.id && typeof ask.from === 'number' && Number.isInteger(ask.from) ? ask.from : 0;
    return { status: 200, body: { run: run.id, files: [...run.ends.keys()].slice(Math.max(0, from)) } };
  }

  private async serve({ method, url, body }: ControlRequest): Promise<ControlAnswer> {
    if (method === 'POST' && url.pathname === '/release') return this.release(body);
    if (method === 'POST' && url.pathname === '/ended') return this.endedSince(body);
    if (method !== 'POST' || url.pathname !== '/settle') return { status: 404, body: { error: 'not found' } };
    const ask = body as Partial<SettleRequest> | undefined;
    const job = typeof ask?.file === 'string' ? this.jobs.get(ask.file) : undefined;
    if (!job) return { status: 404, body: { hosted: false } };
    const CANCELLED = { status: 410, body: { error: 'the run was cancelled before this step ran' } };
    // Cancelled: nothing starts any more, a worker's wish included (its test is being cancelled too).
    if (this.cancelled && job.state === 'queued') return CANCELLED;
    this.wanted(job);
    const opened = await job.opened;
    if (!opened) return { status: 404, body: { hosted: false } };
    if (ask!.fingerprint !== opened.fingerprint)
      return { status: 409, body: { error: 'the storyboard file changed since its module was compiled' } };
    const phaseId = String(ask!.phase_id);
    const stepId = String(ask!.step_id);
    // No step calls the agent before the preflight passed (a failed one stops the run, and this ask with it; in a
    // watch-mode re-run the step fails with the preflight's own line).
    const ready = await this.ready;
    if (ready !== true)
      return { status: 410, body: { error: 'the run did not start: the agent preflight failed', preflight: ready } };
    const outcome = await opened.run.settle(phaseId, stepId).catch((error: unknown) => {
      if (this.cancelled) return undefined;
      throw error;
    });
    if (!outcome) return CANCELLED;
    const have = new Set(Array.isArray(ask!.have) ? ask!.have.map(String) : []);
    // A run that has gone through answers for all its steps at once: the worker asks no more for this file. One
    // request a step (500 over a 58-storyboard run) kept the main process busy serving them after the agent's last
    // answer, the tail of the run.
    const all = opened.run.allOutcomes();
    const settled: HostedSettle = {
      outcome,
      secrets: opened.run.secrets(),
      before: opened.run
        .ranBefore(phaseId, stepId)
        .filter((o) => !have.has(`${o.result.phase_id}/${o.result.step_id}`)),
      ...(all ? { all } : {}),
    };
    // Not JSON: a record holds the agent's answer once and refers to it from each check, and JSON would write it out
    // for every check (80 failing checks on an 8 MB answer: 640 MB). node:v8 keeps a shared value once, both ways.
    return { status: 200, bytes: serialize(cutDeep(settled)) };
  }
}

/** A job has ended: its time kept in its run's ends, and the run's `finished` told once the last one has. */
function ended(job: Job): void {
  const run = job.run;
  run.ends.set(job.file, performance.now() - run.startedAt);
  if (--run.left === 0 && !run.cancelled) run.finished?.(run.ends);
}

/** Whether a filter picks tests in this file (then its worker runs it, settling only what the picked steps need). */
export function filtered(spec: TestSpecification, testNamePattern: RegExp | undefined): boolean {
  return Boolean(
    testNamePattern ||
    spec.testNamePattern ||
    spec.testLines?.length ||
    spec.testIds?.length ||
    (spec as { testTagsFilter?: string[] }).testTagsFilter?.length,
  );
}

/**
 * How deep an outcome crosses to the worker. node:v8 serialises recursively, and an agent's answer may nest thousands
 * of levels (fixtures/hostile: 3,500): that overflowed the stack. Records and reports cut at 64 levels from the
 * payload (model/redact.ts), which the worker does as before; below this depth nothing of it can show.
 */
const MAX_CROSSING_DEPTH = 256;
const CUT = `[cut: nested deeper than ${MAX_CROSSING_DEPTH} levels]`;

/**
 * `value` with every part deeper than MAX_CROSSING_DEPTH replaced by a note. Copies only the objects on the way to
 * such a part, once each: the rest, and what several checks share (an 8 MB answer), stays the same object.
 */
function cutDeep<T>(value: T): T {
  const done = new Map<object, unknown>();
  const visit = (node: unknown, depth: number): unknown => {
    if (node === null || typeof node !== 'object') return node;
    if (depth >= MAX_CROSSING_DEPTH) return CUT;
    if (done.has(node)) return done.get(node);
    done.set(node, node);
    let copy: Record<string, unknown> | unknown[] | undefined;
    for (const [key, inner] of Object.entries(node)) {
      const cut = visit(inner, depth + 1);
      if (cut === inner) continue;
      copy ??= Array.isArray(node) ? [...node] : { ...node };
      // defineProperty: an agent's own key "__proto__" stays a key, as in the record.
      Object.defineProperty(copy, key, { value: cut, enumerable: true, writable: true, configurable: true });
    }
    if (copy) done.set(node, copy);
    return copy ?? node;
  };
  return visit(value, 0) as T;
}
