/**
 * The wire types of a role's term history (GET /api/primary/{utype}/history): who held the
 * role, from when to when, and how each term ended. See docs/protocol.md, "Term history".
 */

import { COUNT_SCHEMA, DATE_TIME_SCHEMA, ADDRESS_SCHEMA, ID_SCHEMA, ref, type ObjectSchema } from "./json-schema.js";

/**
 * How a term ended. `released`: its holder stepped down with its token (or its own DELETE
 * after its lease had run out). `revoked`: it was revoked without its token and ran out.
 * `taken-over`: it expired and another uuid took the role. `expired`: it ran out and
 * nobody has taken the role since (derived on read, never stored). `preempted`: its holder
 * handed the role to a standby of higher priority (docs/protocol.md#priorities-and-preemption).
 */
export type TermEnd = "released" | "revoked" | "expired" | "taken-over" | "preempted";

export const TERM_ENDS: readonly TermEnd[] = ["released", "revoked", "expired", "taken-over", "preempted"];

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

export const TERM_VIEW_SCHEMA: ObjectSchema<TermView> = {
  type: "object",
  properties: {
    epoch: { type: "integer", minimum: 1 },
    uuid: ID_SCHEMA,
    address: ADDRESS_SCHEMA,
    startedAt: DATE_TIME_SCHEMA,
    endedAt: { oneOf: [DATE_TIME_SCHEMA, { type: "null" }], description: "Null while the term is live." },
    endedBy: { enum: [...TERM_ENDS, null], description: "Null while the term is live." },
  },
  required: ["epoch", "uuid", "address", "startedAt", "endedAt", "endedBy"],
  additionalProperties: false,
};

export const TERM_HISTORY_SCHEMA: ObjectSchema<TermHistory> = {
  type: "object",
  properties: {
    utype: ID_SCHEMA,
    epoch: { ...COUNT_SCHEMA, description: "The role's current epoch: 0 for a role never held." },
    terms: { type: "array", maxItems: TERM_HISTORY_SLOTS, items: ref("TermView"), description: "Newest first." },
  },
  required: ["utype", "epoch", "terms"],
};
