import { ID_PATTERN } from "../contract/input-rules.js";
import type { LeaseRecord } from "../lease/lease.js";
import { StoreUnavailableError } from "../lease/store-unavailable-error.js";

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
  const { utype, uuid, address, epoch, renewedAt, startedAt, revoked, endedUuids, etag } = row;
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
  const record: LeaseRecord = { utype, uuid, address, epoch, renewedAt, revoked: revoked === true, endedUuids: endedUuids ?? [], etag };
  return isWholeNumber(startedAt) ? { ...record, startedAt } : record;
}

function isWholeNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
