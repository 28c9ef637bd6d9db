import type { PrimaryElector } from "../sdk/index.js";
import { printSessionEvents, printWatcherEvents } from "./member-event-lines.js";
import { printEvent } from "./output-lines.js";

/**
 * The elector's events as JSON lines on stdout:
 *   {"event":"elected","utype":…,"uuid":…,"epoch":…,"at":"<ISO>"}
 *   {"event":"demoted","utype":…,"uuid":…,"epoch":…,"reason":…,"at":…}
 *   {"event":"primaryChanged","utype":…,"primary":{…}|null,"epoch":…,"at":…}  (the role's epoch, as `primary --watch` prints it)
 *   {"event":"ridingThrough","utype":…,"uuid":…,"epoch":…,"leftMs":…,"at":…}  (run --ride-through: the deadline passed in an outage)
 * With --member, the member session's and the group watcher's lines too (member-event-lines.ts).
 * Failed calls go to stderr as text (see untilUnfixable), so that stdout stays machine-readable.
 */
export function printElectorEvents(elector: PrimaryElector): void {
  const utype = elector.utype;
  elector.on("elected", ({ uuid, epoch }) => printEvent("elected", { utype, uuid, epoch }));
  elector.on("demoted", ({ uuid, epoch, reason }) => printEvent("demoted", { utype, uuid, epoch, reason }));
  elector.on("primaryChanged", ({ primary, epoch }) => printEvent("primaryChanged", { utype, primary, epoch }));
  elector.on("ridingThrough", ({ uuid, epoch, leftMs }) => printEvent("ridingThrough", { utype, uuid, epoch, leftMs: Math.round(leftMs) }));
  if (elector.membership === undefined) return;
  printSessionEvents(elector.membership.session);
  printWatcherEvents(elector.membership.watcher);
}
