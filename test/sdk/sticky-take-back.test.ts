import { describe, expect, it } from "vitest";
import type { ReleaseResult } from "../../shared/contract/outcomes.js";
import type { Term } from "../../shared/sdk/election/elector-role.js";
import { StickyTakeBack } from "../../shared/sdk/election/sticky-take-back.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { I, T, leaseView, primaryView } from "../helpers/sdk-fakes.js";

/**
 * The take-back after an outage (docs/protocol.md#sticky-recovery), the rules alone: which
 * ended terms are kept, what drops one, which views show it, what proves its release, and
 * which roles the hold-back of lost contact spares. The elector's use of them is tested in
 * test/sdk/sticky-recovery.test.ts.
 */

const term = (): Term => ({ uuid: "old", epoch: 7, lease: "token-7", deadline: 0, ended: new AbortController(), rides: true, ridingSince: undefined });
const vacantAt = (epoch: number) => leaseView("r", null, undefined, epoch);
const heldBy = (uuid: string, epoch: number) => leaseView("r", primaryView({ uuid, epoch, expiresInMs: T }));
const timeout = new HaRequestError("no answer", "Timeout", undefined);

describe("StickyTakeBack", () => {
  it("keeps a term that expired for want of answers, and says nothing is to be released", () => {
    const sticky = new StickyTakeBack();
    expect(sticky.ended(term(), "lease-expired", true, 0)).toBe(true);
    expect(sticky.pending).toBe(true);
    expect(sticky.shows(vacantAt(7))).toBe(true);
    expect(sticky.shows(heldBy("old", 7))).toBe(true);
  });

  it("keeps a term resigned with no cool-down, to be released as any resignation; not one with a cool-down", () => {
    const resigned = new StickyTakeBack();
    expect(resigned.ended(term(), "resigned", false, 0)).toBe(false);
    expect(resigned.pending).toBe(true);
    const cooled = new StickyTakeBack();
    expect(cooled.ended(term(), "resigned", false, 5 * I)).toBe(false);
    expect(cooled.pending).toBe(false);
  });

  it("keeps nothing after an expiry with the last call answered, or any other end", () => {
    for (const reason of ["rejected", "revoked", "affinity-lost", "handover"] as const) {
      const sticky = new StickyTakeBack();
      expect(sticky.ended(term(), reason, true, 0), reason).toBe(false);
      expect(sticky.pending, reason).toBe(false);
    }
    const answered = new StickyTakeBack();
    expect(answered.ended(term(), "lease-expired", false, 0)).toBe(false);
    expect(answered.pending).toBe(false);
  });

  it("drops the term once an answer shows another epoch, or a term begins; another holder at its epoch is not its own", () => {
    const sticky = new StickyTakeBack();
    sticky.ended(term(), "lease-expired", true, 0);
    expect(sticky.shows(heldBy("someone", 7))).toBe(false);
    sticky.answered(0, vacantAt(7));
    expect(sticky.pending).toBe(true);
    sticky.answered(I, heldBy("someone", 8));
    expect(sticky.pending).toBe(false);
    expect(sticky.shows(vacantAt(7))).toBe(false);
    sticky.ended(term(), "lease-expired", true, 0);
    sticky.elected();
    expect(sticky.pending).toBe(false);
  });

  it("proves a release only by a vacant role at the term's epoch, and sends it with the term's uuid and token", async () => {
    const sent: string[] = [];
    const answer = (outcome: ReleaseResult["outcome"], view = vacantAt(7)) => async (uuid: string, lease: string) => {
      sent.push(`${uuid} ${lease}`);
      return { outcome, view } as ReleaseResult;
    };
    const sticky = new StickyTakeBack();
    expect(await sticky.release(answer("released"))).toBe(false);
    expect(sent).toEqual([]);
    sticky.ended(term(), "lease-expired", true, 0);
    expect(await sticky.release(answer("released"))).toBe(true);
    expect(sent).toEqual(["old token-7"]);
    expect(await sticky.release(answer("released", heldBy("someone", 8)))).toBe(false);
    expect(await sticky.release(async () => undefined)).toBe(false);
  });

  it("holds back a takeover after lost contact, but not of its own last term, a role never held, its own uuid's, or a handover to it", () => {
    const sticky = new StickyTakeBack();
    expect(sticky.holdBackUntil("me")).toBe(Number.NEGATIVE_INFINITY);
    sticky.answered(0, heldBy("holder", 3));
    sticky.failed(timeout, I);
    sticky.failed(timeout, 2 * I);
    expect(sticky.holdBackUntil("me")).toBe(Number.POSITIVE_INFINITY);
    sticky.answered(3 * I, vacantAt(3));
    expect(sticky.holdBackUntil("me")).toBe(Math.max(2 * I + T, 3 * I + 2 * I));
    sticky.answered(3 * I, vacantAt(0));
    expect(sticky.holdBackUntil("me")).toBe(Number.NEGATIVE_INFINITY);
    sticky.answered(3 * I, heldBy("me", 3));
    expect(sticky.holdBackUntil("me")).toBe(Number.NEGATIVE_INFINITY);
    sticky.answered(3 * I, { ...vacantAt(3), handover: { phase: "pending", to: "me" } } as ReturnType<typeof vacantAt>);
    expect(sticky.holdBackUntil("me")).toBe(Number.NEGATIVE_INFINITY);
    sticky.ended({ ...term(), epoch: 3 }, "lease-expired", true, 0);
    sticky.answered(3 * I, vacantAt(3));
    expect(sticky.holdBackUntil("me")).toBe(Number.NEGATIVE_INFINITY);
  });

  it("a refusal holds nothing back", () => {
    const sticky = new StickyTakeBack();
    sticky.answered(0, heldBy("holder", 3));
    sticky.failed(new HaRequestError("forbidden", "Forbidden", 403), I);
    sticky.failed(new HaRequestError("forbidden", "Forbidden", 403), 2 * I);
    expect(sticky.holdBackUntil("me")).toBe(Number.NEGATIVE_INFINITY);
  });
});
