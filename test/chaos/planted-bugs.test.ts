import { describe, expect, it } from "vitest";
import { runChaosCli } from "./chaos-cli.js";
import { isRunning } from "./processes.js";

/**
 * A chaos run that passes proves something only if the judge fails a run that is broken.
 * These runs plant a real split brain with real processes, and `npm run chaos` must exit 1
 * naming it.
 */
describe("npm run chaos with a planted bug", () => {
  it("a worker that leaves its process group (setsid) outlives its SIGKILLed run: split brain and orphans", async () => {
    // Two cycles, so that a run-kill meets the primary even if a loaded machine hides it from the first.
    const { code, output, report } = await runChaosCli(["--plant", "escaped-worker", "--participants", "2", "--faults", "run-kill", "--cycles", "2", "--seed", "1"], 90_000);
    expect(code, output).toBe(1);
    expect(report!.verdict.violationCounts["overlap"], output).toBeGreaterThanOrEqual(1);
    expect(report!.verdict.violationCounts["epoch-backwards"], output).toBeGreaterThanOrEqual(1);
    expect(report!.verdict.violationCounts["orphan"], output).toBeGreaterThanOrEqual(1);
    expect(output).toMatch(/\[overlap\] split brain: p\d's worker pid \d+ \(epoch \d+\) started while p\d's worker pid \d+ \(epoch \d+\) was still running/);
    // The harness still leaves nothing behind.
    for (const leftover of report!.record.leftovers) expect(isRunning(leftover.pid)).toBe(false);
  }, 120_000);

  it("the same escaped worker is caught with PostgreSQL as the store (--store postgres)", async () => {
    const { code, output, report } = await runChaosCli(
      ["--store", "postgres", "--plant", "escaped-worker", "--participants", "2", "--faults", "run-kill", "--cycles", "2", "--seed", "1"],
      90_000,
    );
    expect(code, output).toBe(1);
    expect(report!.verdict.violationCounts["overlap"], output).toBeGreaterThanOrEqual(1);
    expect(report!.verdict.violationCounts["epoch-backwards"], output).toBeGreaterThanOrEqual(1);
    expect(report!.verdict.violationCounts["orphan"], output).toBeGreaterThanOrEqual(1);
    expect(output).toMatch(/store: postgres; PLANTED BUG: escaped-worker/);
    for (const leftover of report!.record.leftovers) expect(isRunning(leftover.pid)).toBe(false);
  }, 120_000);

  it("two participants on two services that share nothing are both primary at once", async () => {
    // Two short cycles keep both workers running for a few seconds, even on a machine so
    // loaded that a worker takes a second or two to start.
    const { code, output, report } = await runChaosCli(["--plant", "two-services", "--participants", "2", "--faults", "run-term", "--cycles", "2", "--seed", "1"], 60_000);
    expect(code, output).toBe(1);
    expect(report!.verdict.violationCounts["overlap"], output).toBeGreaterThanOrEqual(1);
    // The summary counts each kind; the order depends on which kinds the run produced.
    expect(output).toMatch(/VIOLATIONS: \d+ \([^)]*\boverlap \d+/);
  }, 90_000);

  it("a second worker process under the epoch of the first (a command started again in its term) breaks one epoch, one worker", async () => {
    const { code, output, report } = await runChaosCli(["--plant", "reused-epoch", "--participants", "2", "--faults", "run-term", "--cycles", "1", "--seed", "1"], 60_000);
    expect(code, output).toBe(1);
    expect(report!.verdict.violationCounts["epoch-reused"], output).toBeGreaterThanOrEqual(1);
    // The workers take turns: no overlap, only the reuse of the epoch is wrong.
    expect(report!.verdict.violationCounts["overlap"], output).toBeUndefined();
    expect(output).toMatch(/\[epoch-reused\] epoch \d+ names \d worker processes, one after the other: p\d's pid \d+, p\d's pid \d+/);
  }, 90_000);
});
