import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

/**
 * docs/cli.md#serve: `npm start` stops cleanly on Ctrl-C or SIGTERM. npm runs the script through
 * `sh -c`, and a signal sent to npm alone (a supervisor, `kill <npm pid>`) reaches that
 * shell, not the service. Runs the real `npm start` (its build step skipped with
 * --ignore-scripts: `npm test` has built already) and signals only the npm process.
 */
const REPO = fileURLToPath(new URL("../..", import.meta.url));
// From the signal to the port being free: the service notices within a poll and closes.
const STOP_BOUND_MS = 10_000;

/** Every live descendant of `root` (Linux /proc), found while the tree is intact. */
async function descendants(root: number): Promise<number[]> {
  const parentOf = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // The command name (field 2) may hold spaces; the parent pid is the second field after it.
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (Number.isSafeInteger(parent)) parentOf.set(Number(entry), parent);
  }
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    frontier = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([pid]) => pid);
    found.push(...frontier);
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function portIsFree(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
    return false;
  } catch {
    return true;
  }
}

describe.runIf(process.platform === "linux")("npm start stops when npm is signalled", () => {
  let npm: ChildProcess | undefined;
  let leftovers: number[] = [];
  let dataDir: string | undefined;

  afterEach(async () => {
    // Whatever this test started and left behind (only on failure) is killed by pid.
    for (const pid of leftovers) if (isAlive(pid)) process.kill(pid, "SIGKILL");
    if (npm?.exitCode === null && npm.signalCode === null) npm.kill("SIGKILL");
    leftovers = [];
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it.each(["SIGTERM", "SIGINT"] as const)("%s to npm frees the port and leaves no service process", async (signal) => {
    dataDir = await mkdtemp(join(tmpdir(), "ha-npm-start-"));
    npm = spawn("npm", ["start", "--ignore-scripts"], {
      cwd: REPO,
      env: { ...process.env, PORT: "0", HA_IN_MEMORY: "false", HA_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    npm.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not listen within 30 s:\n${output}`)), 30_000);
      npm?.stdout?.on("data", () => {
        const found = /listening on (http:\/\/\S+\/api)/.exec(output);
        if (found?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      });
    });
    leftovers = await descendants(npm.pid!);
    expect(leftovers.length, "npm's children: the shell and the service").toBeGreaterThan(0);

    const exited = once(npm, "exit");
    npm.kill(signal);
    const npmExited = await Promise.race([exited.then(() => true), sleep(STOP_BOUND_MS).then(() => false)]);
    const deadline = performance.now() + STOP_BOUND_MS;
    while (performance.now() < deadline && leftovers.some(isAlive)) await sleep(100);

    expect(npmExited, `npm still running ${STOP_BOUND_MS} ms after ${signal}:\n${output}`).toBe(true);
    expect(leftovers.filter(isAlive), `still running ${STOP_BOUND_MS} ms after ${signal}:\n${output}`).toEqual([]);
    expect(await portIsFree(url)).toBe(true);
    expect(output).toContain("ha-module stopped");
  });
});
