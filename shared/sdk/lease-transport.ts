import type { HeartbeatResult, ReleaseResult } from "../lease/lease-service.js";
import type { LeaseView, PrimaryView } from "../lease/lease-view.js";

/**
 * The client sees the outcomes the server decided, with the same shapes: `accepted`
 * carries the token for the next renewal's fast path; `held` (409 LeaseHeld) and
 * `conflict` (409 Conflict) carry the view of who holds the lease now.
 */
export type { HeartbeatResult, LeaseView, PrimaryView, ReleaseResult };

/** Every call takes these: `abortSignal` cancels, `timeoutInMs` bounds the whole call. */
export interface CallOptions {
  readonly abortSignal?: AbortSignal;
  readonly timeoutInMs?: number;
}

/** The PUT body of UpdateHeartBeat. `lease` is the token of the last accepted heartbeat. */
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
  release(utype: string, uuid: string, options?: CallOptions): Promise<ReleaseResult>;
}
