/**
 * The wire types of a role's term history (GET /api/primary/{utype}/history): who held the
 * role, from when to when, and how each term ended. See docs/protocol.md, "Term history".
 */

/**
 * How a term ended. `released`: its holder stepped down with its token (or its own DELETE
 * after its lease had run out). `revoked`: it was revoked without its token and ran out.
 * `taken-over`: it expired and another uuid took the role. `expired`: it ran out and
 * nobody has taken the role since (derived on read, never stored).
 */
export type TermEnd = "released" | "revoked" | "expired" | "taken-over";

export const TERM_ENDS: readonly TermEnd[] = ["released", "revoked", "expired", "taken-over"];

/** How many terms a role keeps: the ring's slots, and the largest `?limit=`. */
export const TERM_HISTORY_SLOTS = 16;

/** One term of a role as the history shows it. */
export interface TermView {
  readonly epoch: number;
  readonly uuid: string;
  readonly address: string | null;
  /** ISO-8601 UTC: when the uuid acquired or took over the role. */
  readonly startedAt: string;
  /**
   * ISO-8601 UTC: when the term stopped being valid — the release, or its last renewal + T
   * for a term that ran out. Null while the term is live.
   */
  readonly endedAt: string | null;
  readonly endedBy: TermEnd | null;
}

/** GET /api/primary/{utype}/history: newest first; the live term (if any) has endedAt/endedBy null. */
export interface TermHistory {
  readonly utype: string;
  /** The role's current epoch, as in LeaseView: 0 for a role never held. */
  readonly epoch: number;
  readonly terms: readonly TermView[];
}
