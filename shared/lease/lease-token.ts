import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { MAX_LEASE_TOKEN_LENGTH } from "../contract/input-rules.js";

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
 * the server did not pair it with. Without a configured secret each process draws its
 * own, which is still safe: a token from another instance fails to verify and that
 * renewal takes the read-decide-write path.
 */
export class LeaseTokenSigner {
  readonly #key: Buffer;
  /**
   * The last token issued per utype, newest last. A holder renews with the token it was
   * just given, and a string equal to one this signer issued is exactly what the HMAC check
   * would accept (signing is deterministic), so such a renewal skips the check: one HMAC
   * per renewal instead of two, where an HMAC costs tens of microseconds with cold caches.
   */
  readonly #issued = new Map<string, { readonly token: string; readonly claims: LeaseTokenClaims }>();

  /** `remembered`: how many utypes' last tokens are kept (oldest dropped first); any other token is checked by its HMAC. */
  constructor(
    secret?: string,
    private readonly remembered = 10_000,
  ) {
    this.#key = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
  }

  issue(claims: LeaseTokenClaims): string {
    const payload = Buffer.from(
      JSON.stringify([claims.utype, claims.uuid, claims.epoch, claims.etag, claims.address]),
      "utf8",
    ).toString("base64url");
    const token = `${VERSION}.${payload}.${this.#sign(payload)}`;
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
    // Compared in constant time, as the signature is below: the token is a secret's output.
    if (issued !== undefined && sameSecret(issued.token, token)) return issued.claims.uuid === caller.uuid ? issued.claims : undefined;
    const [version, payload, signature, ...rest] = token.split(".");
    if (version !== VERSION || payload === undefined || signature === undefined || rest.length > 0) {
      return undefined;
    }
    const expected = Buffer.from(this.#sign(payload), "utf8");
    const given = Buffer.from(signature, "utf8");
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    const claims = parseClaims(payload);
    if (claims === undefined || claims.utype !== caller.utype || claims.uuid !== caller.uuid) {
      return undefined;
    }
    return claims;
  }

  #sign(payload: string): string {
    return createHmac("sha256", this.#key).update(`${VERSION}.${payload}`).digest("base64url");
  }
}

function parseClaims(payload: string): LeaseTokenClaims | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 5) return undefined;
    const [utype, uuid, epoch, etag, address] = value as unknown[];
    if (typeof utype !== "string" || typeof uuid !== "string" || typeof etag !== "string") return undefined;
    if (typeof epoch !== "number" || !Number.isSafeInteger(epoch) || epoch < 1) return undefined;
    if (address !== null && typeof address !== "string") return undefined;
    return { utype, uuid, epoch, etag, address };
  } catch {
    return undefined;
  }
}

/** Whether two token strings are equal, in time that does not depend on where they differ. */
function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}
