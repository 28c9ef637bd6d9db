import type { TermHistory, TermView } from "../contract/term-history.js";
import { TERM_HISTORY_SLOTS } from "../contract/term-history.js";
import type { LeaseTiming } from "../contract/timing.js";
import { isLive, type LeaseState } from "./lease.js";
import { startOf, termSlot, type TermRecord } from "./term-record.js";

/**
 * The history of a role at `haTime`, newest first, at most `limit` terms: the entry's own
 * term (live, or derived as `expired` / `revoked` once it ran out untaken), then the ended
 * terms of the ring. A new term takes the ring slot after its predecessor's (nextEpoch keeps
 * epochs one slot apart however far the clock lifts them), so the current epoch's slot is
 * the one that may hold a row from N terms ago: there only the current epoch's own row
 * counts, and none while the entry still has its holder (only the entry speaks for its
 * current term). The epoch-0 row that marks
 * the role's creation (roleCreated) is no term and never shown.
 */
export function toTermHistory(
  utype: string,
  entry: LeaseState | undefined,
  rows: readonly TermRecord[],
  haTime: number,
  timing: LeaseTiming,
  limit = TERM_HISTORY_SLOTS,
): TermHistory {
  const epoch = entry?.epoch ?? 0;
  const terms: TermView[] = [];
  const held = entry !== undefined && entry.uuid !== "";
  if (held) terms.push(currentTerm(entry, haTime, timing));
  // The current epoch's slot holds the term N terms back until the current one ends (new
  // terms take consecutive slots: see nextEpoch), so only the current epoch's own row
  // counts there. A row above the entry's epoch (a ring ahead of its entry after a restore)
  // never counts: only the entry speaks for its epoch and those below it.
  const slot = termSlot(epoch);
  const ended = rows
    .filter((row) => row.utype === utype && row.epoch > 0 && (termSlot(row.epoch) !== slot || row.epoch === epoch) && (held ? row.epoch < epoch : row.epoch <= epoch))
    .sort((a, b) => b.epoch - a.epoch);
  for (const row of ended) terms.push(viewOf(row));
  return { utype, epoch, terms: terms.slice(0, limit) };
}

function currentTerm(entry: LeaseState, haTime: number, timing: LeaseTiming): TermView {
  const live = isLive(entry, haTime, timing.timeoutMs);
  return {
    epoch: entry.epoch,
    uuid: entry.uuid,
    address: entry.address,
    startedAt: iso(startOf(entry)),
    endedAt: live ? null : iso(entry.renewedAt + timing.timeoutMs),
    endedBy: live ? null : entry.revoked ? "revoked" : "expired",
  };
}

function viewOf(row: TermRecord): TermView {
  return {
    epoch: row.epoch,
    uuid: row.uuid,
    address: row.address,
    startedAt: iso(row.startedAt),
    endedAt: iso(row.endedAt),
    endedBy: row.endedBy,
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
