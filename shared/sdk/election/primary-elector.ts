import { callWithin } from "../loop/bounded-call.js";
import { heartbeatBudgetMs, releaseBudgetMs } from "../loop/budgets.js";
import type { ElectorEvents } from "./elector-events.js";
import { resolveElectorOptions, type PrimaryElectorOptions } from "./elector-options.js";
import { observeElectorStats, type ElectorMeter } from "./elector-meter.js";
import { epochHeldBy, takeoverTime, type AcquireOutcome, type Elected, type FollowStart, type LeadEnd, type Role, type Term } from "./elector-role.js";
import { ElectorStatistics, type ElectorStats } from "./elector-stats.js";
import type { HeartbeatBody } from "../../contract/heartbeat-body.js";
import type { HandoverView, LeaseView } from "../../contract/lease-view.js";
import type { LeaseTiming } from "../../contract/timing.js";
import type { CallOptions, LeaseTransport } from "../transport/lease-transport.js";
import { ElectorMembership } from "./elector-membership.js";
import { Evented } from "../loop/listeners.js";
import { pollStretch } from "../loop/poll-delays.js";
import { CallFailures, type CallKind } from "./call-failures.js";
import { checkId, checkNonNegativeMs } from "../loop/option-checks.js";
import { TermEndedError } from "./term-ended-error.js";
import type { LoopSetup } from "../loop/loop-setup.js";
import { RenewalTimer } from "./renewal-timer.js";
import { StickyTakeBack } from "./sticky-take-back.js";
import { RideThrough } from "./ride-through.js";
import { acceptedForAnother, leadTerm, type LeadHost } from "./lead-phase.js";
import { follow, type FollowHost } from "./follow-phase.js";
import { StandbyAnnouncements } from "./standby-announcements.js";
import { HoldDown } from "./preemption.js";

export type { DemotionReason, ElectorEvents } from "./elector-events.js";
export type { PrimaryElectorOptions } from "./elector-options.js";
export type { ElectorStats } from "./elector-stats.js";

/**
 * The client side of the lease protocol (docs/protocol.md#the-clients-side) for one utype.
 *
 * Guarantees, given the service's guarantee that a takeover needs the lease to be older
 * than T on its clock:
 * - isPrimary() is true only before `sentAt + (T − I)`, where sentAt is when the last
 *   accepted heartbeat was sent, on this process's monotonic clock. The write happened
 *   after sentAt, so no other uuid can take over before sentAt + T: the I left over absorbs
 *   clock skew between function hosts and clock rate error here (docs/protocol.md#the-assumptions).
 *   With `rideThroughMs` it stays true up to that long after, through no answer, timeouts
 *   and 5xx only (docs/protocol.md#ride-through): then another participant may be primary
 *   too, and only fenced writes keep the work safe. exclusiveTimeLeftMs() tells the two apart.
 * - It is computed, not stored: a process resuming from a pause longer than the lease
 *   reads false at once, and its next event is `demoted`.
 * Not guaranteed: that your work stops the instant isPrimary() turns false. Fence your
 * writes with `epoch` so that downstream systems refuse a stale primary.
 *
 * The loop is client-go's shape: follow until elected (follow-phase.ts), lead until demoted
 * (lead-phase.ts), follow again as a new uuid; stop() ends it, awaits the `demoted`
 * handlers, then releases. Every wait
 * is on the injected clock, and after every wait the loop looks at the deadline and at
 * stop() before it acts on what it waited for.
 */
export class PrimaryElector extends Evented<ElectorEvents> {
  /** The role it competes for. */
  readonly utype: string;
  /** Where it can be reached, as GetPrimary shows it; undefined when not given. */
  readonly address: string | undefined;
  /** The utype whose primary must be at `address` for it to compete, if any. */
  readonly affinity: string | undefined;
  /** The membership session and watcher, when the `membership` option was given. */
  readonly membership: ElectorMembership | undefined;
  /** The transport, clock, first retry delay, abort signal and participant part, as every SDK loop has them. */
  readonly #setup: LoopSetup<LeaseTransport>;
  readonly #newUuid: () => string;
  /** How long past its deadline a term rides through an outage, and when (docs/protocol.md#ride-through). */
  readonly #ride: RideThrough;
  readonly #random: () => number;
  readonly #stats = new ElectorStatistics();
  /** The renewal budget's estimate, shared by the electors on one transport (RenewalTimer.of); each renewal doubles its own copies' budgets. */
  readonly #renewalTimer: RenewalTimer;
  /** Aborted when the loop must end: at once by stop(), or once a stopping primary's handlers are done. */
  readonly #halt = new AbortController();
  /** What the follow and lead phases (follow-phase.ts, lead-phase.ts) read and change of this elector. */
  readonly #host: FollowHost & LeadHost;

