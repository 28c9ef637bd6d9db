/**
 * The body of PUT /api/primary/{utype} (UpdateHeartBeat), `{"uuid", "address"?, "lease"?}`,
 * as the SDK sends it and the handler parses it. Unknown fields are refused.
 */
export interface HeartbeatBody {
  readonly uuid: string;
  /**
   * Where the holder can be reached: a string sets it, null clears it, omitted keeps the
   * stored one (and means none when the heartbeat acquires or takes over).
   */
  readonly address?: string | null;
  /** The token of the caller's last accepted heartbeat: the renewal fast path. */
  readonly lease?: string;
}

/** The query of DELETE /api/primary/{utype}: `?uuid=…[&lease=…]`. */
export interface ReleaseQuery {
  readonly uuid: string;
  /** The holder's token: with it the release is proven, without it a revoke. */
  readonly lease?: string;
}
