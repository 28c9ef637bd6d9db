import { describe, expect, it } from "vitest";
import { ALL_FAULTS, FaultSchedule, PARTICIPANT_FAULTS, type FaultPlan } from "./fault-plan.js";
import { Prng } from "../helpers/sim/prng.js";

const TIMING = { intervalMs: 200, timeoutMs: 2000 };
const plans = (seed: number, count: number, kinds = ALL_FAULTS): FaultPlan[] => {
  const schedule = new FaultSchedule(new Prng(seed), kinds, TIMING);
  return Array.from({ length: count }, (_, index) => schedule.next(index + 1));
};

/** The chaos schedule: what docs/chaos.md promises about which faults come, and for how long. */
describe("the chaos fault schedule", () => {
  it("meets every enabled kind once per round, in an order that differs between rounds", () => {
    const run = plans(7, 3 * ALL_FAULTS.length);
    for (let round = 0; round < 3; round += 1) {
      const kinds = run.slice(round * ALL_FAULTS.length, (round + 1) * ALL_FAULTS.length).map((p) => p.kind);
      expect([...kinds].sort()).toEqual([...ALL_FAULTS].sort());
    }
    expect(run.slice(0, 10).map((p) => p.kind)).not.toEqual(run.slice(10, 20).map((p) => p.kind));
  });

  it("replays exactly from its seed, and another seed gives another schedule", () => {
    expect(plans(20261122, 50)).toEqual(plans(20261122, 50));
    expect(plans(20261122, 50)).not.toEqual(plans(20261123, 50));
  });

  it("holds pauses from T/4 to 2·T, kills of a participant up to T/2 and of the service or store up to 1.5·T; settles I to 3·I", () => {
    const run = plans(3, 2000);
    const holds = (suffix: string, prefix = ""): number[] => run.filter((p) => p.kind.endsWith(suffix) && p.kind.startsWith(prefix)).map((p) => p.holdMs);
    const stops = holds("-stop");
    expect(Math.min(...stops)).toBeGreaterThanOrEqual(500);
    expect(Math.max(...stops)).toBeLessThanOrEqual(4000);
    // Shorter and longer than the lease, both often.
    expect(stops.filter((ms) => ms < 2000).length).toBeGreaterThan(stops.length / 4);
    expect(stops.filter((ms) => ms > 2000).length).toBeGreaterThan(stops.length / 4);
    for (const ms of [...holds("-kill", "group"), ...holds("-kill", "run"), ...holds("-term")]) expect(ms).toBeLessThanOrEqual(1000);
    for (const ms of [...holds("-kill", "serve"), ...holds("-kill", "store")]) expect(ms).toBeLessThanOrEqual(3000);
    for (const plan of run) {
      expect(plan.settleMs).toBeGreaterThanOrEqual(200);
      expect(plan.settleMs).toBeLessThanOrEqual(600);
      expect(plan.pick).toBeGreaterThanOrEqual(0);
      expect(plan.pick).toBeLessThan(1);
    }
  });

  it("aims participant faults at the primary about three times in four, and service faults at nobody", () => {
    const run = plans(5, 4000);
    const participant = run.filter((p) => (PARTICIPANT_FAULTS as readonly string[]).includes(p.kind));
    const share = participant.filter((p) => p.aimAt === "primary").length / participant.length;
    expect(share).toBeGreaterThan(0.7);
    expect(share).toBeLessThan(0.8);
    expect(run.filter((p) => !(PARTICIPANT_FAULTS as readonly string[]).includes(p.kind)).every((p) => p.aimAt === "primary")).toBe(true);
  });
});
