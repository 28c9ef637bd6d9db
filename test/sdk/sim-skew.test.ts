import { describe, expect, it } from "vitest";
import { runSeeds, summarize } from "../helpers/sim/run-seeds.js";
import { simulate } from "../helpers/sim/simulate.js";

/**
 * The checker can fail: with function instances ε = 1.5·I apart, a standby's takeover,
 * judged on the clock that is ahead, lands up to ε − I before the holder (whose renewals
 * were written on the clock that is behind, then lost) stops believing. The safety
 * argument needs I > ε + ρ·(T − I); the simulation must find the overlap, print a seed,
 * and replay it. The same race with ε at the bound stays green (elector-simulation.test.ts).
 */
describe("simulation with ε = 1.5·I between function instances", () => {
  it("finds two primaries, and the violation replays exactly from its scenario", { timeout: 60_000 }, async () => {
    const report = await runSeeds({ profile: "skew", firstSeed: 1, runs: 60, stopAtFirst: true });
    console.log(summarize("skew profile (ε = 1.5·I), until the first violation", report));
    const violation = report.violations[0];
    expect(violation, "no violation in 60 runs with ε = 1.5·I").toBeDefined();
    // The holder believed while the store already named the usurper (store-agrees sees it
    // at the takeover's write; one-primary at the usurper's election, if it got that far).
    expect(["store-agrees", "one-primary"]).toContain(violation!.invariant);
    expect(violation!.message).toContain(`HA_SIM_SEED=${violation!.scenario.seed} HA_SIM_PROFILE=skew`);
    await expect(simulate(violation!.scenario)).rejects.toThrow(violation!.message);
  });

  it("finds it with the one-primary check alone", { timeout: 60_000 }, async () => {
    const report = await runSeeds({ profile: "skew", invariants: ["one-primary"], firstSeed: 1, runs: 60, stopAtFirst: true });
    expect(report.violations.map((violation) => violation.invariant)).toEqual(["one-primary"]);
    expect(report.violations[0]!.message).toMatch(/electors e\d\.\d and e\d\.\d all report isPrimary\(\)/);
  });
});
