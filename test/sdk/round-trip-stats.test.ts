import { describe, expect, it } from "vitest";
import { nearestRank, RoundTripWindow } from "../../shared/sdk/election/round-trip-stats.js";

describe("the nearest-rank percentile (the elector's stats and the benchmarks)", () => {
  it("is the smallest sample that at least p % of the samples do not exceed", () => {
    const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(nearestRank(ten, 50)).toBe(5); // a floor index would say 6
    expect(nearestRank(ten, 90)).toBe(9);
    expect(nearestRank(ten, 99)).toBe(10);
    expect(nearestRank(ten, 100)).toBe(10);
    expect(nearestRank([7], 1)).toBe(7);
    expect(nearestRank([], 50)).toBeUndefined();
  });

  it("is what RoundTripWindow reports, over its last 1024 samples only", () => {
    const window = new RoundTripWindow();
    for (let ms = 2000; ms > 0; ms -= 1) window.add(ms); // the last 1024 added are 1024 … 1
    expect(window.count).toBe(1024);
    expect(window.percentile(50)).toBe(512);
    expect(window.percentile(99)).toBe(nearestRank(Array.from({ length: 1024 }, (_, i) => i + 1), 99));
  });
});
