import { RenewalTimer } from "../../../shared/sdk/election/renewal-timer.js";

/**
 * The planted bug `shared-renewal-doubling`: the renewal budget's doubling shared by the
 * electors of one transport, as it was before each renewal counted its own copies. Every
 * copy any of them sends after a timeout doubles the budget once more for all of them, and
 * only an answer ends it: the roles of a lost participant heartbeat then double one
 * another's budgets in turn, and the last role's second copy waits 8F. Planted by patching
 * the shared estimate's class for one run; returns what undoes it.
 */
export function plantSharedRenewalDoubling(): () => void {
  const prototype = RenewalTimer.prototype;
  const { budgetMs, answered } = prototype;
  const doublings = new WeakMap<RenewalTimer, number>();
  prototype.answered = function (this: RenewalTimer, ...args: Parameters<RenewalTimer["answered"]>): void {
    doublings.set(this, 0);
    answered.apply(this, args);
  };
  prototype.budgetMs = function (this: RenewalTimer, timing, now, unanswered, leftMs): number {
    const shared = (doublings.get(this) ?? 0) + (unanswered > 0 ? 1 : 0);
    doublings.set(this, shared);
    return budgetMs.call(this, timing, now, shared, leftMs);
  };
  return () => {
    prototype.budgetMs = budgetMs;
    prototype.answered = answered;
  };
}
