import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { CLI_PATH } from "./service-process.js";

/** One JSON line the CLI printed, with the test's monotonic time of arrival. */
export interface CliEvent {
  readonly event: string;
  readonly receivedAt: number;
  readonly [field: string]: unknown;
}

/**
 * Another `ha-module` than the repository's build: the single executable, or an installed
 * client's bin. `env` replaces the environment rather than adding to it (a machine without
 * Node.js on its PATH), and `cwd` is where it runs.
 */
export interface CliProgram {
  readonly command: string;
  readonly env: Record<string, string>;
  readonly cwd: string;
}

/**
 * A real `ha-module <command>` process. Its stdout JSON lines are collected as events;
 * waitFor() resolves on the first matching event after a given index, or rejects after a
 * generous timeout with everything the process said.
 */
export class CliProcess {
  readonly child: ChildProcess;
  readonly events: CliEvent[] = [];
  #stderr = "";
  #stdoutRest = "";
  readonly #waiters = new Set<() => void>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly name: string,
    args: string[],
    env: Record<string, string> = {},
    program?: CliProgram,
  ) {
    this.child =
      program === undefined
        ? spawn(process.execPath, [CLI_PATH, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
        : spawn(program.command, args, { env: { ...program.env, ...env }, cwd: program.cwd, stdio: ["ignore", "pipe", "pipe"] });
    this.exited = once(this.child, "exit").then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
    this.child.stdout!.on("data", (chunk: Buffer) => {
      const lines = (this.#stdoutRest + chunk.toString()).split("\n");
      this.#stdoutRest = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        try {
          this.events.push({ ...(JSON.parse(line) as { event: string }), receivedAt: performance.now() });
        } catch {
          this.#stderr += `[unparsed stdout] ${line}\n`;
        }
      }
      for (const wake of [...this.#waiters]) wake();
    });
    this.child.stderr!.on("data", (chunk: Buffer) => {
      this.#stderr += chunk.toString();
      for (const wake of [...this.#waiters]) wake();
    });
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** The first event at index ≥ `from` that matches, waiting up to `timeoutMs`. */
  waitFor(match: (event: CliEvent) => boolean, { from = 0, timeoutMs = 20_000 } = {}): Promise<CliEvent> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.events.slice(from).find(match);
        if (found === undefined) return;
        cleanup();
        resolve(found);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${this.name}: no matching event within ${timeoutMs} ms.\nevents: ${JSON.stringify(this.events)}\nstderr: ${this.#stderr}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }

  /** Resolves once stderr contains `pattern`'s first match. */
  async waitForStderr(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = pattern.exec(this.#stderr);
      if (found !== null) return found;
      if (performance.now() > deadline) throw new Error(`${this.name}: stderr never matched ${pattern}:\n${this.#stderr}`);
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
        setTimeout(wake, 200);
      });
    }
  }

  /**
   * Closes this end of the process's stdout, as a pipeline does when its reader exits:
   * the process's next write to stdout fails with EPIPE.
   */
  closeStdout(): void {
    this.child.stdout!.destroy();
  }

  signal(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** Ends the process however it is (SIGCONT first, in case it is stopped), for cleanup. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGCONT");
    this.child.kill("SIGKILL");
    await this.exited;
  }
}

/** Waits for `ms` of real time; only for e2e tests that must let a real lease run out. */
export function realDelay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const HAS_PROC = existsSync("/proc/self/stat");

/**
 * Whether `pid` is a process that can still run code: false once it has exited, even if
 * nobody has reaped it yet (a zombie, state Z in /proc, still answers kill(pid, 0)).
 * Orphans of the processes under test are reparented to a PID 1 that may never reap them.
 */
export function isRunning(pid: number): boolean {
  if (!HAS_PROC) {
    // Not Linux: the signal probe, which counts zombies as alive.
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.charAt(stat.lastIndexOf(")") + 2);
    return state !== "Z" && state !== "X";
  } catch {
    return false; // no such process
  }
}

/** Polls `condition` every 20 ms until it holds; rejects with `what` after `timeoutMs`. Resolves with the time it took. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<number> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await realDelay(20);
  }
  return performance.now() - start;
}

/** Runs `ha-module <args>` to its end; stdout and stderr as they were written (not parsed). */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_PATH, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  clearTimeout(killer);
  return { code, signal, stdout, stderr };
}
