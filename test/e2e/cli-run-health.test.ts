import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning, realDelay, runCli, waitUntil, type CliEvent } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * `ha-module run --health-cmd` with real processes: two supervisors compete for a role on a
 * local service; the primary's check starts failing (it tests for a file the test deletes),
 * so its command gets SIGTERM, `unhealthy` is printed with the check's output, the lease is
 * released with its token and the standby becomes primary under a higher epoch, while the
 * old one only watches for its cool-down. A healthy check never steps down; a check that
 * hangs past its timeout counts as a failure.
 */
const I = 200;
const T = 2000;
/** Says it is up and when it gets SIGTERM (then exits), with its epoch. */
const WORKER = [
  "console.error(`worker up epoch=${process.env.HA_EPOCH}`);",
  "process.on('SIGTERM', () => { console.error(`worker got SIGTERM epoch=${process.env.HA_EPOCH}`); process.exit(0); });",
  "setInterval(() => {}, 1000);",
].join(" ");
/** Fails, saying why, once the file named by HA_TEST_HEALTHY is gone. */
const FILE_CHECK = 'test -f "$HA_TEST_HEALTHY" || { echo "no $HA_TEST_HEALTHY for epoch $HA_EPOCH"; exit 1; }';
/** Quick checks: three failures in a row, 150 ms apart. */
const QUICK = ["--health-interval", "150ms", "--health-timeout", "1s", "--health-retries", "3"];

/** Every process this file starts carries it in its environment (run, its watchdogs, the commands and checks). */
const MARK_NAME = "HA_TEST_RUN_MARK";
const MARK_VALUE = `health-${process.pid}-${Date.now()}`;

