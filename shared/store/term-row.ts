import { ID_PATTERN } from "../contract/input-rules.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import type { StoredTermEnd, TermRecord } from "../lease/term-record.js";

/** A term row as an adapter read it, in plain JavaScript values but not yet trusted. */
export interface StoredTerm {
  readonly utype: unknown;
  readonly epoch: unknown;
  readonly uuid: unknown;
  readonly address: unknown;
  readonly startedAt: unknown;
  readonly endedAt: unknown;
  readonly endedBy: unknown;
  /** Absent on rows written by earlier versions: stays absent. */
  readonly transactional?: unknown;
}

const STORED_ENDS: readonly StoredTermEnd[] = ["released", "revoked", "taken-over", "preempted"];

/**
 * The term a history row stands for, validated like a lease row: a damaged row is a
 * StoreUnavailableError naming the field, never an Invalid Date in an answer.
 */
export function toTermRecord(row: StoredTerm, store: string): TermRecord {
  const corrupt = (problem: string): StoreUnavailableError =>
    new StoreUnavailableError(`${store} holds a corrupt term row${typeof row.utype === "string" ? ` for ${JSON.stringify(row.utype)}` : ""}: ${problem}.`);
  const { utype, epoch, uuid, address, startedAt, endedAt, endedBy, transactional } = row;
  if (typeof utype !== "string" || !ID_PATTERN.test(utype)) throw corrupt("utype is not a valid id");
  // Epoch 0 is the row that marks the role's creation (see roleCreated).
  if (!isWholeNumber(epoch)) throw corrupt("epoch is not a non-negative integer");
  if (typeof uuid !== "string" || !ID_PATTERN.test(uuid)) throw corrupt("uuid is not a valid id");
  if (address !== null && typeof address !== "string") throw corrupt("address is neither a string nor null");
  if (!isWholeNumber(startedAt)) throw corrupt("startedAt is not a non-negative integer");
  if (!isWholeNumber(endedAt)) throw corrupt("endedAt is not a non-negative integer");
  if (!STORED_ENDS.includes(endedBy as StoredTermEnd)) throw corrupt(`endedBy is not one of ${STORED_ENDS.join(", ")}`);
  if (transactional !== undefined && transactional !== null && typeof transactional !== "boolean") throw corrupt("transactional is not a boolean");
  const record: TermRecord = { utype, epoch, uuid, address, startedAt, endedAt, endedBy: endedBy as StoredTermEnd };
  return typeof transactional === "boolean" ? { ...record, transactional } : record;
}

function isWholeNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
