import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { systemProcessGroups } from "../../shared/cli/supervise/process-group.js";
import { systemElectorClock } from "../../shared/sdk/elector-clock.js";
import { isRunning, waitUntil } from "../helpers/sdk-cli-process.js";

const groups = systemProcessGroups(systemElectorClock);
const canMakeZombie = existsSync("/proc/self/stat") && ["/usr/bin/setsid", "/bin/setsid"].some((path) => existsSync(path));

describe("process groups on this system", () => {
  it("a group whose only member is a zombie (exited, never reaped) has no live member", async () => {
    if (!canMakeZombie) return; // needs Linux's /proc and util-linux setsid
    // sh forks `setsid sleep 0.5` (a group of its own), then becomes `sleep 5`, which never
    // reaps it: once it exits it stays a zombie, as orphans do under a PID 1 that does not reap.
    const parent = spawn("sh", ["-c", "setsid sleep 0.5 & echo $!; exec sleep 5"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const pgid = Number(await new Promise<string>((resolve) => parent.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString().trim()))));
      await waitUntil(() => groups.hasLiveMember(pgid), "setsid makes the group", 5000);
      await waitUntil(() => !isRunning(pgid), "the member exits", 5000);
      expect(() => process.kill(-pgid, 0)).not.toThrow(); // the zombie still counts for kill()
      expect(groups.hasLiveMember(pgid)).toBe(false);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("a group that is gone has no live member, and signalling it is harmless", () => {
    const child = spawn("true", [], { detached: true, stdio: "ignore" });
    return new Promise<void>((resolve) =>
      child.once("exit", () => {
        expect(groups.hasLiveMember(child.pid!)).toBe(false);
        expect(() => groups.signal(child.pid!, "SIGTERM")).not.toThrow();
        resolve();
      }),
    );
  });
});
