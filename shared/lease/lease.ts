/**
 * The stored heartbeat record of one utype (docs/protocol.md#words, "entry"), without the store's ETag.
 *
 * `uuid === ""` marks a released lease: nobody holds it, but the epoch is kept so that
 * the next holder still gets a higher fencing token.
 */
export interface LeaseState {
  readonly utype: string;
  /** The holder's incarnation id, or "" once released. */
  readonly uuid: string;
  /** Where the holder can be reached (the original protocol's `uname`), or null. */
  readonly address: string | null;
  /** Fencing token: grows by one on every change of holder, never goes down. */
  readonly epoch: number;
  /** ha_time (UTC ms on the function host's clock) of the last accepted write. */
  readonly renewedAt: number;
  /**
   * ha_time when the holder's term began (acquire or take over); renewals leave it as it
   * is. Absent on entries written before the term history existed.
   */
  readonly startedAt?: number;
  /**
   * The holder was revoked without its consent (a DELETE without its lease token): it may
   * not renew, and nobody may take over before the lease expires on its own.
   */
  readonly revoked: boolean;
  /**
   * The uuids whose term ended on this entry (released, retired, or taken over, revoked or
   * not), oldest first, at most MAX_ENDED_UUIDS. None of them may start a new term.
   */
  readonly endedUuids: readonly string[];
  /**
   * An operator's planned handover (docs/protocol.md#planned-handover). While a holder holds
   * it is pending: the holder's renewals are accepted with it shown, until requestedAt + T.
   * After the holder's proven release it stays with `to` set as the reservation of the role
   * for that standby until renewedAt (the release) + T. Absent: none (and on older entries).
   */
  readonly handover?: LeaseHandover;
  /**
   * The holder's priority (docs/protocol.md#priorities-and-preemption), as its last slow-path
   * heartbeat stated it; absent: 0 (never written as 0, and absent on older entries).
   */
  readonly priority?: number;
  /**
   * True once a candidate of the role announced itself with a priority other than 0: from
   * then on a takeover within I of the role becoming free reads the role's standbys to rank
   * the candidates (docs/protocol.md#priorities-and-preemption). Kept across terms; absent
   * on roles whose candidates never stated a priority, which then cost what they always did.
   */
  readonly ranked?: true;
}

/** A handover request as stored on the entry. */
export interface LeaseHandover {
  /** The standby's uuid that should take over, or null for any standby. */
  readonly to: string | null;
  /** ha_time of the (first) request. */
  readonly requestedAt: number;
  /**
   * `preempt`: asked by a standby of higher priority than the holder's
   * (docs/protocol.md#priorities-and-preemption), not by an operator. Absent: an operator's.
   */
  readonly reason?: "preempt";
}

/** A lease as read from a store, with the ETag that a conditional write must present. */
export interface LeaseRecord extends LeaseState {
  readonly etag: string;
}

/**
 * How many ended uuids an entry remembers. The list only has to outlast the requests of a
 * dead incarnation that are still on their way: the SDK draws a fresh uuid for every
 * incarnation and never sends the old one again (except its release), and a request is
 * never written after its time budget (HA_STORE_TIMEOUT_MS) on the server. Eight term
 * changes within that window would already be a role in trouble.
 */
export const MAX_ENDED_UUIDS = 8;

/** True when the entry has a holder whose last renewal is at most T old (docs/protocol.md#words, "live"). */
export function isLive(lease: Pick<LeaseState, "uuid" | "renewedAt">, haTime: number, timeoutMs: number): boolean {
  return lease.uuid !== "" && haTime - lease.renewedAt <= timeoutMs;
}

/** The list with `uuid` appended (once), keeping only the newest MAX_ENDED_UUIDS. */
export function withEndedUuid(endedUuids: readonly string[], uuid: string): readonly string[] {
  if (uuid === "" || endedUuids.includes(uuid)) return endedUuids;
  return [...endedUuids, uuid].slice(-MAX_ENDED_UUIDS);
}

/** The pending handover of a live, unrevoked holder, if any (the holder must step down). */
export function pendingHandover(lease: Pick<LeaseState, "uuid" | "renewedAt" | "revoked" | "handover">, haTime: number, timeoutMs: number): LeaseHandover | undefined {
  return lease.handover !== undefined && !lease.revoked && isLive(lease, haTime, timeoutMs) ? lease.handover : undefined;
}

/**
 * The standby a released role is reserved for, if any: after a proven release during a
 * handover to a named standby, only that uuid may take over until the release's time + T.
 */
export function reservedFor(lease: Pick<LeaseState, "uuid" | "renewedAt" | "handover">, haTime: number, timeoutMs: number): string | undefined {
  const to = lease.handover?.to;
  return lease.uuid === "" && to !== undefined && to !== null && haTime - lease.renewedAt <= timeoutMs ? to : undefined;
}

/** A priority as stored and shown: absent means 0. */
export function priorityOf(holder: { readonly priority?: number } | undefined): number {
  return holder?.priority ?? 0;
}

/** `state` with `priority` set, the field left out when it is 0 (the default), as every write stores it. */
export function withPriority<T extends object>(state: T, priority: number | undefined): T & { readonly priority?: number } {
  const rest: Record<string, unknown> = { ...(state as Record<string, unknown>) };
  delete rest["priority"];
  return (priority === undefined || priority === 0 ? rest : { ...rest, priority }) as T & { readonly priority?: number };
}
