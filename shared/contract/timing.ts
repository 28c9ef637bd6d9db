/**
 * The protocol's two durations (SPEC §1), from server configuration, never from a caller:
 * heartbeat interval I and lease timeout T, with T > 2·I.
 *
 * Naming rule for durations, everywhere in this project: a field or variable that holds
 * milliseconds ends in `Ms` (`intervalMs`, `expiresInMs` is "expires in" + `Ms`). The
 * one exception is an option the caller passes to an SDK or store method, which ends in
 * `InMs` (`timeoutInMs`, `retryDelayInMs`, `maxThrottleWaitInMs`), the convention of the
 * Azure SDKs those options sit beside.
 */
export interface LeaseTiming {
  readonly intervalMs: number;
  readonly timeoutMs: number;
}
