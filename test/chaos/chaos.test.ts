import { describe, expect, it } from "vitest";
import { runChaosCli } from "./chaos-cli.js";
import { ALL_FAULTS } from "./fault-plan.js";
import { randomSeed } from "../helpers/sim/prng.js";

/**
 * `npm run chaos`, short: one cycle per fault kind with Azurite as its own process, so that every fault
 * kind comes once (the schedule shuffles each round of kinds) — participants SIGKILLed,
 * SIGTERMed and SIGSTOPped as groups and as a lone `run`, the service and the store frozen
 * and killed — and the judge must find nothing. A random seed unless HA_CHAOS_SEED is set;
 * a failure prints the command that replays its schedule.
 */
const SEED = process.env["HA_CHAOS_SEED"] === undefined ? randomSeed() : Number(process.env["HA_CHAOS_SEED"]);

describe("npm run chaos, a cycle per fault kind", () => {
  it("injects every fault kind once and the judge finds no violation", async () => {
    // 2.5 s of slack: other test files start processes on the same two cores, and on an
    // overloaded machine a new primary's worker can take a second to start (a 200-cycle run
    // at load 5 had two failovers of 4.0 and 4.6 s, against T + I = 2.2 s). Here the bounds
    // catch a failover that never comes or comes seconds late; the distributions, with 1 s
    // of slack, are the long runs' job (docs/chaos.md).
    const args = ["--store", "process", "--cycles", String(ALL_FAULTS.length), "--slack-ms", "2500", "--seed", String(SEED)];
    const { code, output, report } = await runChaosCli(args, 150_000);
    console.log(output.slice(output.indexOf("== chaos summary")));
    expect(code, output).toBe(0);
    expect(report!.verdict.violations).toEqual([]);
    expect(report!.record.faults.map((f) => f.kind).sort()).toEqual([...ALL_FAULTS].sort());
    expect(report!.record.incidents).toEqual([]);
    expect(report!.record.leftovers).toEqual([]);
    // Every cycle ended with a worker running again; the log is real work, not a few lines.
    expect(report!.verdict.outcomes).toHaveLength(ALL_FAULTS.length);
    for (const outcome of report!.verdict.outcomes) expect(outcome.recoveryMs).toBeTypeOf("number");
    expect(report!.verdict.writers).toBeGreaterThanOrEqual(2);
    expect(report!.verdict.lines).toBeGreaterThan(1000);
  }, 180_000);
});
