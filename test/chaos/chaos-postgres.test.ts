import { describe, expect, it } from "vitest";
import { runChaosCli } from "./chaos-cli.js";
import { ALL_FAULTS } from "./fault-plan.js";
import { randomSeed } from "../helpers/sim/prng.js";

/**
 * `npm run chaos -- --store postgres`, short: the run of chaos.test.ts with PostgreSQL as
 * the store (HA_STORE=postgres, the embedded server as its own process, durable). A cycle per
 * fault kind, so every kind comes once (all but the rollback of a store's file) — among them the store frozen (SIGSTOP to postgres-process,
 * the keeper, the postmaster and every backend) and killed (SIGKILL to all of them, then
 * the server started again on the same data directory and port, recovering from its WAL) —
 * and the judge must find nothing. A random seed unless HA_CHAOS_SEED is set; a failure
 * prints the command that replays its schedule.
 */
/** Every fault kind but the rollback, which puts a store's file back (PostgreSQL keeps a data directory). */
const KINDS = ALL_FAULTS.filter((kind) => kind !== "store-rollback");
const SEED = process.env["HA_CHAOS_SEED"] === undefined ? randomSeed() : Number(process.env["HA_CHAOS_SEED"]);

describe("npm run chaos --store postgres, a cycle per fault kind", () => {
  it("injects every fault kind once, the PostgreSQL store frozen and killed among them, and the judge finds no violation", async () => {
    // The slack of chaos.test.ts, for the same reason: other test files share the two cores.
    const args = ["--store", "postgres", "--cycles", String(KINDS.length), "--slack-ms", "2500", "--seed", String(SEED)];
    const { code, output, report } = await runChaosCli(args, 150_000);
    console.log(output.slice(output.indexOf("== chaos summary")));
    expect(code, output).toBe(0);
    expect(report!.verdict.violations).toEqual([]);
    expect(report!.record.faults.map((f) => f.kind).sort()).toEqual([...KINDS].sort());
    expect(report!.record.incidents).toEqual([]);
    expect(report!.record.leftovers).toEqual([]);
    // The store faults reached the whole server, not only the process the harness started:
    // postgres-process, its keeper, the postmaster and at least one backend.
    expect(output).toMatch(/store-stop \(PostgreSQL: ([4-9]|\d\d+) processes\)/);
    expect(output).toMatch(/store-kill \(PostgreSQL: ([4-9]|\d\d+) processes\)/);
    // Every cycle ended with a worker running again; the log is real work, not a few lines.
    expect(report!.verdict.outcomes).toHaveLength(KINDS.length);
    for (const outcome of report!.verdict.outcomes) expect(outcome.recoveryMs).toBeTypeOf("number");
    expect(report!.verdict.writers).toBeGreaterThanOrEqual(2);
    expect(report!.verdict.lines).toBeGreaterThan(1000);
  }, 180_000);
});
