import { MAX_LEASE_TOKEN_LENGTH, MAX_PRIORITY, MIN_PRIORITY } from "./input-rules.js";
import { heartbeatBodySchema, type ObjectSchema } from "./json-schema.js";

/**
 * The body of PUT /api/primary/{utype} (UpdateHeartBeat), `{"uuid", "address"?, "lease"?}`,
 * as the SDK sends it and the handler parses it. Unknown fields are refused.
 */
export interface HeartbeatBody {
  /** The caller's id for this term: one per process (or per start), sent with every heartbeat; a new uuid is a new participant. */
  readonly uuid: string;
  /**
   * Where the holder can be reached: a string sets it, null clears it, omitted keeps the
   * stored one (and means none when the heartbeat acquires or takes over).
   */
  readonly address?: string | null;
  /** The token of the caller's last accepted heartbeat: the renewal fast path. */
  readonly lease?: string;
  /**
   * A standby's announcement (docs/protocol.md#standbys): when this heartbeat is refused
   * because the role is held (or reserved), the service records the caller as a standby
   * of the role. The SDK sets it on a follower's first poll and about every T/2 after.
   */
  readonly announce?: boolean;
  /**
   * The caller's priority for the role (docs/protocol.md#priorities-and-preemption): an
   * integer from MIN_PRIORITY to MAX_PRIORITY, higher preferred; omitted: 0. A free role goes
   * to the highest standby seen within T; the holder's is stored with its term.
   */
  readonly priority?: number;
  /**
   * A standby's request to preempt (docs/protocol.md#priorities-and-preemption): sent with
   * `announce` once the caller has stood by continuously for its hold-down. When the live
   * holder's priority is lower than the caller's, the service asks the holder to hand the role
   * over to the caller, as an operator's handover would.
   */
  readonly preempt?: boolean;
}

/** The query of DELETE /api/primary/{utype}: `?uuid=…[&lease=…]`. */
export interface ReleaseQuery {
  readonly uuid: string;
  /** The holder's token: with it the release is proven, without it a revoke. */
  readonly lease?: string;
}

export const HEARTBEAT_BODY_SCHEMA: ObjectSchema<HeartbeatBody> = heartbeatBodySchema("uuid", {
  lease: { type: "string", maxLength: MAX_LEASE_TOKEN_LENGTH, description: "The token of the caller's last accepted heartbeat: the one-write renewal." },
  announce: { type: "boolean", description: "When refused because the role is held, record the caller as a standby (about every T/2)." },
  priority: { type: "integer", minimum: MIN_PRIORITY, maximum: MAX_PRIORITY, description: "The caller's priority, higher preferred; omitted: 0. A free role goes to the highest standby seen within T." },
  preempt: { type: "boolean", description: "With `announce`, from a standby that has stood by for its hold-down: a holder of lower priority is asked to hand the role over to it." },
});

/** The body of POST /api/primary/{utype}/handover: `{}` or `{"to": uuid or address}`. */
export interface HandoverBody {
  /** A standby of the role, by its uuid or its address; omitted: any standby. */
  readonly to?: string;
}

export const HANDOVER_BODY_SCHEMA: ObjectSchema<HandoverBody> = {
  type: "object",
  properties: {
    to: { type: "string", minLength: 1, maxLength: 512, description: "A standby of the role, by uuid or by address (see `?standbys=true`); omitted: any standby." },
  },
  required: [],
  additionalProperties: false,
};
