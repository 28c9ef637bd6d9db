import { HaRequestError } from "../transport/ha-request-error.js";

/**
 * The service refused the caller's credential (401). The same request cannot succeed again
 * (`retryable` is false); a new credential can. The elector reports it through `error` and
 * keeps trying, backing off, since a key rotation or a redeploy may fix it; stop it from
 * the `error` handler if your program should not wait.
 *
 * `credential` says what was refused: `key`, the function key (missing, wrong, or rotated),
 * or `token`, a bearer token (a managed identity's: most often asked for an audience the
 * service does not accept, which the service's message names), and the message says what
 * to change for that one.
 */
export class UnauthorizedError extends HaRequestError {
  /** Always "UnauthorizedError". */
  override readonly name = "UnauthorizedError";
  /** What was refused: `key`, the function key; `token`, a bearer token (its audience or issuer). */
  readonly credential: "key" | "token";

  constructor(
    what: string,
    /** The endpoint that refused the credential: with several, the one to correct. */
    readonly endpoint: string,
    serviceMessage: string | undefined,
    /** The client sent a bearer token, of this identity (its description, which names the audience asked for). */
    token?: { readonly identity: string },
  ) {
    super(
      `${what}: 401 Unauthorized${serviceMessage === undefined ? "." : `: ${serviceMessage}`} ` +
        (token === undefined
          ? `Wrong or missing function key for ${endpoint}: pass apiKey or set HA_API_KEY.`
          : `${endpoint} refused the token of ${token.identity}: ask for the token with the audience the service accepts (its HA_AUTH_AUDIENCE), ` +
            "as ManagedIdentityCredential's audience or HA_AUTH_AUDIENCE, and use an identity of the service's tenant (its HA_AUTH_TENANT_ID)."),
      "Unauthorized",
      401,
    );
    this.credential = token === undefined ? "key" : "token";
  }
}
