import { constants } from "node:os";
import type { ElectorClock, TimerHandle } from "../../sdk/loop/elector-clock.js";

/** The command's first process, the leader of its process group. */
export interface CommandProcess {
  /** Also the process group id; undefined when the command could not be started. */
  readonly pid: number | undefined;
  /** Called once: how the leader ended, or why it could not start. */
  onExit(listener: (exit: LeaderExit) => void): void;
  /** Ends the command's stdin, a pipe that carries nothing: EOF says "stop now". */
  closeStdin(): void;
  /**
   * Lets the command run. Until then only its group's leader exists, holding: if `run` dies
   * before it starts the watchdog and says go, the command never runs at all.
   */
  release(): void;
}

export interface LeaderExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the command could not be started at all. */
  readonly error?: Error;
}

/** The watchdog of one command's group (watchdog.ts): it SIGKILLs the group at its kill time or when run dies. */
export interface Lifeline {
  readonly pid: number | undefined;
  /** Moves the kill time (on the supervisor's clock). */
  killAt(at: number): void;
  /** The group is gone: ends the watchdog without it killing anything. */
  disarm(): void;
  /** Called if the watchdog ends while armed. */
  onLost(listener: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void): void;
}

/** The operating system's side: process groups, their signals, and watchdogs. */
export interface ProcessGroups {
  /** Starts the command as the leader of a new process group. */
  spawn(command: string, args: readonly string[], env: Record<string, string | undefined>): CommandProcess;
  startLifeline(pgid: number, killAt: number): Lifeline;
  signal(pgid: number, signal: "SIGTERM" | "SIGKILL"): void;
  /** Whether any process of the group can still run code (zombies do not count). */
  hasLiveMember(pgid: number): boolean;
}

/** How a command ended, once its whole group is gone. */
export interface CommandExit {
  readonly pid: number | null;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /**
   * What `run` exits with if the command ended on its own: its code, 128 + the signal's
   * number, or, when it could not start, 126 (not executable) or 127 (not found), as shells say.
   */
  readonly exitCode: number;
  /** True when run stopped it; false when it ended on its own. */
  readonly requested: boolean;
}

export interface StartRequest {
  readonly env: Record<string, string | undefined>;
  /** The lease term the command works for (uuid and epoch). */
  readonly term: string;
  readonly epoch: number;
  /** The lease deadline now: the watchdog's first kill time. */
  readonly killBy: number;
}

export interface ChildSupervisorOptions {
  readonly utype: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly graceMs: number;
  readonly clock: ElectorClock;
  readonly groups: ProcessGroups;
  /** Called once the group of a command is gone, whoever ended it. */
  readonly onExit: (exit: CommandExit) => void;
  /** `started` and `exited` event lines. */
  readonly printEvent: (event: string, fields: Record<string, unknown>) => void;
  /** Text for people (stderr). */
  readonly note: (text: string) => void;
  /** How often a stopping group is looked at. Default 25 ms. */
  readonly pollMs?: number;
  /** How long after SIGKILL members may linger (a process in uninterruptible I/O) before the group counts as gone anyway. Default 2000 ms. */
  readonly killWaitMs?: number;
  /**
   * How long to wait for the watchdog's exit after the leader was SIGKILLed by someone other
   * than this process before its deadline, before calling it the command's own exit. A
   * watchdog that fired exits at once. Default 1000 ms.
   */
  readonly lifelineReportMs?: number;
}

interface Current {
  readonly process: CommandProcess;
  readonly pgid: number | undefined;
  readonly term: string;
  lifeline: Lifeline | undefined;
  /** The lease deadline as last reported. */
  killBy: number;
  phase: "running" | "stopping";
  requested: boolean;
  killAt: number | undefined;
  sigkillAt: number | undefined;
  leader: LeaderExit | undefined;
  /** When the leader exited, on the supervisor's clock. */
  leaderExitedAt: number | undefined;
  killTimer: TimerHandle | undefined;
  pollTimer: TimerHandle | undefined;
}

/**
 * Runs one command at a time for `ha-module run`, as a process group of its own with a
 * watchdog beside it. Guarantees:
 *
 * - Signals go to the whole group, so a command behind `sh -c`, `npm run` or an entrypoint
 *   that does not exec is stopped with everything it started (unless a process leaves the
 *   group on purpose: setsid, a daemon's double fork).
 * - stop(killAt): SIGTERM now, SIGKILL at `killAt` (at once if that is not in the future);
 *   a later call can only bring the SIGKILL forward. The watchdog is told a kill time one
 *   grace later, never after the lease deadline, so the SIGKILL happens even if this
 *   process is frozen meanwhile, and when it is not, the SIGKILL is this process's own
 *   (and its account of why), not the watchdog's "deadline passed".
 * - "Exited" means the group is gone: the leader has exited and no member can run code.
 *   Only then is `exited` printed and onExit called, so the lease is never given up while
 *   any part of the command still works.
 * - A leader that exits on its own has the rest of its group stopped the same way, within
 *   the grace and the lease, before its exit is reported.
 */
