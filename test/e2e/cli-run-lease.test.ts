import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning, type CliEvent } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * The grace period of `ha-module run` must fit inside the lease: the command is stopped
 * while the lease still has the grace left, so that even a command that ignores SIGTERM
 * is dead by the deadline, before a standby can take over.
 */
const I = 200;
const T = 2000;

/** Ignores SIGTERM, so only the SIGKILL ends it. */
const STUBBORN = "process.on('SIGTERM', () => console.error(`ignoring SIGTERM at=${Date.now()}`)); console.error(`stubborn up pid=${process.pid}`); setInterval(() => {}, 1000);";

describe("ha-module run: the grace period fits in the lease", () => {
  let service: ServiceProcess;
  const runners: CliProcess[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    service?.child.kill("SIGCONT");
    await Promise.all(runners.map((runner) => runner.kill()));
    await service?.stop();
  });

  const startRunner = (name: string, utype: string, extra: string[] = []): CliProcess => {
    const runner = new CliProcess(name, ["run", utype, "--endpoint", service.url, ...extra, "--", process.execPath, "-e", STUBBORN]);
    runners.push(runner);
    return runner;
  };

  it("refuses a --grace-ms that does not fit below T − 2·I, naming I and T, and exits 2 without competing", async () => {
    const runner = startRunner("too-long", "e2e-grace-refused", ["--grace-ms", String(T - 2 * I)]);
    expect(await runner.exited).toEqual({ code: 2, signal: null });
    expect(runner.stderr).toMatch(/--grace-ms 1600/);
    expect(runner.stderr).toMatch(/I = 200 ms/);
    expect(runner.stderr).toMatch(/T = 2000 ms/);
    expect(runner.events).toEqual([]);
    const view = (await (await fetch(`${service.url}/primary/e2e-grace-refused`)).json()) as { primary: unknown };
    expect(view.primary).toBeNull();
  });

  it("renewals stop (the service freezes): a command that ignores SIGTERM is dead by the deadline, before any standby can be elected", async () => {
    const utype = "e2e-grace-freeze";
    const primary = startRunner("primary", utype);
    const first = await primary.waitFor((e) => e.event === "started");
    await primary.waitForStderr(/stubborn up/);
    const standby = startRunner("standby", utype);
    await standby.waitFor((e) => e.event === "primaryChanged" && e["primary"] !== null);

    const marks = [primary.events.length, standby.events.length] as const;
    const frozenAt = performance.now();
    service.child.kill("SIGSTOP");
    let exited: CliEvent;
    try {
      // The primary's lease runs out on its own clock at most T − I after its last renewal.
      // While the service is frozen nobody can be elected, whatever this wait takes.
      exited = await primary.waitFor((e) => e.event === "exited" && e["pid"] === first["pid"], { from: marks[0], timeoutMs: 3 * T });
    } finally {
      service.child.kill("SIGCONT");
    }
    const deadMs = exited.receivedAt - frozenAt;
    console.log(`service frozen → SIGTERM-ignoring command dead in ${Math.round(deadMs)} ms (deadline ≤ T − I = ${T - I} ms)`);
    expect(exited).toMatchObject({ code: null, signal: "SIGKILL" });
    expect(isRunning(first["pid"] as number)).toBe(false);
    // It was asked first: SIGTERM at the deadline minus the grace (800 ms), SIGKILL at the
    // deadline. Half the grace is the bound, so that a loaded machine passes.
    const termAt = Number(/ignoring SIGTERM at=(\d+)/.exec(primary.stderr)?.[1]);
    expect(Date.parse(exited["at"] as string) - termAt).toBeGreaterThan(400);
    // By the deadline (≤ T − I), give or take the event's travel on a loaded machine; a
    // SIGKILL only after the grace would come at T − 2·I + grace at the earliest.
    expect(deadMs).toBeLessThan(T + I);
    // The default grace is (T − 2·I)/2, printed at start.
    expect(primary.stderr).toMatch(/grace 800 ms \(default/);

    // Only now that the service runs again can anyone be elected; the old command is long gone.
    const next = await Promise.any([
      primary.waitFor((e) => e.event === "started", { from: marks[0] }),
      standby.waitFor((e) => e.event === "started", { from: marks[1] }),
    ]);
    console.log(`resumed → next command started after ${Math.round(next.receivedAt - exited.receivedAt)} ms`);
    expect(next["epoch"]).toBeGreaterThan(first["epoch"] as number);
    expect(next.receivedAt).toBeGreaterThan(exited.receivedAt);
  });
});
