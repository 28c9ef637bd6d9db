import type { MemberHeartbeatBody } from "../contract/members.js";
import { MAX_MEMBER_TOKEN_LENGTH } from "../contract/input-rules.js";
import { parseAddress, parseId, parseJsonObject } from "./validation.js";

const MEMBER_HEARTBEAT_FIELDS = new Set(["session", "address", "token"]);

/** Parses the PUT body `{"session", "address"?, "token"?}` with the lease body's rules; unknown fields are refused. */
export function parseMemberHeartbeatBody(bytes: Uint8Array): MemberHeartbeatBody {
  const record = parseJsonObject(bytes, MEMBER_HEARTBEAT_FIELDS, '{"session": "…", "address": "host:port"}', "session, address and token");
  return { session: parseId("session", record["session"]), address: parseAddress(record["address"]), token: parseMemberToken(record["token"]) };
}

/** As a lease token: only ever a hint for the fast path, so a malformed one is treated as absent. */
export function parseMemberToken(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "" || value.length > MAX_MEMBER_TOKEN_LENGTH) return undefined;
  return value;
}
