/**
 * The input rules of the REST contract (docs/api.md#input-rules), in one place: the server refuses what
 * breaks them with a 400, and the SDK refuses it before sending.
 */

/** utype and uuid: 1–128 characters of [A-Za-z0-9._:-], safe as Table keys and Cosmos ids. */
export const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** ID_PATTERN in words, for the messages of the server and the SDK alike. */
export const ID_RULE = "1–128 characters of A–Z, a–z, 0–9, '.', '_', ':' or '-'";

/** The longest utype or uuid. */
export const MAX_ID_LENGTH = 128;

/**
 * "." and ".." match ID_PATTERN but cannot be addressed: URL resolution removes them as
 * path segments (`/api/primary/..` is `/api/`), so such a role could never be read back.
 */
export function isDotSegment(value: string): boolean {
  return value === "." || value === "..";
}

/** `address` is free text of at most this many characters (Unicode code points). */
export const MAX_ADDRESS_LENGTH = 512;

/** The length the address rule counts: code points, so an emoji is one character, not two. */
export function addressLength(value: string): number {
  return Array.from(value).length;
}

/**
 * Longer than any token the server issues (128-character utype and uuid, a 512-character
 * address of 4-byte characters, any epoch, a store ETag): such a string is treated as a
 * malformed token, i.e. as absent, without being parsed.
 */
export const MAX_LEASE_TOKEN_LENGTH = 3800;

/** Largest request body accepted, in bytes (docs/api.md#input-rules: 4 KiB). */
export const MAX_BODY_BYTES = 4096;

/**
 * A candidate's priority (docs/protocol.md#priorities-and-preemption): an integer in this
 * range, higher preferred, 0 when omitted.
 */
export const MIN_PRIORITY = -1_000_000;
export const MAX_PRIORITY = 1_000_000;

/** The priority rule in words, for the messages of the server and the SDK alike. */
export const PRIORITY_RULE = `an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY} (higher preferred; 0 when omitted)`;

/** True for a priority the contract accepts. */
export function isPriority(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= MIN_PRIORITY && value <= MAX_PRIORITY;
}

/** A control character (C0 or DEL) makes an address unprintable: refused. */
export function hasControlCharacter(value: string): boolean {
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Longer than any member token the server issues (three 128-character ids, a 512-character
 * address of 4-byte characters, the replaced session, a store ETag): such a string is
 * treated as a malformed token, i.e. as absent, without being parsed.
 */
export const MAX_MEMBER_TOKEN_LENGTH = 3900;

/** A participant heartbeat (docs/api.md#participant-heartbeat): at most this many parts in each list… */
export const MAX_PARTS_PER_LIST = 16;

/** …and in all. */
export const MAX_PARTS = 32;

/** The participant heartbeat's body limit, in bytes: 32 parts of the largest single bodies still fit. */
export const MAX_PARTICIPANT_BODY_BYTES = 64 * 1024;
