import { describe, expect, it } from "vitest";
import { epochAtLeast, erasedTerm, nextEpoch } from "../../shared/lease/epoch.js";
import { TERM_HISTORY_SLOTS } from "../../shared/contract/term-history.js";

// 2026-11-20T10:00:00Z, a multiple of 16 ms.
const WALL = 1_795_168_800_000;

describe("nextEpoch: above the stored epoch, never below the clock (docs/design/epochs.md)", () => {
  it("is the stored epoch + 1 while the clock lies below it", () => {
    expect(nextEpoch(0, 0)).toBe(1);
    expect(nextEpoch(41, 12)).toBe(42);
    expect(nextEpoch(WALL + 100, WALL)).toBe(WALL + 101);
  });

  it("is the clock, rounded up to the ring slot after the stored epoch's, once the clock is above stored + 1", () => {
    expect(nextEpoch(0, WALL)).toBe(WALL + 1);
    expect(nextEpoch(3, WALL)).toBe(WALL + 4);
    expect(nextEpoch(15, WALL)).toBe(WALL);
    expect(nextEpoch(3, WALL + 4)).toBe(WALL + 4);
    expect(nextEpoch(3, WALL + 5)).toBe(WALL + 20);
    // A fractional clock counts whole ms.
    expect(nextEpoch(3, WALL + 4.9)).toBe(WALL + 4);
  });

  it("for any stored epoch and clock: above both, less than a ring's slots above the clock, in the next slot", () => {
    const samples = [0, 1, 2, 15, 16, 17, 1000, WALL - 1, WALL, WALL + 7, WALL + 10_000];
    for (const stored of samples) {
      for (const clock of samples) {
        const epoch = nextEpoch(stored, clock);
        expect(epoch).toBeGreaterThan(stored);
        expect(epoch).toBeGreaterThanOrEqual(clock);
        expect(epoch).toBeLessThan(Math.max(stored + 1, clock) + TERM_HISTORY_SLOTS);
        expect(epoch % TERM_HISTORY_SLOTS).toBe((stored + 1) % TERM_HISTORY_SLOTS);
        expect(Number.isSafeInteger(epoch)).toBe(true);
      }
    }
  });

  it("orders a term granted after a loss above every term granted before it, when the clocks agree within the time between", () => {
    // Terms granted at WALL, WALL+6 s, WALL+12 s; the store then comes back as it was at the
    // first grant, and the next grant comes 30 s after the last lost one, on an instance whose
    // clock lags by 1 s.
    let stored = 0;
    const granted: number[] = [];
    for (const at of [WALL, WALL + 6000, WALL + 12_000]) {
      stored = nextEpoch(stored, at);
      granted.push(stored);
    }
    const restored = granted[0]!;
    const after = nextEpoch(restored, WALL + 12_000 + 30_000 - 1000);
    expect(after).toBeGreaterThan(Math.max(...granted));
  });

  it("past the bound (a clock behind by more than the time since the lost grants) an epoch can repeat: what docs/design/epochs.md says", () => {
    const lost = nextEpoch(nextEpoch(0, WALL), WALL + 6000);
    const restored = nextEpoch(0, WALL);
    // 10 s after the lost grant, on a clock 20 s behind.
    const after = nextEpoch(restored, WALL + 6000 + 10_000 - 20_000);
    expect(after).toBeLessThanOrEqual(lost);
  });
});

describe("epochAtLeast", () => {
  it("is the base while the clock is below it, else the clock rounded up to the base's slot", () => {
    expect(epochAtLeast(9, 3)).toBe(9);
    expect(epochAtLeast(9, WALL)).toBe(WALL + 9);
    expect(epochAtLeast(9, Number.NaN)).toBe(9);
  });
});

describe("erasedTerm: a token for a term the entry cannot have handed out", () => {
  const entry = { uuid: "holder", epoch: 10 };
  it("an epoch above the entry's, or the entry's epoch for another uuid, or no entry at all", () => {
    expect(erasedTerm({ uuid: "z", epoch: 11 }, entry)).toBe(true);
    expect(erasedTerm({ uuid: "holder", epoch: 11 }, entry)).toBe(true);
    expect(erasedTerm({ uuid: "z", epoch: 10 }, entry)).toBe(true);
    expect(erasedTerm({ uuid: "z", epoch: 10 }, { uuid: "", epoch: 10 })).toBe(true);
    expect(erasedTerm({ uuid: "z", epoch: 1 }, undefined)).toBe(true);
  });
  it("not the holder's own term, nor an older term (the ended list and the rules decide those)", () => {
    expect(erasedTerm({ uuid: "holder", epoch: 10 }, entry)).toBe(false);
    expect(erasedTerm({ uuid: "z", epoch: 9 }, entry)).toBe(false);
  });
});
