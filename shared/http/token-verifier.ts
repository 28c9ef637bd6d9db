import { createPublicKey, verify, type JsonWebKey, type KeyObject } from "node:crypto";
import type { IdentityConfig } from "../config/auth-config.js";

/** Who a verified token says the caller is: the identity's object id and its application (client) id. */
export interface TokenIdentity {
  readonly objectId: string | undefined;
  readonly appId: string | undefined;
}

/** The token is not one this service accepts (401): the message says which check it failed. */
export class TokenRefusedError extends Error {
  override readonly name = "TokenRefusedError";
}

/** The tenant's signing keys could not be fetched (503): nothing is wrong with the caller. */
export class IdentityProviderUnavailableError extends Error {
  override readonly name = "IdentityProviderUnavailableError";
}

export interface TokenVerifierOptions {
  /** For tests: a fetch that reaches a local issuer. */
  readonly fetch?: typeof fetch;
  /** Wall-clock now in ms, for exp and nbf. */
  readonly now?: () => number;
  /** Monotonic now in ms, for the key set's age; performance.now by default. */
  readonly monotonicNow?: () => number;
  /** The budget of one metadata or keys fetch; 5 s by default. */
  readonly fetchTimeoutMs?: number;
}

/** Accepted between a token's nbf and exp give or take this much clock difference. */
export const CLOCK_SKEW_S = 60;
/** The signing keys are fetched again after this long (Entra rolls keys over weeks). */
const KEYS_TTL_MS = 24 * 3_600_000;
/** A token signed by a key not in the set fetches the set again at most this often, so that made-up kids cannot make us fetch per request. */
const REFRESH_COOLDOWN_MS = 60_000;
/** The only signature algorithm accepted: what Microsoft Entra signs access tokens with. Never `none`, never HMAC. */
const ALGORITHMS: Readonly<Record<string, string>> = { RS256: "RSA-SHA256" };
const MAX_TOKEN_LENGTH = 16_384;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Verifies Microsoft Entra access tokens (JWTs) for one tenant and audience, as the service
 * receives them in `Authorization: Bearer`: RS256 only, a signing key of the tenant's
 * published set (OpenID metadata → jwks_uri, fetched within a bounded time and cached; an
 * unknown `kid` fetches the set once more, for a key rollover), the issuer of the tenant
 * (v1.0 or v2.0 tokens), the audience, and exp/nbf with CLOCK_SKEW_S of clock difference.
 */
export class TokenVerifier {
  readonly #config: IdentityConfig;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #monotonicNow: () => number;
  readonly #fetchTimeoutMs: number;
  readonly #issuers: ReadonlySet<string>;
  #keys = new Map<string, KeyObject>();
  #fetchedAt: number | undefined;
  #loading: Promise<void> | undefined;

  constructor(config: IdentityConfig, options: TokenVerifierOptions = {}) {
    this.#config = config;
    this.#fetch = options.fetch ?? fetch;
    this.#now = options.now ?? Date.now;
    this.#monotonicNow = options.monotonicNow ?? (() => performance.now());
    this.#fetchTimeoutMs = Math.max(1, Math.round(options.fetchTimeoutMs ?? 5_000));
    const { authority, tenantId } = config;
    // v2.0 tokens name the authority's tenant endpoint; v1.0 tokens (what a managed identity
    // gets for an API that did not ask for v2) name sts.windows.net in the public cloud.
    const v1 = authority === "https://login.microsoftonline.com" ? `https://sts.windows.net/${tenantId}/` : `${authority}/${tenantId}/`;
    this.#issuers = new Set([`${authority}/${tenantId}/v2.0`, v1]);
  }

  /** The caller the token names, or a TokenRefusedError saying why not (or IdentityProviderUnavailableError). */
  async verify(token: string): Promise<TokenIdentity> {
    if (token.length > MAX_TOKEN_LENGTH) throw new TokenRefusedError("The bearer token is longer than any access token.");
    const parts = token.split(".");
    if (parts.length !== 3 || !parts.every((part) => BASE64URL.test(part))) throw new TokenRefusedError("The bearer token is not a signed JWT (three base64url parts).");
    const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
    const header = decodeJson(headerPart, "header");
    const payload = decodeJson(payloadPart, "payload");
    const algorithm = typeof header["alg"] === "string" ? ALGORITHMS[header["alg"]] : undefined;
    if (algorithm === undefined || !Object.hasOwn(ALGORITHMS, header["alg"] as string)) {
      throw new TokenRefusedError(`The token's algorithm ${JSON.stringify(String(header["alg"]).slice(0, 20))} is not accepted: only RS256.`);
    }
    const kid = header["kid"];
    if (typeof kid !== "string" || kid === "") throw new TokenRefusedError("The token names no signing key (kid).");
    this.#checkClaims(payload);
    const key = await this.#key(kid);
    const signed = Buffer.from(`${headerPart}.${payloadPart}`, "ascii");
    const signature = Buffer.from(signaturePart, "base64url");
    // Only the one encoding of the signature: another spelling of the same bytes is not the token that was issued.
    if (signature.toString("base64url") !== signaturePart || !verify(algorithm, signed, key, signature)) {
      throw new TokenRefusedError("The token's signature does not verify.");
    }
    return { objectId: stringClaim(payload, "oid"), appId: stringClaim(payload, "appid") ?? stringClaim(payload, "azp") };
  }

