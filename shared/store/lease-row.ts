import { ID_PATTERN, isPriority, PRIORITY_RULE } from "../contract/input-rules.js";
import { withPriority, type LeaseHandover, type LeaseRecord } from "../lease/lease.js";
import type { StandbyRecord } from "../lease/lease-store.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";

/** A lease as an adapter read it, in plain JavaScript values but not yet trusted. */
export interface StoredLease {
  readonly utype: unknown;
  readonly uuid: unknown;
  readonly address: unknown;
  readonly epoch: unknown;
  readonly renewedAt: unknown;
  /** Absent on rows written before the term history existed: stays absent. */
  readonly startedAt?: unknown;
  /** Absent on rows written before revocation existed: read as false. */
  readonly revoked: unknown;
  /** Absent on rows written before ended uuids existed: read as none. */
  readonly endedUuids: unknown;
  /** Absent on rows written before planned handover existed, and when none: read as none. */
  readonly handover?: unknown;
  /** Absent on rows written before priorities existed, and when 0: read as 0 (absent). */
  readonly priority?: unknown;
  /** Absent until a candidate of the role stated a priority: read as not ranked. */
  readonly ranked?: unknown;
  readonly etag: unknown;
}

/**
 * The record a row stands for, validated as strictly as the SDK validates an answer:
 * every field present with its type and range (or absent where older rows lack it), so a
 * damaged row can never become a NaN epoch or a forgotten ended uuid. A row that fails is
 * a StoreUnavailableError naming the field (503 for the caller, the detail in the log).
 * `store` names the store in that message.
 */
export function toLeaseRecord(row: StoredLease, store: string): LeaseRecord {
  const corrupt = (problem: string): StoreUnavailableError =>
    new StoreUnavailableError(`${store} holds a corrupt lease${typeof row.utype === "string" ? ` for ${JSON.stringify(row.utype)}` : ""}: ${problem}.`);
  const { utype, uuid, address, epoch, renewedAt, startedAt, revoked, endedUuids, handover, priority, ranked, etag } = row;
  if (typeof utype !== "string" || !ID_PATTERN.test(utype)) throw corrupt("utype is not a valid id");
  if (typeof uuid !== "string" || (uuid !== "" && !ID_PATTERN.test(uuid))) throw corrupt("uuid is neither empty nor a valid id");
  if (address !== null && typeof address !== "string") throw corrupt("address is neither a string nor null");
  if (!isWholeNumber(epoch)) throw corrupt("epoch is not a non-negative integer");
  if (!isWholeNumber(renewedAt)) throw corrupt("renewedAt is not a non-negative integer");
  if (startedAt !== undefined && startedAt !== null && !isWholeNumber(startedAt)) throw corrupt("startedAt is not a non-negative integer");
  if (revoked !== undefined && typeof revoked !== "boolean") throw corrupt("revoked is not a boolean");
  if (endedUuids !== undefined && !(Array.isArray(endedUuids) && endedUuids.every((ended) => typeof ended === "string"))) {
    throw corrupt("endedUuids is not a list of uuids");
  }
  if (typeof etag !== "string" || etag === "") throw corrupt("it has no ETag");
  const stored = toHandover(handover);
  if (stored === false) throw corrupt('handover is not {to: a uuid or null, requestedAt: an integer, reason?: "preempt"}');
  if (priority !== undefined && priority !== null && !isPriority(priority)) throw corrupt(`priority is not ${PRIORITY_RULE}`);
  if (ranked !== undefined && ranked !== null && typeof ranked !== "boolean") throw corrupt("ranked is not a boolean");
  const record: LeaseRecord = { utype, uuid, address, epoch, renewedAt, revoked: revoked === true, endedUuids: endedUuids ?? [], etag };
  const withStart = withPriority(isWholeNumber(startedAt) ? { ...record, startedAt } : record, isPriority(priority) ? priority : undefined);
  const withRank = ranked === true ? { ...withStart, ranked: true as const } : withStart;
  return stored === undefined ? withRank : { ...withRank, handover: stored };
}

/** The stored handover: undefined when absent (or null), false when damaged. */
function toHandover(value: unknown): LeaseHandover | undefined | false {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object") return false;
  const { to, requestedAt, reason } = value as { to?: unknown; requestedAt?: unknown; reason?: unknown };
  if (!(to === null || (typeof to === "string" && ID_PATTERN.test(to))) || !isWholeNumber(requestedAt)) return false;
  if (reason !== undefined && reason !== null && reason !== "preempt") return false;
  return reason === "preempt" ? { to, requestedAt, reason } : { to, requestedAt };
}

function isWholeNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** A standby row as read, validated like a lease row: a damaged one is a StoreUnavailableError naming the field. */
export function toStandbyRecord(row: { utype: unknown; uuid: unknown; address: unknown; seenAt: unknown; priority?: unknown }, store: string): StandbyRecord {
  const { utype, uuid, address, seenAt, priority } = row;
  const corrupt = (problem: string): StoreUnavailableError => new StoreUnavailableError(`${store} holds a corrupt standby row: ${problem}.`);
  if (typeof utype !== "string" || !ID_PATTERN.test(utype)) throw corrupt("utype is not a valid id");
  if (typeof uuid !== "string" || !ID_PATTERN.test(uuid)) throw corrupt("uuid is not a valid id");
  if (address !== null && typeof address !== "string") throw corrupt("address is neither a string nor null");
  if (!isWholeNumber(seenAt)) throw corrupt("seenAt is not a non-negative integer");
  if (priority !== undefined && priority !== null && !isPriority(priority)) throw corrupt(`priority is not ${PRIORITY_RULE}`);
  return withPriority({ utype, uuid, address, seenAt }, isPriority(priority) ? priority : undefined);
}
