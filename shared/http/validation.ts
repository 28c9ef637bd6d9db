import type { HandoverBody, HeartbeatBody } from "../contract/heartbeat-body.js";
import {
  addressLength,
  hasControlCharacter,
  ID_PATTERN,
  ID_RULE,
  isDotSegment,
  MAX_ADDRESS_LENGTH,
  MAX_BODY_BYTES,
  MAX_ID_LENGTH,
  MAX_LEASE_TOKEN_LENGTH,
  isPriority,
  PRIORITY_RULE,
} from "../contract/input-rules.js";
import { TERM_HISTORY_SLOTS } from "../contract/term-history.js";
import { invalid, HttpError } from "./http-error.js";

/** The fields named by the id rule; `at` names where one sits in a larger body (`roles[1].`). */
export type IdField = "utype" | "uuid" | "group" | "member" | "session";

/** utype, uuid, group, member and session: 1–128 characters of [A-Za-z0-9._:-], safe as Table keys and Cosmos ids. */
export function parseId(field: IdField, value: unknown, at = ""): string {
  const name = `${at}${field}`;
  if (typeof value !== "string" || value === "") {
    throw invalid(`${name} is required: ${ID_RULE}.`);
  }
  if (!ID_PATTERN.test(value)) {
    throw invalid(
      `${name} must be ${ID_RULE} (got ${value.length} characters${value.length <= MAX_ID_LENGTH ? " with a character outside that set" : ""}).`,
    );
  }
  if (isDotSegment(value)) throw invalid(`${name} must not be "." or "..": a URL path cannot address them; choose another name.`);
  return value;
}

export const HEARTBEAT_FIELDS: ReadonlySet<string> = new Set(["uuid", "address", "lease", "announce", "priority", "preempt"]);

/** Parses the PUT body `{"uuid", "address"?, "lease"?}`; unknown fields are refused. */
export function parseHeartbeatBody(bytes: Uint8Array): HeartbeatBody {
  return heartbeatFields(parseJsonObject(bytes, HEARTBEAT_FIELDS, '{"uuid": "…", "address": "host:port"}', "uuid, address, lease, announce, priority and preempt"));
}

/** The heartbeat's fields of `record` (its unknown fields already refused), named with `at` in errors: the PUT body, or a role part. */
export function heartbeatFields(record: Readonly<Record<string, unknown>>, at = ""): HeartbeatBody {
  const announce = record["announce"];
  if (announce !== undefined && typeof announce !== "boolean") throw invalid(`${at}announce must be true or false.`);
  const priority = record["priority"];
  if (priority !== undefined && !isPriority(priority)) throw invalid(`${at}priority must be ${PRIORITY_RULE} (got ${JSON.stringify(priority)}).`);
  const preempt = record["preempt"];
  if (preempt !== undefined && typeof preempt !== "boolean") throw invalid(`${at}preempt must be true or false.`);
  const body = { uuid: parseId("uuid", record["uuid"], at), address: parseAddress(record["address"], at), lease: parseLease(record["lease"]) };
  // A priority of 0 and `preempt: false` are the defaults: the body is then the one of a caller that omits them.
  return {
    ...body,
    ...(announce === true ? { announce } : {}),
    ...(priority === undefined || priority === 0 ? {} : { priority }),
    ...(preempt === true ? { preempt } : {}),
  };
}

const HANDOVER_FIELDS = new Set(["to"]);

/** Parses the POST body of a handover, `{}` or `{"to": "…"}`; an empty body is `{}`. */
export function parseHandoverBody(bytes: Uint8Array): HandoverBody {
  if (bytes.byteLength === 0) return {};
  const record = parseJsonObject(bytes, HANDOVER_FIELDS, '{} or {"to": "<standby uuid or address>"}', "to");
  const to = record["to"];
  if (to === undefined || to === null) return {};
  if (typeof to !== "string" || to === "") throw invalid("to must be a standby's uuid or address (a non-empty string), or omitted for any standby.");
  if (addressLength(to) > MAX_ADDRESS_LENGTH) throw invalid(`to must be at most ${MAX_ADDRESS_LENGTH} characters (got ${addressLength(to)}).`);
  return { to };
}

/**
 * The one body parser of every route: the body as a JSON object with only `fields`;
 * `example` and `takes` word the errors. Over `limitBytes` (4 KiB unless the route says
 * otherwise) is 413.
 */
export function parseJsonObject(bytes: Uint8Array, fields: ReadonlySet<string>, example: string, takes: string, limitBytes = MAX_BODY_BYTES): Record<string, unknown> {
  if (bytes.byteLength > limitBytes) {
    throw new HttpError("PayloadTooLarge", `The request body is ${bytes.byteLength} bytes; the limit is ${limitBytes}.`);
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw invalid(`The request body must be a JSON object such as ${example}.`);
  }
  if (!isJsonObject(body)) {
    throw invalid(`The request body must be a JSON object such as ${example}.`);
  }
  refuseUnknownFields(body, fields, "the body", takes);
  return body;
}

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** 400 naming every field of `record` outside `fields`; `where` is "the body" or the part (`roles[1]`). */
export function refuseUnknownFields(record: Readonly<Record<string, unknown>>, fields: ReadonlySet<string>, where: string, takes: string): void {
  const unknown = Object.keys(record).filter((key) => !fields.has(key));
  if (unknown.length > 0) {
    const named = unknown.map((key) => JSON.stringify(key)).join(", ");
    throw invalid(where === "the body" ? `Unknown field ${named}: the body takes only ${takes}.` : `Unknown field ${named} in ${where}: it takes only ${takes}.`);
  }
}

/** `?standbys=true` and the like: absent or "false" is false, "true" is true, anything else names the parameter. */
export function parseFlag(name: string, value: string | undefined): boolean {
  if (value === undefined || value === "false") return false;
  if (value === "true" || value === "") return true;
  throw invalid(`${name} must be true or false (got ${JSON.stringify(value.slice(0, 20))}).`);
}

/** Omitted stays undefined (keep the stored address); null and "" clear it. `at` names where it sits (`roles[1].`). */
export function parseAddress(value: unknown, at = ""): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (typeof value !== "string") throw invalid(`${at}address must be a string (where the primary can be reached) or null.`);
  const length = addressLength(value);
  if (length > MAX_ADDRESS_LENGTH) {
    throw invalid(`${at}address must be at most ${MAX_ADDRESS_LENGTH} characters (got ${length}).`);
  }
  if (hasControlCharacter(value)) throw invalid(`${at}address must not contain control characters.`);
  return value === "" ? null : value;
}

/**
 * A token is only ever a hint for the fast path or a proof for a release, so a malformed
 * one (not a string, absurdly long) is treated as absent, never an error (docs/protocol.md#the-renewal-fast-path).
 */
export function parseLease(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "" || value.length > MAX_LEASE_TOKEN_LENGTH) return undefined;
  return value;
}

/** `?limit=` of the term history: a whole number 1..TERM_HISTORY_SLOTS; absent means all. */
export function parseHistoryLimit(value: string | undefined): number {
  if (value === undefined) return TERM_HISTORY_SLOTS;
  const limit = /^[0-9]{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= TERM_HISTORY_SLOTS)) {
    throw invalid(`limit must be a whole number from 1 to ${TERM_HISTORY_SLOTS} (got ${JSON.stringify(value.slice(0, 20))}).`);
  }
  return limit;
}
