import { HaRequestError } from "../transport/ha-request-error.js";

/**
 * The service knows who the caller is, but no grant of its HA_GRANTS lets it make this
 * write (403): the role or group is another's. The same request cannot succeed again
 * (`retryable` is false); a grant can. Like UnauthorizedError, the elector reports it
 * through `error` and keeps trying, backing off, since a change of the grants may fix it.
 */
export class ForbiddenError extends HaRequestError {
  /** Always "ForbiddenError". */
  override readonly name = "ForbiddenError";

  constructor(what: string, identity: string, serviceMessage: string | undefined) {
    super(
      `${what}: 403 Forbidden${serviceMessage === undefined ? "." : `: ${serviceMessage}`} ` +
        `This client authenticates as ${identity}; ask for a grant in the service's HA_GRANTS, or use the role or group granted to it.`,
      "Forbidden",
      403,
    );
  }
}
