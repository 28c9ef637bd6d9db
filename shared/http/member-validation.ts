import type { MemberHeartbeatBody } from "../contract/members.js";
import { MAX_BODY_BYTES, MAX_MEMBER_TOKEN_LENGTH } from "../contract/input-rules.js";
import { HttpError, invalid } from "./http-error.js";
import { parseAddress, parseId } from "./validation.js";

const MEMBER_HEARTBEAT_FIELDS = new Set(["session", "address", "token"]);
const EXAMPLE = '{"session": "…", "address": "host:port"}';

/** Parses the PUT body `{"session", "address"?, "token"?}` with the lease body's rules; unknown fields are refused. */
export function parseMemberHeartbeatBody(bytes: Uint8Array): MemberHeartbeatBody {
  if (bytes.byteLength > MAX_BODY_BYTES) {
    throw new HttpError("PayloadTooLarge", `The request body is ${bytes.byteLength} bytes; the limit is ${MAX_BODY_BYTES}.`);
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw invalid(`The request body must be a JSON object such as ${EXAMPLE}.`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid(`The request body must be a JSON object such as ${EXAMPLE}.`);
  const record = body as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !MEMBER_HEARTBEAT_FIELDS.has(key));
  if (unknown.length > 0) {
    throw invalid(`Unknown field ${unknown.map((key) => JSON.stringify(key)).join(", ")}: the body takes only session, address and token.`);
  }
  return { session: parseId("session", record["session"]), address: parseAddress(record["address"]), token: parseMemberToken(record["token"]) };
}

/** As a lease token: only ever a hint for the fast path, so a malformed one is treated as absent. */
export function parseMemberToken(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "" || value.length > MAX_MEMBER_TOKEN_LENGTH) return undefined;
  return value;
}
