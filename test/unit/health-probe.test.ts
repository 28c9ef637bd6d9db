import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HEALTH_OUTPUT_LIMIT, shellProbe } from "../../shared/cli/supervise/health-probe.js";
import { isRunning, waitUntil } from "../helpers/sdk-cli-process.js";

/** The real check: `sh -c CMD` as a process group of its own, with the term's environment. */
describe("shellProbe", () => {
  it("runs the command with sh and the environment given, keeping stdout and stderr together and the exit code", async () => {
    const probe = shellProbe('echo "epoch $HA_EPOCH"; echo oops >&2; exit 3', { PATH: process.env["PATH"], HA_EPOCH: "7" });
    const result = await probe(new AbortController().signal);
    expect(result.exitCode).toBe(3);
    expect(result.output.split("\n").sort()).toEqual(["", "epoch 7", "oops"]);
  });

  it("keeps only the first 4096 bytes of what the check writes", async () => {
    const probe = shellProbe("i=0; while [ $i -lt 2000 ]; do echo 0123456789; i=$((i+1)); done", { PATH: process.env["PATH"] });
    const result = await probe(new AbortController().signal);
    expect(result.exitCode).toBe(0);
    expect(Buffer.byteLength(result.output)).toBe(HEALTH_OUTPUT_LIMIT);
  });

  it("aborting kills its whole process group (the shell and what it started): 128 + SIGKILL", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ha-probe-"));
    const pidFile = path.join(dir, "child");
    const abort = new AbortController();
    const probe = shellProbe('sleep 30 & echo $! > "$PID_FILE"; wait', { PATH: process.env["PATH"], PID_FILE: pidFile });
    const running = probe(abort.signal);
    await waitUntil(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"), "the check started its child");
    const child = Number(readFileSync(pidFile, "utf8"));
    expect(isRunning(child)).toBe(true);
    abort.abort();
    expect((await running).exitCode).toBe(137);
    await waitUntil(() => !isRunning(child), "the check's child is gone", 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  it("a command sh cannot find is a failure (127), not a crash", async () => {
    const result = await shellProbe("no-such-command-for-ha-module", { PATH: process.env["PATH"] })(new AbortController().signal);
    expect(result.exitCode).toBe(127);
    expect(result.output).toMatch(/not found/);
  });
});
