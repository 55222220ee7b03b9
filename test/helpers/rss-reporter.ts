/**
 * A reporter for the peak-memory test: writes the main process's peak RSS (VmHWM) when the run starts — Vitest, Vite
 * and the config loaded, before any test — and when it ends, after every record reached the reporters, to
 * `$RSS_PROBE_DIR/main.json`. What the run itself added to the main process is the difference.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Reporter } from 'vitest/node';

/** This process's peak RSS in KiB: VmHWM (as rss-probe.mjs), else maxRSS. */
function peakRssKiB(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]);
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS;
}

export default class RssReporter implements Reporter {
  private atStart = 0;

  onTestRunStart(): void {
    this.atStart = peakRssKiB();
  }

  onTestRunEnd(): void {
    const dir = process.env.RSS_PROBE_DIR;
    if (dir)
      writeFileSync(
        join(dir, 'main.json'),
        JSON.stringify({ pid: process.pid, atStartKiB: this.atStart, atEndKiB: peakRssKiB() }),
      );
  }
}
