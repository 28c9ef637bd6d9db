import { describe, expect, it } from "vitest";
import { overlaps, parseWorkLines, primariesAt, roleMoves, spansOf, untilPrimary, untilWork, workLostMs, type RoleEvent } from "../../bench/outage/figures.js";

const PERIOD = 20;

/** A run of work lines every PERIOD ms from `from` to `to` (inclusive), as work.ts writes them. */
function lines(participant: string, term: string, from: number, to: number): string {
  const out: string[] = [];
  for (let at = from; at <= to; at += PERIOD) out.push(`${at} ${participant} ${term}`);
  return out.join("\n");
}

const elected = (at: number, participant: string, term = "1"): RoleEvent => ({ at, participant, event: "elected", term });
const demoted = (at: number, participant: string, term = "1"): RoleEvent => ({ at, participant, event: "demoted", term });

/**
 * The outage benchmarks' figures (bench/outage/figures.ts), each on a planted history that
 * has what it must catch and on one that has not: a checker that cannot fail would pass both.
 */
describe("outage figures", () => {
  it("reads the work's runs, skipping a torn last line", () => {
    const parsed = parseWorkLines(`${lines("p0", "3", 1000, 1100)}\n${lines("p1", "4", 2000, 2040)}\n20`);
    expect(spansOf(parsed)).toEqual([
      { participant: "p0", term: "3", from: 1000, to: 1100 },
      { participant: "p1", term: "4", from: 2000, to: 2040 },
    ]);
  });

  it("finds two primaries at once, and none when one run ends before the next starts", () => {
    const handedOver = spansOf(parseWorkLines(`${lines("p0", "3", 1000, 2000)}\n${lines("p1", "4", 2020, 3000)}`));
    expect(overlaps(handedOver)).toEqual([]);
    // Planted: the old primary's work still ran when the new one's started.
    const both = spansOf(parseWorkLines(`${lines("p0", "3", 1000, 2100)}\n${lines("p1", "4", 2020, 3000)}`));
    expect(overlaps(both)).toHaveLength(1);
    // The same participant's next term while its last still runs is two primaries too.
    const again = spansOf(parseWorkLines(`${lines("p0", "3", 1000, 2100)}\n${lines("p0", "4", 2000, 3000)}`));
    expect(overlaps(again)).toHaveLength(1);
  });

  it("counts the time without work in a window, and none for work that ran through it", () => {
    const through = spansOf(parseWorkLines(lines("p0", "3", 0, 10_000)));
    expect(workLostMs(through, 1000, 9000, PERIOD)).toBe(0);
    // Planted: the work stopped at 4000 and came back at 7000 (under a new epoch).
    const paused = spansOf(parseWorkLines(`${lines("p0", "3", 0, 4000)}\n${lines("p0", "4", 7000, 10_000)}`));
    expect(workLostMs(paused, 1000, 9000, PERIOD)).toBe(7000 - 4000 - PERIOD);
    // No work at the window's end counts to the end.
    expect(workLostMs(spansOf(parseWorkLines(lines("p0", "3", 0, 4000))), 1000, 9000, PERIOD)).toBe(9000 - 4000 - PERIOD);
  });

  it("times the return to work: 0 when work runs at the return, else until the next run starts, none when none does", () => {
    const spans = spansOf(parseWorkLines(`${lines("p0", "3", 0, 4000)}\n${lines("p1", "4", 7000, 10_000)}`));
    expect(untilWork(spans, 3990, 12_000, PERIOD)).toBe(0);
    expect(untilWork(spans, 6000, 12_000, PERIOD)).toBe(1000);
    expect(untilWork(spans, 6000, 6500, PERIOD)).toBeUndefined();
  });

  it("counts role moves from the participants' own elections, not the holder's own returns", () => {
    // The holder takes its role back after an outage (a new term, the same participant): no move.
    const sticky = [elected(100, "p0", "1"), demoted(5000, "p0", "1"), elected(12_000, "p0", "2")];
    expect(roleMoves(sticky, 1000, 20_000)).toEqual({ moves: 0, elections: 1, holderBefore: "p0" });
    // Planted: a standby took it, then the first took it back: two moves.
    const moved = [elected(100, "p0", "1"), demoted(5000, "p0", "1"), elected(12_000, "p1", "2"), elected(16_000, "p0", "3")];
    expect(roleMoves(moved, 1000, 20_000)).toEqual({ moves: 2, elections: 2, holderBefore: "p0" });
    // Elections outside the window do not count.
    expect(roleMoves(moved, 1000, 13_000).moves).toBe(1);
  });

  it("knows who is primary from the events, and times the return to a primary", () => {
    const events = [elected(100, "p0", "1"), demoted(5000, "p0", "1"), elected(12_000, "p0", "2")];
    expect(primariesAt(events, 4000)).toEqual(["p0"]);
    expect(primariesAt(events, 6000)).toEqual([]);
    expect(untilPrimary(events, 4000, 20_000)).toBe(0);
    expect(untilPrimary(events, 11_000, 20_000)).toBe(1000);
    expect(untilPrimary(events, 11_000, 11_500)).toBeUndefined();
  });
});
