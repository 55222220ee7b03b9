/**
 * What a role decided every later step of a run becomes (failed seeding, an unknown controller scenario, no request
 * signing): the first halt in run order decides, later ones change nothing. By the deciding step's index, not by when
 * its answer came: the seeds of one kind go out together (seeds-together.ts), and whichever answers first must not
 * decide.
 */
import type { SkipResult } from '../model/records.js';

export class RunHalt {
  private decided?: { skip: SkipResult; index: number };

  /** The halt of step `index`, if it is the first in run order so far. */
  decide(halt: SkipResult | undefined, index: number): void {
    if (halt && (!this.decided || index < this.decided.index)) this.decided = { skip: halt, index };
  }

  get skip(): SkipResult | undefined {
    return this.decided?.skip;
  }
}
