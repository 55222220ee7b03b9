import { statSync } from 'node:fs';

/**
 * The size of a storyboard file, 0 when it cannot be read: the run host's guess of how long a storyboard runs
 * (run-start.ts starts the largest first) and so, the other way round, of when its outcomes are ready (workers.ts).
 */
export function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
