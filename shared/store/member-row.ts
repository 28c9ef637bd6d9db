import { ID_PATTERN } from "../contract/input-rules.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import type { MemberRecord, ReplacedSession, SweepMarkerRecord } from "../members/member.js";

/** A member row as an adapter read it, in plain JavaScript values but not yet trusted. */
export interface StoredMember {
  readonly group: unknown;
  readonly member: unknown;
  readonly session: unknown;
  readonly address: unknown;
  readonly joinedAt: unknown;
  readonly renewedAt: unknown;
  readonly heartbeats: unknown;
  /** null (or absent) when the member has not said goodbye. */
  readonly leftAt: unknown;
  /** null (or absent) when the session replaced nobody. */
  readonly previous: unknown;
  readonly endedSessions: unknown;
  readonly etag: unknown;
}

export interface StoredMarker {
  readonly group: unknown;
  readonly sweptAt: unknown;
  /** Both null (or absent) when no gap was recorded. */
  readonly gapStart: unknown;
  readonly gapEnd: unknown;
  readonly removedSessions: unknown;
  readonly etag: unknown;
}

/**
 * The record a member row stands for, validated as strictly as a lease row: every field
 * present with its type and range, so a damaged row is a StoreUnavailableError naming the
 * field (503 for the caller, the detail in the log), never a NaN age or a lost session.
 */
export function toMemberRecord(row: StoredMember, store: string): MemberRecord {
  const where = typeof row.group === "string" && typeof row.member === "string" ? ` for ${JSON.stringify(`${row.group}/${row.member}`)}` : "";
  const corrupt = (problem: string): StoreUnavailableError => new StoreUnavailableError(`${store} holds a corrupt member row${where}: ${problem}.`);
  const { group, member, session, address, joinedAt, renewedAt, heartbeats, leftAt, previous, endedSessions, etag } = row;
  if (!isId(group)) throw corrupt("group is not a valid id");
  if (!isId(member)) throw corrupt("member is not a valid id");
  if (!isId(session)) throw corrupt("session is not a valid id");
  if (address !== null && typeof address !== "string") throw corrupt("address is neither a string nor null");
  if (!isWholeNumber(joinedAt)) throw corrupt("joinedAt is not a non-negative integer");
  if (!isWholeNumber(renewedAt)) throw corrupt("renewedAt is not a non-negative integer");
  if (!isWholeNumber(heartbeats) || heartbeats < 1) throw corrupt("heartbeats is not a positive integer");
  if (leftAt !== null && leftAt !== undefined && !isWholeNumber(leftAt)) throw corrupt("leftAt is neither null nor a non-negative integer");
  const replaced = toReplacedSession(previous);
  if (replaced === false) throw corrupt("previous is neither null nor {session, state, at}");
  if (!isIdList(endedSessions)) throw corrupt("endedSessions is not a list of sessions");
  if (typeof etag !== "string" || etag === "") throw corrupt("it has no ETag");
  return {
    group,
    member,
    session,
    address,
    joinedAt,
    renewedAt,
    heartbeats,
    leftAt: leftAt ?? null,
    previous: replaced,
    endedSessions,
    etag,
  };
}

/** The group's sweep marker, validated the same way. */
export function toSweepMarkerRecord(row: StoredMarker, store: string): SweepMarkerRecord {
  const corrupt = (problem: string): StoreUnavailableError =>
    new StoreUnavailableError(`${store} holds a corrupt sweep marker${typeof row.group === "string" ? ` for ${JSON.stringify(row.group)}` : ""}: ${problem}.`);
  const { group, sweptAt, gapStart, gapEnd, removedSessions, etag } = row;
  if (!isId(group)) throw corrupt("group is not a valid id");
  if (!isWholeNumber(sweptAt)) throw corrupt("sweptAt is not a non-negative integer");
  const noGap = (gapStart === null || gapStart === undefined) && (gapEnd === null || gapEnd === undefined);
  if (!noGap && !(isWholeNumber(gapStart) && isWholeNumber(gapEnd) && gapStart <= gapEnd)) throw corrupt("gapStart and gapEnd are not both null or an interval");
  if (!isIdList(removedSessions)) throw corrupt("removedSessions is not a list of sessions");
  if (typeof etag !== "string" || etag === "") throw corrupt("it has no ETag");
  return { group, sweptAt, gap: noGap ? null : { startedAt: gapStart as number, endedAt: gapEnd as number }, removedSessions, etag };
}

function toReplacedSession(value: unknown): ReplacedSession | null | false {
  if (value === null || value === undefined) return null;
  if (typeof value !== "object" || Array.isArray(value)) return false;
  const { session, state, at } = value as Record<string, unknown>;
  if (!isId(session) || (state !== "unreachable" && state !== "leaving") || !isWholeNumber(at)) return false;
  return { session, state, at };
}

function isId(value: unknown): value is string {
  return typeof value === "string" && ID_PATTERN.test(value);
}

function isIdList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isId);
}

function isWholeNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