/** The running (not zombie) processes that carry the mark. */
function marked(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      if (isRunning(Number(entry)) && readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(`${MARK_NAME}=${MARK_VALUE}`)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

describe("ha-module run --health-cmd: work that stalls steps down", () => {
  let service: ServiceProcess;
  let dir: string;
  const runners: CliProcess[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
    dir = mkdtempSync(path.join(tmpdir(), "ha-health-"));
  });

  afterEach(async () => {
    await Promise.all(runners.splice(0).map((runner) => runner.kill()));
    // A command cannot outlive its run, even one SIGKILLed just as it starts the command (a
    // test ends at the `elected` that starts one): its watchdog SIGKILLs what is left.
    try {
      await waitUntil(() => marked().length === 0, "every command and watchdog gone with its run", 10_000);
    } catch (error) {
      const pids = marked();
      const left = pids.map((pid) => `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").slice(0, 120)}`);
      for (const pid of pids) process.kill(pid, "SIGKILL");
      throw new Error(`${(error as Error).message}; still running: ${left.join("; ")}`, { cause: error });
    }
  });

  afterAll(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const startRunner = (name: string, utype: string, extra: string[], env: Record<string, string> = {}): CliProcess => {
    const runner = new CliProcess(name, ["run", utype, "--endpoint", service.url, ...extra, "--", process.execPath, "-e", WORKER], { ...env, [MARK_NAME]: MARK_VALUE });
    runners.push(runner);
    return runner;
  };
  const elected = (runner: CliProcess, from = 0): Promise<CliEvent> => runner.waitFor((e) => e.event === "elected", { from });
  /** The runner's last `elected` before `event`: the term it belongs to. */
  const termBefore = (runner: CliProcess, event: CliEvent): CliEvent => runner.events.slice(0, runner.events.indexOf(event)).filter((e) => e.event === "elected").at(-1)!;

  it("a failing check stops the command with SIGTERM, reports it, releases the lease to the standby, and stays out for the cool-down", async () => {
    const utype = "e2e-health-failover";
    // Each supervisor's check tests a file of its own: only the first one's is deleted.
    const healthy = path.join(dir, "failover-first-healthy");
    const standbyHealthy = path.join(dir, "failover-second-healthy");
    writeFileSync(healthy, "");
    writeFileSync(standbyHealthy, "");
    // A cool-down far longer than the rest of the test: the old primary must not win back meanwhile.
    const first = startRunner("first", utype, ["--health-cmd", FILE_CHECK, ...QUICK, "--health-cooldown", "60s"], { HA_TEST_HEALTHY: healthy });
    await elected(first);
    await first.waitForStderr(/worker up/);
    const second = startRunner("second", utype, ["--health-cmd", FILE_CHECK, ...QUICK], { HA_TEST_HEALTHY: standbyHealthy });
    // The standby is in the election (it sees a primary, the first) before the check fails.
    await second.waitFor((e) => e.event === "primaryChanged" && e["primary"] !== null);
    // Passing checks keep the first one primary.
    await realDelay(600);
    expect(first.events.filter((e) => e.event === "unhealthy")).toEqual([]);

    rmSync(healthy);
    const unhealthy = await first.waitFor((e) => e.event === "unhealthy");
    // The term whose command failed its check (on a busy machine a late renewal may have cost an earlier term already).
    const won = termBefore(first, unhealthy);
    expect(unhealthy).toMatchObject({
      utype,
      uuid: won["uuid"],
      epoch: won["epoch"],
      failures: 3,
      exitCode: 1,
      timedOut: false,
      output: `no ${healthy} for epoch ${won["epoch"]}`,
      cooldownMs: 60_000,
    });
    // The command got SIGTERM (and said so), then the term was given up with its token.
    await first.waitForStderr(new RegExp(`worker got SIGTERM epoch=${won["epoch"]}`));
    const stopping = first.stderr.search(/stopping the command \(process group \d+\): its health check failed 3 times in a row; SIGTERM now/);
    expect(stopping, first.stderr).toBeGreaterThan(-1);
    expect(first.stderr.indexOf(`worker got SIGTERM epoch=${won["epoch"]}`)).toBeGreaterThan(stopping);
    const exited = await first.waitFor((e) => e.event === "exited", { from: first.events.indexOf(unhealthy) });
    expect(exited).toMatchObject({ code: 0, signal: null });
    await first.waitFor((e) => e.event === "demoted" && e["reason"] === "resigned" && e["uuid"] === won["uuid"]);

    // The standby takes over, with a higher epoch, and its command starts.
    const taken = await elected(second);
    expect(taken["epoch"]).toBeGreaterThan(won["epoch"] as number);
    // A figure for the report, not a bound: the step-down's gap, old command gone → standby elected.
    console.log(`unhealthy → standby elected in ${Math.round(taken.receivedAt - exited.receivedAt)} ms after the old command exited (I = ${I} ms, T = ${T} ms)`);
    await second.waitForStderr(/worker up/);
    // The old primary only watches during its cool-down: it is not elected again, and still runs.
    await realDelay(3 * T);
    expect(first.events.filter((e) => e.event === "elected" && e.receivedAt > unhealthy.receivedAt)).toEqual([]);
    expect(first.child.exitCode).toBeNull();
    // It watches meanwhile: it saw the standby become primary.
    expect(first.events.some((e) => e.event === "primaryChanged" && (e["primary"] as { uuid?: string } | null)?.uuid === taken["uuid"])).toBe(true);
    const primary = await runCli(["primary", utype, "--endpoint", service.url]);
    const secondUuids = second.events.filter((e) => e.event === "elected").map((e) => e["uuid"]);
    expect(secondUuids).toContain((JSON.parse(primary.stdout) as { primary: { uuid: string } }).primary.uuid);
    // Even a vacant role is left alone during the cool-down: the standby stops (releasing),
    // and the old primary, which sees the role vacant, still does not compete.
    expect(second.events.filter((e) => e.event === "unhealthy")).toEqual([]);
    second.signal("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
    await first.waitFor((e) => e.event === "primaryChanged" && e["primary"] === null);
    await realDelay(2 * T);
    expect(first.events.filter((e) => e.event === "elected" && e.receivedAt > unhealthy.receivedAt)).toEqual([]);
    expect((await runCli(["primary", utype, "--endpoint", service.url])).code).toBe(3);
  }, 60_000);

  it("a healthy check never steps down", async () => {
    const utype = "e2e-health-healthy";
    // The check has the command's environment, and its stdin is /dev/null (a read ends at once, it never waits).
    const runner = startRunner("healthy", utype, ["--health-cmd", 'test -n "$HA_EPOCH" && test -n "$HA_CHECK_URL" && ! read line', ...QUICK]);
    await elected(runner);
    await runner.waitForStderr(/worker up/);
    // Many intervals (every check runs, and passes).
    await realDelay(12 * 150);
    // (On a busy machine a late renewal may still cost a term; that is the lease's rule, not the check's.)
    expect(runner.events.filter((e) => e.event === "unhealthy")).toEqual([]);
    expect(runner.stderr).not.toMatch(/health check failed/);
  }, 30_000);

  it("a check that hangs past its timeout is killed and counts as a failure", async () => {
    const utype = "e2e-health-hangs";
    const marker = path.join(dir, "hang-started");
    const runner = startRunner(
      "hangs",
      utype,
      ["--health-cmd", `echo "$HA_EPOCH $$" >> "${marker}"; echo "still checking"; sleep 30`, "--health-interval", "100ms", "--health-timeout", "300ms", "--health-retries", "2"],
    );
    await elected(runner);
    const unhealthy = await runner.waitFor((e) => e.event === "unhealthy");
    const won = termBefore(runner, unhealthy);
    expect(unhealthy).toMatchObject({ epoch: won["epoch"], failures: 2, exitCode: null, timedOut: true, output: "still checking" });
    expect(runner.stderr).toMatch(/health check failed \(1 of 2\), timed out: still checking/);
    await runner.waitForStderr(/worker got SIGTERM/);
    const resigned = runner.events.length;
    await runner.waitFor((e) => e.event === "demoted" && e["reason"] === "resigned");
    // Each check was killed at its timeout (its whole group: the shell and its sleep), one after the other.
    // The count is of the unhealthy term's checks: on a busy machine a late renewal may cost an
    // earlier term, and a new term's command starts its checks from zero (each line: epoch, pid).
    const checks = readFileSync(marker, "utf8").trim().split("\n").map((line) => line.split(" ").map(Number) as [number, number]);
    expect(checks.filter(([epoch]) => epoch === won["epoch"])).toHaveLength(2);
    expect(checks.map(([, pid]) => pid).filter(isRunning)).toEqual([]);
    // No standby: after the cool-down (T by default) it competes again and wins, under a new epoch.
    const again = await elected(runner, resigned);
    expect(again["epoch"]).toBeGreaterThan(won["epoch"] as number);
  }, 30_000);

  it("wrong health flags exit 2 before competing, saying what to change", async () => {
    const utype = "e2e-health-usage";
    const retries = await runCli(["run", utype, "--endpoint", service.url, "--health-cmd", "true", "--health-retries", "0", "--", "true"]);
    expect(retries.code).toBe(2);
    expect(retries.stderr).toMatch(/--health-retries must be a whole number of consecutive failures, at least 1 \(got "0"\)/);
    const stray = await runCli(["run", utype, "--endpoint", service.url, "--health-timeout", "5s", "--", "true"]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toMatch(/--health-timeout sets up a health check, which needs --health-cmd CMD too/);
    // Checked against the service's I once it has answered: 2·I = 400 ms at least.
    const cooldown = await runCli(["run", utype, "--endpoint", service.url, "--health-cmd", "true", "--health-cooldown", "100ms", "--", "true"]);
    expect(cooldown.code).toBe(2);
    expect(cooldown.stderr).toMatch(/--health-cooldown 100ms is too short: .* Give at least 2·I = 400ms, or leave it out for T = 2000ms\./);
    expect(cooldown.stdout).toBe("");
    const primary = await runCli(["primary", utype, "--endpoint", service.url]);
    expect(primary.code).toBe(3); // nobody ever competed
  }, 30_000);
});
