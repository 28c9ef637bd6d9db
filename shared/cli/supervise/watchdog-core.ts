import type { ElectorClock, TimerHandle } from "../../sdk/loop/elector-clock.js";

/**
 * The decision of the watchdog that `ha-module run` starts beside each command (see
 * watchdog.ts for the process around it). It holds one end of a pipe from `run` and
 * SIGKILLs the command's process group, exactly once, at the first of:
 *
 * - the pipe's end (EOF, or a read error): `run` is gone, whatever killed it — SIGKILL,
 *   the OOM killer, a crash. Nobody is left to count the lease, so no grace.
 * - the kill time: the lease deadline `run` last reported (or the end of a grace). `run`
 *   moves it on after every renewal; if it stops doing so (frozen by SIGSTOP, a stalled
 *   event loop), the group still dies by the deadline.
 * - a line it cannot read: a confused lifeline is treated as a cut one.
 *
 * Protocol: the kill time comes as the second argument and then as one line per update,
 * `<ms>\n`, in milliseconds of the host's monotonic clock (process.hrtime), which both
 * processes read alike.
 */
export class WatchdogCore {
  #killAt: number;
  #timer: TimerHandle | undefined;
  #buffered = "";
  #fired = false;

  constructor(
    private readonly clock: ElectorClock,
    killAt: number,
    private readonly killGroup: (reason: string) => void,
  ) {
    this.#killAt = killAt;
    this.#arm();
  }

  get fired(): boolean {
    return this.#fired;
  }

  get killAt(): number {
    return this.#killAt;
  }

  /** Text read from the pipe: complete lines are kill times. */
  input(text: string): void {
    this.#buffered += text;
    const lines = this.#buffered.split("\n");
    this.#buffered = lines.pop() ?? "";
    for (const line of lines) {
      const killAt = parseKillAt(line);
      if (killAt === undefined) return this.#fire(`it read ${JSON.stringify(line.slice(0, 40))} instead of a kill time`);
      this.#killAt = killAt;
    }
    this.#arm();
  }

  /** The pipe ended: the supervisor is gone. */
  lifelineCut(): void {
    this.#fire("its supervisor is gone (the lifeline pipe closed)");
  }

  #arm(): void {
    if (this.#fired) return;
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const delay = this.#killAt - this.clock.now();
    if (delay <= 0) return this.#fire("the lease deadline passed without word from its supervisor");
    this.#timer = this.clock.setTimeout(() => this.#arm(), delay);
  }

  #fire(reason: string): void {
    if (this.#fired) return;
    this.#fired = true;
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.killGroup(reason);
  }
}

/** A finite number of milliseconds, or undefined. */
export function parseKillAt(text: string): number | undefined {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text.trim())) return undefined;
  const ms = Number(text);
  return Number.isFinite(ms) ? ms : undefined;
}
