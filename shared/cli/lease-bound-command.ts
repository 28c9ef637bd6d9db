import type { ElectorClock, TimerHandle } from "../sdk/elector-clock.js";
import type { CommandExit, StartRequest } from "./child-supervisor.js";

/** What it reads of the elector: the term held now and the time left on it. */
export interface LeaseState {
  readonly uuid: string;
  /** Defined exactly while primary. */
  readonly epoch: number | undefined;
  leaseTimeLeftMs(): number;
}

/** What it drives: a ChildSupervisor. */
export interface CommandSlot {
  readonly state: "idle" | "running" | "stopping";
  readonly term: string | undefined;
  start(request: StartRequest): void;
  keepUntil(killBy: number): void;
  stop(killAt: number, why: string): void;
  whenIdle(): Promise<void>;
}

export interface LeaseBoundCommandOptions {
  readonly lease: LeaseState;
  /** Builds the slot (a ChildSupervisor) that reports each command's end to `onExit`. */
  readonly command: (onExit: (exit: CommandExit) => void) => CommandSlot;
  readonly clock: ElectorClock;
  readonly graceMs: number;
  /** I: how often the lease is looked at while primary (renewals come every I). */
  readonly intervalMs: () => number;
  /** The command's environment for a term. */
  readonly environment: (uuid: string, epoch: number) => Record<string, string | undefined>;
}

/**
 * The rule of `ha-module run` (SPEC §5): the command runs only while the lease has more
 * than the grace left. Looked at on every elector event, every I while primary, and at
 * the moment the time left reaches the grace:
 *
 * - primary with more than the grace left, and no command: start one for this term;
 *   while it runs, the watchdog's kill time follows the lease deadline.
 * - the time left falls to the grace (renewals failing or slow): SIGTERM now, SIGKILL at
 *   the deadline, so the command is gone before the lease can be taken over. If a renewal
 *   then succeeds the command is started again, same term, same HA_EPOCH.
 * - the term is over (demoted: rejected, expired, affinity lost) or another began: the
 *   lease is gone or going, so SIGKILL now.
 * - the command exits on its own: no more starts; `ownExit` resolves with its exit code.
 */
export class LeaseBoundCommand {
  readonly #o: LeaseBoundCommandOptions;
  readonly #command: CommandSlot;
  readonly ownExit: Promise<number>;
  #resolveOwnExit!: (code: number) => void;
  #accepting = true;
  #shuttingDown = false;
  #timer: TimerHandle | undefined;

  constructor(options: LeaseBoundCommandOptions) {
    this.#o = options;
    this.ownExit = new Promise((resolve) => (this.#resolveOwnExit = resolve));
    this.#command = options.command((exit) => this.#commandExited(exit));
  }

  /** The command's group is gone. */
  #commandExited(exit: CommandExit): void {
    if (!exit.requested && this.#accepting) {
      this.#accepting = false;
      this.#resolveOwnExit(exit.exitCode);
    }
    this.update();
  }

  /** Brings the command in line with the lease now, and plans the next look. */
  update(): void {
    if (this.#shuttingDown) return;
    const { lease, clock, graceMs } = this.#o;
    const command = this.#command;
    const now = clock.now();
    const epoch = lease.epoch;
    const left = epoch === undefined ? 0 : lease.leaseTimeLeftMs();
    const term = epoch === undefined ? undefined : `${lease.uuid}#${epoch}`;
    if (command.state !== "idle") {
      if (command.term !== term) command.stop(now, "the lease term it ran for is over");
      else if (left <= graceMs) command.stop(now + left, `${Math.floor(left)} ms left on the lease, no more than the grace of ${graceMs} ms`);
      else command.keepUntil(now + left);
    } else if (this.#accepting && epoch !== undefined && term !== undefined && left > graceMs) {
      command.start({ env: this.#o.environment(lease.uuid, epoch), term, epoch, killBy: now + left });
    }
    this.#plan(term === undefined ? undefined : left > graceMs ? Math.min(this.#o.intervalMs(), left - graceMs) : this.#o.intervalMs());
  }

  /**
   * `run` is ending: no more starts; SIGTERM now and SIGKILL once the grace or the time left
   * on the lease runs out, whichever is first (the lease is measured now, while it is still
   * held: stopping the elector ends the reading). Resolves when the group is gone.
   */
  async shutDown(): Promise<void> {
    this.#accepting = false;
    const { lease, clock, graceMs } = this.#o;
    const command = this.#command;
    if (!this.#shuttingDown) {
      const left = lease.epoch === undefined ? 0 : lease.leaseTimeLeftMs();
      this.#shuttingDown = true;
      this.#plan(undefined);
      command.stop(clock.now() + Math.min(graceMs, left), "run is stopping");
    }
    await command.whenIdle();
  }

  /**
   * A second stop signal while `run` is ending: no more starts, and the group gets SIGKILL
   * now instead of at the end of its grace. shutDown() still resolves once it is gone, and
   * only then is the lease released.
   */
  hurry(why: string): void {
    this.#accepting = false;
    this.#plan(undefined);
    this.#command.stop(this.#o.clock.now(), why);
  }

  #plan(delayMs: number | undefined): void {
    const { clock } = this.#o;
    if (this.#timer !== undefined) clock.clearTimeout(this.#timer);
    this.#timer = delayMs === undefined ? undefined : clock.setTimeout(() => this.update(), Math.max(0, delayMs));
  }
}
