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
  /** Per shared estimate: the copies sent after a timeout since the last answer, each known by its time left and its count (a budget is read more than once per copy). */
  const doublings = new WeakMap<RenewalTimer, Set<string>>();
  prototype.answered = function (this: RenewalTimer, ...args: Parameters<RenewalTimer["answered"]>): void {
    doublings.set(this, new Set());
    answered.apply(this, args);
  };
  prototype.budgetMs = function (this: RenewalTimer, timing, now, unanswered, leftMs): number {
    const copies = doublings.get(this) ?? new Set<string>();
    doublings.set(this, copies);
    if (unanswered > 0) copies.add(`${leftMs} ${unanswered}`);
    return budgetMs.call(this, timing, now, copies.size, leftMs);
  };
  return () => {
    prototype.budgetMs = budgetMs;
    prototype.answered = answered;
  };
}
