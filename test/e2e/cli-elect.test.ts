import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, realDelay, type CliEvent } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * Three real `ha-module elect` processes against the built service (`ha-module serve`) with
 * small I and T. Margins are generous so that a loaded machine does not flake; the measured
 * failover times are printed, not asserted tightly (see bench/failover.ts for figures).
 */
const I = 200;
const T = 2000;
const UTYPE = "e2e-elect";

describe("ha-module elect: three real processes", () => {
  let service: ServiceProcess;
  const electors: CliProcess[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
    for (const name of ["p1", "p2", "p3"]) {
      electors.push(new CliProcess(name, ["elect", UTYPE, "--address", `${name}:5800`, "--endpoint", service.url]));
    }
  });

  afterAll(async () => {
    await Promise.all(electors.map((elector) => elector.kill()));
    await service?.stop();
  });

  /** Waits until exactly one of `candidates` has printed `elected` after `marks`, and returns it. */
  async function nextPrimary(candidates: CliProcess[], marks: Map<CliProcess, number>, timeoutMs = 20_000): Promise<{ who: CliProcess; event: CliEvent }> {
    const winner = await Promise.any(
      candidates.map(async (who) => ({ who, event: await who.waitFor((e) => e.event === "elected", { from: marks.get(who) ?? 0, timeoutMs }) })),
    );
    return winner;
  }

  const marksNow = (): Map<CliProcess, number> => new Map(electors.map((elector) => [elector, elector.events.length]));
  const alive = new Set<CliProcess>();

  it("elects exactly one of three, and the others see it as primaryChanged", async () => {
    electors.forEach((elector) => alive.add(elector));
    const { who, event } = await nextPrimary(electors, new Map());
    expect(event).toMatchObject({ event: "elected", utype: UTYPE, epoch: expect.any(Number), uuid: expect.any(String) });
    expect(typeof event["at"] === "string" && !Number.isNaN(Date.parse(event["at"]))).toBe(true);
    for (const other of electors.filter((e) => e !== who)) {
      const seen = await other.waitFor((e) => e.event === "primaryChanged" && (e["primary"] as { uuid?: string } | null)?.uuid === event["uuid"]);
      // The role's epoch, as `primary --watch` prints it.
      expect(seen["epoch"]).toBe(event["epoch"]);
    }
    expect(electors.flatMap((e) => e.events).filter((e) => e.event === "elected")).toHaveLength(1);
  });

  it("SIGKILL of the primary: another prints elected with a higher epoch, after the lease expires", async () => {
    const [primary, epoch] = currentPrimary();
    const marks = marksNow();
    const killedAt = performance.now();
    primary.signal("SIGKILL");
    alive.delete(primary);
    const { who, event } = await nextPrimary([...alive], marks);
    const failoverMs = event.receivedAt - killedAt;
    console.log(`crash failover (SIGKILL → elected): ${Math.round(failoverMs)} ms with I=${I} T=${T}`);
    expect(who).not.toBe(primary);
    expect(event["epoch"]).toBeGreaterThan(epoch);
    // A crash is noticed only when the lease runs out (less what had elapsed since the last
    // renewal): far later than a graceful handover. Loose, so that a loaded machine passes.
    expect(failoverMs).toBeGreaterThan(T / 2);
  });

  it("SIGSTOP of the primary longer than T, then SIGCONT: a standby took over, and the paused one's next event is demoted", async () => {
    const [paused, epoch] = currentPrimary();
    const standbys = [...alive].filter((e) => e !== paused);
    const marks = marksNow();
    const stoppedAt = performance.now();
    paused.signal("SIGSTOP");
    const { event } = await nextPrimary(standbys, marks);
    expect(event["epoch"]).toBeGreaterThan(epoch);
    await realDelay(Math.max(0, T + I - (performance.now() - stoppedAt)));
    // Everything it printed before the stop has long been read: what comes now is new.
    const resumedMark = paused.events.length;
    paused.signal("SIGCONT");
    const next = await paused.waitFor(() => true, { from: resumedMark });
    expect(next).toMatchObject({ event: "demoted", reason: "lease-expired", epoch });
    // It resumes as a new incarnation and follows the new primary instead of fighting it.
    await paused.waitFor((e) => e.event === "primaryChanged" && (e["primary"] as { uuid?: string } | null)?.uuid === event["uuid"], {
      from: marks.get(paused),
    });
    expect(paused.events.slice(marks.get(paused)).filter((e) => e.event === "elected")).toHaveLength(0);
  });

  it("SIGTERM of the primary: it prints demoted (stopped), exits 0, and a standby is elected well before T", async () => {
    const [primary, epoch] = currentPrimary();
    const standbys = [...alive].filter((e) => e !== primary);
    const marks = marksNow();
    const termAt = performance.now();
    primary.signal("SIGTERM");
    alive.delete(primary);
    const { event } = await nextPrimary(standbys, marks);
    const failoverMs = event.receivedAt - termAt;
    console.log(`graceful failover (SIGTERM → elected): ${Math.round(failoverMs)} ms with I=${I} T=${T}`);
    expect(event["epoch"]).toBeGreaterThan(epoch);
    expect(failoverMs).toBeLessThan(T);
    expect(await primary.exited).toEqual({ code: 0, signal: null });
    expect(primary.events.find((e, n) => n >= marks.get(primary)! && e.event === "demoted")).toMatchObject({ reason: "stopped", epoch });
  });

  /** The process whose latest elected/demoted event is `elected`, and its epoch. */
  function currentPrimary(): [CliProcess, number] {
    const holders = [...alive].flatMap((elector) => {
      const last = elector.events.filter((e) => e.event === "elected" || e.event === "demoted").at(-1);
      return last?.event === "elected" ? [[elector, last["epoch"] as number] as [CliProcess, number]] : [];
    });
    expect(holders.map(([e]) => e.name)).toHaveLength(1);
    return holders[0]!;
  }
});
