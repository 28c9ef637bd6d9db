import type { TokenCredential } from "@azure/identity";

/** The scope of a Microsoft Entra token that Azure Database for PostgreSQL takes as a password. */
export const POSTGRES_ENTRA_SCOPE = "https://ossrdbms-aad.database.windows.net/.default";

/** A token is fetched anew once less than this is left of it: a connection opened with it authenticates well before it expires. */
export const ENTRA_REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * The password of each new connection to Azure Database for PostgreSQL with Microsoft Entra
 * authentication: an access token of the service's identity. The server checks it only when
 * a connection opens, so an open connection outlives its token; each new one gets a token
 * with at least ENTRA_REFRESH_MARGIN_MS left, fetched again before the cached one runs out.
 * Concurrent connections share one fetch. A failed fetch fails that connection (503 for its
 * call) and is asked again by the next.
 */
export class EntraPassword {
  #cached: { token: string; expiresAt: number } | undefined;
  #fetching: Promise<string> | undefined;

  constructor(
    private readonly credential: TokenCredential,
    private readonly now: () => number = Date.now,
  ) {}

  /** The token to send as the password. */
  async password(): Promise<string> {
    const cached = this.#cached;
    if (cached !== undefined && cached.expiresAt - this.now() > ENTRA_REFRESH_MARGIN_MS) return cached.token;
    this.#fetching ??= this.#fetch().finally(() => {
      this.#fetching = undefined;
    });
    return this.#fetching;
  }

  async #fetch(): Promise<string> {
    const token = await this.credential.getToken(POSTGRES_ENTRA_SCOPE);
    if (token === null) throw new Error(`The managed identity got no token for ${POSTGRES_ENTRA_SCOPE}.`);
    this.#cached = { token: token.token, expiresAt: token.expiresOnTimestamp };
    return token.token;
  }
}
