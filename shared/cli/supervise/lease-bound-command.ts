import type { ElectorClock, TimerHandle } from "../../sdk/loop/elector-clock.js";
import type { DemotionReason } from "../../sdk/election/elector-events.js";
import type { CommandExit, StartRequest } from "./child-supervisor.js";

/** What it reads of the elector: the term held now and the time left on it. */
export interface LeaseState {
  readonly uuid: string;
  /** Defined exactly while primary. */
  readonly epoch: number | undefined;
  /** Until it stops being primary unless a renewal is accepted first: with ride-through, its end. */
  leaseTimeLeftMs(): number;
  /** Until the lease's own deadline, before which nobody else can be primary: 0 while riding through. */
  exclusiveTimeLeftMs(): number;
  /**
   * Gives up the term held now (release, then compete as a new uuid, after `cooldownMs` of
   * only watching); false when none is held.
   */
  resign(options?: { readonly cooldownMs?: number }): boolean;
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
  /** Text for people (stderr). */
  readonly note?: (text: string) => void;
}

/**
 * The rule of `ha-module run` (docs/protocol.md, "What `ha-module run` guarantees a
 * child"): the command runs only while the lease has more than the grace left, and one
 * term (one epoch) names one incarnation of the command. Looked at on every elector
 * event, every I while primary, and at the moment the time left reaches the grace:
 *
 * - primary with more than the grace left, and no command has run in this term: start
 *   one; while it runs, the watchdog's kill time follows the lease deadline.
 * - the time left falls to the grace (renewals failing or slow): SIGTERM now, SIGKILL at
 *   the deadline, so the command is gone before the lease can be taken over.
 * - the term is over (demoted: rejected, expired, affinity lost) or another began: the
 *   lease is gone or going, so SIGKILL now.
 * - the lease was revoked (`ha-module release`, a DELETE without its token): the service
 *   keeps it, refusing any takeover, until it expires, so the command gets SIGTERM now and
 *   SIGKILL after the grace, or at the deadline of the last accepted renewal if sooner
 *   (revoked()).
 * - the command is gone (stopped, or killed by its watchdog) and the term it ran in is
 *   still held (a renewal succeeded after all): never a second command under that epoch,
 *   which a fencing target could not tell from the first. The term is given up (resign:
 *   released with its token, a new uuid competes), and only a new term starts the next one.
 * - the command exits on its own: no more starts; `ownExit` resolves with its exit code.
 * - its work stalled (`--health-cmd` failed, stepDown()): stopped as a revoke stops it,
 *   SIGTERM now and SIGKILL after the grace or at the deadline, and once it is gone the
 *   term is given up with a cool-down, so that a standby takes over at once.
 */
