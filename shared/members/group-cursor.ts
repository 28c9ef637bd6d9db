import { createHash } from "node:crypto";
import type { MemberList } from "../contract/members.js";

/**
 * The cursor of a group listing (docs/api.md#participant-heartbeat): a digest of what a
 * watcher reacts to — each member's name, session, state, address and previous session —
 * and of nothing that moves on every heartbeat (ages, renewal times, counts). Two listings
 * with the same cursor tell a watcher the same events, so a participant that sends the
 * cursor it holds as `since` is answered `unchanged` without the members.
 */
export function groupCursor(list: Pick<MemberList, "members">): string {
  const shape = list.members
    .map((view) => [view.member, view.session, view.state, view.address, view.previous?.session ?? null, view.previous?.state ?? null])
    .sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));
  return createHash("sha256").update(JSON.stringify(shape)).digest("base64url").slice(0, 22);
}
