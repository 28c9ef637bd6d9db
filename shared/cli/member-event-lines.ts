import type { MemberSession, MembersWatcher } from "../sdk/index.js";
import { note, printEvent } from "./output-lines.js";

const WATCHER_EVENTS = ["memberJoined", "memberActive", "memberUnreachable", "memberLeaving", "memberRemoved"] as const;

/**
 * The watcher's events as JSON lines on stdout, named as the SDK names them:
 *   {"event":"memberUnreachable","group":…,"member":…,"session":…,"address":…,"state":…,"at":"<ISO>"}
 * Failed polls go to stderr as text, so that stdout stays machine-readable.
 */
export function printWatcherEvents(watcher: MembersWatcher, command: string): void {
  for (const event of WATCHER_EVENTS) {
    watcher.on(event, ({ group, member, session, address, state }) => printEvent(event, { group, member, session, address, state }));
  }
  watcher.on("error", (error) => note(`ha-module ${command}: ${error.message}`));
}

/**
 * A member session's events as JSON lines on stdout:
 *   {"event":"joined","group":…,"member":…,"session":…,"address":…,"at":…}
 *   {"event":"lost","group":…,"member":…,"session":…,"reason":"replaced|ended|expired","at":…}
 * Refused joins (SessionHeld) and failed heartbeats go to stderr as text.
 */
export function printSessionEvents(session: MemberSession, command: string): void {
  session.on("joined", ({ group, member, session: id, address }) => printEvent("joined", { group, member, session: id, address }));
  session.on("lost", ({ group, member, session: id, reason }) => printEvent("lost", { group, member, session: id, reason }));
  session.on("error", (error) => note(`ha-module ${command}: ${error.message}`));
}