export class ChildSupervisor {
  readonly #o: ChildSupervisorOptions;
  readonly #pollMs: number;
  readonly #killWaitMs: number;
  readonly #lifelineReportMs: number;
  #current: Current | undefined;
  #idle: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(options: ChildSupervisorOptions) {
    this.#o = options;
    this.#pollMs = options.pollMs ?? 25;
    this.#killWaitMs = options.killWaitMs ?? 2000;
    this.#lifelineReportMs = options.lifelineReportMs ?? 1000;
  }

  get state(): "idle" | "running" | "stopping" {
    return this.#current?.phase ?? "idle";
  }

  /** The lease term the current command was started for. */
  get term(): string | undefined {
    return this.#current?.term;
  }

  /** Resolves once no command is left (at once when idle). */
  whenIdle(): Promise<void> {
    if (this.#current === undefined) return Promise.resolve();
    if (this.#idle === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#idle = { promise, resolve };
    }
    return this.#idle.promise;
  }

  start(request: StartRequest): void {
    if (this.#current !== undefined) throw new Error("ChildSupervisor.start: a command is still running.");
    const { groups, utype } = this.#o;
    const child = groups.spawn(this.#o.command, this.#o.args, request.env);
    const current: Current = {
      process: child,
      pgid: child.pid,
      term: request.term,
      lifeline: undefined,
      killBy: request.killBy,
      phase: "running",
      requested: false,
      killAt: undefined,
      sigkillAt: undefined,
      leader: undefined,
      leaderExitedAt: undefined,
      killTimer: undefined,
      pollTimer: undefined,
    };
    this.#current = current;
    child.onExit((exit) => this.#leaderExited(current, exit));
    if (current.pgid === undefined) return; // onExit reports why it could not start
    const lifeline = groups.startLifeline(current.pgid, request.killBy);
    current.lifeline = lifeline;
    lifeline.onLost((exit) => this.#lifelineLost(current, exit));
    // Only now, with its watchdog started: a `run` killed between the two starts must not
    // leave a command running that nothing watches.
    child.release();
    this.#o.printEvent("started", { utype, pid: current.pgid, epoch: request.epoch, watchdog: lifeline.pid ?? null });
  }

  /** The lease was renewed: the watchdog may let the command live until `killBy`. */
  keepUntil(killBy: number): void {
    const current = this.#current;
    if (current === undefined || current.phase !== "running") return;
    current.killBy = killBy;
    current.lifeline?.killAt(killBy);
  }

  /** SIGTERM now (unless `killAt` has come), SIGKILL at `killAt`; see whenIdle(). */
  stop(killAt: number, why: string): void {
    const current = this.#current;
    if (current !== undefined) this.#windDown(current, killAt, why, true);
  }

  #windDown(current: Current, killAt: number, why: string, requested: boolean): void {
    if (requested) current.requested = true;
    const pgid = current.pgid;
    if (pgid === undefined || current.sigkillAt !== undefined) return;
    if (current.killAt !== undefined && killAt >= current.killAt) return;
    const { clock, groups, note } = this.#o;
    const now = clock.now();
    const first = current.phase === "running";
    current.phase = "stopping";
    current.killAt = killAt;
    current.lifeline?.killAt(Math.max(killAt, Math.min(current.killBy, killAt + this.#o.graceMs)));
    current.process.closeStdin();
    if (killAt <= now) {
      note(`ha-module run: stopping the command (process group ${pgid}): ${why}; SIGKILL now.`);
      this.#sigkill(current);
      return;
    }
    if (first) {
      // Said before it is sent: the command shares run's stderr, and its answer to the
      // signal must not come before run's account of it.
      note(`ha-module run: stopping the command (process group ${pgid}): ${why}; SIGTERM now, SIGKILL in ${Math.ceil(killAt - now)} ms.`);
      groups.signal(pgid, "SIGTERM");
    }
    if (current.killTimer !== undefined) clock.clearTimeout(current.killTimer);
    current.killTimer = clock.setTimeout(() => this.#sigkill(current), killAt - now);
    this.#poll(current);
  }

  #sigkill(current: Current): void {
    if (current !== this.#current || current.sigkillAt !== undefined || current.pgid === undefined) return;
    const { clock, groups } = this.#o;
    if (current.killTimer !== undefined) clock.clearTimeout(current.killTimer);
    current.killTimer = undefined;
    current.sigkillAt = clock.now();
    groups.signal(current.pgid, "SIGKILL");
    this.#poll(current);
  }

  #leaderExited(current: Current, exit: LeaderExit): void {
    if (current !== this.#current) return;
    current.leader = exit;
    current.leaderExitedAt = this.#o.clock.now();
    if (current.pgid === undefined) return this.#finish(current);
    if (current.phase === "running" && this.#o.groups.hasLiveMember(current.pgid)) {
      const killAt = Math.min(this.#o.clock.now() + this.#o.graceMs, current.killBy);
      this.#windDown(current, killAt, "its first process exited, the rest of its group is stopped with it", false);
    }
    this.#poll(current);
  }

  #lifelineLost(current: Current, exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    if (current !== this.#current) return;
    current.lifeline = undefined;
    if (current.leader !== undefined) {
      // The leader is gone already: nothing to stop. A watchdog that exits 0 fired, so the
      // lease ended the command (see #awaitingWatchdog).
      if (exit.code === 0) current.requested = true;
      return this.#poll(current);
    }
    const how = exit.code === 0 ? "killed the group and exited" : `died (${exit.signal ?? `exit code ${exit.code}`})`;
    const killAt = Math.min(this.#o.clock.now() + this.#o.graceMs, current.killBy);
    this.#windDown(current, killAt, `its watchdog ${how}, and the command must not run without one`, true);
  }

  /** Finishes once the leader has exited and no member of the group is left; bounded after SIGKILL. */
  #poll(current: Current): void {
    if (current !== this.#current || current.pgid === undefined) return;
    const { clock, groups, note } = this.#o;
    if (current.pollTimer !== undefined) clock.clearTimeout(current.pollTimer);
    current.pollTimer = undefined;
    if (current.leader !== undefined && !groups.hasLiveMember(current.pgid) && !this.#awaitingWatchdog(current)) return this.#finish(current);
    if (current.sigkillAt !== undefined && clock.now() - current.sigkillAt >= this.#killWaitMs) {
      // SIGKILL was delivered: nothing in the group can run code any more, whatever is left.
      note(`ha-module run: process group ${current.pgid} still has members ${this.#killWaitMs} ms after SIGKILL; counting it as gone.`);
      return this.#finish(current);
    }
    if (current.phase === "stopping" || current.leader !== undefined) {
      current.pollTimer = clock.setTimeout(() => this.#poll(current), this.#pollMs);
    }
  }

  /**
   * The leader was SIGKILLed before the deadline this process last gave the watchdog, and
   * not by this process: that may still be the watchdog, firing at an earlier kill time —
   * this process was starved past it and has moved the kill time on since, or the watchdog
   * read the new one late. A watchdog that fired exits at once, and its exit may come after
   * the leader's, so the command's end is not called its own until the watchdog has had
   * `lifelineReportMs` to say so.
   */
  #awaitingWatchdog(current: Current): boolean {
    if (current.leader?.signal !== "SIGKILL" || current.sigkillAt !== undefined || current.requested || current.lifeline === undefined) return false;
    const exitedAt = current.leaderExitedAt ?? this.#o.clock.now();
    return exitedAt < current.killBy && this.#o.clock.now() - exitedAt < this.#lifelineReportMs;
  }

  #finish(current: Current): void {
    const { clock, utype, note, printEvent, onExit, command } = this.#o;
    for (const timer of [current.killTimer, current.pollTimer]) if (timer !== undefined) clock.clearTimeout(timer);
    this.#current = undefined;
    current.lifeline?.disarm();
    const leader = current.leader ?? { code: null, signal: "SIGKILL" as const };
    if (leader.error !== undefined) note(`ha-module run: cannot run ${command}: ${leader.error.message}`);
    const code = leader.error !== undefined ? spawnFailureCode(leader.error) : leader.code;
    const exitCode = code ?? 128 + (leader.signal === null ? 0 : (constants.signals[leader.signal] ?? 0));
    printEvent("exited", { utype, pid: current.pgid ?? null, code, signal: leader.signal });
    const idle = this.#idle;
    this.#idle = undefined;
    idle?.resolve();
    // A leader gone at or after the lease deadline the watchdog was given was stopped by the
    // watchdog (or by the lease running out as it ended), even when this process was too
    // starved to ask first: that is the lease ending, never the command's own exit, which
    // would end run.
    const requested = current.requested || (current.leaderExitedAt ?? clock.now()) >= current.killBy;
    onExit({ pid: current.pgid ?? null, code, signal: leader.signal, exitCode, requested });
  }
}

/** A command that could not be started: 126 when it exists but cannot be executed, else 127, as shells say. */
function spawnFailureCode(error: Error): number {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "EACCES" || code === "EISDIR" || code === "ENOEXEC" ? 126 : 127;
}
