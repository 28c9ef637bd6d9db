import type { MemberState } from "../contract/members.js";

/**
 * The stored row of one member of one group (docs/membership.md), without the store's ETag. Its state
 * is never stored: it is derived on read from its age (member-age.ts).
 */
export interface MemberRow {
  readonly group: string;
  readonly member: string;
  /** The incarnation heartbeating this row. A restart is a new session. */
  readonly session: string;
  readonly address: string | null;
  /** ha_time (UTC ms on the function host's clock) of this session's first accepted heartbeat. */
  readonly joinedAt: number;
  /** ha_time of its last accepted heartbeat. */
  readonly renewedAt: number;
  /** Heartbeats accepted for this session, the first one included. */
  readonly heartbeats: number;
  /** ha_time of its goodbye (DELETE), or null. */
  readonly leftAt: number | null;
  /** The session this one replaced, and how it had ended: a watcher that missed it still sees it fail. */
  readonly previous: ReplacedSession | null;
  /**
   * Sessions of this member that were replaced here, oldest first, at most
   * MAX_ENDED_SESSIONS: none of them may heartbeat this row again.
   */
  readonly endedSessions: readonly string[];
}

export interface ReplacedSession {
  readonly session: string;
  readonly state: Extract<MemberState, "unreachable" | "leaving">;
  /** ha_time of the replacement. */
  readonly at: number;
}

/** A row as read from a store, with the ETag a conditional write must present. */
export interface MemberRecord extends MemberRow {
  readonly etag: string;
}

/** A gap in the service's own operation: [startedAt, endedAt] on ha_time. */
export interface ServiceGap {
  readonly startedAt: number;
  readonly endedAt: number;
}

/**
 * The sweeper's marker, one per group, in the group's own partition: when it last swept
 * the group, the last gap in its operation it recorded, and the sessions it removed
 * lately (a removed session never comes back, even after its row is gone).
 */
export interface SweepMarker {
  readonly group: string;
  readonly sweptAt: number;
  readonly gap: ServiceGap | null;
  /** Newest last, at most MAX_REMOVED_SESSIONS. */
  readonly removedSessions: readonly string[];
}

export interface SweepMarkerRecord extends SweepMarker {
  readonly etag: string;
}

/**
 * The marker's row key (Table RowKey, Cosmos id) inside the group's partition. `~` is
 * outside the id charset, so no member can be named like it.
 */
export const SWEEP_MARKER_ID = "~sweep";

/**
 * How many replaced sessions a row remembers. As with a lease's ended uuids, the list only
 * has to outlast requests of a dead incarnation still on their way (the SDK draws a new
 * session after every loss and never sends the old one again, except its goodbye).
 */
export const MAX_ENDED_SESSIONS = 8;

/** How many removed sessions a group's marker remembers (the same reasoning, per group). */
export const MAX_REMOVED_SESSIONS = 32;

/** The list with `session` appended (once), keeping only the newest `max`. */
export function withSession(sessions: readonly string[], session: string, max: number): readonly string[] {
  if (sessions.includes(session)) return sessions;
  return [...sessions, session].slice(-max);
}
