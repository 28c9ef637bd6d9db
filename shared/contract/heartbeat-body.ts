import { MAX_LEASE_TOKEN_LENGTH } from "./input-rules.js";
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
