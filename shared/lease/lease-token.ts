import { isPriority, MAX_LEASE_TOKEN_LENGTH } from "../contract/input-rules.js";
import { withPriority } from "./lease.js";
import { isCount, sameSecret, SignedToken } from "../service/signed-token.js";
import type { TokenKeys } from "../service/token-keys.js";

/**
 * What a lease token vouches for: the entry at `etag` is held by `uuid` at `epoch`, with
 * `address` stored as the holder's address.
 */
export interface LeaseTokenClaims {
  readonly utype: string;
  readonly uuid: string;
  readonly epoch: number;
  readonly etag: string;
  readonly address: string | null;
  /** The holder's stored priority; absent: 0 (a token of priority 0 carries five claims, as before priorities). */
  readonly priority?: number;
}

/** v2 added the address; a v1 token fails to verify and that renewal takes the slow path. */
const VERSION = "v2";

/**
 * Issues and checks the opaque `lease` token of the renewal fast path (docs/protocol.md#the-renewal-fast-path).
 *
 * The fast path writes without reading, so the token must carry what the answer shows:
 * the holder's uuid, epoch and stored address. A successful If-Match on its ETag proves
 * the entry is unchanged since the token was issued, so all three are still true. An HMAC
 * makes a forged token worthless: without the secret no one can claim an ETag for a uuid
 * the server did not pair it with. The runtime gives it the process's TokenKeys
 * (HA_LEASE_SECRET, or the secret kept in the store); without a secret it draws its own,
 * which is still safe: a token from another instance fails to verify and that renewal
 * takes the read-decide-write path.
 */
export class LeaseTokenSigner {
  readonly #token: SignedToken;
  /**
   * The last token issued per utype, newest last. A holder renews with the token it was
   * just given, and a string equal to one this signer issued is exactly what the HMAC check
   * would accept (signing is deterministic), so such a renewal skips the check: one HMAC
   * per renewal instead of two, where an HMAC costs tens of microseconds with cold caches.
   */
  readonly #issued = new Map<string, { readonly token: string; readonly claims: LeaseTokenClaims }>();

  /** `remembered`: how many utypes' last tokens are kept (oldest dropped first); any other token is checked by its HMAC. */
  constructor(
    secret?: string | TokenKeys,
    private readonly remembered = 10_000,
  ) {
    this.#token = new SignedToken(VERSION, secret);
  }

  issue(given: LeaseTokenClaims): string {
    const claims = withPriority(given, given.priority);
    const sealed = [claims.utype, claims.uuid, claims.epoch, claims.etag, claims.address];
    const token = this.#token.seal(claims.priority === undefined || claims.priority === 0 ? sealed : [...sealed, claims.priority]);
    this.#issued.delete(claims.utype);
    // Only claims the HMAC path would give back (parseClaims refuses any other epoch).
    if (Number.isSafeInteger(claims.epoch) && claims.epoch >= 1) this.#issued.set(claims.utype, { token, claims: { ...claims } });
    if (this.#issued.size > this.remembered) this.#issued.delete(this.#issued.keys().next().value as string);
    return token;
  }

  /**
   * The token's claims when it is genuine and names this caller's utype and uuid;
   * otherwise undefined, so that a bad token is treated exactly like an absent one.
   */
  verify(token: string, caller: { utype: string; uuid: string }): LeaseTokenClaims | undefined {
    if (token.length > MAX_LEASE_TOKEN_LENGTH) return undefined;
    const issued = this.#issued.get(caller.utype);
    // Compared in constant time, as the signature is: the token is a secret's output.
    if (issued !== undefined && sameSecret(issued.token, token)) return issued.claims.uuid === caller.uuid ? issued.claims : undefined;
    const opened = this.#token.open(token, [5, 6], MAX_LEASE_TOKEN_LENGTH);
    const claims = opened === undefined ? undefined : parseClaims(opened);
    if (claims === undefined || claims.utype !== caller.utype || claims.uuid !== caller.uuid) return undefined;
    return claims;
  }
}

function parseClaims([utype, uuid, epoch, etag, address, priority]: unknown[]): LeaseTokenClaims | undefined {
  if (typeof utype !== "string" || typeof uuid !== "string" || typeof etag !== "string") return undefined;
  if (!isCount(epoch) || epoch < 1) return undefined;
  if (address !== null && typeof address !== "string") return undefined;
  if (priority === undefined) return { utype, uuid, epoch, etag, address };
  if (!isPriority(priority) || priority === 0) return undefined;
  return { utype, uuid, epoch, etag, address, priority };
}
