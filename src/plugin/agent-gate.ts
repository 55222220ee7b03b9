/**
 * The run host's admission to the agent: storyboards in flight share it, and one that needs it to itself
 * (plan/exclusive-agent.ts, or a run while it seeds) is admitted alone — once the runs admitted before it have ended,
 * and before any that asked after it. First come, first admitted: a shared run behind a waiting exclusive one waits
 * too, so neither kind starves the other.
 */

/** A run's admission: `share` turns an exclusive one shared (its seeding done), `leave` ends it. */
export interface Turn {
  share(): void;
  leave(): void;
}

export class AgentGate {
  private shared = 0;
  private alone = false;
  private readonly waiting: { exclusive: boolean; admit: () => void }[] = [];

  /** Resolves when the run may call the agent, with its turn. */
  enter(exclusive: boolean): Promise<Turn> {
    return new Promise((resolve) => {
      let alone = exclusive;
      let left = false;
      const turn: Turn = {
        share: () => {
          if (!alone || left) return;
          alone = false;
          this.alone = false;
          this.shared++;
          this.admitWaiting();
        },
        leave: () => {
          if (left) return;
          left = true;
          if (alone) this.alone = false;
          else this.shared--;
          this.admitWaiting();
        },
      };
      this.waiting.push({ exclusive, admit: () => resolve(turn) });
      this.admitWaiting();
    });
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && !this.alone) {
      const next = this.waiting[0]!;
      if (next.exclusive && this.shared > 0) return;
      this.waiting.shift();
      if (next.exclusive) this.alone = true;
      else this.shared++;
      next.admit();
    }
  }
}
