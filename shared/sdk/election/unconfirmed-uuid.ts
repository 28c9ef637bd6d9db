/**
 * The elector's hardest rule, as a pure function: when may a follower send its acquire
 * with the uuid it has, and when must it draw a new one?
 *
 * A uuid is *unconfirmed* while it may hold a term this elector does not lead: an acquire
 * of it went unanswered (it may have landed), was accepted only after its deadline, or an
 * answer named it as the primary. Such a uuid is kept only while the service shows it as
 * the live primary: the next acquire then renews its own lease (the fast recovery). An
 * answer showing another primary, or none, means that term, if it existed, has ended
 * unseen, and an ended uuid must never start another term (docs/protocol.md#ended-uuids);
 * the service remembers only the last 8 ended uuids, so the elector draws a new one rather
 * than rely on it. A refusal saying the uuid's term ended draws a new one at once.
 */
export type UuidEvent =
  /** An answer (a poll, or a refused acquire) showing who holds the role: this uuid, another, or nobody. */
  | { readonly kind: "shown"; readonly holder: "self" | "other" | "none" }
  /** An acquire refused because this uuid's term ended (409 LeaseRevoked). */
  | { readonly kind: "ended" }
  /** An acquire that got no answer: it may have landed. */
  | { readonly kind: "unanswered" }
  /** An acquire accepted only after its own deadline: it proves nothing about now. */
  | { readonly kind: "too-late" };

export interface UuidJudgement {
  /** Whether the uuid kept (or the new one) may hold a term this elector does not lead. */
  readonly unconfirmed: boolean;
  /** Draw a new uuid before the next acquire. */
  readonly drawNew: boolean;
}

export function judgeUuid(unconfirmed: boolean, event: UuidEvent): UuidJudgement {
  switch (event.kind) {
    case "ended":
      return { unconfirmed: false, drawNew: true };
    case "unanswered":
    case "too-late":
      return { unconfirmed: true, drawNew: false };
    case "shown":
      if (event.holder === "self") return { unconfirmed: true, drawNew: false };
      return unconfirmed ? { unconfirmed: false, drawNew: true } : { unconfirmed: false, drawNew: false };
  }
}
