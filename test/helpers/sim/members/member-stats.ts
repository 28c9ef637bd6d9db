/** What happened in membership runs: the fault mix and the outcomes the checker judged. */
export const MEMBER_STAT_NAMES = [
  "runs",
  "worldEvents",
  "requests",
  "requestsLost",
  "answersLost",
  "duplicatesDelivered",
  "gateway503s",
  "serviceOutage503s",
  "heartbeatsAccepted",
  "heartbeatsHeld",
  "heartbeatsEnded",
  "heartbeatsConflict",
  "ambiguousWrites",
  "writesLostBeforeStore",
  "storeOutageCalls",
  "sweeps",
  "sweepFailures",
  "gapsRecorded",
  "rowsRemoved",
  "memberPauses",
  "watcherPauses",
  "crashes",
  "restarts",
  "stops",
  "sessionsJoined",
  "sessionsLostExpired",
  /** Detection bounds judged (unreachable within T plus one poll, leaving within ttl plus one poll). */
  "detectionsJudged",
  /** Detection bounds not judged: the service's own gap moved the deadline (by design). */
  "detectionsAfterServiceGap",
] as const;

export type MemberStatName = (typeof MEMBER_STAT_NAMES)[number];

export class MemberSimStats {
  readonly counts: Record<MemberStatName, number> = Object.fromEntries(MEMBER_STAT_NAMES.map((name) => [name, 0])) as Record<MemberStatName, number>;

  count(name: MemberStatName, by = 1): void {
    this.counts[name] += by;
  }

  add(other: MemberSimStats): void {
    for (const name of MEMBER_STAT_NAMES) this.counts[name] += other.counts[name];
  }
}
