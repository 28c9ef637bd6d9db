import { describe, expect, it } from "vitest";
import type { Invariant, PlantedBug, Profile } from "../helpers/sim/scenario.js";
import { runSeeds } from "../helpers/sim/run-seeds.js";
import { simulate } from "../helpers/sim/simulate.js";

/**
 * Every invariant checker proven able to fail (no test that cannot fail): a bug
 * is planted through one of the simulation's seams — the store, the service's idea of T,
 * its request budget, what the elector is told — and that checker, judging alone, must
 * report it with a seed whose scenario replays the same violation.
 */
const CASES: ReadonlyArray<{ plant: PlantedBug; invariant: Invariant; profile: Profile; why: string }> = [
  { plant: "takeover-at-t-minus-i", invariant: "one-primary", profile: "skew-margin", why: "no margin left for ε" },
  { plant: "elector-deadline-sent-at-plus-t", invariant: "one-primary", profile: "skew-margin", why: "the elector believes up to T" },
  { plant: "replace-ignores-etag", invariant: "epochs-increase", profile: "safe", why: "two takeovers of one lease both win" },
  { plant: "release-resets-epoch", invariant: "epochs-increase", profile: "safe", why: "an epoch is reused" },
  { plant: "epoch-stored-plus-one", invariant: "epochs-increase", profile: "safe", why: "after the store forgot its last takeovers, an epoch is handed out again" },
  { plant: "acknowledges-lost-writes", invariant: "store-agrees", profile: "safe", why: "an elector holds what the store never got" },
  { plant: "forgets-ended-uuids", invariant: "no-phantom", profile: "safe", why: "a dead uuid's late request starts a term" },
  { plant: "forgets-ended-uuids", invariant: "ended-stays-ended", profile: "safe", why: "an ended uuid holds the lease again" },
  { plant: "no-request-budget", invariant: "no-phantom", profile: "safe", why: "a request queued in a frozen instance revives a lease" },
  { plant: "renew-ignores-etag", invariant: "no-phantom", profile: "safe", why: "a revoked holder renews" },
  { plant: "never-takes-over", invariant: "liveness", profile: "safe", why: "a crashed holder's lease never ends" },
  { plant: "handover-releases-before-step-down", invariant: "one-primary", profile: "safe", why: "the successor takes over while the old holder still believes" },
  { plant: "participant-parts-without-budget", invariant: "no-phantom", profile: "safe", why: "a participant heartbeat queued in a frozen instance revives a lease" },
  { plant: "standby-ignores-lost-contact", invariant: "sticky", profile: "outage", why: "a standby takes the expired lease at once after contact returns" },
  { plant: "ride-through-past-refusal", invariant: "ride-through", profile: "outage", why: "a ride-through continues past a refusal" },
  { plant: "fenced-write-ignores-etag", invariant: "fenced-writes", profile: "outage", why: "a read-check-write without If-Match lets a rider's write land after the new primary's" },
  { plant: "shared-renewal-doubling", invariant: "renewal-copies", profile: "loss", why: "the last role of a lost participant heartbeat gets fewer copies than a lone elector" },
  { plant: "ranking-ignores-standbys", invariant: "highest-wins", profile: "priority", why: "the first standby to ask takes a free role, whatever its priority" },
  { plant: "preempt-without-hold-down", invariant: "preempt-hold-down", profile: "priority", why: "a standby asks to preempt on its first announcement" },
  { plant: "hold-down-across-restarts", invariant: "no-flapping", profile: "priority", why: "a candidate that comes and goes keeps its hold-down across restarts and gets the role" },
];

describe("each checker fails on a planted bug", () => {
  it.each(CASES)("$invariant finds $plant ($why)", { timeout: 60_000 }, async ({ plant, invariant, profile }) => {
    // Up to 400 runs: since electors back off after failed calls instead of churning
    // (docs/protocol.md#overload-shedding-before-the-store-falls-behind), the scenarios that show some plants are rarer (with the term history's
    // writes in the store too, the first at seed 142 for elector-deadline-sent-at-plus-t,
    // 63 for takeover-at-t-minus-i); each case stops at its first.
    const report = await runSeeds({ profile, plant, invariants: [invariant], firstSeed: 1, runs: 400, stopAtFirst: true });
    const violation = report.violations[0];
    expect(violation, `${invariant} did not find ${plant} in ${report.runs} runs`).toBeDefined();
    expect(violation!.invariant).toBe(invariant);
    const { seed } = violation!.scenario;
    expect(violation!.message).toContain(`HA_SIM_SEED=${seed} HA_SIM_PROFILE=${profile} HA_SIM_PLANT=${plant} HA_SIM_INVARIANTS=${invariant}`);
    await expect(simulate(violation!.scenario)).rejects.toThrow(violation!.message);
  });
});
