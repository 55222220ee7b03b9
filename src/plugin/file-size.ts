import { statSync } from 'node:fs';

/**
 * The size of a storyboard file, 0 when it cannot be read: a guess of when its outcomes are ready when no run has ended
 * it before (workers.ts, smallest first), and the run host's tie-break between storyboards of as many steps
 * (plan/launch-order.ts).
 */
export function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
