/**
 * The service's metric names, units and attributes, in one place so the docs, the KQL in
 * docs/operations.md and the tests read the same names. Store calls use the OpenTelemetry
 * semantic convention for database clients (`db.client.operation.duration`, in seconds,
 * with `db.system.name`, `db.operation.name` and `error.type`); nothing in the conventions
 * covers leases or membership, so those live under the `ha.` namespace. In Prometheus
 * text, dots become underscores and counters end in `_total`.
 */
export const METER_NAME = "ha-module";

export const METRIC = {
  heartbeats: "ha.lease.heartbeats",
  releases: "ha.lease.releases",
  preemptions: "ha.lease.preemptions",
  storeDuration: "db.client.operation.duration",
  memberTransitions: "ha.members.transitions",
  sweeps: "ha.members.sweeps",
  sweepDuration: "ha.members.sweep.duration",
  shed: "ha.requests.shed",
} as const;

export const ATTRIBUTE = {
  outcome: "ha.outcome",
  /** The role (utype) a count is about: only on preemptions, which are few and per role. */
  utype: "ha.utype",
  transition: "ha.transition",
  sweepResult: "ha.sweep.result",
  /** Why the admission gate refused a request: "queue" (too many waiting for the store), "busy" (the process running its own work HA_SHED_BUSY_PERCENT of the time) or "delay" (every request delayed past HA_SHED_DELAY_MS). */
  shedReason: "ha.shed.reason",
  /** Which of the service's stores: "leases" or "members". */
  store: "ha.store",
  /** "ok"; "lost" (a conditional write or delete found the row changed, missing or existing); "unavailable" (StoreUnavailableError); "error" (anything else: a bug). */
  storeResult: "ha.store.result",
  dbSystem: "db.system.name",
  dbOperation: "db.operation.name",
  errorType: "error.type",
} as const;

/**
 * Bucket bounds for store call durations, in seconds: fine below 100 ms, where a healthy
 * store answers, and up to 10 s, past any store timeout (HA_STORE_TIMEOUT_MS).
 */
export const STORE_DURATION_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** `db.system.name` for a store kind: the convention's well-known value where one exists. */
export function dbSystemOf(kind: string): string {
  switch (kind) {
    case "cosmos":
      return "azure.cosmosdb";
    case "table":
      return "azure.tables";
    case "postgres":
      return "postgresql";
    default:
      return kind;
  }
}
