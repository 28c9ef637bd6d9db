import type { MemberSession, MembersWatcher } from "../sdk/index.js";
import { printEvent } from "./output-lines.js";

const WATCHER_EVENTS = ["memberJoined", "memberActive", "memberUnreachable", "memberLeaving", "memberRemoved"] as const;

/**
 * The watcher's events as JSON lines on stdout, named as the SDK names them:
 *   {"event":"memberUnreachable","group":…,"member":…,"session":…,"address":…,"state":…,"at":"<ISO>"}
 * (Failed polls are the command's to print, on stderr: see untilUnfixable.)
 */
export function printWatcherEvents(watcher: MembersWatcher): void {
  for (const event of WATCHER_EVENTS) {
    watcher.on(event, ({ group, member, session, address, state }) => printEvent(event, { group, member, session, address, state }));
  }
}

/**
 * A member session's events as JSON lines on stdout:
 *   {"event":"joined","group":…,"member":…,"session":…,"address":…,"at":…}
 *   {"event":"lost","group":…,"member":…,"session":…,"reason":"replaced|ended|expired","at":…}
 * (Refused joins and failed heartbeats are the command's to print, on stderr.)
 */
export function printSessionEvents(session: MemberSession): void {
  session.on("joined", ({ group, member, session: id, address }) => printEvent("joined", { group, member, session: id, address }));
  session.on("lost", ({ group, member, session: id, reason }) => printEvent("lost", { group, member, session: id, reason }));
}
