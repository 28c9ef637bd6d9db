import { describe, expect, it } from "vitest";
import { ContactHoldBack } from "../../shared/sdk/election/contact-hold-back.js";
import { I, T, leaseView, primaryView } from "../helpers/sdk-fakes.js";

/**
 * What calls that got no answer hold back (docs/protocol.md#sticky-recovery), by what the
 * answer before them showed: the bookkeeping alone, on plain numbers. The elector's use of it
 * is tested in test/sdk/sticky-recovery.test.ts.
 */

const timing = { intervalMs: I, timeoutMs: T };
/** An answer showing "holder"'s lease renewed `ageMs` ago. */
const leaseAged = (ageMs: number, revoked = false) => leaseView("r", primaryView({ uuid: "holder", epoch: 3, expiresInMs: T - ageMs, revoked }));
const vacant = leaseView("r", null, undefined, 3);

describe("ContactHoldBack", () => {
  it("holds nothing back while no call failed", () => {
    const contact = new ContactHoldBack();
    expect(contact.until(timing)).toBe(Number.NEGATIVE_INFINITY);
    contact.answered(0, leaseAged(0));
    expect(contact.until(timing)).toBe(Number.NEGATIVE_INFINITY);
  });

  it("a failed call before the first answer is lost contact: until max(it + T, the first answer + 2·I), nothing before that answer", () => {
    const contact = new ContactHoldBack();
    contact.failed(0);
    expect(contact.until(timing)).toBe(Number.POSITIVE_INFINITY);
    contact.answered(500, vacant);
    expect(contact.until(timing)).toBe(T);
  });

  it.each([
    ["renewed I ago", I],
    ["renewed 2.25·I ago (the skew between instances and a round trip on top of I)", 2.25 * I],
  ])("two failed calls in a row after an answer showing the lease %s are lost contact: until max(the last + T, the next answer + 2·I)", (_name, ageMs) => {
    const contact = new ContactHoldBack();
    contact.answered(0, leaseAged(ageMs));
    contact.failed(1000);
    contact.failed(3000);
    expect(contact.until(timing)).toBe(Number.POSITIVE_INFINITY);
    contact.answered(3500, vacant);
    expect(contact.until(timing)).toBe(3000 + T);
    contact.answered(9000, vacant);
    expect(contact.until(timing)).toBe(3000 + T);
  });

  it("one failed call after an answer showing the lease being renewed: until its next answer + 2·I, not T after it", () => {
    const contact = new ContactHoldBack();
    contact.answered(0, leaseAged(I));
    contact.failed(1000);
    expect(contact.until(timing)).toBe(Number.POSITIVE_INFINITY);
    contact.answered(2000, leaseAged(3 * I));
    expect(contact.until(timing)).toBe(2000 + 2 * I);
  });

  it.each([
    ["overdue (renewed more than 2.25·I ago)", leaseAged(2.25 * I + 1)],
    ["revoked", leaseAged(0, true)],
    ["vacant", vacant],
  ])("one failed call after an answer showing the lease %s is a lost message: nothing held back", (_name, view) => {
    const contact = new ContactHoldBack();
    contact.answered(0, view);
    contact.failed(1000);
    expect(contact.until(timing)).toBe(Number.NEGATIVE_INFINITY);
    contact.answered(2000, view);
    expect(contact.until(timing)).toBe(Number.NEGATIVE_INFINITY);
  });

  it("two failed calls in a row after an answer showing the lease overdue: until the next answer + 2·I, not T after the last", () => {
    const contact = new ContactHoldBack();
    contact.answered(0, leaseAged(3 * I));
    contact.failed(1000);
    contact.failed(2000);
    expect(contact.until(timing)).toBe(Number.POSITIVE_INFINITY);
    contact.answered(4000, vacant);
    expect(contact.until(timing)).toBe(4000 + 2 * I);
  });

  it("while a hold-back is on, and for I after it ends once the role could be taken (the takeover), one failed call keeps it on until 2·I after the next answer; its T term stays", () => {
    const contact = new ContactHoldBack();
    contact.answered(0, leaseAged(0));
    contact.failed(1000);
    contact.failed(2000);
    contact.answered(3000, vacant);
    const end = 2000 + T;
    expect(contact.until(timing)).toBe(end);
    // The takeover at the end gets no answer (the answers before it showed the role vacant).
    contact.failed(end + I - 1);
    expect(contact.until(timing)).toBe(Number.POSITIVE_INFINITY);
    contact.answered(end + 2 * I, vacant);
    expect(contact.until(timing)).toBe(end + 4 * I);
    // A call that fails I or more after that hold-back ended is judged on its own: a lost message.
    contact.answered(end + 6 * I, vacant);
    contact.failed(end + 6 * I);
    expect(contact.until(timing)).toBe(end + 4 * I);
  });

  it("a poll that fails just after a hold-back ended, while the lease it waited for is still live, is judged on its own", () => {
    const contact = new ContactHoldBack();
    contact.answered(0, leaseAged(0));
    contact.failed(1000);
    contact.failed(2000);
    contact.answered(3000, leaseAged(0));
    const end = 2000 + T;
    expect(contact.until(timing)).toBe(end);
    // The last answer, I/2 before the end, showed the lease 3·I old (overdue) and live for
    // 2·I more: no takeover is due I/2 after the end, so what fails then is a poll, after an
    // overdue lease: a lost message.
    contact.answered(end - I / 2, leaseAged(3 * I));
    contact.failed(end + I / 2);
    expect(contact.until(timing)).toBe(end);
  });

  it("a call that failed late (sent before the answer that ended the loss) moves the failure, not that answer, and starts no run", () => {
    const contact = new ContactHoldBack();
    contact.answered(0, leaseAged(0));
    contact.failed(1000);
    contact.failed(2000);
    contact.answered(3000, leaseAged(0));
    contact.failed(2500);
    expect(contact.until(timing)).toBe(2000 + T);
    // The next failed call is the first since the answer, not the second in a row: no T after it.
    contact.failed(3500);
    contact.answered(4000, leaseAged(0));
    expect(contact.until(timing)).toBe(2000 + T);
  });
});
