import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRecordingProxy, type RecordingProxy } from "../helpers/recording-proxy.js";
import { CliProcess, isRunning, runCli } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * `run` and `elect` when the service answers 401 (a key rotation) or 404 (a deploy) for a
 * while, with real processes: a proxy in front of the service answers so until the test
 * says otherwise, at once and without a restart, so the refusals meet a primary. Neither
 * gives up: `run`'s command is stopped with the lease and started again, under a new
 * epoch, once the answers are good again. Only --exit-on-auth-error exits.
 */
const I = 200;
const T = 2000;
const KEY = "e2e-auth-key";

/** Exits 0 on SIGTERM; says which epoch it runs under. */
const WORKER = "process.on('SIGTERM', () => process.exit(0)); console.error(`worker up epoch=${process.env.HA_EPOCH}`); setInterval(() => {}, 1000);";

describe("run and elect when the service answers 401 or 404 for a while", () => {
  let service: ServiceProcess;
  let proxy: RecordingProxy;
  let refusing: 401 | 404 | undefined;
  const processes: CliProcess[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_API_KEY: KEY, HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
    proxy = await startRecordingProxy(service.url, { refuse: () => refusing });
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await proxy?.close();
    await service?.stop();
  });

  it("run, while primary, reports a 401 once and stays up with its command stopped; it starts the command again (new epoch) when the answer changes", async () => {
    const runner = new CliProcess("runner", ["run", "e2e-rotation", "--", process.execPath, "-e", WORKER], { HA_ENDPOINT: proxy.url, HA_API_KEY: KEY });
    processes.push(runner);
    const started = await runner.waitFor((e) => e.event === "started");

    refusing = 401; // the key was rotated under it
    const mark = runner.events.length;
    // The renewals are refused, the lease runs out, and the command is stopped with it.
    await runner.waitFor((e) => e.event === "exited" && e["pid"] === started["pid"], { from: mark });
    await runner.waitFor((e) => e.event === "demoted", { from: mark });
    await runner.waitForStderr(/401 Unauthorized[\s\S]*Trying again, less and less often/);
    expect(isRunning(started["pid"] as number)).toBe(false);
    expect(runner.child.exitCode).toBeNull();
    expect(runner.stderr.match(/401 Unauthorized/g), runner.stderr).toHaveLength(1);
    expect(runner.stderr).toMatch(/pass --key or set HA_API_KEY/);
    expect(runner.stderr).not.toMatch(/apiKey/);
    expect(runner.events.slice(mark).some((e) => e.event === "started")).toBe(false);

    refusing = undefined; // the key is accepted again
    const again = await runner.waitFor((e) => e.event === "started", { from: mark, timeoutMs: 30_000 });
    expect(again["epoch"] as number).toBeGreaterThan(started["epoch"] as number);
    await runner.waitForStderr(/the service answers again/);
    // Reported once for the whole time it was refused.
    expect(runner.stderr.match(/401 Unauthorized/g), runner.stderr).toHaveLength(1);
    expect(runner.child.exitCode).toBeNull();

    runner.signal("SIGTERM");
    expect(await runner.exited).toEqual({ code: 0, signal: null });
  }, 120_000);

  it("elect, while primary, stays up through a 404 and is elected again when the answer changes", async () => {
    const elector = new CliProcess("elector", ["elect", "e2e-deploy"], { HA_ENDPOINT: proxy.url, HA_API_KEY: KEY });
    processes.push(elector);
    const first = await elector.waitFor((e) => e.event === "elected");
    refusing = 404;
    const mark = elector.events.length;
    await elector.waitFor((e) => e.event === "demoted", { from: mark });
    await elector.waitForStderr(/404[\s\S]*Trying again, less and less often/);
    expect(elector.child.exitCode).toBeNull();
    refusing = undefined;
    const again = await elector.waitFor((e) => e.event === "elected", { from: mark, timeoutMs: 30_000 });
    expect(again["epoch"] as number).toBeGreaterThan(first["epoch"] as number);
    elector.signal("SIGTERM");
    expect(await elector.exited).toEqual({ code: 0, signal: null });
  }, 120_000);

  it("--exit-on-auth-error makes run and elect exit 1 with the hint", async () => {
    const env = { HA_ENDPOINT: proxy.url, HA_API_KEY: KEY };
    refusing = 401;
    try {
      for (const args of [["elect", "e2e-wrong-key", "--exit-on-auth-error"], ["run", "e2e-wrong-key", "--exit-on-auth-error", "--", "true"]]) {
        const { code, stdout, stderr } = await runCli(args, env, 20_000);
        expect(code, stderr).toBe(1);
        expect(stderr).toMatch(/The function key is wrong or missing: pass --key KEY or set HA_API_KEY/);
        expect(stderr).not.toMatch(/Trying again/);
        expect(stdout).not.toMatch(/"elected"/);
      }
    } finally {
      refusing = undefined;
    }
  }, 60_000);
});
