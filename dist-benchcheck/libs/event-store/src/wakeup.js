"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Wakeup = void 0;
/**
 * A level-triggered wake-up: a poke that arrives while nobody waits is remembered, so a reader
 * that checks, finds nothing, then waits cannot miss a poke that came in between.
 */
class Wakeup {
    constructor() {
        this.poked = false;
        this.poke = () => {
            this.poked = true;
            const w = this.waiter;
            this.waiter = undefined;
            w?.();
        };
    }
    /** Call before checking for work. */
    reset() {
        this.poked = false;
    }
    /** Resolves true when poked (now or earlier since reset), false after `ms`. */
    wait(ms) {
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
exports.Wakeup = Wakeup;
//# sourceMappingURL=wakeup.js.map