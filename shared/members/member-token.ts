import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { MAX_MEMBER_TOKEN_LENGTH } from "../contract/input-rules.js";
import type { ReplacedSession } from "./member.js";

/**
 * What a member token vouches for: the row at `etag` belongs to `session` with these
 * fields. A successful If-Match on the ETag proves they are all still true, so the fast
 * path can answer without reading.
 */
export interface MemberTokenClaims {
  readonly group: string;
  readonly member: string;
  readonly session: string;
  readonly heartbeats: number;
  readonly joinedAt: number;
  /** The renewedAt written with this ETag: the fast path is taken only while it is recent. */
  readonly renewedAt: number;
  readonly address: string | null;
  readonly previous: ReplacedSession | null;
  readonly etag: string;
}

/** Not the lease token's version: a lease token is never a member token, nor the reverse. */
const VERSION = "m1";

/**
 * Issues and checks the opaque `token` of the member heartbeat fast path, as
 * LeaseTokenSigner does for leases (same secret, HA_LEASE_SECRET): an HMAC makes a forged
 * token worthless, and a token that does not verify, or names another caller, is treated
 * as absent (the slow path decides), never as an error.
 */
export class MemberTokenSigner {
  readonly #key: Buffer;

  constructor(secret?: string) {
    this.#key = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
  }

  issue(claims: MemberTokenClaims): string {
    const { group, member, session, heartbeats, joinedAt, renewedAt, address, previous, etag } = claims;
    const shownPrevious = previous === null ? null : [previous.session, previous.state, previous.at];
    const payload = Buffer.from(
      JSON.stringify([group, member, session, heartbeats, joinedAt, renewedAt, address, shownPrevious, etag]),
      "utf8",
    ).toString("base64url");
    return `${VERSION}.${payload}.${this.#sign(payload)}`;
  }

  /** The claims when the token is genuine and names this caller; otherwise undefined. */
  verify(token: string, caller: { group: string; member: string; session: string }): MemberTokenClaims | undefined {
    if (token.length > MAX_MEMBER_TOKEN_LENGTH) return undefined;
    const [version, payload, signature, ...rest] = token.split(".");
    if (version !== VERSION || payload === undefined || signature === undefined || rest.length > 0) return undefined;
    const expected = Buffer.from(this.#sign(payload), "utf8");
    const given = Buffer.from(signature, "utf8");
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    const claims = parseClaims(payload);
    if (claims === undefined || claims.group !== caller.group || claims.member !== caller.member || claims.session !== caller.session) {
      return undefined;
    }
    return claims;
  }

  #sign(payload: string): string {
    return createHmac("sha256", this.#key).update(`${VERSION}.${payload}`).digest("base64url");
  }
}

function parseClaims(payload: string): MemberTokenClaims | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 9) return undefined;
    const [group, member, session, heartbeats, joinedAt, renewedAt, address, previous, etag] = value as unknown[];
    if (typeof group !== "string" || typeof member !== "string" || typeof session !== "string" || typeof etag !== "string") return undefined;
    if (!isCount(heartbeats) || heartbeats < 1 || !isCount(joinedAt) || !isCount(renewedAt)) return undefined;
    if (address !== null && typeof address !== "string") return undefined;
    const parsedPrevious = parsePrevious(previous);
    if (parsedPrevious === false) return undefined;
    return { group, member, session, heartbeats, joinedAt, renewedAt, address, previous: parsedPrevious, etag };
  } catch {
    return undefined;
  }
}

function parsePrevious(value: unknown): ReplacedSession | null | false {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length !== 3) return false;
  const [session, state, at] = value as unknown[];
  if (typeof session !== "string" || (state !== "unreachable" && state !== "leaving") || !isCount(at)) return false;
  return { session, state, at };
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
