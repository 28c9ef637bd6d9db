import { randomBytes } from "node:crypto";
import type { StoreCallOptions } from "./store-call.js";
import { StoreUnavailableError } from "./store-unavailable-error.js";

/** The shortest secret taken, from HA_LEASE_SECRET or from the store. */
export const MIN_TOKEN_SECRET_LENGTH = 32;

/**
 * Where the service keeps the secret its tokens are signed with, when no HA_LEASE_SECRET
 * is given: a row of the lease store that no role can name, created once by the first
 * instance that asks and read by every later one (docs/configuration.md, HA_LEASE_SECRET).
 */
export interface TokenSecretStore {
  /**
   * The stored secret; when none is stored yet, `candidate` is stored (create-only) and
   * answered. Of two instances asking at once, both answer the one written first. A stored
   * value that is not a secret of at least MIN_TOKEN_SECRET_LENGTH characters is a
   * StoreUnavailableError naming it, never adopted.
   */
  tokenSecret(candidate: string, options?: StoreCallOptions): Promise<string>;
}

/** Where the keys' sealing secret came from: the setting, the store, or (until the store answers, or without one) this process. */
export type TokenSecretSource = "configured" | "store" | "drawn";

/**
 * The keys that sign the service's fast-path tokens (the lease token and the member token):
 * one seals, and every key this process sealed with still opens. A token that does not
 * open is taken as no token (a renewal then takes the slow path, a release with it is a
 * revoke), so every instance that serves one store must seal with one secret. Without
 * HA_LEASE_SECRET that secret is the store's (`loadFrom`): until the store has answered,
 * this process seals with a key it drew, and keeps opening what it sealed with it after.
 */
export class TokenKeys {
  #sealing: Buffer;
  #opening: readonly Buffer[];
  #source: TokenSecretSource;
  #stored: Promise<void> | undefined;

  constructor(secret?: string) {
    this.#sealing = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
    this.#opening = [this.#sealing];
    this.#source = secret === undefined ? "drawn" : "configured";
  }

  /** The key new tokens are sealed with. */
  get sealing(): Buffer {
    return this.#sealing;
  }

  /** Every key a token may have been sealed with here, the sealing one first. */
  get opening(): readonly Buffer[] {
    return this.#opening;
  }

  get source(): TokenSecretSource {
    return this.#source;
  }

  /**
   * Seals with the store's secret from its first answer on (asked at once, then again after
   * each failure, waiting `retryMs` doubled up to `maxRetryMs`; each call bounded by
   * `timeoutMs`). A configured secret is never replaced: nothing is asked. The promise
   * resolves once the store's secret is in use (never, for a configured one); the timers
   * keep no process alive, and `signal` ends the asking.
   */
  loadFrom(
    store: TokenSecretStore,
    { timeoutMs, retryMs = 1000, maxRetryMs = 60_000, signal }: { timeoutMs: number; retryMs?: number; maxRetryMs?: number; signal?: AbortSignal },
  ): Promise<void> {
    if (this.#source === "configured") return new Promise(() => undefined);
    this.#stored ??= new Promise((resolve) => {
      const candidate = drawTokenSecret();
      const attempt = (waitMs: number): void => {
        store
          .tokenSecret(candidate, { abortSignal: AbortSignal.timeout(Math.max(1, Math.round(timeoutMs))) })
          .then((secret) => {
            this.#adopt(checkStoredTokenSecret(secret, "the store"));
            resolve();
          })
          .catch(() => {
            if (signal?.aborted !== true) setTimeout(() => attempt(Math.min(maxRetryMs, waitMs * 2)), waitMs).unref();
          });
      };
      attempt(retryMs);
    });
    return this.#stored;
  }

  /**
   * Resolves once the store's secret is in use, or after `withinMs` if it is not yet (the
   * store does not answer: the drawn key seals meanwhile), or at once when nothing is
   * loaded. An instance waits for this before it serves, so that the tokens it issues are
   * taken by every other instance on its store from the first.
   */
  async settled(withinMs: number): Promise<void> {
    if (this.#stored === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#stored, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(1, Math.round(withinMs)))))]);
    clearTimeout(timer);
  }

  #adopt(secret: string): void {
    const key = Buffer.from(secret, "utf8");
    this.#opening = [key, ...this.#opening.filter((opening) => !opening.equals(key))];
    this.#sealing = key;
    this.#source = "store";
  }
}

/** A freshly drawn secret, as an instance offers it to the store. */
export function drawTokenSecret(): string {
  return randomBytes(48).toString("base64url");
}

/** The stored secret as read back: a string of at least MIN_TOKEN_SECRET_LENGTH characters, or a StoreUnavailableError naming what is wrong. */
export function checkStoredTokenSecret(value: unknown, store: string): string {
  if (typeof value !== "string" || value.length < MIN_TOKEN_SECRET_LENGTH) {
    throw new StoreUnavailableError(
      `${store} holds a corrupt token secret: ${typeof value === "string" ? `${value.length} characters, fewer than ${MIN_TOKEN_SECRET_LENGTH}` : `a ${typeof value}, not a string`}. Delete that row (or item) to have a new one drawn, or set HA_LEASE_SECRET.`,
    );
  }
  return value;
}
