import type { HeartbeatResult, ReleaseResult } from "../lease/lease-service.js";
import type { LeaseView, PrimaryView } from "../lease/lease-view.js";

/**
 * The client sees the outcomes the server decided, with the same shapes: `accepted`
 * carries the token for the next renewal's fast path; `held` (409 LeaseHeld), `revoked`
 * (409 LeaseRevoked) and `conflict` (409 Conflict) carry the view of who holds it now.
 */
export type { HeartbeatResult, LeaseView, PrimaryView, ReleaseResult };

/** Every call takes these: `abortSignal` cancels, `timeoutInMs` bounds the whole call. */
export interface CallOptions {
  readonly abortSignal?: AbortSignal;
  readonly timeoutInMs?: number;
}

/**
 * Release's options. With `lease` (the holder's token from its last accepted heartbeat)
 * the release is proven and a standby may take over at once; without it the lease is
 * revoked and runs out on its own.
 */
export interface ReleaseOptions extends CallOptions {
  readonly lease?: string;
}

/**
 * The PUT body of UpdateHeartBeat. `lease` is the token of the last accepted heartbeat.
 * `address`: a string sets it, null clears it, omitted keeps the stored one (and means
 * none when the heartbeat acquires or takes over).
 */
export interface HeartbeatRequest {
  readonly uuid: string;
  readonly address?: string | null;
  readonly lease?: string;
}

/**
 * The three lease calls the elector makes. HaClient implements it over HTTP; tests and the
 * simulation implement it over an in-memory lease service. Anything other than a typed
 * outcome (a timeout, a 503, a corrupted body) is thrown.
 */
export interface LeaseTransport {
  getPrimary(utype: string, options?: CallOptions): Promise<LeaseView>;
  heartbeat(utype: string, request: HeartbeatRequest, options?: CallOptions): Promise<HeartbeatResult>;
  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult>;
}
