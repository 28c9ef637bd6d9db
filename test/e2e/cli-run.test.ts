import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning, realDelay, type CliEvent } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * `ha-module run` with real processes: the child runs only while its runner holds the
 * lease, is stopped when the lease goes, and the runner keeps competing.
 */
const I = 200;
const T = 2000;

/** The work: exits 0 on SIGTERM and 3 on SIGUSR2; then (handlers in place) reports its epoch on stderr. */
const WORKER = [
  "process.on('SIGTERM', () => process.exit(0));",
  "process.on('SIGUSR2', () => process.exit(3));",
  "console.error(`worker up epoch=${process.env.HA_EPOCH} utype=${process.env.HA_UTYPE}`);",
  "setInterval(() => {}, 1000);",
].join(" ");

/** Work that ignores SIGTERM, so only the SIGKILL after the grace period ends it. */
const STUBBORN = "process.on('SIGTERM', () => console.error('ignoring SIGTERM')); console.error('stubborn ready'); setInterval(() => {}, 1000);";

async function checkPrimary(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: await response.json() };
}

describe("ha-module run: runs the command only while primary", () => {
  let service: ServiceProcess;
  const runners: CliProcess[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.kill()));
    await service?.stop();
  });

  const startRunner = (name: string, utype: string, work: string, extra: string[] = []): CliProcess => {
    const runner = new CliProcess(name, ["run", utype, "--endpoint", service.url, "--check-port", "0", ...extra, "--", process.execPath, "-e", work]);
    runners.push(runner);
    return runner;
  };
  const checkUrl = async (runner: CliProcess): Promise<string> => (await runner.waitForStderr(/CheckPrimary on (\S+)/))[1]!;
  const started = (runner: CliProcess, from = 0): Promise<CliEvent> => runner.waitFor((e) => e.event === "started", { from });

  it("starts the command on election, stops it when the lease goes, and starts it again when the lease comes back", async () => {
    const utype = "e2e-run";
    const r1 = startRunner("r1", utype, WORKER);
    const first = await started(r1);
    const elected = r1.events.find((e) => e.event === "elected")!;
    expect(first["epoch"]).toBe(elected["epoch"]);
    await r1.waitForStderr(new RegExp(`worker up epoch=${elected["epoch"]} utype=${utype}`));
    const r1Check = await checkUrl(r1);
    expect(await checkPrimary(r1Check)).toEqual({ status: 200, body: { isPrimary: true, epoch: elected["epoch"] } });

    const r2 = startRunner("r2", utype, WORKER);
    const r2Check = await checkUrl(r2);
    await r2.waitFor((e) => e.event === "primaryChanged" && e["primary"] !== null);
    expect(await checkPrimary(r2Check)).toEqual({ status: 503, body: { isPrimary: false } });
    expect(r2.events.some((e) => e.event === "started")).toBe(false);

    // The lease goes: r1 is frozen past T, so it cannot stop its command; its watchdog
    // SIGKILLs the command at r1's lease deadline instead. r2 takes over only after T and
    // starts its own command: by then r1's is dead.
    const mark1 = r1.events.length;
    const stoppedAt = performance.now();
    r1.signal("SIGSTOP");
    const second = await started(r2);
    expect(isRunning(first["pid"] as number)).toBe(false);
    expect(second["epoch"]).toBeGreaterThan(first["epoch"] as number);
    await realDelay(Math.max(0, T + I - (performance.now() - stoppedAt)));
    r1.signal("SIGCONT");
    // r1 learns it lost the lease, and that its command is gone.
    await r1.waitFor((e) => e.event === "demoted", { from: mark1 });
    const exited = await r1.waitFor((e) => e.event === "exited" && e["pid"] === first["pid"], { from: mark1 });
    expect(exited).toMatchObject({ code: null, signal: "SIGKILL" });
    expect(r1.stderr).toMatch(/watchdog: SIGKILLed process group \d+: the lease deadline passed/);
    expect(isRunning(first["pid"] as number)).toBe(false);
    expect(await checkPrimary(r1Check)).toEqual({ status: 503, body: { isPrimary: false } });
    expect(await checkPrimary(r2Check)).toEqual({ status: 200, body: { isPrimary: true, epoch: second["epoch"] } });

    // r2's command exits on its own with 3: r2 releases and exits 3, and r1, still
    // competing, is elected without waiting for expiry and starts its command again.
    const mark1b = r1.events.length;
    await r2.waitForStderr(new RegExp(`worker up epoch=${second["epoch"]} `));
    const exitedAt = performance.now();
    process.kill(second["pid"] as number, "SIGUSR2");
    expect(await r2.exited).toEqual({ code: 3, signal: null });
    const third = await started(r1, mark1b);
    console.log(`run: command exit → standby's command started in ${Math.round(third.receivedAt - exitedAt)} ms (I=${I}, T=${T})`);
    expect(third["epoch"]).toBeGreaterThan(second["epoch"] as number);
    expect(third.receivedAt - exitedAt).toBeLessThan(T);

    // SIGTERM: the command is stopped first, then the lease released, then exit 0.
    r1.signal("SIGTERM");
    expect(await r1.exited).toEqual({ code: 0, signal: null });
    const tail = r1.events.slice(mark1b).map((e) => e.event);
    expect(tail.indexOf("exited")).toBeGreaterThan(tail.lastIndexOf("demoted"));
    expect(isRunning(third["pid"] as number)).toBe(false);
  });

  it("SIGKILLs a command that ignores SIGTERM after the grace period", async () => {
    const runner = startRunner("stubborn", "e2e-run-stubborn", STUBBORN, ["--grace-ms", "300"]);
    const child = await started(runner);
    await runner.waitForStderr(/stubborn ready/);
    runner.signal("SIGTERM");
    const exited = await runner.waitFor((e) => e.event === "exited");
    expect(exited).toMatchObject({ pid: child["pid"], code: null, signal: "SIGKILL" });
    expect(await runner.exited).toEqual({ code: 0, signal: null });
  });

  it("a wrong flag prints the usage and exits 2", async () => {
    const runner = new CliProcess("bad", ["run", "x", "--check-port", "nope", "--", "true"]);
    expect(await runner.exited).toEqual({ code: 2, signal: null });
    expect(runner.stderr).toMatch(/--check-port must be a port number from 0 to 65535 \(got "nope"\)/);
    expect(runner.stderr).toMatch(/Usage: ha-module run <utype>/);
    const missing = new CliProcess("bad2", ["run", "x", "--endpoint", service.url]);
    expect(await missing.exited).toEqual({ code: 2, signal: null });
    expect(missing.stderr).toMatch(/run needs the command to run after --/);
  });
});
