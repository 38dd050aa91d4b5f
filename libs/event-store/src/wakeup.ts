/**
 * A level-triggered wake-up: a poke that arrives while nobody waits is remembered, so a reader
 * that checks, finds nothing, then waits cannot miss a poke that came in between.
 */
export class Wakeup {
  private poked = false;
  private waiter?: () => void;

  readonly poke = (): void => {
    this.poked = true;
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  };

  /** Call before checking for work. */
  reset(): void {
    this.poked = false;
  }

  /** Resolves true when poked (now or earlier since reset), false after `ms`. */
  wait(ms: number): Promise<boolean> {
    if (this.poked) {
      this.poked = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.waiter = undefined;
        resolve(false);
      }, ms);
      this.waiter = () => {
        clearTimeout(t);
        this.poked = false;
        resolve(true);
      };
    });
  }
}
