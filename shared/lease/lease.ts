/**
 * The stored heartbeat record of one utype (SPEC §1 "entry"), without the store's ETag.
 *
 * `uuid === ""` marks a released lease: nobody holds it, but the epoch is kept so that
 * the next holder still gets a higher fencing token.
 */
export interface LeaseState {
  readonly utype: string;
  /** The holder's incarnation id, or "" once released. */
  readonly uuid: string;
  /** Where the holder can be reached (the seeds' `uname`), or null. */
  readonly address: string | null;
  /** Fencing token: grows by one on every change of holder, never goes down. */
  readonly epoch: number;
  /** ha_time (UTC ms on the function host's clock) of the last accepted write. */
  readonly renewedAt: number;
}

/** A lease as read from a store, with the ETag that a conditional write must present. */
export interface LeaseRecord extends LeaseState {
  readonly etag: string;
}

/** True when the entry has a holder whose last renewal is at most T old (SPEC §1 "live"). */
export function isLive(lease: LeaseState, haTime: number, timeoutMs: number): boolean {
  return lease.uuid !== "" && haTime - lease.renewedAt <= timeoutMs;
}
