/** How the engine runs command handlers: in the order they were sent, except the ones that must act at once. */
export interface CommandOrder {
  /**
   * Runs `work` once every ordered command sent before it has been handled; `urgent` work
   * (interrupt, permission-response: a turn or a waiting command depends on it) starts at once.
   * With nothing ahead, ordered work also starts at once, before `run` returns.
   */
  run(work: () => Promise<void>, urgent: boolean): void;
  /** Resolves once every command sent so far has been handled (`work` settled), including ones sent while waiting. */
  settled(): Promise<void>;
  /** Resolves once the urgent commands sent so far have been handled (an ordered command cannot wait for the order it is in). */
  urgentSettled(): Promise<void>;
}

/** Contract: `work` must not reject (the engine answers a failed command itself); a rejection would stall nothing, but is lost. */
export function createCommandOrder(): CommandOrder {
  /** The last ordered command still being handled: the next one waits for it. */
  let tail: Promise<void> | undefined;
  const urgentOnes = new Set<Promise<void>>();
  const safe = (work: () => Promise<void>) => work().catch(() => {});
  return {
    run(work, urgent) {
      if (urgent) {
        const running: Promise<void> = safe(work).finally(() => urgentOnes.delete(running));
        urgentOnes.add(running);
        return;
      }
      const mine: Promise<void> = (tail ? tail.then(() => safe(work)) : safe(work)).finally(() => {
        if (tail === mine) tail = undefined;
      });
      tail = mine;
    },
    async settled() {
      while (tail || urgentOnes.size) await Promise.all([tail, ...urgentOnes]);
    },
    async urgentSettled() {
      while (urgentOnes.size) await Promise.all(urgentOnes);
    },
  };
}
