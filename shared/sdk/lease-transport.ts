import type { LeaseView, PrimaryView } from "../lease/lease-view.js";

export type { LeaseView, PrimaryView };

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
 * `accepted`: the caller holds the lease, and `lease` is the token for the next renewal's
 * fast path. `held` (409 LeaseHeld): another live primary has it. `conflict` (409
 * Conflict): another write won the race. Both 409s carry the view of who holds it now.
 */
export type HeartbeatResult =
  | { readonly outcome: "accepted"; readonly view: LeaseView; readonly lease: string }
  | { readonly outcome: "held" | "conflict"; readonly view: LeaseView };

/** `released`: nobody holds the lease now (or it was not ours and had expired). */
export type ReleaseResult = {
  readonly outcome: "released" | "held" | "conflict";
  readonly view: LeaseView;
};

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