  #uuid: string;
  #role: Role = { kind: "following" };
  #timing: LeaseTiming | undefined;
  #observedPrimary: string | null | undefined;
  /** Failed calls in a row, and how long they hold a follower's next call back (call-failures.ts). Renewals ignore it. */
  readonly #failures: CallFailures;
  #loop: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  readonly #meter: ElectorMeter | undefined;
  /** Unregisters the stats' instruments; set from start() until stop() ends. */
  #unobserve: (() => void) | undefined;
  /** Aborted by resign(): ends the lead phase of the term held. A new one for every acquired term. */
  #resignation = new AbortController();
  /** The cool-down the last resign() asked for: how long after its release this elector only watches. */
  #resignCooldownMs = 0;
  /** No acquire or takeover before this time (monotonic): a resign()'s cool-down. Polls go on. */
  #competeAt = Number.NEGATIVE_INFINITY;
  /** Which polls announce this elector as a standby, and the uuid last announced (docs/protocol.md#standbys). */
  readonly #announcements: StandbyAnnouncements;
  /** Its last term to take back after an outage, and the hold-back of takeovers after lost contact (docs/protocol.md#sticky-recovery). */
  readonly #sticky = new StickyTakeBack();
  /** This candidate's priority, 0 unless given (docs/protocol.md#priorities-and-preemption). */
  readonly #priority: number;
  /** How long it has stood by, and whether it asks to preempt the holder (preemption.ts). */
  readonly #holdDown: HoldDown;
  /** The last answer's view: the holder the hold-down judges. */
  #lastView: LeaseView | undefined;

