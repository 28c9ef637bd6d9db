import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import type { Results } from "../../bench/compare/report.js";

/** The built bench's entry; `npm test` builds before vitest runs. */
const BENCH = fileURLToPath(new URL("../../dist/bench/main.js", import.meta.url));

/**
 * `npm run bench -- compare --quick` end to end: real processes, a real service and
 * Azurite. The assertions are the physics and the protocol each algorithm follows, checked
 * on the numbers the proxies counted, never constants the bench could print regardless.
 */
describe("npm run bench -- compare --quick", () => {
  let out = "";
  afterAll(async () => {
    if (out !== "") await rm(out, { recursive: true, force: true });
  });

  it("writes a report, its plots and figures that follow from each algorithm", { timeout: 240_000 }, async () => {
    out = await mkdtemp(join(tmpdir(), "ha-bench-quick-"));
    await promisify(execFile)(process.execPath, [BENCH, "compare", "--quick", "--out", out], { timeout: 220_000, maxBuffer: 10 * 2 ** 20 });
    const results = JSON.parse(await readFile(join(out, "results.json"), "utf8")) as Results;
    const report = await readFile(join(out, "report.md"), "utf8");
    const { intervalMs: I, timeoutMs: T } = results.plan;
    const figures = Object.fromEntries(results.algorithms.map((f) => [f.algorithm, f]));
    const ours = figures["ours"]!;
    const seed = figures["seed"]!;
    const clientGo = figures["client-go"]!;

    // Ours renews with one store operation: counted on the renewals alone on the wire, since a
    // copy sent while a slow answer is awaited (a busy machine) may race it and cost more.
    expect(ours.renewals).toBeGreaterThan(0);
    expect(ours.loneRenewals).toBeGreaterThan(0);
    // (One may meet a retry of the store's client: the seed's, a read before each write, is 2.)
    expect(ours.storeOpsPerLoneRenewal).toBeLessThanOrEqual(1 + 1 / ours.loneRenewals);
    expect(ours.storeOpsPerRenewal).toBeGreaterThan(0);
    expect(ours.primaryCallsPerRenewal).toBeLessThanOrEqual(1 + 1 / ours.renewals);
    // The seed's primary makes an UpdateHeartBeat and a GetPrimary every I.
    // (Per renewal, not per I: on a busy machine its rounds stretch past I, ours and its alike.)
    expect(seed.primaryCallsPerRenewal).toBeGreaterThanOrEqual(2 - 1 / seed.renewals);
    expect(seed.storeOpsPerRenewal).toBeGreaterThan(ours.storeOpsPerLoneRenewal);

    for (const f of [ours, seed, clientGo]) {
      expect(f.crash.n + f.unfinishedTrials).toBe(results.plan.roles * results.plan.failoverRounds);
      expect(f.crash.n).toBeGreaterThan(0);
      // Nobody takes a lease before it expires: the last renewal was at most I before the kill.
      expect(f.crash.min).toBeGreaterThanOrEqual(T - I);
      expect(f.crash.max).toBeLessThan(4 * T + 10_000);
      expect(f.callsPerParticipantPerSecond).toBeGreaterThan(0);
      expect(report).toContain(`| ${f.algorithm} |`);
    }
    // Ours releases with its token on SIGTERM: the standby need not wait for expiry.
    expect(ours.graceful.median).toBeLessThan(T);

    expect(results.ratio.heartbeatsPerSecond).toBeGreaterThan(0);
    expect(results.ratio.rawUpdatesPerSecond).toBeGreaterThan(0);
    expect(results.ratio.ratio).toBeCloseTo(results.ratio.heartbeatsPerSecond / results.ratio.rawUpdatesPerSecond, 6);
    expect(results.capacity.steps.length).toBeGreaterThan(0);
    // A clean step held every role for the whole window: its primaries renewed about once per I.
    for (const step of results.capacity.steps.filter((s) => s.clean)) expect(step.heartbeatsPerSecond).toBeGreaterThan((step.roles * 1000) / I / 2);

    const failover = await readFile(join(out, "failover.svg"), "utf8");
    expect(failover.startsWith("<svg")).toBe(true);
    expect(failover.match(/<circle /g)?.length).toBe(ours.crash.n + seed.crash.n + clientGo.crash.n);
    for (const plot of ["store-ops.svg", "capacity.svg"]) expect((await readFile(join(out, plot), "utf8")).startsWith("<svg")).toBe(true);
    expect(report).toContain(results.command);
    expect(report).toContain(results.machine);
  });
});
