/**
 * The protocol's two durations (docs/protocol.md#words), from server configuration, never from a caller:
 * heartbeat interval I and lease timeout T, with T > 2·I.
 *
 * The naming rule for milliseconds, everywhere in this project: a name that holds a
 * duration or a time in milliseconds ends in `Ms` (`intervalMs`, `storeTimeoutMs`,
 * `graceMs`; `expiresInMs` is "expires in" + `Ms`). The one exception is a field of a
 * public options bag of the SDK or of a store adapter, which ends in `InMs`
 * (`timeoutInMs`, `retryDelayInMs`, `maxThrottleWaitInMs`): the Azure SDK convention of
 * the options they sit beside. Inside, the value is held in an `Ms` name again.
 * Constants follow the same rule in capitals (`DEFAULT_TIMEOUT_MS`).
 */
export interface LeaseTiming {
  /** I: a holder renews this often. */
  readonly intervalMs: number;
  /** T: a lease not renewed for this long expires. */
  readonly timeoutMs: number;
}

/**
 * How recently a standby must have announced itself to be named in a handover
 * (docs/protocol.md#planned-handover). A live one announces every T/2
 * (docs/protocol.md#standbys), so its row is at most T/2 and one poll (up to 1.2·I, and I/4
 * more on a participant's grid) old; one not seen for T/2 + 2·I has missed its announcement
 * by more than that: it stopped without withdrawing, or lost contact, and a handover to it
 * would leave the role without a primary for T. Never more than T, the standbys' window.
 */
export function handoverSeenWithinMs({ intervalMs, timeoutMs }: LeaseTiming): number {
  return Math.min(timeoutMs, timeoutMs / 2 + 2 * intervalMs);
}
