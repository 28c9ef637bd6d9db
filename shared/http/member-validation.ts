import type { MemberHeartbeatBody } from "../contract/members.js";
import { MAX_MEMBER_TOKEN_LENGTH } from "../contract/input-rules.js";
import { parseAddress, parseId, parseJsonObject } from "./validation.js";

export const MEMBER_HEARTBEAT_FIELDS: ReadonlySet<string> = new Set(["session", "address", "token"]);

/** Parses the PUT body `{"session", "address"?, "token"?}` with the lease body's rules; unknown fields are refused. */
export function parseMemberHeartbeatBody(bytes: Uint8Array): MemberHeartbeatBody {
  return memberHeartbeatFields(parseJsonObject(bytes, MEMBER_HEARTBEAT_FIELDS, '{"session": "…", "address": "host:port"}', "session, address and token"));
}

/** The member heartbeat's fields of `record` (its unknown fields already refused), named with `at` in errors: the PUT body, or a member part. */
export function memberHeartbeatFields(record: Readonly<Record<string, unknown>>, at = ""): MemberHeartbeatBody {
  return { session: parseId("session", record["session"], at), address: parseAddress(record["address"], at), token: parseMemberToken(record["token"]) };
}

/** As a lease token: only ever a hint for the fast path, so a malformed one is treated as absent. */
export function parseMemberToken(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "" || value.length > MAX_MEMBER_TOKEN_LENGTH) return undefined;
  return value;
}
