import type { LeaseView } from "../contract/lease-view.js";

/**
 * `ha-module primary <utype>`'s lines for people (stderr; stdout keeps the one JSON line):
 * the primary, a planned handover, and who stands by with how long ago the service saw
 * each. Ages are on the service's clock: its "now" is the primary's renewal plus T less
 * what is left of the lease; with no primary, this machine's clock stands in for it.
 */
export function primarySummary(view: LeaseView, localNow: number = Date.now()): string[] {
  const now = view.primary === null ? localNow : Date.parse(view.primary.renewedAt) + view.timeoutMs - view.primary.expiresInMs;
  const name = (uuid: string | null): string => {
    if (uuid === null) return "any standby";
    const address = view.standbys?.find((standby) => standby.uuid === uuid)?.address;
    return address === undefined || address === null ? uuid : `${address} (${uuid})`;
  };
  const seconds = (ms: number): string => `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
  // A priority is shown only where one was stated (not 0): a role without priorities reads as it always did.
  const priority = (candidate: { readonly priority?: number }): string => (candidate.priority === undefined || candidate.priority === 0 ? "" : `, priority ${candidate.priority}`);
  const lines: string[] = [];
  const { primary } = view;
  if (primary === null) {
    lines.push(`${view.utype}: no primary (epoch ${view.epoch}).`);
  } else {
    const state = primary.revoked ? "revoked, runs out in" : "lease left";
    lines.push(`${view.utype}: primary ${primary.address ?? "(no address)"}, uuid ${primary.uuid}, epoch ${primary.epoch}${priority(primary)}, ${state} ${seconds(primary.expiresInMs)}.`);
  }
  const { handover } = view;
  if (handover !== null) {
    const why = handover.reason === "preempt" ? " (preempted: a standby of higher priority stood by for its hold-down)" : "";
    lines.push(
      handover.phase === "pending"
        ? `  handing over to ${name(handover.to)}${why}: asked at ${handover.requestedAt}; the primary steps down at its next renewal (refused after ${handover.until}).`
        : `  reserved for ${name(handover.to)}${why} until ${handover.until}: nobody else may take over before.`,
    );
  }
  if (view.standbys !== undefined) {
    if (view.standbys.length === 0) lines.push("  standbys: none seen within the lease timeout.");
    for (const standby of view.standbys) {
      lines.push(`  standby ${standby.address ?? "(no address)"}, uuid ${standby.uuid}${priority(standby)}, seen ${seconds(now - Date.parse(standby.seenAt))} ago.`);
    }
  }
  return lines;
}
