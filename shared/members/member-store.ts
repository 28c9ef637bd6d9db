import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import type { MemberRecord, MemberRow, SweepMarker, SweepMarkerRecord } from "./member.js";

/** One group as one partition query read it: its rows and its sweep marker. */
export interface GroupSnapshot {
  readonly group: string;
  readonly rows: readonly MemberRecord[];
  readonly marker: SweepMarkerRecord | undefined;
}

/** A member's row and its group's marker, read by one query. */
export interface MemberAndMarker {
  readonly row: MemberRecord | undefined;
  readonly marker: SweepMarkerRecord | undefined;
}

/**
 * What a fast-path heartbeat merges: renewedAt and the heartbeat count (the token knows the
 * count, and If-Match proves it is still right); the address only when given.
 */
export interface MemberRenewal {
  readonly renewedAt: number;
  readonly heartbeats: number;
  readonly address?: string | null;
}

export type DeleteOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: "changed" | "missing" };

/**
 * The narrow interface every membership store implements (Table: PartitionKey = group;
 * Cosmos: partitioned on /group). A group is one partition: its rows and its marker are
 * read together by one partition query. Every update and delete names its ETag; there is
 * no unconditional write. Losing a race is a typed outcome; anything else (unreachable,
 * throttled, a corrupt row) is thrown as a StoreUnavailableError.
 */
export interface MemberStore {
  /** "table", "cosmos", "memory", for logs. */
  readonly kind: string;
  /** The member's row and the group's marker: one partition query (the slow path's read). */
  read(group: string, member: string, options?: StoreCallOptions): Promise<MemberAndMarker>;
  /** Every row of the group and its marker: one partition query. */
  listGroup(group: string, options?: StoreCallOptions): Promise<GroupSnapshot>;
  /** Every group that has a row or a marker: a cross-partition read for the sweeper and GET /api/members. */
  listAll(options?: StoreCallOptions): Promise<GroupSnapshot[]>;
  /** Writes the row only if the member has none. */
  create(row: MemberRow, options?: StoreCallOptions): Promise<WriteOutcome>;
  /** Replaces the whole row only if its ETag is still `etag`. */
  replace(row: MemberRow, etag: string, options?: StoreCallOptions): Promise<WriteOutcome>;
  /** Merges a renewal into the row only if its ETag is still `etag`: the one-operation fast path. */
  renew(group: string, member: string, renewal: MemberRenewal, etag: string, options?: StoreCallOptions): Promise<WriteOutcome>;
  /** Deletes the row only if its ETag is still `etag` (a member that heartbeats meanwhile stays). */
  delete(group: string, member: string, etag: string, options?: StoreCallOptions): Promise<DeleteOutcome>;
  /** Writes the group's marker: a create without an ETag, an If-Match replace with one. */
  writeMarker(marker: SweepMarker, etag: string | undefined, options?: StoreCallOptions): Promise<WriteOutcome>;
}
