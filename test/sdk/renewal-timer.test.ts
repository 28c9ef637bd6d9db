import { describe, expect, it } from "vitest";
import { renewalCeilingMs, renewalFloorMs } from "../../shared/sdk/loop/budgets.js";
import { RenewalTimer } from "../../shared/sdk/election/renewal-timer.js";

const DEFAULTS = { intervalMs: 1000, timeoutMs: 5000 };

describe("the renewal budget: TCP's retransmission timeout, clamped to [(T − 2I)/8, max(I, (T − I)/2)]", () => {
  it("has its bounds from I and T", () => {
    expect([renewalFloorMs(DEFAULTS), renewalCeilingMs(DEFAULTS)]).toEqual([375, 2000]);
    expect([renewalFloorMs({ intervalMs: 200, timeoutMs: 2000 }), renewalCeilingMs({ intervalMs: 200, timeoutMs: 2000 })]).toEqual([200, 900]);
    // T just above 2I: the ceiling is I, the floor tiny (the estimate decides).
    expect([renewalFloorMs({ intervalMs: 1000, timeoutMs: 2080 }), renewalCeilingMs({ intervalMs: 1000, timeoutMs: 2080 })]).toEqual([10, 1000]);
  });

  it("is the ceiling until the first answer", () => {
    const timer = new RenewalTimer();
    expect(timer.budgetMs(DEFAULTS, 0)).toBe(2000);
    timer.unanswered();
    expect(timer.budgetMs(DEFAULTS, 0)).toBe(2000);
  });

  it("is SRTT + 4·RTTVAR: the first sample R gives R + 4·R/2, later ones move SRTT by 1/8 and RTTVAR by 1/4 of the error", () => {
    const timer = new RenewalTimer();
    timer.answered(200, 0, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 0)).toBe(200 + 4 * 100);
    timer.answered(360, 0, "renewal", DEFAULTS);
    // RTTVAR = 3/4·100 + 1/4·|200 − 360| = 115; SRTT = 7/8·200 + 1/8·360 = 220.
    expect(timer.budgetMs(DEFAULTS, 0)).toBe(220 + 4 * 115);
    // Steady round trips: the variation decays, SRTT converges to them (here under the floor).
    for (let n = 0; n < 300; n += 1) timer.answered(300, 0, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 0)).toBeCloseTo(375, 0);
  });

  it("is the ceiling while a round trip answered within the last T took longer than the floor: a slow service is queueing, and copies at SRTT + 4·RTTVAR would feed it", () => {
    const timer = new RenewalTimer();
    // One renewal a second, each answered after 1100 ms: the variation decays to nothing.
    for (let n = 0; n < 60; n += 1) timer.answered(1100, n * 1000, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 60_000)).toBe(2000);
    // The service speeds up: once the slow answers are older than T, the estimate decides again.
    for (let n = 60; n < 120; n += 1) timer.answered(100, n * 1000, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 120_000)).toBe(375);
    // One answer just over the floor (375 ms) among fast ones is enough, for as long as it is recent.
    timer.answered(376, 120_500, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 121_000)).toBe(2000);
    // At the floor itself, the estimate decides (SRTT + 4·RTTVAR, settling on the floor).
    for (let n = 130; n < 190; n += 1) timer.answered(375, n * 1000, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 190_000)).toBeLessThan(400);
  });

  it("holds the ceiling for T after a slow answer however many fast ones follow: 400 primaries on one transport answer 256 round trips in under a second", () => {
    const timer = new RenewalTimer();
    for (let n = 0; n < 100; n += 1) timer.answered(100, n * 2.5, "renewal", DEFAULTS);
    // One slow answer of a queue, then 400 answers a second, all fast.
    timer.answered(1600, 250, "renewal", DEFAULTS);
    for (let n = 1; n <= 1900; n += 1) timer.answered(100, 250 + n * 2.5, "renewal", DEFAULTS);
    // SRTT + 4·RTTVAR has decayed back to a few hundred ms, and 1900 answers came since: still
    // within T of the slow one, so still the ceiling (copies would go into that queue).
    expect(timer.budgetMs(DEFAULTS, 5000)).toBe(2000);
    // T after it, the estimate decides again.
    expect(timer.budgetMs(DEFAULTS, 5250)).toBeLessThan(500);
  });

  it("forgets a slow round trip answered more than T ago: one slow answer (a cold start, a pause) does not hold the budgets of the minutes after it up", () => {
    const timer = new RenewalTimer();
    for (let n = 0; n < 300; n += 1) timer.answered(20, -300_000 + n * 1000, "renewal", DEFAULTS);
    // One slow answer at 0, then one fast renewal per I.
    timer.answered(1500, 0, "renewal", DEFAULTS);
    for (let at = 1000; at <= 20_000; at += 1000) timer.answered(20, at, "renewal", DEFAULTS);
    // Within T of the slow answer it still counts (a queue may still be there; at over half
    // the ceiling, the ceiling itself)...
    expect(timer.budgetMs(DEFAULTS, 4999)).toBe(2000);
    // ...later only SRTT + 4·RTTVAR, settled again, and the floor: four copies fit before a deadline.
    expect(timer.budgetMs(DEFAULTS, 20_000)).toBe(375);
  });

  it("replaces what the acquisitions gave with the first renewal's answer", () => {
    const timer = new RenewalTimer();
    // A fleet starting: the acquisitions are slow, and they are all there is to go by.
    timer.answered(1200, 0, "acquisition", DEFAULTS);
    timer.answered(900, 100, "acquisition", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 100)).toBe(2000);
    // The first renewal's answer: the estimate starts again from it.
    timer.answered(20, 1300, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 1300)).toBe(375);
    // Later answers, acquisitions' too, are samples as any.
    timer.answered(1800, 2000, "acquisition", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 2000)).toBe(2000);
  });

  it("never goes below the floor nor above the ceiling", () => {
    const fast = new RenewalTimer();
    fast.answered(5, 0, "renewal", DEFAULTS);
    expect(fast.budgetMs(DEFAULTS, 0)).toBe(375);
    const slow = new RenewalTimer();
    slow.answered(1500, 0, "renewal", DEFAULTS);
    expect(slow.budgetMs(DEFAULTS, 0)).toBe(2000);
  });

  it("doubles after each unanswered renewal, up to the ceiling, and an answer ends the backoff", () => {
    const timer = new RenewalTimer();
    timer.answered(5, 0, "renewal", DEFAULTS);
    const budgets = [timer.budgetMs(DEFAULTS, 0)];
    for (let n = 0; n < 4; n += 1) {
      timer.unanswered();
      budgets.push(timer.budgetMs(DEFAULTS, 0));
    }
    expect(budgets).toEqual([375, 750, 1500, 2000, 2000]);
    // A timeout is no sample: the estimate under the backoff is unchanged.
    timer.answered(5, 0, "renewal", DEFAULTS);
    expect(timer.budgetMs(DEFAULTS, 0)).toBe(375);
    // The doubling applies to the estimate, not to the floor alone.
    const measured = new RenewalTimer();
    measured.answered(200, 0, "renewal", DEFAULTS);
    measured.unanswered();
    expect(measured.budgetMs(DEFAULTS, 0)).toBe(1200);
  });

  it("stays finite and at the ceiling after any number of unanswered renewals", () => {
    const timer = new RenewalTimer();
    timer.answered(5, 0, "renewal", DEFAULTS);
    for (let n = 0; n < 5000; n += 1) timer.unanswered();
    expect(timer.budgetMs(DEFAULTS, 0)).toBe(2000);
  });
});
