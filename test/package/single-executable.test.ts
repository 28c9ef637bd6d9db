/**
 * docs/cli.md, "One executable file": `npm run build:exe` (scripts/build-exe.mjs) writes
 * `ha-module` as one file that runs every command but `serve` on a machine with no Node.js
 * and no node_modules. Here it runs with an environment that holds nothing but what the
 * test gives it (PATH and NODE_PATH empty: no `node` to find), from a directory outside the
 * repository, against a real service: --version, primary, elect, and run, whose watchdog is
 * the executable started again.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning, type CliProgram } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;

let workDir: string;
let exe: string;
let service: ServiceProcess;
let program: CliProgram;

/** Runs the executable to its end, as a shell on the head node would. */
function runExe(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return execFileAsync(exe, args, { cwd: program.cwd, env: program.env, timeout: 30_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

describe.runIf(process.platform === "linux" && process.arch === "x64")("the single executable, with no Node.js on its PATH", () => {
  beforeAll(async () => {
    workDir = mkdtempSync(path.join(os.tmpdir(), "ha-module-exe-test-"));
    exe = path.join(workDir, "bin", "ha-module");
    const started = performance.now();
    await execFileAsync(process.execPath, [path.join(ROOT, "scripts", "build-exe.mjs"), "--out", exe], { cwd: ROOT, timeout: 120_000 });
    console.log(`build:exe: ${((performance.now() - started) / 1000).toFixed(1)} s, ${(statSync(exe).size / 1024 / 1024).toFixed(1)} MiB`);
    const home = path.join(workDir, "head-node");
    mkdirSync(home);
    program = { command: exe, cwd: home, env: { PATH: "", NODE_PATH: "", HOME: home } };
    service = await startServiceProcess({ HA_INTERVAL_MS: "200", HA_TIMEOUT_MS: "2000" });
  }, 180_000);

  afterAll(async () => {
    await service?.stop();
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("is one file outside the repository, and prints its version", async () => {
    expect(path.relative(ROOT, exe).startsWith("..")).toBe(true);
    expect(await runExe(["--version"])).toEqual({ code: 0, stdout: `ha-module ${VERSION}\n`, stderr: "" });
  });

  it("primary answers for a role nobody holds (exit 3, the JSON printed)", async () => {
    const utype = `exe-primary-${process.pid}`;
    const answer = await runExe(["primary", utype, "--endpoint", service.url]);
    expect(answer.code, answer.stderr).toBe(3);
    expect(JSON.parse(answer.stdout)).toMatchObject({ utype, primary: null });
  });

  it("elect wins the election; SIGTERM releases the lease", async () => {
    const utype = `exe-elect-${process.pid}`;
    const elect = new CliProcess("exe elect", ["elect", utype, "--endpoint", service.url], {}, program);
    try {
      // A role's first epoch: the service's clock in ms at the grant (docs/design/epochs.md).
      expect(await elect.waitFor((event) => event.event === "elected")).toMatchObject({ utype, epoch: expect.any(Number) });
      const primary = await runExe(["primary", utype, "--endpoint", service.url]);
      expect(primary.code, primary.stderr).toBe(0);
      elect.signal("SIGTERM");
      expect((await elect.exited).code, elect.stderr).toBe(0);
      const history = (await (await fetch(`${service.url}/primary/${utype}/history`)).json()) as { terms: { endedBy: string | null }[] };
      expect(history.terms[0]?.endedBy).toBe("released");
    } finally {
      await elect.kill();
    }
  });

  it("run starts its command while primary, with a watchdog that is the executable itself: SIGKILL to run, and the watchdog kills the command", async () => {
    const utype = `exe-run-${process.pid}`;
    // An absolute path: with PATH empty nothing else would be found, and no node is involved.
    const run = new CliProcess("exe run", ["run", utype, "--endpoint", service.url, "--", "/bin/sh", "-c", 'echo "epoch $HA_EPOCH"; exec /bin/sleep 300'], {}, program);
    try {
      const started = await run.waitFor((event) => event.event === "started");
      const commandPid = started["pid"] as number;
      const watchdogPid = started["watchdog"] as number;
      expect(started).toMatchObject({ utype, epoch: expect.any(Number) });
      await run.waitForStderr(new RegExp(`^epoch ${started["epoch"] as number}$`, "m"));
      expect(readFileSync(`/proc/${watchdogPid}/cmdline`, "utf8").split("\0").slice(1, 2)).toEqual(["__ha-module-watchdog"]);
      expect(readlinkSync(`/proc/${watchdogPid}/exe`)).toBe(exe);
      expect(isRunning(commandPid)).toBe(true);

      run.signal("SIGKILL");
      await run.exited;
      const deadline = performance.now() + 20_000;
      while (isRunning(commandPid) || isRunning(watchdogPid)) {
        if (performance.now() > deadline) throw new Error(`the watchdog left the command running:\n${run.stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await run.kill();
    }
  });

  it("serve says in one line that the service is not in it", async () => {
    const serve = await runExe(["serve"]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toMatch(/^ha-module serve: the service is not part of this client [^\n]*\n$/);
  });
});
