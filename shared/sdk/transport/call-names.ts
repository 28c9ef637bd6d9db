import { checkId } from "../loop/option-checks.js";

/**
 * The name of each call the participant heartbeat carries, as its errors begin: HaClient's
 * single calls and the batcher's parts name a call alike, so an error reads the same
 * whichever way the call went. Each checks its ids.
 */
export const callName = {
  heartbeat: (utype: string): string => `UpdateHeartBeat(${checkId("utype", utype)})`,
  getPrimary: (utype: string): string => `GetPrimary(${checkId("utype", utype)})`,
  memberHeartbeat: (group: string, member: string): string => `MemberHeartbeat(${checkId("group", group)}/${checkId("member", member)})`,
  listMembers: (group: string): string => `ListMembers(${checkId("group", group)})`,
} as const;
