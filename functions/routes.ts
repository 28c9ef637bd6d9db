import { MAX_PARTICIPANT_BODY_BYTES } from "../shared/contract/input-rules.js";
import type { Operation } from "../shared/http/route.js";
import { dashboard, dashboardAsset, dashboardAssetDoc, dashboardDoc } from "./dashboard.js";
import { getPrimary, getPrimaryDoc } from "./get-primary.js";
import { getPrimaryHistory, getPrimaryHistoryDoc } from "./get-primary-history.js";
import { handoverPrimary, handoverPrimaryDoc } from "./handover-primary.js";
import { health, healthDoc } from "./health.js";
import { leaveGroup, leaveGroupDoc } from "./leave-group.js";
import { listGroups, listGroupsDoc } from "./list-groups.js";
import { listMembers, listMembersDoc } from "./list-members.js";
import { listPrimaries, listPrimariesDoc } from "./list-primaries.js";
import { metrics, metricsDoc } from "./metrics.js";
import { openApiDoc, openApiOf } from "./open-api.js";
import { participantHeartBeat, participantHeartBeatDoc } from "./participant-heart-beat.js";
import { releasePrimary, releasePrimaryDoc } from "./release-primary.js";
import { updateHeartBeat, updateHeartBeatDoc } from "./update-heart-beat.js";
import { updateMemberHeartBeat, updateMemberHeartBeatDoc } from "./update-member-heart-beat.js";

/**
 * The REST contract (docs/api.md): the one table both hosts serve. Each operation is an Azure
 * function of its own, named as the protocol names it (GetPrimary, UpdateHeartBeat, …); operations may share a route when their
 * methods differ, and a route's other methods are answered 405 with `Allow`.
 *
 * Each row carries its `doc` (shared/contract/operation-doc.ts), exported beside its
 * handler: GET /api/openapi.json is built from this table, so a new row is described by
 * the doc it must have. A non-JSON answer (HTML, Prometheus text) names its content type.
 */
export const operations: readonly Operation[] = [
  { name: "getPrimary", route: "primary/{utype}", method: "GET", handler: getPrimary, doc: getPrimaryDoc },
  { name: "updateHeartBeat", route: "primary/{utype}", method: "PUT", handler: updateHeartBeat, doc: updateHeartBeatDoc },
  { name: "releasePrimary", route: "primary/{utype}", method: "DELETE", handler: releasePrimary, doc: releasePrimaryDoc },
  { name: "handoverPrimary", route: "primary/{utype}/handover", method: "POST", handler: handoverPrimary, doc: handoverPrimaryDoc },
  { name: "getPrimaryHistory", route: "primary/{utype}/history", method: "GET", handler: getPrimaryHistory, doc: getPrimaryHistoryDoc },
  { name: "listPrimaries", route: "primary", method: "GET", handler: listPrimaries, doc: listPrimariesDoc },
  { name: "health", route: "health", method: "GET", handler: health, doc: healthDoc },
  { name: "openApi", route: "openapi.json", method: "GET", handler: openApiOf(() => operations), doc: openApiDoc },
  { name: "updateMemberHeartBeat", route: "members/{group}/{member}", method: "PUT", handler: updateMemberHeartBeat, doc: updateMemberHeartBeatDoc },
  { name: "leaveGroup", route: "members/{group}/{member}", method: "DELETE", handler: leaveGroup, doc: leaveGroupDoc },
  { name: "listMembers", route: "members/{group}", method: "GET", handler: listMembers, doc: listMembersDoc },
  {
    name: "participantHeartbeat",
    route: "heartbeat",
    method: "POST",
    handler: participantHeartBeat,
    doc: participantHeartBeatDoc,
    maxBodyBytes: MAX_PARTICIPANT_BODY_BYTES,
  },
  { name: "listGroups", route: "members", method: "GET", handler: listGroups, doc: listGroupsDoc },
  { name: "dashboard", route: "dashboard", method: "GET", handler: dashboard, doc: dashboardDoc },
  { name: "dashboardAsset", route: "dashboard/{asset}", method: "GET", handler: dashboardAsset, doc: dashboardAssetDoc },
  { name: "metrics", route: "metrics", method: "GET", handler: metrics, doc: metricsDoc },
];
