import { createHmac, timingSafeEqual } from "node:crypto";
import { TokenKeys } from "./token-keys.js";

/**
 * The envelope of the service's opaque fast-path tokens (the lease token and the member
 * token): `version.payload.signature`, where the payload is a base64url JSON array of the
 * claims and the signature an HMAC-SHA256 of `version.payload`. A token that does not open
 * (another version, a bad signature, too long, not an array) is treated by its caller
 * exactly like an absent token, never as an error.
 *
 * Each kind of token has its own version string, so a token of one kind never opens as
 * the other: the version is part of what is signed.
 */
export class SignedToken {
  readonly #keys: TokenKeys;

  /**
   * A secret, or the process's TokenKeys (shared by both kinds of token, and by the store's
   * secret once it is loaded). Without either each signer draws its own key: tokens then
   * open only where they were issued.
   */
  constructor(
    private readonly version: string,
    secret?: string | TokenKeys,
  ) {
    this.#keys = secret instanceof TokenKeys ? secret : new TokenKeys(secret);
  }

  /** The token carrying `claims`, in this order. Deterministic: the same claims give the same token. */
  seal(claims: readonly unknown[]): string {
    const payload = Buffer.from(JSON.stringify(claims), "utf8").toString("base64url");
    return `${this.version}.${payload}.${this.#sign(payload, this.#keys.sealing)}`;
  }

  /**
   * The claims of a genuine token of this kind that has `length` of them (or one of the
   * lengths given), or undefined.
   * The signature is compared in constant time; tokens over `maxLength` are not looked at.
   */
  open(token: string, length: number | readonly number[], maxLength: number): unknown[] | undefined {
    if (token.length > maxLength) return undefined;
    const [version, payload, signature, ...rest] = token.split(".");
    if (version !== this.version || payload === undefined || signature === undefined || rest.length > 0) return undefined;
    if (!this.#keys.opening.some((key) => sameSecret(this.#sign(payload, key), signature))) return undefined;
    try {
      const value: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      const lengths: readonly number[] = typeof length === "number" ? [length] : length;
      return Array.isArray(value) && lengths.includes(value.length) ? (value as unknown[]) : undefined;
    } catch {
      return undefined;
    }
  }

  #sign(payload: string, key: Buffer): string {
    return createHmac("sha256", key).update(`${this.version}.${payload}`).digest("base64url");
  }
}

/** Whether two secret strings (tokens, signatures) are equal, in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A non-negative safe integer: a count or a time in ms, as tokens carry them. */
export function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