  #checkClaims(payload: Record<string, unknown>): void {
    const issuer = payload["iss"];
    if (typeof issuer !== "string" || !this.#issuers.has(issuer)) {
      throw new TokenRefusedError(`The token was not issued by the tenant ${this.#config.tenantId} (iss ${JSON.stringify(String(issuer).slice(0, 120))}).`);
    }
    const audience = payload["aud"];
    const audiences = Array.isArray(audience) ? audience : [audience];
    if (!audiences.some((value) => typeof value === "string" && this.#config.audiences.includes(value))) {
      throw new TokenRefusedError(`The token is for another audience (aud ${JSON.stringify(String(audience).slice(0, 120))}); request it for ${this.#config.audiences.join(" or ")}.`);
    }
    const nowS = this.#now() / 1000;
    const exp = payload["exp"];
    if (typeof exp !== "number" || !Number.isFinite(exp)) throw new TokenRefusedError("The token has no expiry (exp).");
    if (nowS > exp + CLOCK_SKEW_S) throw new TokenRefusedError("The token has expired; get a new one.");
    const nbf = payload["nbf"];
    if (nbf !== undefined && (typeof nbf !== "number" || nowS < nbf - CLOCK_SKEW_S)) throw new TokenRefusedError("The token is not valid yet (nbf).");
  }

  async #key(kid: string): Promise<KeyObject> {
    const monotonic = this.#monotonicNow();
    const stale = this.#fetchedAt === undefined || monotonic - this.#fetchedAt > KEYS_TTL_MS;
    if (stale) await this.#load(this.#keys.size === 0);
    let key = this.#keys.get(kid);
    if (key === undefined && this.#fetchedAt !== undefined && this.#monotonicNow() - this.#fetchedAt >= REFRESH_COOLDOWN_MS) {
      // A key published since the set was fetched (a rollover): fetch it once more.
      await this.#load(false);
      key = this.#keys.get(kid);
    }
    if (key === undefined) throw new TokenRefusedError(`The token is signed by a key the tenant does not publish (kid ${JSON.stringify(kid.slice(0, 80))}).`);
    return key;
  }

  /** Fetches the key set, one fetch at a time; `required`: with no keys yet, a failure is the caller's 503. */
  async #load(required: boolean): Promise<void> {
    this.#loading ??= this.#fetchKeys().finally(() => (this.#loading = undefined));
    try {
      await this.#loading;
    } catch (error) {
      // With keys in hand, an identity provider that does not answer keeps the old set for now.
      if (required || this.#keys.size === 0) throw error;
    }
  }

  async #fetchKeys(): Promise<void> {
    const { authority, tenantId } = this.#config;
    const metadata = await this.#getJson(`${authority}/${tenantId}/v2.0/.well-known/openid-configuration`);
    const jwksUri = metadata["jwks_uri"];
    if (typeof jwksUri !== "string" || !sameTrust(jwksUri, authority)) {
      throw new IdentityProviderUnavailableError(`The OpenID metadata of ${authority}/${tenantId} has no usable jwks_uri.`);
    }
    const set = await this.#getJson(jwksUri);
    const keys = new Map<string, KeyObject>();
    for (const jwk of Array.isArray(set["keys"]) ? (set["keys"] as unknown[]) : []) {
      if (typeof jwk !== "object" || jwk === null) continue;
      const { kid, kty, use } = jwk as Record<string, unknown>;
      if (typeof kid !== "string" || kty !== "RSA" || (use !== undefined && use !== "sig")) continue;
      try {
        keys.set(kid, createPublicKey({ key: jwk as JsonWebKey, format: "jwk" }));
      } catch {
        // A key Node cannot read is one no token of ours is signed with.
      }
    }
    this.#keys = keys;
    this.#fetchedAt = this.#monotonicNow();
  }

  async #getJson(url: string): Promise<Record<string, unknown>> {
    try {
      const response = await this.#fetch(url, { signal: AbortSignal.timeout(this.#fetchTimeoutMs), headers: { accept: "application/json" } });
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      const body: unknown = await response.json();
      if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error("not a JSON object");
      return body as Record<string, unknown>;
    } catch (error) {
      throw new IdentityProviderUnavailableError(`The signing keys of the tenant could not be fetched from ${url}: ${error instanceof Error ? error.message : String(error)}.`);
    }
  }
}

function decodeJson(part: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  } catch {
    throw new TokenRefusedError(`The token's ${what} is not JSON.`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TokenRefusedError(`The token's ${what} is not a JSON object.`);
  return value as Record<string, unknown>;
}

function stringClaim(payload: Record<string, unknown>, name: string): string | undefined {
  const value = payload[name];
  return typeof value === "string" && value !== "" ? value.toLowerCase() : undefined;
}

/** The key set is trusted only over https, or from the same loopback issuer a test configured. */
function sameTrust(url: string, authority: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.origin === new URL(authority).origin;
  } catch {
    return false;
  }
}
