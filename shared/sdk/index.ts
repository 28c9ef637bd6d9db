/**
 * The client SDK (`ha-module/sdk`): the typed REST client, the elector that runs the lease
 * loop, the member session and watcher of membership, and the contract's wire types. It imports nothing of the server, so a worker needs
 * none of the Azure packages (install with `--omit=optional`).
 */
export { HaClient, type HaClientOptions } from "./ha-client.js";
export { PrimaryElector, type DemotionReason, type ElectorEvents, type ElectorStats, type PrimaryElectorOptions } from "./primary-elector.js";
export type { ElectorMeter } from "./elector-meter.js";
export { systemElectorClock, type ElectorClock, type TimerHandle } from "./elector-clock.js";
export { MemberSession, type LostReason, type MemberSessionEvents, type MemberSessionOptions } from "./member-session.js";
export { MembersWatcher, type MemberEvent, type MemberEventName, type MembersWatcherEvents, type MembersWatcherOptions } from "./members-watcher.js";
export { ElectorMembership, type ElectorMembershipOptions } from "./elector-membership.js";
export type { MembersTransport } from "./members-transport.js";
export type {
  GroupList,
  GroupSummary,
  MemberAnswer,
  MemberHeartbeatBody,
  MemberHeartbeatResult,
  MemberLeaveResult,
  MemberList,
  MembersTiming,
  MemberState,
  MemberView,
  PreviousSession,
} from "../contract/members.js";
export type { CallOptions, LeaseTransport, ReleaseOptions } from "./lease-transport.js";
export type { HeartbeatBody } from "../contract/heartbeat-body.js";
export type { HandoverView, HealthView, LeaseView, PrimaryList, PrimaryView, StandbyView } from "../contract/lease-view.js";
export type { HandoverResult, HeartbeatResult, ReleaseResult } from "../contract/outcomes.js";
export type { ErrorCode } from "../contract/error-codes.js";
export type { LeaseTiming } from "../contract/timing.js";
export { CorruptedMessageError } from "./corrupted-message-error.js";
export { HaRequestError } from "./ha-request-error.js";
export { UnauthorizedError } from "./unauthorized-error.js";
export { EndpointNotFoundError } from "./endpoint-not-found-error.js";
export { SlowRoundTripWarning } from "./slow-round-trip-warning.js";
export { TermEndedError } from "./term-ended-error.js";
