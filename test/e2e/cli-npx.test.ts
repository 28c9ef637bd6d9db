import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installClient, type InstalledClient } from "../helpers/client-package.js";
import { isRunning } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/** Pids of live processes whose command line contains `needle` (Linux /proc). */
function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").includes(needle)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * `npm exec -- ha-module run …` (what `npx ha-module run …` runs) as a process manager
 * starts it, with real processes, in a project that installed the client package
 * (test/helpers/client-package.ts): npm runs the bin behind `sh -c`, and a SIGTERM to npm —
 * the process the manager started — must still stop `run`: its command is stopped, the
 * lease released, and nothing is left running, the watchdog (the bundled command line
 * started again as one) included.
 */
describe.skipIf(process.platform === "win32")("ha-module under npm exec (npx)", () => {
  let client: InstalledClient;
  let service: ServiceProcess;
  let npm: ChildProcess | undefined;
  const utype = `e2e-npx-${process.pid}`;
  const marker = `npx-worker-${process.pid}`;

  beforeAll(async () => {
    client = await installClient();
    // A long T: a lease left to expire would still be held when the test looks.
    service = await startServiceProcess({ HA_INTERVAL_MS: "1000", HA_TIMEOUT_MS: "30000" });
  }, 150_000);

  afterAll(async () => {
    // Whatever a failed run left behind: npm, its shell, run, the command.
    for (const pid of [...processesWith(utype), ...processesWith(marker)]) if (pid !== process.pid) process.kill(pid, "SIGKILL");
    await service?.stop();
    client?.remove();
  });

  it("SIGTERM to npm reaches run: it stops its command, releases the lease and exits", async () => {
    let stdout = "";
    let stderr = "";
    // Detached: npm leads a process group of its own, as under a service manager.
    npm = spawn("npm", ["exec", "--yes", "--", "ha-module", "run", utype, "--endpoint", service.url, "--", process.execPath, "-e", `setInterval(() => {}, 1000); // ${marker}`], {
      cwd: client.consumer,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    npm.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    npm.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const npmExited = once(npm, "exit");
    const started = await until(`run's "started" line (stdout so far: ${stdout}, stderr: ${stderr})`, () => /"event":"started","utype":"[^"]+","pid":(\d+)/.exec(stdout)?.[1], 90_000);
    const commandPid = Number(started);
    const watchdogPid = Number(/"event":"started",.*"watchdog":(\d+)/.exec(stdout)?.[1]);
    // The installed client's watchdog: its own bundle, started again with the hidden argument.
    expect(readFileSync(`/proc/${watchdogPid}/cmdline`, "utf8").split("\0").slice(1, 3)).toEqual([
      path.join(client.consumer, "node_modules", "ha-module", "dist", "shared", "cli", "main.js"),
      "__ha-module-watchdog",
    ]);
    const runPids = processesWith(`run ${utype} --endpoint`).filter((pid) => pid !== npm!.pid && !readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("npm"));
    expect(runPids.length, stderr).toBeGreaterThan(0);
    expect(isRunning(commandPid)).toBe(true);

    npm.kill("SIGTERM");
    await npmExited;
    // run follows: the command is stopped, the lease released (not left to expire: T is 30 s), run exits.
    await until("the command to stop", () => (isRunning(commandPid) ? undefined : true));
    await until("run to exit", () => (processesWith(`run ${utype} --endpoint`).length === 0 ? true : undefined));
    await until("the watchdog to be stopped", () => (isRunning(watchdogPid) ? undefined : true));
    const history = (await (await fetch(`${service.url}/primary/${utype}/history`)).json()) as { terms: { endedBy: string | null }[] };
    expect(history.terms[0]?.endedBy, JSON.stringify(history)).toBe("released");
    expect(processesWith(marker)).toEqual([]);
  }, 150_000);
});
