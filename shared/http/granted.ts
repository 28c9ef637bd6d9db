import type { HttpResponseInit } from "./azure-functions.js";

/** What the grants allow a granted request to do beyond its Need. */
export interface Granted {
  /** Release asks: may a DELETE that turns out a revoke go ahead? */
  readonly mayRevoke: boolean;
  /**
   * The participant heartbeat asks for each of its parts (docs/api.md#participant-heartbeat):
   * the 403 that `operation` (the route the part stands for: updateHeartBeat for a role,
   * updateMemberHeartBeat for a member) would answer with these path parameters, the same
   * body from the same row of WRITE_NEEDS, or undefined when the part may go ahead.
   */
  refusal(operation: string, params: Readonly<Record<string, string>>): HttpResponseInit | undefined;
}
