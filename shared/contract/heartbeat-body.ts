import { MAX_LEASE_TOKEN_LENGTH } from "./input-rules.js";
import { ADDRESS_SCHEMA, ID_SCHEMA, type ObjectSchema } from "./json-schema.js";

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

export const HEARTBEAT_BODY_SCHEMA: ObjectSchema<HeartbeatBody> = {
  type: "object",
  properties: {
    uuid: ID_SCHEMA,
    address: { ...ADDRESS_SCHEMA, description: "A string sets it, null clears it, omitted keeps the stored one." },
    lease: { type: "string", maxLength: MAX_LEASE_TOKEN_LENGTH, description: "The token of the caller's last accepted heartbeat: the one-write renewal." },
  },
  required: ["uuid"],
  additionalProperties: false,
};
