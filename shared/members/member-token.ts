import { MAX_MEMBER_TOKEN_LENGTH } from "../contract/input-rules.js";
import { isCount, SignedToken } from "../service/signed-token.js";
import type { TokenKeys } from "../service/token-keys.js";
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
  readonly #token: SignedToken;

  constructor(secret?: string | TokenKeys) {
    this.#token = new SignedToken(VERSION, secret);
  }

  issue(claims: MemberTokenClaims): string {
    const { group, member, session, heartbeats, joinedAt, renewedAt, address, previous, etag } = claims;
    const shownPrevious = previous === null ? null : [previous.session, previous.state, previous.at];
    return this.#token.seal([group, member, session, heartbeats, joinedAt, renewedAt, address, shownPrevious, etag]);
  }

  /** The claims when the token is genuine and names this caller; otherwise undefined. */
  verify(token: string, caller: { group: string; member: string; session: string }): MemberTokenClaims | undefined {
    const opened = this.#token.open(token, 9, MAX_MEMBER_TOKEN_LENGTH);
    const claims = opened === undefined ? undefined : parseClaims(opened);
    if (claims === undefined || claims.group !== caller.group || claims.member !== caller.member || claims.session !== caller.session) {
      return undefined;
    }
    return claims;
  }
}

function parseClaims([group, member, session, heartbeats, joinedAt, renewedAt, address, previous, etag]: unknown[]): MemberTokenClaims | undefined {
  if (typeof group !== "string" || typeof member !== "string" || typeof session !== "string" || typeof etag !== "string") return undefined;
  if (!isCount(heartbeats) || heartbeats < 1 || !isCount(joinedAt) || !isCount(renewedAt)) return undefined;
  if (address !== null && typeof address !== "string") return undefined;
  const parsedPrevious = parsePrevious(previous);
  if (parsedPrevious === false) return undefined;
  return { group, member, session, heartbeats, joinedAt, renewedAt, address, previous: parsedPrevious, etag };
}

function parsePrevious(value: unknown): ReplacedSession | null | false {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length !== 3) return false;
  const [session, state, at] = value as unknown[];
  if (typeof session !== "string" || (state !== "unreachable" && state !== "leaving") || !isCount(at)) return false;
  return { session, state, at };
}
