import { HaRequestError } from "./ha-request-error.js";

/**
 * A 404 to one of the lease routes, which the service always serves: `endpoint` does not
 * point at the service's API (most often it lacks the `/api` base path, or names another
 * app). The same request cannot succeed again (`retryable` is false); a corrected
 * endpoint, or a deploy that brings the routes, can.
 */
export class EndpointNotFoundError extends HaRequestError {
  /** Always "EndpointNotFoundError". */
  override readonly name = "EndpointNotFoundError";
  /** The endpoint (base URL) that answered 404: with several, the one to correct. */
  readonly endpoint: string;

  constructor(what: string, url: string, serviceMessage: string | undefined, endpoint: string = url) {
    super(
      `${what}: 404 Not Found from ${url}${serviceMessage === undefined ? "" : ` (${serviceMessage})`}. ` +
        "Does your endpoint end in /api? For example http://127.0.0.1:7071/api or https://<app>.azurewebsites.net/api.",
      "NotFound",
      404,
    );
    this.endpoint = endpoint;
  }
}
