import type { Operation } from "../shared/http/route.js";
import { getPrimary } from "./get-primary.js";
import { health } from "./health.js";
import { leaveGroup } from "./leave-group.js";
import { listGroups } from "./list-groups.js";
import { listMembers } from "./list-members.js";
import { listPrimaries } from "./list-primaries.js";
import { metrics } from "./metrics.js";
import { releasePrimary } from "./release-primary.js";
import { updateHeartBeat } from "./update-heart-beat.js";
import { updateMemberHeartBeat } from "./update-member-heart-beat.js";

/**
 * The REST contract (SPEC §4, membership §6): the one table both hosts serve. Each operation is an Azure
 * function of its own, named for the seed; operations may share a route when their
 * methods differ, and a route's other methods are answered 405 with `Allow`.
 */
export const operations: readonly Operation[] = [
  { name: "getPrimary", route: "primary/{utype}", method: "GET", handler: getPrimary },
  { name: "updateHeartBeat", route: "primary/{utype}", method: "PUT", handler: updateHeartBeat },
  { name: "releasePrimary", route: "primary/{utype}", method: "DELETE", handler: releasePrimary },
  { name: "listPrimaries", route: "primary", method: "GET", handler: listPrimaries },
  { name: "health", route: "health", method: "GET", handler: health },
  { name: "updateMemberHeartBeat", route: "members/{group}/{member}", method: "PUT", handler: updateMemberHeartBeat },
  { name: "leaveGroup", route: "members/{group}/{member}", method: "DELETE", handler: leaveGroup },
  { name: "listMembers", route: "members/{group}", method: "GET", handler: listMembers },
  { name: "listGroups", route: "members", method: "GET", handler: listGroups },
  { name: "metrics", route: "metrics", method: "GET", handler: metrics },
];
