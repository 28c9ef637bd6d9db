import { epochAtLeast } from "./epoch.js";
import { withEndedUuid, type LeaseState } from "./lease.js";
import type { TermRecord } from "./term-record.js";

/**
 * The holder a fence names (see missingEntryFence), followed by `:<epoch>`: nobody, as far
 * as the service knows. A valid id, so that views and histories show it as any holder, and
 * one of its own per fence, so that no fence's uuid is one whose term already ended.
 */
export const UNKNOWN_HOLDER = "ha-module:entry-missing";

/**
 * How far above the history's highest epoch a fence's lies when that row was written by an
 * earlier version (no `transactional` mark). Versions before the term rows were written in
 * one transaction with their entry wrote them afterwards, best effort, so a history they
 * wrote may have gaps, and the deleted term's epoch may lie above the highest recorded one.
 * With this margin it lies at most at the fence's unless 8 terms in a row ended without
 * their row. Half the ring (TERM_HISTORY_SLOTS): the history still shows the last 7
 * recorded terms beside the new ones, since it shows only the last N epochs.
 */
export const UNRECORDED_TERMS_MARGIN = 8;

/**
 * The margin when the history's highest row is `transactional`: it was written in one
 * transaction with the entry write it goes with, and so is every row after it. Each write
 * that moves the epoch writes a row in the same transaction (a takeover the ended term's; a
 * takeover of a released role none, its term's row came with the release; a role's first
 * entry the creation mark at epoch 0; a fence its own term), so the entry's epoch is at
 * most the highest row's + 1, and a fence there is at or above the deleted term's.
 */
export const RECORDED_TERMS_MARGIN = 1;

/** The margin the fence of a role with these history rows takes (see the two margins). */
export function fenceMargin(terms: readonly Pick<TermRecord, "epoch" | "transactional">[]): number {
  const newest = terms.reduce<Pick<TermRecord, "epoch" | "transactional"> | undefined>((high, term) => (high === undefined || term.epoch > high.epoch ? term : high), undefined);
  return newest?.transactional === true ? RECORDED_TERMS_MARGIN : UNRECORDED_TERMS_MARGIN;
}

/**
 * What the service writes in place of a lease entry that is missing although the role has
 * a term history: the entry was deleted behind the service (an operator, a script, a
 * restore). Its holder, if it had one, may still be working and renewing, and the history
 * cannot say until when: it records ended terms, never the live one's last renewal. So the
 * role is treated as held by an unknown holder that was just revoked: nobody may take it
 * over before T has passed from now, the first moment the missing entry was observed (no
 * renewal of the deleted term can be accepted after its entry is gone), and the holder's
 * epoch is taken as the history's highest + fenceMargin(terms), lifted to the clock as a new
 * term's is (epochAtLeast), at or above the deleted term's, so the next term's is higher still: the fencing token never goes back, and the
 * deleted term's holder is never the holder again.
 */
export function missingEntryFence(utype: string, terms: readonly Pick<TermRecord, "epoch" | "transactional" | "uuid">[], haTime: number, epochFloor = haTime): LeaseState {
  // Never below the clock either, as a new term's epoch: the deleted term's epoch may lie far
  // above the history's highest (nextEpoch lifts a term's epoch to the clock), and was granted
  // no later than now.
  const epoch = epochAtLeast(Math.max(...terms.map((term) => term.epoch)) + fenceMargin(terms), epochFloor);
  // The deleted entry's ended list went with it: the uuids of the terms the history records
  // (the newest MAX_ENDED_UUIDS) stand in for it, so that none of them, a holder riding through
  // whose expired term a DELETE cleared for one, takes the fence over under its old uuid.
  const endedUuids = [...terms].sort((a, b) => a.epoch - b.epoch).reduce<readonly string[]>((ended, term) => withEndedUuid(ended.filter((uuid) => uuid !== term.uuid), term.uuid), []);
  return { utype, uuid: `${UNKNOWN_HOLDER}:${epoch}`, address: null, epoch, renewedAt: haTime, startedAt: haTime, revoked: true, endedUuids };
}

/**
 * The row a role's history gets with its first entry, in the same transaction (epoch 0, at
 * ring slot 0, never shown by the history): without it, a role whose first term is still
 * live has no history, and its deleted entry could not be told from a role never held. The
 * creator's uuid and the creation time are kept for an operator reading the rows.
 */
export function roleCreated(utype: string, uuid: string, haTime: number): TermRecord {
  return { utype, epoch: 0, uuid, address: null, startedAt: haTime, endedAt: haTime, endedBy: "released", transactional: true };
}
