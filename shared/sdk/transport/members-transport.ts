import type { MemberHeartbeatBody, MemberHeartbeatResult, MemberLeaveResult, MemberList } from "../../contract/members.js";
import type { CallOptions } from "./lease-transport.js";
import type { TransportKind } from "../loop/transport-kind.js";

/**
 * The three membership calls a MemberSession and a MembersWatcher make. HaClient implements
 * it over HTTP; tests and the simulation implement it over an in-memory service. Anything
 * other than a typed outcome (a timeout, a 503, a corrupted body) is thrown.
 */
export interface MembersTransport {
  /** A member's heartbeat: joins the group or renews the session. */
  memberHeartbeat(group: string, member: string, body: MemberHeartbeatBody, options?: CallOptions): Promise<MemberHeartbeatResult>;
  /** The session's goodbye: it goes `leaving` at once. */
  leaveGroup(group: string, member: string, session: string, options?: CallOptions): Promise<MemberLeaveResult>;
  /** Every member of the group, judged at one instant. */
  listMembers(group: string, options?: CallOptions): Promise<MemberList>;
}

/** True when `value` has the three membership calls. */
export function isMembersTransport(value: unknown): value is MembersTransport {
  const candidate = value as Partial<MembersTransport> | null | undefined;
  return typeof candidate?.memberHeartbeat === "function" && typeof candidate.leaveGroup === "function" && typeof candidate.listMembers === "function";
}

/** A member session's or watcher's transport: all three calls; `endpoint` is given in code (no HA_ENDPOINT default). */
export const MEMBERS_TRANSPORT: TransportKind<MembersTransport> = {
  described: "MembersTransport (memberHeartbeat, leaveGroup, listMembers)",
  accepts: isMembersTransport,
  endpointFromEnvironment: false,
};
