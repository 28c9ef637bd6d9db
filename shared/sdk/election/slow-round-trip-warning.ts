/**
 * Heartbeat round trips are eating into the safety margin: the p99 round trip is more
 * than a tenth of T − I. Nothing is unsafe yet, but a primary with slow round trips renews
 * late and is demoted more often. Emitted through the elector's `error` event.
 */
export class SlowRoundTripWarning extends Error {
  /** Always "SlowRoundTripWarning". */
  override readonly name = "SlowRoundTripWarning";

  constructor(
    /** The p99 heartbeat round trip, in ms. */
    readonly p99Ms: number,
    /** T − I, the margin it is compared with, in ms. */
    readonly marginMs: number,
  ) {
    super(
      `Heartbeat round trips are slow: p99 ${Math.round(p99Ms)} ms is more than a tenth of the T − I margin (${marginMs} ms). ` +
        "Move the participant closer to the service, or raise T on the server.",
    );
  }
}
