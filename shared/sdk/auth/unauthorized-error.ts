import { HaRequestError } from "../transport/ha-request-error.js";

/**
 * The service refused the function key (401): it is missing, wrong, or was rotated. The
 * same request cannot succeed again (`retryable` is false); a new key can. The elector
 * reports it through `error` and keeps trying, backing off, since a key rotation or a
 * redeploy may fix it; stop it from the `error` handler if your program should not wait.
 */
export class UnauthorizedError extends HaRequestError {
  /** Always "UnauthorizedError". */
  override readonly name = "UnauthorizedError";

  constructor(
    what: string,
    /** The endpoint that refused the key: with several, the one whose key is wrong. */
    readonly endpoint: string,
    serviceMessage: string | undefined,
  ) {
    super(
      `${what}: 401 Unauthorized${serviceMessage === undefined ? "." : `: ${serviceMessage}`} ` +
        `Wrong or missing function key for ${endpoint}: pass apiKey or set HA_API_KEY.`,
      "Unauthorized",
      401,
    );
  }
}
