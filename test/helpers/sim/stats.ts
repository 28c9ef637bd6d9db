/** What happened in a run (or many): the fault mix and the protocol's outcomes. */
export const STAT_NAMES = [
  "runs",
  "worldEvents",
  "elections",
  "demotions",
  "storeWrites",
  "takeovers",
  "requests",
  "requestsLost",
  "answersLost",
  "duplicatesDelivered",
  "gateway503s",
  "heartbeatsAccepted",
  "heartbeatsHeld",
  "heartbeatsConflict",
  "heartbeatsRevoked",
  "ambiguousWrites",
  "writesLostBeforeStore",
  "outageFailedCalls",
  "outageHungReads",
  "outageHungWrites",
  "requestsBackdatedByStallMonitor",
  "electorPauses",
  "instanceStalls",
  "crashes",
  "stops",
  "revokes",
  "entryDeletions",
  "storeRollbacks",
  "termsErasedByRollbacks",
  "handovers",
  "participantHeartbeats",
  /** Not a fault: an ended uuid's second term, counted when `ended-stays-ended` is not judged. */
  "endedUuidsRestarted",
  "serviceOutages",
  "serviceOutageCalls",
  "instanceRestarts",
  "answersLostInRestarts",
  "refusedConnections",
  "partitions",
  "partitionedCalls",
  "ridesThrough",
  "fencedWritesApplied",
  "fencedWritesRefused",
  /** Judged by `sticky` (the outage profile only): outages for everyone with one holder when they began. */
  "outagesWithAHolder",
  /** …after which that holder held the role again (its term ridden through, or taken back). */
  "rolesKeptThroughOutages",
  /** …after which a standby took over because the holder had died (or was cut off) meanwhile. */
  "rolesMovedFromADeadHolder",
  /** Not a fault: leases that ran out where `renewal-copies` judges them (the loss profile's fast service). */
  "expiriesJudged",
  /** Judged by the priority invariants (the priority profile only): new terms on a free role… */
  "priorityTakeovers",
  /** …won by a candidate no standing-by one outranked. */
  "takeoversByTheHighest",
  /** Preemptions written (a handover with reason preempt). */
  "preemptions",
] as const;

/** Counted only where the `sticky` invariant judges (the outage profile). */
export const STICKY_STAT_NAMES: readonly StatName[] = ["outagesWithAHolder", "rolesKeptThroughOutages", "rolesMovedFromADeadHolder"];

export type StatName = (typeof STAT_NAMES)[number];

/** Counted only where the priority invariants judge (the priority profile). */
export const PRIORITY_STAT_NAMES: readonly StatName[] = ["priorityTakeovers", "takeoversByTheHighest", "preemptions"];

export class SimStats {
  readonly counts: Record<StatName, number> = Object.fromEntries(STAT_NAMES.map((name) => [name, 0])) as Record<StatName, number>;

  count(name: StatName, by = 1): void {
    this.counts[name] += by;
  }

  add(other: SimStats): void {
    for (const name of STAT_NAMES) this.counts[name] += other.counts[name];
  }
}
