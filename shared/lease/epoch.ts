import { TERM_HISTORY_SLOTS } from "../contract/term-history.js";

/**
 * The epoch of a new term (docs/design/epochs.md): above the stored epoch, and never below
 * ha_time in ms at the grant. The stored counter orders the terms a store remembers; the
 * clock orders a term granted after the store forgot its last writes (a geo failover, a
 * failover below strong consistency, a restore) above every term granted before the loss,
 * provided the instances' clocks disagree by less than the time between the last lost
 * grant and the store's return (docs/design/epochs.md#the-skew-bound).
 *
 * The result is also congruent to `stored + 1` modulo TERM_HISTORY_SLOTS (at most
 * TERM_HISTORY_SLOTS − 1 ms above the clock), so that consecutive terms still take
 * consecutive slots of the role's history ring, however far the clock moves the epoch.
 */
export function nextEpoch(stored: number, haTime: number): number {
  return epochAtLeast(stored + 1, haTime);
}

/**
 * The least epoch ≥ max(base, ⌊haTime⌋) congruent to `base` modulo TERM_HISTORY_SLOTS:
 * `base` itself while the clock is below it (each term then moves the epoch by one, as
 * before the clock counted), otherwise the clock rounded up to `base`'s ring slot.
 */
export function epochAtLeast(base: number, haTime: number): number {
  const floor = Math.floor(haTime);
  if (!Number.isFinite(floor) || floor <= base) return base;
  const behind = (floor - base) % TERM_HISTORY_SLOTS;
  return behind === 0 ? floor : floor + (TERM_HISTORY_SLOTS - behind);
}

/**
 * True when a lease token's claims name a term the entry cannot have handed out: an epoch
 * above the entry's, or the entry's own epoch for another uuid. Without a loss of the
 * store's last writes neither can happen (an entry's epoch never goes down, and each epoch
 * has one holder), so the token's term was erased by that loss: its holder must stop.
 * `entryEpoch` undefined: the store has no entry for the role at all (a restore from before
 * the role's first term), so any genuine token names an erased term.
 */
export function erasedTerm(claims: { readonly uuid: string; readonly epoch: number }, entry: { readonly uuid: string; readonly epoch: number } | undefined): boolean {
  if (entry === undefined) return true;
  return claims.epoch > entry.epoch || (claims.epoch === entry.epoch && claims.uuid !== entry.uuid);
}
