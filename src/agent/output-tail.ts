/**
 * The last part of a started agent's output (agent-process.ts), kept in memory: what the run's one-line failure quotes
 * and what `<report>.agent.log` holds. Bounded, because an agent that logs every request would otherwise grow the run's
 * memory for as long as the run lasts.
 */

/** How much output is kept: the newest bytes, enough for the log of a run's requests without growing unbounded. */
const DEFAULT_LIMIT_BYTES = 1024 * 1024;

export class OutputTail {
  private chunks: string[] = [];
  private size = 0;
  /** Whether older output was dropped to stay within the limit (the log then says so at its top). */
  private dropped = false;

  constructor(private readonly limitBytes: number = DEFAULT_LIMIT_BYTES) {}

  append(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.length === 0) return;
    this.chunks.push(text);
    this.size += text.length;
    while (this.size > this.limitBytes && this.chunks.length > 1) {
      this.size -= this.chunks.shift()!.length;
      this.dropped = true;
    }
    if (this.size > this.limitBytes) {
      // One chunk over the limit on its own: its end is what matters.
      this.chunks[0] = this.chunks[0]!.slice(this.size - this.limitBytes);
      this.size = this.limitBytes;
      this.dropped = true;
    }
  }

  /** Everything kept, with a note at the top when older output was dropped. */
  text(): string {
    const kept = this.chunks.join('');
    return this.dropped ? `[older output dropped: the last ${this.limitBytes} characters follow]\n${kept}` : kept;
  }

  /** The last `n` lines that are not blank, oldest first. */
  lastLines(n: number): string[] {
    const lines = this.chunks.join('').split(/\r?\n/);
    return lines.filter((line) => line.trim() !== '').slice(-n);
  }
}
