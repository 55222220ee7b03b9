/**
 * When each storyboard's run ended in the runs before, for the order a worker takes its files in (workers.ts
 * finishFirst).
 *
 * A worker takes one file at a time and waits for each of its steps' outcomes from the run host (run-host.ts), which
 * runs the storyboards with windows and the most steps first, 32 at once. Given its files smallest first, a 3.1.15
 * worker waited on files whose runs ended late while others were ready: 41 of 90 runs had ended 3 s into a 6.5 s run
 * (50 ms of latency), the worker had shown 7 files, and 55 were still to show when the host's last run ended — 1.3 s of
 * tail in which only the worker worked. When a run ends depends on the agent more than on the file: which tools it
 * advertises (a step of any other task is skipped at once), the seeding windows all storyboards share, how fast it
 * answers. Orders from the plan did no better than by size (the host's launch order, worse: the longest runs come
 * first and end last; the end times of a simulation of the host's slots, by planned steps or by steps of advertised
 * tasks, worse too). The last run's end times are the best guess of the next run's.
 *
 * Kept in the cache directory (`cacheDir`) as one entry authenticated like the others (cache/disk-cache.ts): one that
 * is planted, edited or unreadable is not read — and could only have reordered the worker's files. Files of a run
 * replace their earlier times; the entry keeps the latest `MAX_FILES`.
 */
import { DiskCache } from '../cache/disk-cache.js';

/** The most files the entry keeps (the latest recorded): a corpus selection is ~90, every storyboard of one ~150. */
export const MAX_FILES = 2000;

/** An entry: `[file, ms]` pairs, oldest first; `ms` from the start of its run to the end of the file's. */
type Entry = [string, number][];

const isEntry = (value: unknown): value is Entry =>
  Array.isArray(value) &&
  value.length <= MAX_FILES &&
  value.every(
    (pair) =>
      Array.isArray(pair) &&
      pair.length === 2 &&
      typeof pair[0] === 'string' &&
      typeof pair[1] === 'number' &&
      Number.isFinite(pair[1]),
  );

export class FinishTimes {
  private times: Map<string, number> | undefined;
  private readonly key: string | undefined;

  /** `disk`: where the times are kept; undefined (`cacheDir: false`), only in memory. */
  constructor(private readonly disk: DiskCache | undefined) {
    this.key = disk?.key('finish-times');
  }

  /** The times kept in `cacheDir` (undefined: `cacheDir: false`, in memory only). */
  static in(cacheDir: string | undefined): FinishTimes {
    return new FinishTimes(
      cacheDir === undefined ? undefined : new DiskCache(cacheDir, 'runs', '.json', ['vitest-adcp-finish-times-v1']),
    );
  }

  /** When `file`'s run ended in the latest run that ran it (ms from that run's start), if one did. */
  get(file: string): number | undefined {
    return this.loaded().get(file);
  }

  /** A run's end times (each of its files that ran to its end), kept over the earlier ones of the same files. */
  record(run: ReadonlyMap<string, number>): void {
    if (run.size === 0) return;
    const times = this.loaded();
    for (const [file, ms] of run) {
      times.delete(file);
      times.set(file, ms);
    }
    for (const file of times.keys()) {
      if (times.size <= MAX_FILES) break;
      times.delete(file);
    }
    if (this.disk) this.disk.write(this.key!, JSON.stringify([...times]));
  }

  private loaded(): Map<string, number> {
    this.times ??= new Map(this.disk ? (this.disk.readJson(this.key!, isEntry) ?? []) : []);
    return this.times;
  }
}
