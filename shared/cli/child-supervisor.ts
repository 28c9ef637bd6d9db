import { spawn, type ChildProcess } from "node:child_process";
import { constants } from "node:os";
import { printEvent } from "./event-lines.js";

/**
 * Runs one command at a time for `ha-module run`. stop() sends SIGTERM, then SIGKILL after
 * the grace period, and resolves once the command has exited, so that the elector releases
 * the lease only after the work has stopped. An exit nobody asked for is reported to
 * `onExitOnItsOwn` with the command's exit code (128 + signal number when killed).
 */
export class ChildSupervisor {
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #stopRequested = false;

  constructor(
    private readonly utype: string,
    private readonly command: string,
    private readonly args: readonly string[],
    private readonly graceMs: number,
    private readonly onExitOnItsOwn: (code: number) => void,
  ) {}

  get running(): boolean {
    return this.#child !== undefined;
  }

  /**
   * Starts the command once a previous one has fully exited, if `stillWanted()` is then
   * still true (the lease may have been lost while the old command wound down).
   */
  async start(env: Record<string, string>, stillWanted: () => boolean): Promise<void> {
    await this.#exited;
    if (this.#child !== undefined || !stillWanted()) return;
    this.#stopRequested = false;
    const child = spawn(this.command, this.args, { stdio: "inherit", env: { ...process.env, ...env } });
    this.#child = child;
    let spawnError: Error | undefined;
    this.#exited = new Promise<void>((resolve) => {
      child.once("error", (error) => {
        spawnError = error;
        // A command that could not start never emits exit.
        if (child.pid === undefined) finish(127, null);
      });
      child.once("exit", (code, signal) => finish(code, signal));
      const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (this.#child !== child) return;
        this.#child = undefined;
        const exitCode = code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0));
        if (spawnError !== undefined) process.stderr.write(`ha-module run: cannot run ${this.command}: ${spawnError.message}\n`);
        printEvent("exited", { utype: this.utype, pid: child.pid ?? null, code, signal });
        resolve();
        if (!this.#stopRequested) this.onExitOnItsOwn(exitCode);
      };
    });
    if (child.pid !== undefined) printEvent("started", { utype: this.utype, pid: child.pid, epoch: Number(env["HA_EPOCH"]) });
  }

  /** SIGTERM, SIGKILL after the grace period; resolves when the command has exited. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return this.#exited;
    this.#stopRequested = true;
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), this.graceMs);
    try {
      await this.#exited;
    } finally {
      clearTimeout(killer);
    }
  }
}
