import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ElectorClock } from "../../sdk/loop/elector-clock.js";
import type { CommandProcess, LeaderExit, Lifeline, ProcessGroups } from "./child-supervisor.js";

const HAS_PROC = existsSync("/proc/self/stat");

/** What starts the watchdog: a program and the arguments before `<pgid> <killAtMs>`. */
export interface WatchdogLauncher {
  readonly command: string;
  readonly args: readonly string[];
}

let launcher: WatchdogLauncher | undefined;

/**
 * Sets how `run` starts its watchdogs. Without it, Node runs watchdog.js beside this module
 * (the repository's build); a bundle has no such file, so its composition root
 * (client-main.ts) names itself, with WATCHDOG_ARGUMENT.
 */
export function startWatchdogsWith(given: WatchdogLauncher): void {
  launcher = given;
}

function watchdogLauncher(): WatchdogLauncher {
  return launcher ?? { command: process.execPath, args: [fileURLToPath(new URL("./watchdog.js", import.meta.url))] };
}

/** The host's monotonic clock in ms, which the watchdog reads too (process.hrtime). */
function hostNowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * Process groups on a POSIX system, for `ha-module run`. `clock` is the supervisor's
 * clock: kill times are converted from it to the host clock the watchdog reads.
 */
export function systemProcessGroups(clock: ElectorClock): ProcessGroups {
  const onHostClock = (at: number): string => (hostNowMs() + (at - clock.now())).toFixed(3);
  return {
    spawn: (command, args, env) => spawnGroupLeader(command, args, env),
    startLifeline: (pgid, killAt) => startWatchdog(pgid, onHostClock(killAt), onHostClock),
    signal: (pgid, signal) => {
      try {
        process.kill(-pgid, signal);
      } catch (error) {
        // ESRCH: the group is already gone. EPERM: what is left is not ours to signal.
        if ((error as NodeJS.ErrnoException).code !== "ESRCH" && (error as NodeJS.ErrnoException).code !== "EPERM") throw error;
      }
    },
    hasLiveMember,
  };
}

/**
 * The group's leader starts as a shell that waits for one line on its stdin before it
 * becomes the command (exec: the same pid, so the same group). `run` writes that line once
 * the watchdog is started (release()); if `run` dies first, the pipe's EOF ends the shell
 * and the command never runs, so no command ever runs without a watchdog. A command that
 * cannot be executed (removed since `run` looked it up) ends the shell with 127 or 126.
 */
const HOLD = 'IFS= read -r go && exec "$@"';

/**
 * `detached` makes the command the leader of a new session and process group (setsid),
 * whose id is its pid. It has no controlling terminal: a terminal's Ctrl-C reaches `run`,
 * which stops the command in order. Its stdin is a pipe from `run` that carries nothing
 * (EOF says: stop now, or run is gone); its stdout and stderr are `run`'s stderr, so that
 * `run`'s stdout carries only JSON event lines.
 */
function spawnGroupLeader(command: string, args: readonly string[], env: Record<string, string | undefined>): CommandProcess {
  const child = spawn("/bin/sh", ["-c", HOLD, "ha-module-run", command, ...args], { detached: true, stdio: ["pipe", 2, 2], env });
  child.stdin?.on("error", () => undefined); // the command may close its end first
  const listeners: ((exit: LeaderExit) => void)[] = [];
  let ended: LeaderExit | undefined;
  const end = (exit: LeaderExit): void => {
    if (ended !== undefined) return;
    ended = exit;
    for (const listener of listeners) listener(exit);
  };
  child.once("error", (error) => {
    // A command that could not start never emits exit.
    if (child.pid === undefined) end({ code: null, signal: null, error });
  });
  child.once("exit", (code, signal) => end({ code, signal }));
  return {
    pid: child.pid,
    onExit: (listener) => {
      if (ended !== undefined) listener(ended);
      else listeners.push(listener);
    },
    closeStdin: () => {
      child.stdin?.end();
    },
    release: () => {
      if (child.stdin?.writable) child.stdin.write("go\n");
    },
  };
}

/**
 * The watchdog (watchdog.ts) in a session of its own, holding the read end of a pipe whose
 * write end only this process holds: the kernel closes it however this process dies.
 */
function startWatchdog(pgid: number, killAtOnHost: string, onHostClock: (at: number) => string): Lifeline {
  const { command, args } = watchdogLauncher();
  const watchdog = spawn(command, [...args, String(pgid), killAtOnHost], { detached: true, stdio: ["pipe", "ignore", "inherit"] });
  watchdog.stdin?.on("error", () => undefined); // it exited: onLost says so
  let disarmed = false;
  const lost: ((exit: { code: number | null; signal: NodeJS.Signals | null }) => void)[] = [];
  const report = (exit: { code: number | null; signal: NodeJS.Signals | null }): void => {
    if (disarmed) return;
    disarmed = true;
    for (const listener of lost) listener(exit);
  };
  watchdog.once("exit", (code, signal) => report({ code, signal }));
  watchdog.once("error", () => {
    if (watchdog.pid === undefined) report({ code: null, signal: null });
  });
  return {
    pid: watchdog.pid,
    killAt: (at) => {
      if (!disarmed && watchdog.stdin?.writable) watchdog.stdin.write(`${onHostClock(at)}\n`);
    },
    disarm: () => {
      if (disarmed) return;
      disarmed = true;
      // Our own child, not yet reaped: its pid cannot have been reused.
      watchdog.kill("SIGKILL");
    },
    onLost: (listener) => void lost.push(listener),
  };
}

/**
 * kill(-pgid, 0) answers whether the group has members at all. On Linux a member that has
 * exited but was not reaped (a zombie: an orphan under a PID 1 that never reaps, as `run`
 * itself is when it is PID 1 in a container) still counts for kill(); it runs no code, so
 * /proc decides then.
 */
function hasLiveMember(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  if (!HAS_PROC) return true;
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // it exited meanwhile
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ")".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}
