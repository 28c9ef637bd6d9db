import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { systemProcessGroups } from "../../shared/cli/supervise/process-group.js";
import { systemElectorClock } from "../../shared/sdk/loop/elector-clock.js";
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

  describe("a command is held until it is let run", () => {
    const exitOf = (command: ReturnType<typeof groups.spawn>) => new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => command.onExit(resolve));

    it("never runs if run's end of its stdin closes first (run died before starting the watchdog)", async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "ha-hold-"));
      try {
        const marker = path.join(dir, "ran");
        const command = groups.spawn("sh", ["-c", `echo ran > "${marker}"`], process.env);
        expect(command.pid).toBeGreaterThan(1);
        // What the kernel does to the pipe when run dies: its end closes, never having said go.
        command.closeStdin();
        const exit = await exitOf(command);
        expect(exit.code).not.toBe(0);
        expect(existsSync(marker)).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("runs once released, as the group's leader, with its arguments and its stdin still run's pipe", async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "ha-hold-"));
      try {
        const marker = path.join(dir, "ran");
        // $$ is the shell's pid: exec kept the leader's pid, so the group is the command's.
        const command = groups.spawn("sh", ["-c", `echo "$$ $1" > "${marker}"; read -r line || echo eof >> "${marker}"`, "sh", "an argument"], process.env);
        command.release();
        await waitUntil(() => existsSync(marker), "the command runs", 5000);
        command.closeStdin();
        expect(await exitOf(command)).toEqual({ code: 0, signal: null });
        expect(readFileSync(marker, "utf8")).toBe(`${command.pid} an argument\neof\n`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
