/** The client SDK: the typed REST client and the elector that runs the lease loop. */
export { HaClient, type HaClientOptions } from "./ha-client.js";
export { PrimaryElector, type DemotionReason, type ElectorEvents, type ElectorStats, type PrimaryElectorOptions } from "./primary-elector.js";
export { systemElectorClock, type ElectorClock, type TimerHandle } from "./elector-clock.js";
export type { CallOptions, HeartbeatRequest, HeartbeatResult, LeaseTransport, LeaseView, PrimaryView, ReleaseOptions, ReleaseResult } from "./lease-transport.js";
export type { HealthStatus } from "./response-validation.js";
export { CorruptedMessageError } from "./corrupted-message-error.js";
export { HaRequestError } from "./ha-request-error.js";
export { SlowRoundTripWarning } from "./slow-round-trip-warning.js";