export class LeaseBoundCommand {
  readonly #o: LeaseBoundCommandOptions;
  readonly #command: CommandSlot;
  readonly ownExit: Promise<number>;
  #resolveOwnExit!: (code: number) => void;
  #accepting = true;
  #shuttingDown = false;
  #timer: TimerHandle | undefined;
  /** The term the last command was started in: no other command may start in it. */
  #ranIn: string | undefined;
  /**
   * The lease deadline of that term as last read (it only grows with renewals): what a revoked
   * lease still covers. The lease's own deadline, never a ride-through's end: a revoke or a
   * handover is never ridden through.
   */
  #heldUntil = Number.NEGATIVE_INFINITY;
  /** A term revoked while its command ran: that command's stop is already planned inside the lease. */
  #revoked: string | undefined;
  /** A term whose command is stopped because its work stalled: given up with this cool-down once it is gone. */
  #steppingDown: { readonly term: string; readonly cooldownMs: number } | undefined;

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
    const exclusive = epoch === undefined ? 0 : lease.exclusiveTimeLeftMs();
    if (term !== undefined && term === this.#ranIn && exclusive > 0) this.#heldUntil = now + exclusive;
    if (command.state !== "idle") {
      if (command.term === this.#revoked) {
        // Stopping within what is left of the revoked lease (revoked()).
      } else if (command.term !== term) command.stop(now, "the lease term it ran for is over");
      else if (left <= graceMs) command.stop(now + left, `${Math.floor(left)} ms left on the lease, no more than the grace of ${graceMs} ms`);
      else command.keepUntil(now + left);
    } else if (this.#accepting && term !== undefined && term === this.#ranIn) {
      const stalled = this.#steppingDown?.term === term ? this.#steppingDown : undefined;
      if (stalled !== undefined) {
        if (lease.resign({ cooldownMs: stalled.cooldownMs })) {
          this.#o.note?.(
            `the command of epoch ${epoch} is stopped: stepping down (the lease is released with its token, so a standby takes over now) ` +
              `and competing again in ${stalled.cooldownMs} ms.`,
          );
        }
      } else if (lease.resign()) {
        this.#o.note?.(
          `the command of epoch ${epoch} was stopped, and its term still holds: giving the term up (released with its token), ` +
            "so that the next command starts under a new epoch.",
        );
      }
    } else if (this.#accepting && epoch !== undefined && term !== undefined && left > graceMs) {
      this.#ranIn = term;
      this.#heldUntil = now + exclusive;
      command.start({ env: this.#o.environment(lease.uuid, epoch), term, epoch, killBy: now + left });
    }
    this.#plan(term === undefined ? undefined : left > graceMs ? Math.min(this.#o.intervalMs(), left - graceMs) : this.#o.intervalMs());
  }

  /**
   * The elector's `demoted` event. `stopped` is run's own stop: the returned wind-down makes
   * the elector release the lease only once the command's group is gone.
   */
  demoted(reason: DemotionReason): Promise<void> | undefined {
    if (reason === "stopped") return this.shutDown();
    if (reason === "handover" || reason === "preempted") return this.handedOver(reason);
    if (reason === "revoked") this.revoked();
    else this.update();
    return undefined;
  }

  /**
   * The elector was demoted `revoked`: an operator revoked the lease (a release without its
   * token). Nobody can take it over before it expires, and this elector's deadline from the
   * last accepted renewal comes before that, so the command is stopped as gracefully as
   * that leaves room for: SIGTERM now, SIGKILL after the grace or at that deadline.
   */
  revoked(): void {
    if (this.#shuttingDown) return;
    this.#stopWithinLease((leftMs) =>
      leftMs > 0
        ? `its lease was revoked (ha-module release, or a DELETE without the token); the service keeps it until it expires, and ${leftMs} ms are left of it`
        : "its lease was revoked (ha-module release, or a DELETE without the token), and no time is left of it",
    );
    this.update();
  }

  /**
   * The work of the command running in `term` stalled (its health check failed): it is
   * stopped as gracefully as the lease allows (SIGTERM now, SIGKILL after the grace or at
   * the deadline, whichever is first), and once its group is gone the term is given up
   * (resign: released with its token) and this process only watches for `cooldownMs`
   * before it competes again. False, and nothing done, when that command no longer runs in
   * the term held now.
   */
  stepDown(term: string, why: string, cooldownMs: number): boolean {
    if (this.#shuttingDown || !this.#accepting) return false;
    const { lease, clock, graceMs } = this.#o;
    const command = this.#command;
    const epoch = lease.epoch;
    const held = epoch === undefined ? undefined : `${lease.uuid}#${epoch}`;
    if (command.state !== "running" || command.term !== term || held !== term) return false;
    this.#steppingDown = { term, cooldownMs };
    const left = lease.leaseTimeLeftMs();
    command.stop(clock.now() + Math.min(graceMs, left), why);
    this.update();
    return true;
  }

  /**
   * The elector was demoted `handover`: an operator asked for a planned handover (ha-module
   * handover, or release); or `preempted`: a standby of higher priority asked for the role. As for a revoke the command is stopped within the lease (SIGTERM
   * now, SIGKILL after the grace or at the lease's deadline), but the returned promise makes
   * the elector release the lease only once the command's group is gone, so that the
   * successor never starts while this command still runs.
   */
  async handedOver(reason: "handover" | "preempted" = "handover"): Promise<void> {
    if (this.#shuttingDown) return;
    const asked =
      reason === "preempted"
        ? "a standby of higher priority asked for the role after its hold-down (a preemption, docs/protocol.md#priorities-and-preemption)"
        : "an operator asked for a planned handover (ha-module handover or release)";
    this.#stopWithinLease((leftMs) => `${asked}; ${leftMs} ms are left of the lease, which is released once the command is gone`);
    this.update();
    await this.#command.whenIdle();
  }

  /**
   * A revoke's or a handover's stop of the command running in the term it ran in: SIGTERM
   * now, SIGKILL after the grace or at the deadline of the last accepted renewal, whichever
   * comes first; that term is never started again. `why` is told the ms left of the lease.
   */
  #stopWithinLease(why: (leftMs: number) => string): void {
    const command = this.#command;
    const term = command.term;
    if (command.state === "idle" || term === undefined || term !== this.#ranIn) return;
    const now = this.#o.clock.now();
    this.#revoked = term;
    command.stop(Math.min(now + this.#o.graceMs, this.#heldUntil), why(Math.max(0, Math.floor(this.#heldUntil - now))));
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
