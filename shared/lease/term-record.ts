import type { TermEnd } from "../contract/term-history.js";
import { TERM_HISTORY_SLOTS } from "../contract/term-history.js";
import type { LeaseState } from "./lease.js";

/** How a stored term ended: `expired` is never stored, it is what an unended term became. */
export type StoredTermEnd = Exclude<TermEnd, "expired">;

/**
 * One ended term as a store keeps it: in the role's ring of TERM_HISTORY_SLOTS rows, at
 * slot `epoch mod TERM_HISTORY_SLOTS`, written (upserted) once, when the term ends.
 * Times are ha_time, UTC ms.
 */
export interface TermRecord {
  readonly utype: string;
  readonly epoch: number;
  readonly uuid: string;
  readonly address: string | null;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly endedBy: StoredTermEnd;
  /**
   * True on every row this version writes: it was written in one transaction with the entry
   * write it goes with (the takeover or release that ended the term, the role's first
   * entry, a fence), so no term after it can lack its row (see missingEntryFence). Absent on
   * rows of earlier versions, which may have written a row apart from its entry write, or
   * not at all.
   */
  readonly transactional?: boolean;
}

/** The ring slot of a term: epochs N apart share one row, so a role never has more than N. */
export function termSlot(epoch: number): number {
  return epoch % TERM_HISTORY_SLOTS;
}

/**
 * When the term of `entry` started. Entries written before the service recorded starts
 * have none: their last renewal is the earliest time known.
 */
export function startOf(entry: Pick<LeaseState, "startedAt" | "renewedAt">): number {
  return entry.startedAt ?? entry.renewedAt;
}

/**
 * The term `entry` held, ended by a write at `haTime`. It stopped being valid at the
 * earlier of that write and its expiry (last renewal + T): a takeover always comes after
 * the expiry, a release usually before it.
 */
export function endedTerm(entry: LeaseState, endedBy: StoredTermEnd, haTime: number, timeoutMs: number): TermRecord {
  return {
    utype: entry.utype,
    epoch: entry.epoch,
    uuid: entry.uuid,
    address: entry.address,
    startedAt: startOf(entry),
    endedAt: Math.min(haTime, entry.renewedAt + timeoutMs),
    endedBy,
    transactional: true,
  };
}
