import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning, realDelay, waitUntil, type CliEvent } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * `ha-module run` with commands that are more than one process (a shell that does not
 * exec, `npm run`, an entrypoint script): the whole process group is the command, it
 * dies with its supervisor, and its output stays off the JSON event lines.
 */
const I = 200;
const T = 2000;

/** A grandchild behind `sh -c`: reports its pid, and takes 300 ms to die on SIGTERM. */
const GRANDCHILD = [
  "console.error(`grandchild up pid=${process.pid} epoch=${process.env.HA_EPOCH}`);",
  "process.on('SIGTERM', () => setTimeout(() => process.exit(0), 300));",
  "setInterval(() => {}, 1000);",
].join(" ");
/** The command's environment names node and the grandchild's script, so that sh can start it. */
const ENV = { HA_TEST_NODE: process.execPath, HA_TEST_GRANDCHILD: GRANDCHILD };
/** `; true` keeps sh from exec-ing node: sh stays the direct child, node is its child. */
const SHELL_THEN_NODE = ["sh", "-c", '"$HA_TEST_NODE" -e "$HA_TEST_GRANDCHILD"; true'];

describe("ha-module run: the command is a process group that cannot outlive its supervisor", () => {
  let service: ServiceProcess;
  const runners: CliProcess[] = [];
  const leftovers: number[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.kill()));
    for (const pid of leftovers.filter(isRunning)) process.kill(pid, "SIGKILL");
    await service?.stop();
  });

  const startRunner = (utype: string, command: string[], extra: string[] = []): CliProcess => {
    const runner = new CliProcess(utype, ["run", utype, "--endpoint", service.url, ...extra, "--", ...command], ENV);
    runners.push(runner);
    return runner;
  };
  const started = (runner: CliProcess, from = 0): Promise<CliEvent> => runner.waitFor((e) => e.event === "started", { from });
  const grandchildOf = async (runner: CliProcess): Promise<number> => {
    const pid = Number((await runner.waitForStderr(/grandchild up pid=(\d+)/))[1]);
    leftovers.push(pid);
    return pid;
  };

  it("SIGTERM: the whole group is stopped, and `exited` is printed only once every member is gone", async () => {
    const runner = startRunner("e2e-group-stop", SHELL_THEN_NODE);
    const shell = (await started(runner))["pid"] as number;
    const grandchild = await grandchildOf(runner);
    runner.signal("SIGTERM");
    const exited = await runner.waitFor((e) => e.event === "exited");
    // The shell dies at once on SIGTERM; the grandchild takes 300 ms more. `exited` waits for it.
    expect(isRunning(grandchild)).toBe(false);
    expect(isRunning(shell)).toBe(false);
    expect(exited).toMatchObject({ pid: shell });
    expect(await runner.exited).toEqual({ code: 0, signal: null });
  });

  it("a command that exits on its own leaves nothing behind: the rest of its group is stopped before run exits with its code", async () => {
    const runner = startRunner("e2e-group-own-exit", ["sh", "-c", '"$HA_TEST_NODE" -e "$HA_TEST_GRANDCHILD" & echo "background pid=$!" >&2; exit 3']);
    const background = Number((await runner.waitForStderr(/background pid=(\d+)/))[1]);
    leftovers.push(background);
    expect(await runner.exited).toEqual({ code: 3, signal: null });
    expect(isRunning(background)).toBe(false);
    expect(runner.events.find((e) => e.event === "exited")).toMatchObject({ code: 3, signal: null });
  });

  it("SIGKILL of run (or OOM): the watchdog kills the command's whole group at once", async () => {
    const runner = startRunner("e2e-group-orphan", SHELL_THEN_NODE);
    const event = await started(runner);
    const shell = event["pid"] as number;
    const grandchild = await grandchildOf(runner);
    runner.signal("SIGKILL");
    const goneMs = await waitUntil(() => !isRunning(shell) && !isRunning(grandchild), "the group of a SIGKILLed run is gone", 3000);
    console.log(`run SIGKILLed → its command's group gone in ${Math.round(goneMs)} ms`);
    const watchdog = event["watchdog"] as number;
    expect(watchdog).toEqual(expect.any(Number));
    await waitUntil(() => !isRunning(watchdog), "the watchdog exits after killing the group", 3000);
  });

  it("stdin: a pipe from run that reaches EOF when run dies, seen even by a process that left the group", async () => {
    // The command starts a process in its own session (out of the group, so the watchdog
    // cannot reach it) that shares the command's stdin and reports its end.
    const escaper = "process.stdin.on('end', () => { console.error('escaper: stdin EOF'); process.exit(0); }); process.stdin.resume(); console.error('escaper: reading stdin');";
    const command = [
      "const { spawn } = require('node:child_process');",
      `const escaper = spawn(process.execPath, ['-e', ${JSON.stringify(escaper)}], { detached: true, stdio: 'inherit' });`,
      "console.error(`escaper pid=${escaper.pid}`); escaper.unref();",
      "setInterval(() => {}, 1000);",
    ].join(" ");
    const runner = startRunner("e2e-group-stdin", [process.execPath, "-e", command]);
    const escaperPid = Number((await runner.waitForStderr(/escaper pid=(\d+)/))[1]);
    leftovers.push(escaperPid);
    await runner.waitForStderr(/escaper: reading stdin/);
    await realDelay(100);
    expect(runner.stderr).not.toMatch(/escaper: stdin EOF/); // no end while run lives
    runner.signal("SIGKILL");
    await runner.waitForStderr(/escaper: stdin EOF/, 5000);
  });

  it("the watchdog: in a group and session of its own, deaf to SIGTERM, SIGINT, SIGHUP and SIGQUIT; killed anyway, run stops the command and starts it again with a new one, in a new term", async () => {
    const runner = startRunner("e2e-group-watchdog", SHELL_THEN_NODE);
    const first = await started(runner);
    await grandchildOf(runner);
    const watchdog = first["watchdog"] as number;
    // pgrp and session are fields 5 and 6 of /proc/<pid>/stat: its own, neither run's nor the command's.
    const [pgrp, session] = readFileSync(`/proc/${watchdog}/stat`, "utf8").split(") ")[1]!.split(" ").slice(2, 4).map(Number);
    expect([pgrp, session]).toEqual([watchdog, watchdog]);
    // Once it has booted (it handles the four signals: SigCgt in /proc), they do nothing to it.
    const stopSignals = [1, 2, 3, 15].map((n) => 1n << BigInt(n - 1)); // SIGHUP, SIGINT, SIGQUIT, SIGTERM
    const caught = (): bigint => BigInt(`0x${/SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${watchdog}/status`, "utf8"))![1]}`);
    await waitUntil(() => stopSignals.every((bit) => (caught() & bit) !== 0n), "the watchdog handles its stop signals", 5000);
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"] as const) process.kill(watchdog, signal);
    await realDelay(200);
    expect(isRunning(watchdog)).toBe(true);
    expect(isRunning(first["pid"] as number)).toBe(true);
    const mark = runner.events.length;
    process.kill(watchdog, "SIGKILL");
    await runner.waitFor((e) => e.event === "exited" && e["pid"] === first["pid"], { from: mark });
    const second = await started(runner, mark);
    // One epoch, one incarnation of the command: the term it ran in is given up first.
    expect(second["epoch"] as number).toBeGreaterThan(first["epoch"] as number);
    expect(runner.stderr).toMatch(/giving the term up/);
    expect(second["watchdog"]).not.toBe(first["watchdog"]);
    expect(isRunning(second["watchdog"] as number)).toBe(true);
    expect(runner.stderr).toMatch(/its watchdog died \(SIGKILL\)/);
  });

  it("the command's environment: HA_UTYPE, HA_UUID and HA_EPOCH of the term, and HA_CHECK_URL even without --check-port", async () => {
    const report = [
      "const { HA_UTYPE, HA_UUID, HA_EPOCH, HA_CHECK_URL } = process.env;",
      "fetch(HA_CHECK_URL).then(async (r) => {",
      "  console.error(`env ${JSON.stringify({ HA_UTYPE, HA_UUID, HA_EPOCH, HA_CHECK_URL, status: r.status, body: await r.json() })}`);",
      "});",
    ].join(" ");
    const runner = startRunner("e2e-group-env", [process.execPath, "-e", report]);
    expect(await runner.exited).toEqual({ code: 0, signal: null });
    const elected = runner.events.find((e) => e.event === "elected")!;
    const env = JSON.parse(/env (\{.*\})/.exec(runner.stderr)![1]!) as Record<string, unknown>;
    expect(env).toEqual({
      HA_UTYPE: "e2e-group-env",
      HA_UUID: elected["uuid"],
      HA_EPOCH: String(elected["epoch"]),
      HA_CHECK_URL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/check-primary$/),
      status: 200,
      body: { isPrimary: true, epoch: elected["epoch"] },
    });
  });

  it("the command's stdout goes to run's stderr and never into the JSON event lines", async () => {
    const noisy = [
      "process.stdout.write('{\"event\":\"fake');", // half a line, no newline
      "console.log(JSON.stringify({ event: 'elected', fake: true }));",
      "process.stdout.write('x'.repeat(200000) + '\\n');",
      "console.log('plain text from the command');",
      "console.error('stderr text from the command');",
    ].join(" ");
    const runner = startRunner("e2e-group-stdout", [process.execPath, "-e", noisy]);
    expect(await runner.exited).toEqual({ code: 0, signal: null });
    expect(runner.stderr).not.toMatch(/\[unparsed stdout\]/);
    expect(runner.events.filter((e) => e["fake"] === true)).toEqual([]);
    expect(runner.events.map((e) => e.event)).toEqual(expect.arrayContaining(["elected", "started", "exited", "demoted"]));
    expect(runner.stderr).toMatch(/plain text from the command/);
    expect(runner.stderr).toMatch(/stderr text from the command/);
  });
});
