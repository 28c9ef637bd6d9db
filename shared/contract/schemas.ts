import { ERROR_STATUS, errorBodySchema, type ErrorCode } from "./error-codes.js";
import { HANDOVER_BODY_SCHEMA, HEARTBEAT_BODY_SCHEMA } from "./heartbeat-body.js";
import type { JsonSchema } from "./json-schema.js";
import { HANDOVER_VIEW_SCHEMA, HEALTH_VIEW_SCHEMA, LEASE_VIEW_SCHEMA, PRIMARY_LIST_SCHEMA, PRIMARY_VIEW_SCHEMA, STANDBY_VIEW_SCHEMA, TELEMETRY_FAILURE_SCHEMA } from "./lease-view.js";
import {
  GROUP_LIST_SCHEMA,
  GROUP_SUMMARY_SCHEMA,
  MEMBER_ANSWER_SCHEMA,
  MEMBER_HEARTBEAT_BODY_SCHEMA,
  MEMBER_LIST_SCHEMA,
  MEMBER_VIEW_SCHEMA,
  PREVIOUS_SESSION_SCHEMA,
} from "./members.js";
import {
  GROUP_LISTING_SCHEMA,
  GROUP_PART_SCHEMA,
  GROUP_UNCHANGED_SCHEMA,
  MEMBER_PART_SCHEMA,
  PARTICIPANT_HEARTBEAT_ANSWER_SCHEMA,
  PARTICIPANT_HEARTBEAT_BODY_SCHEMA,
  READ_PART_SCHEMA,
  ROLE_PART_SCHEMA,
} from "./participant.js";
import { TERM_HISTORY_SCHEMA, TERM_VIEW_SCHEMA } from "./term-history.js";

/** Every named schema of the contract: the OpenAPI document's `components.schemas`. */
export const SCHEMAS = {
  /** Any error answer, also those of no operation: 404 (no such route) and 405 (with Allow). */
  Error: errorBodySchema(Object.keys(ERROR_STATUS) as ErrorCode[]),
  PrimaryView: PRIMARY_VIEW_SCHEMA,
  LeaseView: LEASE_VIEW_SCHEMA,
  HandoverView: HANDOVER_VIEW_SCHEMA,
  StandbyView: STANDBY_VIEW_SCHEMA,
  PrimaryList: PRIMARY_LIST_SCHEMA,
  HealthView: HEALTH_VIEW_SCHEMA,
  TelemetryFailure: TELEMETRY_FAILURE_SCHEMA,
  HeartbeatBody: HEARTBEAT_BODY_SCHEMA,
  HandoverBody: HANDOVER_BODY_SCHEMA,
  TermView: TERM_VIEW_SCHEMA,
  TermHistory: TERM_HISTORY_SCHEMA,
  PreviousSession: PREVIOUS_SESSION_SCHEMA,
  MemberView: MEMBER_VIEW_SCHEMA,
  MemberAnswer: MEMBER_ANSWER_SCHEMA,
  MemberList: MEMBER_LIST_SCHEMA,
  GroupSummary: GROUP_SUMMARY_SCHEMA,
  GroupList: GROUP_LIST_SCHEMA,
  MemberHeartbeatBody: MEMBER_HEARTBEAT_BODY_SCHEMA,
  RolePart: ROLE_PART_SCHEMA,
  ReadPart: READ_PART_SCHEMA,
  MemberPart: MEMBER_PART_SCHEMA,
  GroupPart: GROUP_PART_SCHEMA,
  ParticipantHeartbeatBody: PARTICIPANT_HEARTBEAT_BODY_SCHEMA,
  GroupListing: GROUP_LISTING_SCHEMA,
  GroupUnchanged: GROUP_UNCHANGED_SCHEMA,
  ParticipantHeartbeatAnswer: PARTICIPANT_HEARTBEAT_ANSWER_SCHEMA,
} as const satisfies Record<string, JsonSchema>;

export type SchemaName = keyof typeof SCHEMAS;
