import type { HeartbeatBody } from "../../contract/heartbeat-body.js";
import type { LeaseView } from "../../contract/lease-view.js";
import type { HeartbeatResult, ReleaseResult, WithdrawResult } from "../../contract/outcomes.js";

/** Every call takes these: `abortSignal` cancels, `timeoutInMs` bounds the whole call. */
export interface CallOptions {
  /** Cancels the call: it rejects with the signal's reason. */
  readonly abortSignal?: AbortSignal;
  /** The budget of the whole call; the client's `timeoutInMs` by default. */
  readonly timeoutInMs?: number;
}

/**
 * Release's options. With `lease` (the holder's token from its last accepted heartbeat)
 * the release is proven and a standby may take over at once; without it the lease is
 * revoked and runs out on its own.
 */
export interface ReleaseOptions extends CallOptions {
  /** The holder's lease token, from its last accepted heartbeat. */
  readonly lease?: string;
}

/**
 * The lease calls the elector makes. HaClient implements it over HTTP; tests and the
 * simulation implement it over an in-memory lease service. Anything other than a typed
 * outcome (a timeout, a 503, a corrupted body) is thrown.
 */
export interface LeaseTransport {
  /** GetPrimary: the role's lease as the service sees it now. */
  getPrimary(utype: string, options?: CallOptions): Promise<LeaseView>;
  /** UpdateHeartBeat: acquires, renews or takes over the lease, or is refused with who holds it. */
  heartbeat(utype: string, body: HeartbeatBody, options?: CallOptions): Promise<HeartbeatResult>;
  /** Ends the term of `uuid`: released with its token, revoked without. */
  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult>;
  /**
   * A standby's withdrawal on a clean stop (docs/protocol.md#standbys): its standby row goes
   * at once instead of after T. Optional: without it a stopped standby's row ages out.
   */
  withdraw?(utype: string, uuid: string, options?: CallOptions): Promise<WithdrawResult>;
}
