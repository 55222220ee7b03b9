/**
 * The worker shows next the files whose runs the run host has already ended.
 *
 * Vitest hands the storyboard project's worker all its files at once, in the sequencer's order (plugin/workers.ts
 * finishFirst: the order the last run ended them in; on a first run, smallest first), and the worker shows one file at
 * a time, each step waiting for the host's outcome (adapter/hosted-run.ts). Where that order guesses wrong, and on a
 * first run it has nothing to guess from, the worker waits on a file whose run is still going while files whose runs
 * have ended wait behind it, and shows them after the agent's last answer: a 3.1.15 first run at 50 ms of latency had
 * half its 90 files still to show when the host ended its last run (0.7–1.0 s of tail, against 0.1 s in a second run).
 * So at each file's end the worker asks the host which runs have ended since it last asked (`POST /ended`), and moves
 * those of its remaining files ahead of the others, in the order they ended; the others keep their order.
 *
 * How: Vitest's worker runs the files of its task one after another, iterating the task's own list
 * (`__vitest_worker__.ctx.files`: Vitest 3.2 to 4.1 walk it with `for … of`), so a file put next in that list is the
 * next one it runs. That list is Vitest's internal, not an API: where it is not there, or not the shape read here,
 * nothing is reordered and the files run in the sequencer's order, as before. Only the files after the current one
 * move; none is added or dropped.
 */
import { controlRequest, type ControlEndpoint } from '../transport/control-server.js';

/** How long a file's end waits for the host's answer before leaving the order as it is (a loopback request). */
const ASK_TIMEOUT_MS = 2_000;

/** The ended runs this worker has been told of: the host's run number, and each file with its place in the end order. */
let told: { run: number; ends: Map<string, number> } = { run: 0, ends: new Map() };

/** A file of the worker's list: Vitest's file specification, of which only the path is read. */
interface WorkerFile {
  filepath: string;
}

/** What is read of Vitest's worker state (`globalThis.__vitest_worker__`): the current file, and the task's files. */
export interface WorkerState {
  filepath?: unknown;
  ctx?: { files?: unknown };
}

/** Vitest's state of this worker, if this is one. */
const vitestWorker = (): WorkerState | undefined =>
  (globalThis as { __vitest_worker__?: WorkerState }).__vitest_worker__;

/**
 * At a file's end (its `afterAll`): the worker's remaining files reordered, those whose runs have ended first. Never
 * throws: a host that cannot be asked, or a worker list not as expected, leaves the order as it was.
 */
export async function showEndedNext(
  host: ControlEndpoint,
  worker: WorkerState | undefined = vitestWorker(),
): Promise<void> {
  const files = workerFiles(worker);
  // Nothing to reorder with one file or none left.
  if (!files || files.list.length - files.at - 1 < 2) return;
  const ended = await endedSinceLastAsked(host);
  if (!ended) return;
  const rest = files.list.slice(files.at + 1);
  const reordered = endedFirst(rest, ended);
  if (reordered !== rest) files.list.splice(files.at + 1, rest.length, ...reordered);
}

/**
 * `rest` with the files `ended` ranks ahead of the others, in rank order (the order their runs ended), the others
 * after them in their own order; `rest` itself when none has ended.
 */
export function endedFirst<T extends WorkerFile>(rest: readonly T[], ended: ReadonlyMap<string, number>): readonly T[] {
  const ahead = rest.filter((file) => ended.has(file.filepath));
  if (ahead.length === 0) return rest;
  ahead.sort((a, b) => ended.get(a.filepath)! - ended.get(b.filepath)!);
  return [...ahead, ...rest.filter((file) => !ended.has(file.filepath))];
}

/** The worker's list of files and the current file's place in it; undefined when it is not as expected. */
function workerFiles(worker: WorkerState | undefined): { list: WorkerFile[]; at: number } | undefined {
  const list = worker?.ctx?.files;
  const current = worker?.filepath;
  if (!Array.isArray(list) || typeof current !== 'string') return undefined;
  if (!list.every((file) => typeof (file as Partial<WorkerFile> | null)?.filepath === 'string')) return undefined;
  const at = (list as WorkerFile[]).findIndex((file) => file.filepath === current);
  return at === -1 ? undefined : { list: list as WorkerFile[], at };
}

/** Every ended run this worker knows of, after asking the host for those since the last ask; undefined on failure. */
async function endedSinceLastAsked(host: ControlEndpoint): Promise<ReadonlyMap<string, number> | undefined> {
  let answer: unknown;
  try {
    const { status, bytes } = await controlRequest(host, 'POST', '/ended', {
      body: { run: told.run, from: told.ends.size },
      timeoutMs: ASK_TIMEOUT_MS,
    });
    if (status !== 200) return undefined;
    answer = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  const { run, files } = (answer ?? {}) as { run?: unknown; files?: unknown };
  if (typeof run !== 'number' || !Array.isArray(files) || !files.every((f) => typeof f === 'string')) return undefined;
  // Another run (a watch-mode re-run): its ends are counted from its first.
  if (run !== told.run) told = { run, ends: new Map() };
  for (const file of files as string[]) if (!told.ends.has(file)) told.ends.set(file, told.ends.size);
  return told.ends;
}
