import { describe, expect, it } from "vitest";
import { renewalCeilingMs, renewalFloorMs } from "../../shared/sdk/loop/budgets.js";
import { RenewalTimer } from "../../shared/sdk/election/renewal-timer.js";

const DEFAULTS = { intervalMs: 1000, timeoutMs: 5000 };

/** The first copy's budget with all the time in the world left: the estimate and its bounds alone. */
function first(timer: RenewalTimer, timing: typeof DEFAULTS, now: number): number {
  return timer.budgetMs(timing, now, 0, Number.POSITIVE_INFINITY);
}

describe("the renewal budget: TCP's retransmission timeout, clamped to [(T − 2I)/8, max(I, (T − I)/2)]", () => {
  it("has its bounds from I and T", () => {
    expect([renewalFloorMs(DEFAULTS), renewalCeilingMs(DEFAULTS)]).toEqual([375, 2000]);
    expect([renewalFloorMs({ intervalMs: 200, timeoutMs: 2000 }), renewalCeilingMs({ intervalMs: 200, timeoutMs: 2000 })]).toEqual([200, 900]);
    // T just above 2I: the ceiling is I, the floor tiny (the estimate decides).
    expect([renewalFloorMs({ intervalMs: 1000, timeoutMs: 2080 }), renewalCeilingMs({ intervalMs: 1000, timeoutMs: 2080 })]).toEqual([10, 1000]);
  });

  it("is the ceiling until the first answer", () => {
    const timer = new RenewalTimer();
    expect(first(timer, DEFAULTS, 0)).toBe(2000);
    expect(timer.budgetMs(DEFAULTS, 0, 1, Number.POSITIVE_INFINITY)).toBe(2000);
  });

  it("is SRTT + 4·RTTVAR: the first sample R gives R + 4·R/2, later ones move SRTT by 1/8 and RTTVAR by 1/4 of the error", () => {
    const timer = new RenewalTimer();
    timer.answered(200, 0, "renewal", DEFAULTS);
    expect(first(timer, DEFAULTS, 0)).toBe(200 + 4 * 100);
    timer.answered(360, 0, "renewal", DEFAULTS);
    // RTTVAR = 3/4·100 + 1/4·|200 − 360| = 115; SRTT = 7/8·200 + 1/8·360 = 220.
    expect(first(timer, DEFAULTS, 0)).toBe(220 + 4 * 115);
    // Steady round trips: the variation decays, SRTT converges to them (here under the floor).
    for (let n = 0; n < 300; n += 1) timer.answered(300, 0, "renewal", DEFAULTS);
    expect(first(timer, DEFAULTS, 0)).toBeCloseTo(375, 0);
  });

  it("is the ceiling while a round trip answered within the last T took longer than the floor: a slow service is queueing, and copies at SRTT + 4·RTTVAR would feed it", () => {
    const timer = new RenewalTimer();
    // One renewal a second, each answered after 1100 ms: the variation decays to nothing.
    for (let n = 0; n < 60; n += 1) timer.answered(1100, n * 1000, "renewal", DEFAULTS);
    expect(first(timer, DEFAULTS, 60_000)).toBe(2000);
    // The service speeds up: once the slow answers are older than T, the estimate decides again.
    for (let n = 60; n < 120; n += 1) timer.answered(100, n * 1000, "renewal", DEFAULTS);
    expect(first(timer, DEFAULTS, 120_000)).toBe(375);
    // One answer just over the floor (375 ms) among fast ones is enough, for as long as it is recent.
    timer.answered(376, 120_500, "renewal", DEFAULTS);
    expect(first(timer, DEFAULTS, 121_000)).toBe(2000);
    // At the floor itself, the estimate decides (SRTT + 4·RTTVAR, settling on the floor).
    for (let n = 130; n < 190; n += 1) timer.answered(375, n * 1000, "renewal", DEFAULTS);
    expect(first(timer, DEFAULTS, 190_000)).toBeLessThan(400);
  });

  it("holds the ceiling for T after a slow answer however many fast ones follow: 400 primaries on one transport answer 256 round trips in under a second", () => {
    const timer = new RenewalTimer();
    for (let n = 0; n < 100; n += 1) timer.answered(100, n * 2.5, "renewal", DEFAULTS);
    // One slow answer of a queue, then 400 answers a second, all fast.
    timer.answered(1600, 250, "renewal", DEFAULTS);
    for (let n = 1; n <= 1900; n += 1) timer.answered(100, 250 + n * 2.5, "renewal", DEFAULTS);
    // SRTT + 4·RTTVAR has decayed back to a few hundred ms, and 1900 answers came since: still
    // within T of the slow one, so still the ceiling (copies would go into that queue).
    expect(first(timer, DEFAULTS, 5000)).toBe(2000);
    // T after it, the estimate decides again.
    expect(first(timer, DEFAULTS, 5250)).toBeLessThan(500);
  });

  it("forgets a slow round trip answered more than T ago: one slow answer (a cold start, a pause) does not hold the budgets of the minutes after it up", () => {
    const timer = new RenewalTimer();
    for (let n = 0; n < 300; n += 1) timer.answered(20, -300_000 + n * 1000, "renewal", DEFAULTS);
    // One slow answer at 0, then one fast renewal per I.
    timer.answered(1500, 0, "renewal", DEFAULTS);
    for (let at = 1000; at <= 20_000; at += 1000) timer.answered(20, at, "renewal", DEFAULTS);
    // Within T of the slow answer it still counts (a queue may still be there; at over half
    // the ceiling, the ceiling itself)...
    expect(first(timer, DEFAULTS, 4999)).toBe(2000);
    // ...later only SRTT + 4·RTTVAR, settled again, and the floor: four copies fit before a deadline.
    expect(first(timer, DEFAULTS, 20_000)).toBe(375);
  });

  it("replaces what the acquisitions gave with the first renewal's answer", () => {
    const timer = new RenewalTimer();
    // A fleet starting: the acquisitions are slow, and they are all there is to go by.
    timer.answered(1200, 0, "acquisition", DEFAULTS);
    timer.answered(900, 100, "acquisition", DEFAULTS);
    expect(first(timer, DEFAULTS, 100)).toBe(2000);
    // The first renewal's answer: the estimate starts again from it.
    timer.answered(20, 1300, "renewal", DEFAULTS);
    expect(first(timer, DEFAULTS, 1300)).toBe(375);
    // Later answers, acquisitions' too, are samples as any.
    timer.answered(1800, 2000, "acquisition", DEFAULTS);
    expect(first(timer, DEFAULTS, 2000)).toBe(2000);
  });

  it("never goes below the floor nor above the ceiling", () => {
    const fast = new RenewalTimer();
    fast.answered(5, 0, "renewal", DEFAULTS);
    expect(first(fast, DEFAULTS, 0)).toBe(375);
    const slow = new RenewalTimer();
    slow.answered(1500, 0, "renewal", DEFAULTS);
    expect(first(slow, DEFAULTS, 0)).toBe(2000);
  });

  it("doubles with each unanswered copy of one renewal, up to the ceiling; the count is the renewal's own, not the timer's", () => {
    const timer = new RenewalTimer();
    timer.answered(5, 0, "renewal", DEFAULTS);
    const copies = (): number[] => [0, 1, 2, 3, 4].map((unanswered) => timer.budgetMs(DEFAULTS, 0, unanswered, Number.POSITIVE_INFINITY));
    expect(copies()).toEqual([375, 750, 1500, 2000, 2000]);
    // Another renewal on the same transport (a second role of one participant heartbeat,
    // unanswered with the first) starts from the estimate again: nothing was shared but it.
    expect(copies()).toEqual([375, 750, 1500, 2000, 2000]);
    // The doubling applies to the estimate, not to the floor alone.
    const measured = new RenewalTimer();
    measured.answered(200, 0, "renewal", DEFAULTS);
    expect(measured.budgetMs(DEFAULTS, 0, 1, Number.POSITIVE_INFINITY)).toBe(1200);
  });

  it("stays finite and at the ceiling after any number of unanswered copies", () => {
    const timer = new RenewalTimer();
    timer.answered(5, 0, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 0, 5000, Number.POSITIVE_INFINITY)).toBe(2000);
  });

  it("is never longer than the time left to the deadline", () => {
    const timer = new RenewalTimer();
    timer.answered(5, 0, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 0, 2, 1000)).toBe(1000);
  });

  describe("the first copy leaves room for a second inside the window, timed to be answered before the deadline", () => {
    const TIGHT = { intervalMs: 1000, timeoutMs: 3000 };

    it("at T = 3·I after a slow answer: the ceiling I is the whole window, so the second copy goes at the deadline less SRTT + 4·RTTVAR", () => {
      const timer = new RenewalTimer();
      // Answers of 40 ms, then one of 250 ms: over the floor (T − 2I)/8 = 125 ms, so the ceiling.
      for (let n = 0; n < 20; n += 1) timer.answered(40, n * 1000, "renewal", TIGHT);
      timer.answered(250, 20_000, "renewal", TIGHT);
      expect(timer.budgetMs(TIGHT, 20_500, 1, Number.POSITIVE_INFINITY)).toBe(1000);
      // SRTT = 7/8·40 + 1/8·250 = 66.25; RTTVAR = 3/4·RTTVAR + 1/4·210, RTTVAR of steady answers being about 0.
      const rto = 66.25 + 4 * (0.75 * variationAfter(20, 40) + 0.25 * 210);
      // The renewal goes I after the last accepted one: T − 2I = 1000 ms are left to the deadline.
      expect(timer.budgetMs(TIGHT, 20_500, 0, 1000)).toBeCloseTo(1000 - rto, 6);
      // Copies after the first keep their budget: only one is moved.
      expect(timer.budgetMs(TIGHT, 20_500, 1, 1000 - (1000 - rto))).toBeCloseTo(rto, 6);
    });

    it("at T = 5·I the ceiling leaves room for a second copy: nothing moves, however long the round trips", () => {
      const timer = new RenewalTimer();
      for (const [from, ms] of [[0, 600], [200, 1400], [400, 1700]] as const) {
        for (let n = from; n < from + 200; n += 1) timer.answered(ms, n * 1000, "renewal", DEFAULTS);
        // The ceiling's copy, 2000 ms after the first, is 1000 ms before the deadline: copies
        // sent earlier into a queueing service would only lengthen its queue.
        expect(timer.budgetMs(DEFAULTS, (from + 200) * 1000, 0, 3000)).toBe(2000);
      }
      // A renewal sent late in its window (after one that failed fast), 1500 ms before the
      // deadline: the ceiling leaves no second copy, so one goes at the deadline less ≈ 600 ms.
      const late = new RenewalTimer();
      for (let n = 0; n < 200; n += 1) late.answered(600, n * 1000, "renewal", DEFAULTS);
      expect(late.budgetMs(DEFAULTS, 200_000, 0, 1500)).toBeCloseTo(900, 0);
    });

    it("never before the first copy is overdue (SRTT + 4·RTTVAR after it), and the floor before the deadline at the latest", () => {
      const timer = new RenewalTimer();
      // SRTT + 4·RTTVAR ≈ 520 ms, more than half the window: the deadline less 520 ms is too early.
      for (let n = 0; n < 200; n += 1) timer.answered(520, n * 1000, "renewal", TIGHT);
      expect(timer.budgetMs(TIGHT, 200_000, 0, 1000)).toBeCloseTo(520, 0);
      // ≈ 950 ms: the floor (125 ms) before the deadline.
      for (let n = 200; n < 400; n += 1) timer.answered(950, n * 1000, "renewal", TIGHT);
      expect(timer.budgetMs(TIGHT, 400_000, 0, 1000)).toBe(875);
      // ≈ 470 ms: the deadline less it.
      const fast = new RenewalTimer();
      for (let n = 0; n < 200; n += 1) fast.answered(470, n * 1000, "renewal", TIGHT);
      expect(fast.budgetMs(TIGHT, 200_000, 0, 1000)).toBeCloseTo(530, 0);
      // Too little left for a copy the floor after the first and the floor before the deadline: none.
      expect(timer.budgetMs(TIGHT, 400_000, 0, 250)).toBe(250);
    });

    it("with a fast service the four copies stay where they were: after F, 2F, 4F and the F left", () => {
      const timer = new RenewalTimer();
      timer.answered(5, 0, "renewal", DEFAULTS);
      let left = 3000;
      const budgets: number[] = [];
      for (let unanswered = 0; left > 0; unanswered += 1) {
        const budget = timer.budgetMs(DEFAULTS, 0, unanswered, left);
        budgets.push(budget);
        left -= budget;
      }
      expect(budgets).toEqual([375, 750, 1500, 375]);
    });
  });
});

/** RTTVAR after `count` answers of `ms` each (the first sets it to ms/2; equal samples then shrink it by 3/4). */
function variationAfter(count: number, ms: number): number {
  return (ms / 2) * 0.75 ** (count - 1);
}
