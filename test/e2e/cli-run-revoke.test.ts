import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning, runCli } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * `ha-module release --revoke <role>` (no token) while `run` works, with real processes.
 * The service keeps a revoked lease, refusing any takeover, until it expires, so `run`
 * has time left: its command gets SIGTERM and the grace inside that time, then SIGKILL,
 * and `run` says so itself (not its watchdog's "deadline passed").
 */
const I = 200;
const T = 6000;
const GRACE = 1500;

/** Ignores SIGTERM (saying so), so only the SIGKILL after the grace ends it. */
const STUBBORN = "process.on('SIGTERM', () => console.error('worker got SIGTERM')); console.error('worker up'); setInterval(() => {}, 1000);";

describe("ha-module run when an operator revokes its lease", () => {
  let service: ServiceProcess;
  let runner: CliProcess | undefined;

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    await runner?.kill();
    await service?.stop();
  });

  it("SIGTERM now, SIGKILL after the grace within the time left, logged as a revoke; run keeps competing", async () => {
    const utype = "e2e-revoke";
    runner = new CliProcess("runner", ["run", utype, "--endpoint", service.url, "--grace-ms", String(GRACE), "--", process.execPath, "-e", STUBBORN]);
    const started = await runner.waitFor((e) => e.event === "started");
    await runner.waitForStderr(/worker up/);

    const released = await runCli(["release", utype, "--revoke", "--endpoint", service.url]);
    expect(released.code, released.stderr).toBe(0);
    expect(JSON.parse(released.stdout)).toMatchObject({ primary: { revoked: true } });

    await runner.waitFor((e) => e.event === "demoted" && e["reason"] === "revoked");
    const exited = await runner.waitFor((e) => e.event === "exited" && e["pid"] === started["pid"]);
    // SIGTERM first, with the time left said; the stubborn worker saw it; SIGKILL after the grace.
    const stopping = /stopping the command \(process group \d+\): its lease was revoked[^;]*; the service keeps it until it expires, and (\d+) ms are left of it; SIGTERM now, SIGKILL in (\d+) ms\./.exec(runner.stderr);
    expect(stopping, runner.stderr).not.toBeNull();
    const [leftMs, killInMs] = [Number(stopping![1]), Number(stopping![2])];
    expect(killInMs).toBeGreaterThan(0);
    expect(killInMs).toBeLessThanOrEqual(Math.min(GRACE, leftMs));
    expect(runner.stderr.indexOf("worker got SIGTERM")).toBeGreaterThan(runner.stderr.indexOf("its lease was revoked"));
    expect(exited).toMatchObject({ code: null, signal: "SIGKILL" });
    expect(runner.stderr).not.toMatch(/lease deadline passed without word from its supervisor/);
    expect(isRunning(started["pid"] as number)).toBe(false);
    // run itself is not ended by a revoke: it competes again.
    expect(runner.child.exitCode).toBeNull();
  }, 60_000);
});
