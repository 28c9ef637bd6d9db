/**
 * The client SDK (`ha-module/sdk`, and the main entry of the client package): the typed REST
 * client, the elector that runs the lease loop, the member session and watcher of
 * membership, fenced writes to Table entities, blobs, Cosmos items and PostgreSQL rows with the caller's own
 * clients, and the contract's wire types. It imports nothing of the server and no package,
 * so the client package a worker installs has no dependency (scripts/pack-client.mjs).
 * What it exports is a reviewed surface: review/ha-module.api.md (docs/sdk.md#the-public-api).
 */
export { HaClient, type HaClientOptions } from "./transport/ha-client.js";
export { PrimaryElector, type DemotionReason, type ElectorEvents, type ElectorStats, type PrimaryElectorOptions } from "./election/primary-elector.js";
export type { ElectorBatchCallback, ElectorMeter, ElectorObservable, InstrumentOptions } from "./election/elector-meter.js";
export { systemElectorClock, type ElectorClock, type TimerHandle } from "./loop/elector-clock.js";
export { MemberSession, type LostReason, type MemberSessionEvents, type MemberSessionOptions } from "./membership/member-session.js";
export { MembersWatcher, type MemberEvent, type MemberEventName, type MembersWatcherEvents, type MembersWatcherOptions } from "./membership/members-watcher.js";
export { ElectorMembership, type ElectorMembershipOptions } from "./election/elector-membership.js";
export type { MembersTransport } from "./transport/members-transport.js";
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
export type { CallOptions, LeaseTransport, ReleaseOptions } from "./transport/lease-transport.js";
export type { ParticipantTransport } from "./transport/participant-transport.js";
export type { LoopOptions } from "./loop/loop-setup.js";
export type { HeartbeatBody } from "../contract/heartbeat-body.js";
export type { HandoverView, HealthView, LeaseView, PrimaryList, PrimaryView, StandbyView, TelemetryFailure } from "../contract/lease-view.js";
export type { HandoverResult, HeartbeatResult, ReleaseResult, WithdrawResult } from "../contract/outcomes.js";
export type { ErrorCode } from "../contract/error-codes.js";
export type { GroupAnswer, GroupListing, GroupPart, GroupUnchanged, MemberPart, ParticipantHeartbeatBody, ParticipantResults, PartResult, ReadPart, RolePart } from "../contract/participant.js";
export type { LeaseTiming } from "../contract/timing.js";
export { CorruptedMessageError } from "./transport/corrupted-message-error.js";
export { HaRequestError } from "./transport/ha-request-error.js";
export { UnauthorizedError } from "./auth/unauthorized-error.js";
export { ForbiddenError } from "./auth/forbidden-error.js";
export { ManagedIdentityCredential, type BearerTokenProvider, type ManagedIdentityOptions } from "./auth/managed-identity.js";
export { EndpointNotFoundError } from "./transport/endpoint-not-found-error.js";
export { SlowRoundTripWarning } from "./election/slow-round-trip-warning.js";
export { TermEndedError } from "./election/term-ended-error.js";
export { FencedOutError, FencedWriteContendedError } from "./fencing/fenced-out-error.js";
export type { FenceableCallOptions, FencedWriteOptions, FencedWriteResult, FencedWriterOptions } from "./fencing/fenced-write.js";
export { fencedTableEntity, type FenceableTableClient, type FenceableTableEntity, type FencedTableEntities, type FencedTableWriteOptions } from "./fencing/fenced-table-entity.js";
export { fencedBlob, type FenceableBlobHeaders, type FenceableBlockBlobClient, type FencedBlob, type FencedBlobUploadOptions } from "./fencing/fenced-blob.js";
export {
  fencedCosmosItem,
  type FenceableCosmosContainer,
  type FenceableCosmosItem,
  type FenceableCosmosItemResponse,
  type FenceablePartitionKey,
  type FencedCosmosItems,
  type FencedCosmosWriteOptions,
} from "./fencing/fenced-cosmos-item.js";
export {
  fencedPostgresRow,
  type FenceablePostgresClient,
  type FenceablePostgresResult,
  type FenceablePostgresRow,
  type FencedPostgresRows,
  type FencedPostgresTable,
} from "./fencing/fenced-postgres-row.js";