  constructor(options: PrimaryElectorOptions) {
    super();
    const settings = resolveElectorOptions(options);
    this.utype = settings.utype;
    this.address = settings.address;
    this.affinity = settings.affinity;
    this.#setup = settings.setup;
    this.#renewalTimer = RenewalTimer.of(settings.setup.transport);
    this.#newUuid = settings.newUuid;
    this.#random = settings.random;
    this.#failures = new CallFailures(settings.setup.retryDelayMs, settings.random);
    this.#announcements = new StandbyAnnouncements(settings.announce);
    this.#priority = settings.priority;
    this.#holdDown = new HoldDown(settings.priority, settings.preemptAfterMs);
    this.#meter = settings.meter;
    this.#ride = new RideThrough(
      settings.rideThroughMs,
      settings.setup.clock,
      (term) => this.#role.kind === "leading" && this.#role.term === term,
      (term, leftMs) => void this.listeners.emit("ridingThrough", { uuid: term.uuid, epoch: term.epoch, leftMs }),
    );
    this.#uuid = checkId("newUuid()", this.#newUuid());
    this.#host = this.#hostOfPhases();
    this.membership =
      options.membership === undefined
        ? undefined
        : new ElectorMembership(options.membership, { utype: this.utype, address: this.address, transport: this.#setup.transport, clock: options.clock, retryDelayInMs: options.retryDelayInMs });
  }


  /** This incarnation's id; a new one is drawn after every demotion. */
  get uuid(): string {
    return this.#uuid;
  }

  /** The fencing token of the lease held now, or undefined when not primary. */
  get epoch(): number | undefined {
    return this.#termHeldNow()?.epoch;
  }

  /** I and T as the service last reported them, or undefined before its first answer. */
  get timing(): LeaseTiming | undefined {
    return this.#timing;
  }

  /**
   * True only while leading and before the deadline of the last accepted heartbeat; with
   * `rideThroughMs`, also while riding through past it (ridingThrough, exclusiveTimeLeftMs()).
   */
  isPrimary(): boolean {
    return this.#termHeldNow() !== undefined;
  }

  /**
   * Milliseconds left before this elector stops being primary unless a renewal is accepted
   * first (its deadline, sentAt + (T − I), minus now; with `rideThroughMs`, plus that while
   * the term may ride through); 0 when not primary. Work that needs time to wind down must
   * begin stopping while this is still larger than that time.
   */
  leaseTimeLeftMs(): number {
    const term = this.#termHeldNow();
    return term === undefined ? 0 : Math.max(0, this.#ride.endOf(term) - this.#setup.clock.now());
  }

  /**
   * Milliseconds left before the lease's own deadline, sentAt + (T − I): while this is above
   * 0 no other participant can be primary. Equal to leaseTimeLeftMs() without
   * `rideThroughMs`; 0 while riding through (and when not primary). What a check that
   * must never act beside another primary (CheckPrimary, an unfenced action) should read.
   */
  exclusiveTimeLeftMs(): number {
    const term = this.#termHeldNow();
    return term === undefined ? 0 : Math.max(0, term.deadline - this.#setup.clock.now());
  }

  /** Its counters now: round trips, failures, time without a primary, elections and demotions. */
  stats(): ElectorStats {
    return this.#stats.snapshot(this.#setup.clock.now());
  }

  /** Joins the election. Call once. */
  start(): this {
    if (this.#loop !== undefined || this.#stopped !== undefined) {
      throw new Error("This PrimaryElector was already started; create a new one to compete again.");
    }
    if (this.#setup.abortSignal?.aborted) {
      this.#role = { kind: "stopped" };
      this.#loop = this.#stopped = Promise.resolve();
      return this;
    }
    this.#setup.abortSignal?.addEventListener("abort", () => void this.stop(), { once: true });
    this.#setup.join();
    this.#stats.startClock(this.#setup.clock.now());
    if (this.#meter !== undefined) this.#unobserve = observeElectorStats(this.#meter, this.utype, () => this.stats());
    this.#loop = this.#run().catch((error: unknown) => this.#report(error));
    this.membership?.start();
    return this;
  }

  /**
   * Gives up the term held now and competes on as a new incarnation: `demoted`
   * {reason: "resigned"}, then the lease is released with its token (a standby may take
   * over at its next poll) and a new uuid competes. Whoever is elected next, this elector
   * included, holds a new epoch: for work that must never run twice under one fencing
   * token (`ha-module run` after it stopped its command). Returns false, and does nothing,
   * when no term is held (or stop() is under way).
   *
   * `cooldownMs`: after the release, the new incarnation only watches (GetPrimary every I,
   * `primaryChanged` as usual) and neither acquires nor takes over for that long, so that a
   * standby wins the role: for a primary whose work stalled (`ha-module run --health-cmd`).
   * 0 (the default) competes again at once.
   */
  resign(options: { readonly cooldownMs?: number } = {}): boolean {
    const cooldownMs = checkNonNegativeMs("cooldownMs", options.cooldownMs, 0);
    if (this.#termHeldNow() === undefined || this.#resignation.signal.aborted) return false;
    this.#resignCooldownMs = cooldownMs;
    this.#resignation.abort();
    return true;
  }

  /**
   * Leaves the election. If primary: emits `demoted` {reason: "stopped"} and awaits its
   * handlers (the lease is kept, unused, meanwhile), then releases the lease so that a
   * standby can take over at its next poll instead of waiting for expiry.
   */
  stop(): Promise<void> {
    if (this.#stopped !== undefined) return this.#stopped;
    if (this.#loop === undefined) {
      this.#role = { kind: "stopped" };
      this.#stopped = Promise.resolve();
      return this.#stopped;
    }
    this.#setup.leave();
    this.#stopped = this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<void> {
    const role = this.#role;
    // An acquire in flight is not cut off (the service would carry it out anyway): the loop
    // ends only once it is answered, so an accepted one is released below with its token.
    // Only one that went unanswered leaves its uuid to release without a token.
    const acquiring = role.kind === "acquiring" ? this.#uuid : undefined;
    // A term whose deadline has passed is not stopped but expired: the loop says so when it wakes.
    if (role.kind === "leading" && this.#setup.clock.now() < this.#ride.endOf(role.term)) {
      const { term } = role;
      this.#role = { kind: "releasing", term };
      this.#stats.demoted();
      term.ended.abort(new TermEndedError("stopped", term.uuid, term.epoch));
      await this.listeners.emit("demoted", { reason: "stopped", uuid: term.uuid, epoch: term.epoch });
    }
    this.#halt.abort();
    await this.#loop;
    const last = this.#role;
    this.#role = { kind: "stopped" };
    const term = last.kind === "releasing" ? last.term : undefined;
    // With the token the release is proven and a standby may take over at once. Without
    // one (an acquire was in flight and its answer did not elect us: refused, or lost and
    // perhaps applied) the service retires the uuid, or revokes the lease that acquire
    // created, reading again if the two race: that acquire cannot leave a lease behind
    // that nobody renews, nor one that stays live.
    const uuid = term?.uuid ?? acquiring;
    if (uuid !== undefined) {
      try {
        const released = await this.#setup.transport.release(this.utype, uuid, {
          timeoutInMs: releaseBudgetMs(this.#timing, this.#setup.retryDelayMs),
          ...(term === undefined ? {} : { lease: term.lease }),
        });
        if (released.outcome === "released") this.#observe(released.view);
      } catch (error) {
        this.#fail(error);
      }
    }
    await this.#withdraw(uuid);
    this.#stats.stopClock(this.#setup.clock.now());
    await this.membership?.stop();
    this.#unobserve?.();
    this.#unobserve = undefined;
  }

  /**
   * stop()'s last call as a standby: the uuid it last announced withdraws its standby row
   * (docs/protocol.md#standbys), so that it leaves `?standbys=true`, and `handover --to`
   * refuses it, at once rather than T later. Not when that uuid was just released or retired
   * (`released`: its row is out of view already), nor while writes are refused (its
   * announcements were, so it has no row), nor on a transport without `withdraw`.
   */
  async #withdraw(released: string | undefined): Promise<void> {
    const uuid = this.#announcements.uuid;
    const transport = this.#setup.transport;
    if (uuid === undefined || uuid === released || this.#failures.writesRefused || transport.withdraw === undefined) return;
    try {
      await transport.withdraw(this.utype, uuid, { timeoutInMs: releaseBudgetMs(this.#timing, this.#setup.retryDelayMs) });
    } catch (error) {
      this.#fail(error);
    }
  }

  /** Follow until elected, lead until demoted, and again as a new uuid, until stop(). */
  async #run(): Promise<void> {
    let start: FollowStart = { pollAt: this.#setup.clock.now(), takeoverAt: undefined };
    for (;;) {
      const elected = await follow(this.#host, start);
      if (elected === undefined) return;
      if (this.#halt.signal.aborted) {
        // Accepted by a transport that ignored the abort: held only so that stop() releases it.
        this.#role = { kind: "releasing", term: elected.term };
        return;
      }
      const end = await leadTerm(this.#host, elected, this.#resignation);
      const next = end.reason === "handover" ? await this.#handOver(end.term, end.handover) : this.#afterTerm(end);
      if (next === undefined || this.#halt.signal.aborted) return;
      start = next;
    }
  }

  /**
   * UpdateHeartBeat without a token: acquire a free lease, or take over an expired one.
   * stop() does not cut it off: the service may apply it whatever the elector does, so
   * stop() waits for its answer (bounded by its budget) to release what it got, with the
   * token. Accepted after stop(): no `elected`, only the release.
   */
  async #acquire(announce = false): Promise<AcquireOutcome> {
    const sentAt = this.#setup.clock.now();
    const uuid = this.#uuid;
    this.#role = { kind: "acquiring" };
    // Stated only when not 0, and `preempt` only on an announcement whose hold-down has passed:
    // without priorities the body is what it always was.
    const stated = this.#priority === 0 ? {} : { priority: this.#priority };
    const preempt = announce && this.#holdDown.wants(this.#lastView, uuid, sentAt) ? { preempt: true } : {};
    const body: HeartbeatBody = announce ? { uuid, address: this.address ?? null, announce, ...stated, ...preempt } : { uuid, address: this.address ?? null, ...stated };
    // Only its own budget ends it: a signal nobody aborts, one per call (a shared one would
    // gather a listener per acquire in flight across every elector of the process).
    const result = await this.#call(heartbeatBudgetMs(this.#timing, this.#setup.retryDelayMs), new AbortController().signal, (options) => this.#calls.heartbeat(this.utype, body, options), "write");
    this.#role = { kind: "following" };
    // Made, answered or not (it may have landed): the next attempts are plain polls and
    // acquires, so that a service too slow to answer within the budget still gets an acquire.
    if (announce) this.#announcements.sent(uuid, sentAt);
    if (result === undefined) return { kind: "unanswered" };
    const epoch = epochHeldBy(result.view, uuid);
    if (result.outcome === "accepted" && epoch === undefined) {
      this.#fail(acceptedForAnother(this.utype));
      return { kind: "unanswered" };
    }
    this.#roundTrip(this.#setup.clock.now() - sentAt, result.view, "acquisition");
    this.#observe(result.view);
    if (result.outcome !== "accepted" || epoch === undefined) return { kind: "refused", ended: result.outcome === "revoked", view: result.view };
    const term: Term = { uuid, epoch, lease: result.lease, deadline: sentAt + (result.view.timeoutMs - result.view.intervalMs), ended: new AbortController(), rides: true, ridingSince: undefined };
    const elected: Elected = { term, sentAt, view: result.view };
    if (this.#halt.signal.aborted) return { kind: "elected", elected };
    if (this.#setup.clock.now() >= term.deadline) {
      // Accepted, but answered after its own deadline: it proves nothing about now. The
      // lease is probably still ours on the server, so ask again at once (same uuid).
      this.#report(new Error(`UpdateHeartBeat(${this.utype}) was accepted only after its deadline (round trip ${Math.round(this.#setup.clock.now() - sentAt)} ms); trying again at once.`));
      return { kind: "too-late" };
    }
    this.#role = { kind: "leading", term };
    this.#resignation = new AbortController();
    this.#sticky.elected();
    // Holding a term ends standing by: a later one starts a fresh hold-down.
    this.#holdDown.interrupt();
    this.#stats.elected();
    void this.listeners.emit("elected", { uuid, epoch, signal: term.ended.signal });
    return { kind: "elected", elected };
  }

  /**
   * A term is one (uuid, epoch) (docs/protocol.md#the-epoch-as-a-fencing-token). A renewal accepted at another epoch (the service
   * lost its state and the lease was created afresh) ends the old term and starts a new
   * one: never a silent change of the fencing token the user's writes carry.
   */
  #changeTerm(old: Term, epoch: number): Term {
    const term: Term = { uuid: old.uuid, epoch, lease: old.lease, deadline: old.deadline, ended: new AbortController(), rides: true, ridingSince: undefined };
    if (this.#role.kind === "releasing") {
      // stop() already told the user the term ended; only the lease to release changes.
      this.#role = { kind: "releasing", term };
      return term;
    }
    this.#role = { kind: "leading", term };
    this.#stats.demoted();
    this.#stats.elected();
    old.ended.abort(new TermEndedError("epoch-changed", old.uuid, old.epoch));
    void this.listeners.emit("demoted", { reason: "epoch-changed", uuid: old.uuid, epoch: old.epoch });
    void this.listeners.emit("elected", { uuid: term.uuid, epoch, signal: term.ended.signal });
    return term;
  }

  /**
   * A planned handover (docs/protocol.md#planned-handover): the holder steps down exactly as
   * stop() does — no longer primary at once, the term's signal aborted, `demoted`
   * {reason: "handover"} with its handlers awaited (no renewal meanwhile: the work must end
   * within the time left, as `run` ends its command before the deadline) — then releases with
   * its token, awaited, so that the named standby takes over at once. A new uuid then only
   * watches for T (the resign cool-down), so that a handover to any goes to a standby rather
   * than back to this process. Undefined when stop() came meanwhile (the release is done).
   */
  async #handOver(term: Term, handover: HandoverView): Promise<FollowStart | undefined> {
    this.#role = { kind: "releasing", term };
    this.#uuid = this.#newUuid();
    this.#stats.demoted();
    // A standby of higher priority asked (docs/protocol.md#priorities-and-preemption), or an
    // operator did: an operator's move is not undone by this process preempting it back.
    const reason = handover.reason === "preempt" ? "preempted" : "handover";
    if (reason === "handover") this.#holdDown.movedAwayByOperator(handover.requestedAt);
    term.ended.abort(new TermEndedError(reason, term.uuid, term.epoch));
    await this.listeners.emit("demoted", { reason, uuid: term.uuid, epoch: term.epoch });
    try {
      const released = await this.#setup.transport.release(this.utype, term.uuid, { timeoutInMs: releaseBudgetMs(this.#timing, this.#setup.retryDelayMs), lease: term.lease });
      this.#observe(released.view);
    } catch (error) {
      this.#fail(error);
    }
    // Released (or tried): nothing is left for stop() to release.
    this.#role = this.#halt.signal.aborted ? { kind: "releasing", term: undefined } : { kind: "following" };
    if (this.#halt.signal.aborted) return undefined;
    const now = this.#setup.clock.now();
    this.#competeAt = now + (this.#timing?.timeoutMs ?? 0);
    return { pollAt: now, takeoverAt: undefined };
  }

  /**
   * The term is over: a new incarnation (new uuid) follows from here on. After an expiry
   * or a lost affinity the old uuid's lease is released in the background, so a standby
   * need not wait out the rest of T. Undefined when the loop ends instead (stop()).
   */
  #afterTerm(end: LeadEnd): FollowStart | undefined {
    const { term, reason } = end;
    if (reason === "halted") return undefined;
    // Refused (another holder, or revoked): the lease is not ours to release, and a revoked
    // one must run out on its own because our user's work may still be winding down.
    const refused = reason === "rejected" || reason === "revoked";
    if (this.#role.kind !== "leading") {
      // stop() is winding down and told the user already: keep only a lease still to release.
      this.#role = { kind: "releasing", term: refused ? undefined : term };
      if (refused) this.#observe(end.view);
      return undefined;
    }
    this.#role = { kind: "following" };
    this.#uuid = this.#newUuid();
    this.#stats.demoted();
    term.ended.abort(new TermEndedError(reason, term.uuid, term.epoch));
    // Ended for want of answers (sticky-take-back.ts): nothing is released, the new incarnation looks at once.
    if (this.#sticky.ended(term, reason, this.#failures.failing, this.#resignCooldownMs)) {
      void this.listeners.emit("demoted", { reason, uuid: term.uuid, epoch: term.epoch });
      return { pollAt: this.#setup.clock.now(), takeoverAt: undefined };
    }
    if (!refused) {
      this.#setup.transport
        .release(this.utype, term.uuid, { timeoutInMs: releaseBudgetMs(this.#timing, this.#setup.retryDelayMs), lease: term.lease })
        .catch((error: unknown) => this.#fail(error));
    }
    void this.listeners.emit("demoted", { reason, uuid: term.uuid, epoch: term.epoch });
    const now = this.#setup.clock.now();
    if (reason === "resigned") this.#competeAt = now + this.#resignCooldownMs;
    if (!refused) return { pollAt: now, takeoverAt: undefined };
    this.#observe(end.view);
    return { pollAt: now + (this.#timing?.intervalMs ?? 0) * pollStretch(this.#random), takeoverAt: takeoverTime(end.view, this.#uuid, now) };
  }

  #hostOfPhases(): FollowHost & LeadHost {
    return {
      utype: this.utype,
      address: this.address,
      affinity: this.affinity,
      priority: this.#priority,
      setup: this.#setup,
      clock: this.#setup.clock,
      random: this.#random,
      halt: this.#halt.signal,
      sticky: this.#sticky,
      failures: this.#failures,
      ride: this.#ride,
      renewalTimer: this.#renewalTimer,
      calls: () => this.#calls,
      uuid: () => this.#uuid,
      newUuid: () => {
        this.#uuid = this.#newUuid();
      },
      timing: () => this.#timing,
      competeAt: () => this.#competeAt,
      leading: () => this.#role.kind === "leading",
      // Never while it may not compete (a resign()'s cool-down).
      announceDue: (announcedLast) =>
        this.#setup.clock.now() >= this.#competeAt &&
        (this.#announcements.due(this.#uuid, this.#setup.clock.now(), this.#timing, announcedLast, this.#failures.writesRefused) ||
          // A preemption is asked for on an announcement, whatever the `announce` option says.
          (!(announcedLast && this.#failures.writesRefused) && this.#holdDown.wants(this.#lastView, this.#uuid, this.#setup.clock.now()))),
      preemptAt: () => (this.#lastView !== undefined && this.#holdDown.outranks(this.#lastView, this.#uuid) && !this.#holdDown.movedAway ? this.#holdDown.dueAt() : undefined),
      acquire: (announce) => this.#acquire(announce),
      poll: (budgetMs, signal) => this.#call(budgetMs, signal, (options) => this.#calls.getPrimary(this.utype, options), "read"),
      affinityHolds: (affinity, budgetMs, signal, onFailure) => this.#affinityHolds(affinity, budgetMs, signal, onFailure),
      align: (at: number, mayDelay: boolean, mayAdvance?: boolean) => this.#align(at, mayDelay, mayAdvance),
      observe: (view: LeaseView, call?: CallKind) => this.#observe(view, call),
      fail: (error, call, sentAt) => this.#fail(error, call, sentAt),
      roundTrip: (ms, timing, call) => this.#roundTrip(ms, timing, call),
      changeTerm: (old, epoch) => this.#changeTerm(old, epoch),
      releaseOwnLastTerm: () => this.#releaseOwnLastTerm(),
    };
  }

  /** Affinity: the other utype's live primary is at our address. A failed read proves nothing: `onFailure`. */
  async #affinityHolds(affinity: string, budgetMs: number, signal: AbortSignal, onFailure: boolean): Promise<boolean> {
    const view = await this.#call(budgetMs, signal, (options) => this.#calls.getPrimary(affinity, options), "read");
    if (view === undefined) return onFailure;
    return view.primary !== null && view.primary.address === this.address;
  }

  /** Where polls, acquires and renewals go: the participant's part when the transport batches, else the transport. */
  get #calls(): Pick<LeaseTransport, "getPrimary" | "heartbeat"> {
    return this.#setup.part ?? this.#setup.transport;
  }

  /** A wake time on the participant's grid (transport/cadence.ts); unchanged for a lone elector. */
  #align(at: number, mayDelay: boolean, mayAdvance = false): number {
    return this.#setup.part?.align(at, this.#timing?.intervalMs, mayDelay, mayAdvance) ?? at;
  }

  /** The term held now: leading, and before its deadline (or the end of its ride-through). */
  #termHeldNow(): Term | undefined {
    const role = this.#role;
    return role.kind === "leading" && this.#setup.clock.now() < this.#ride.endOf(role.term) ? role.term : undefined;
  }

  /**
   * Keeps I and T, the primaryChanged event and the time spent without a primary. `call`:
   * what was answered; a read's answer does not end the refusals of writes (call-failures.ts).
   */
  #observe(view: LeaseView, call: CallKind = "write"): void {
    this.#failures.answered(call);
    this.#lastView = view;
    if (this.#role.kind !== "leading" && this.#role.kind !== "releasing") this.#holdDown.observe(view, this.#uuid, this.#setup.clock.now());
    this.#sticky.answered(this.#setup.clock.now(), view);
    this.#timing = { intervalMs: view.intervalMs, timeoutMs: view.timeoutMs };
    this.#stats.observed(this.#setup.clock.now(), view.primary?.expiresInMs);
    const key = view.primary === null ? null : `${view.primary.uuid}#${view.primary.epoch}`;
    if (key !== this.#observedPrimary) {
      this.#observedPrimary = key;
      void this.listeners.emit("primaryChanged", { primary: view.primary, epoch: view.epoch });
    }
  }

  #call<T>(budgetMs: number, signal: AbortSignal, send: (options: Required<CallOptions>) => Promise<T>, call: CallKind): Promise<T | undefined> {
    const sentAt = this.#setup.clock.now();
    return callWithin(budgetMs, signal, send, (error) => this.#fail(error, call, sentAt));
  }

  /** Releases this elector's last term, still live, with its token: true when proven released (StickyTakeBack.release). */
  #releaseOwnLastTerm(): Promise<boolean> {
    return this.#sticky.release(async (uuid, lease) => {
      const budgetMs = releaseBudgetMs(this.#timing, this.#setup.retryDelayMs);
      const released = await this.#call(budgetMs, this.#halt.signal, (options) => this.#setup.transport.release(this.utype, uuid, { ...options, lease }), "write");
      if (released !== undefined) this.#observe(released.view);
      return released;
    });
  }

  #roundTrip(ms: number, timing: LeaseTiming, call: "renewal" | "acquisition"): void {
    this.#renewalTimer.answered(ms, this.#setup.clock.now(), call, timing);
    const warning = this.#stats.roundTrip(ms, timing);
    if (warning !== undefined) this.#report(warning);
  }

  /**
   * A failed call: `call` says whether it was a read or a write (renewals, releases and
   * acquires are writes); `sentAt`, when it was sent (now when not known).
   */
  #fail(error: unknown, call: CallKind = "write", sentAt = this.#setup.clock.now()): void {
    this.#stats.failed();
    this.#failures.failed(error, call, this.#setup.clock.now());
    this.#holdDown.interrupt();
    this.#sticky.failed(error, sentAt);
    this.#report(error);
  }

  #report(error: unknown): void {
    this.listeners.report(error);
  }
}

