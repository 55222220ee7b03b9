/**
 * Preloaded into every Node process of a child run (`NODE_OPTIONS=--import=<this file>`, which Vitest's fork workers
 * inherit): each process writes its peak resident set size to `$RSS_PROBE_DIR/<pid>.json` — every 100 ms and at
 * exit, so a worker that is killed rather than exiting has still written a value within 100 ms of its peak.
 *
 * The peak is the kernel's own high-water mark (`VmHWM` of /proc/self/status), not a sample. Not
 * `process.resourceUsage().maxRSS`: Linux keeps ru_maxrss across fork + exec, so a fresh worker would report its
 * parent's peak. Elsewhere than Linux, maxRSS is the fallback.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** This process's peak RSS in KiB. */
export function peakRssKiB() {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]);
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS;
}

const dir = process.env.RSS_PROBE_DIR;
if (dir) {
  const write = () => {
    try {
      // Written aside, then renamed: a reader never sees a half-written file while this process still runs.
      const file = join(dir, `${process.pid}.json`);
      writeFileSync(
        `${file}.tmp`,
        JSON.stringify({ pid: process.pid, ppid: process.ppid, argv: process.argv.slice(1, 3), peakKiB: peakRssKiB() }),
      );
      renameSync(`${file}.tmp`, file);
    } catch {
      // the directory is gone: the parent has finished reading
    }
  };
  write();
  setInterval(write, 100).unref();
  process.on('exit', write);
}
