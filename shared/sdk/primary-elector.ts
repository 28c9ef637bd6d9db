import { randomUUID } from "node:crypto";
import { systemElectorClock, type ElectorClock, type TimerHandle } from "./elector-clock.js";
import { HaClient } from "./ha-client.js";
import type { HeartbeatBody } from "../contract/heartbeat-body.js";
import type { LeaseView, PrimaryView } from "../contract/lease-view.js";
import type { HeartbeatResult } from "../contract/outcomes.js";
import { ElectorMembership, type ElectorMembershipOptions } from "./elector-membership.js";
import type { LeaseTransport } from "./lease-transport.js";
import { Listeners } from "./listeners.js";
import {
  checkEndpoint,
  checkId,
  checkOptionalAddress,
  checkOptionalFunction,
  checkOptionalSignal,
  checkOptionalString,
  checkPositiveMs,
} from "./option-checks.js";
import { RoundTripWindow } from "./round-trip-stats.js";
import { SlowRoundTripWarning } from "./slow-round-trip-warning.js";

/**
 * Why a primary stopped being one. `rejected`: a heartbeat got 409, another uuid holds the
 * lease. `revoked`: a heartbeat got 409 LeaseRevoked, someone revoked the lease (DELETE
 * without its token); nobody takes over before it expires. `lease-expired`: the deadline
 * passed without an accepted renewal (slow or failing calls, or a process pause).
 * `stopped`: stop() or the abort signal. `affinity-lost`: the primary of the affinity utype
 * is no longer at this elector's address. `epoch-changed`: a renewal was accepted with
 * another epoch than the one held, which only happens when the service lost its state;
 * `elected` with the new epoch follows at once.
 */
export type DemotionReason = "rejected" | "revoked" | "lease-expired" | "stopped" | "affinity-lost" | "epoch-changed";

export interface ElectorEvents {
  /** This elector became primary; `epoch` is the fencing token for its writes. */
  elected: { readonly uuid: string; readonly epoch: number };
  /** It is no longer primary. Handlers of a `stopped` demotion are awaited before release. */
  demoted: { readonly reason: DemotionReason; readonly uuid: string; readonly epoch: number };
  /** The primary this elector observes changed (another uuid, or none). */
  primaryChanged: { readonly primary: PrimaryView | null };
  /** Non-fatal: a failed call, a corrupted answer, slow round trips. The elector keeps going. */
  error: Error;
}

export interface PrimaryElectorOptions {
  /** The role to compete for. */
  readonly utype: string;
  /** Where this participant can be reached; GetPrimary shows it to everyone. */
  readonly address?: string;
  /** The service's base URL; or give `transport` instead. */
  readonly endpoint?: string;
  /** The function key for `endpoint`. */
  readonly apiKey?: string;
  /** Any LeaseTransport (an HaClient, or a fake in tests); excludes `endpoint`. */
  readonly transport?: LeaseTransport;
  /** Compete only while this other utype's primary is at our `address` (co-located services). */
  readonly affinity?: string;
  /** Aborting stops the elector as stop() does. */
  readonly abortSignal?: AbortSignal;
  /**
   * Delay between attempts until the service has answered once and so told us I. After
   * that every delay derives from the I and T the service reports. Default 1000 ms.
   */
  readonly retryDelayInMs?: number;
  /** Monotonic time and timers; defaults to performance.now() and the process's timers. */
  readonly clock?: ElectorClock;
  /** A new incarnation id; defaults to crypto.randomUUID. */
  readonly newUuid?: () => string;
  /**
   * Also be a member of a group (the utype by default) and watch it: `elector.membership`
   * then gives the io-athena view, leader and members, from this one object.
   */
  readonly membership?: ElectorMembershipOptions;
}

export interface ElectorStats {
  /** Round trips of answered heartbeats (UpdateHeartBeat), over the last 1024. */
  readonly heartbeatRoundTrip: { readonly count: number; readonly p50Ms: number | undefined; readonly p99Ms: number | undefined };
  /** Calls that failed: timeouts, refusals, unreachable service, corrupted answers. */
  readonly failures: number;
  /** Total time during which this elector's last observation was "no live primary". */
  readonly withoutPrimaryMs: number;
  readonly elections: number;
  readonly demotions: number;
}

interface Holding {
  readonly epoch: number;
  readonly lease: string;
  /** Monotonic time at which this elector stops being primary unless a renewal is accepted. */
  readonly deadline: number;
}

type Lifecycle = "idle" | "running" | "stopping" | "stopped";

const DEFAULT_RETRY_DELAY_MS = 1000;
/** Round trips needed before the p99 is trusted enough to warn about. */
const MIN_SAMPLES_FOR_WARNING = 10;

/**
 * The client side of the lease protocol (SPEC §5) for one utype.
 *
 * Guarantees, given the service's guarantee that a takeover needs the lease to be older
 * than T on its clock:
 * - isPrimary() is true only before `sentAt + (T − I)`, where sentAt is when the last
 *   accepted heartbeat was sent, on this process's monotonic clock. The write happened
 *   after sentAt, so no other uuid can take over before sentAt + T: the I left over absorbs
 *   clock skew between function hosts and clock rate error here (SPEC §3).
 * - It is computed, not stored: a process resuming from a pause longer than the lease
 *   reads false at once, and its next event is `demoted`.
 * Not guaranteed: that your work stops the instant isPrimary() turns false. Fence your
 * writes with `epoch` so that downstream systems refuse a stale primary.
 */
export class PrimaryElector {
  readonly utype: string;
  readonly address: string | undefined;
  readonly affinity: string | undefined;
  /** The membership session and watcher, when the `membership` option was given. */
  readonly membership: ElectorMembership | undefined;
  readonly #transport: LeaseTransport;
  readonly #clock: ElectorClock;
  readonly #newUuid: () => string;
  readonly #retryDelayMs: number;
  readonly #abortSignal: AbortSignal | undefined;
  /**
   * A throwing handler is reported through `error`. With no `error` listener, or when an
   * `error` handler itself throws (feeding it back would loop), Listeners rethrows it
   * asynchronously, as Node's EventEmitter would: never dropped.
   */
  readonly #listeners = new Listeners<ElectorEvents>((error, event) => {
    if (event === "error" || this.#listeners.count("error") === 0) return false;
    void this.#listeners.emit("error", asError(error));
    return true;
  });

  #lifecycle: Lifecycle = "idle";
  #uuid: string;
  /** Bumped on every demotion: answers to calls of an earlier incarnation are ignored. */
  #incarnation = 0;
  #holding: Holding | undefined;
  #timing: { intervalMs: number; timeoutMs: number } | undefined;
  #observedPrimary: string | null | undefined;
  /** A PUT of the current uuid is in flight: we may hold the lease without knowing it. */
  #acquireInFlight = false;
  /**
   * Renewals omit the address (the service keeps the stored one, and the body stays small);
   * set when the last answer showed another address than ours, so the next one sends it.
   */
  #addressMismatch = false;

  #loopTimer: TimerHandle | undefined;
  #deadlineTimer: TimerHandle | undefined;
  #nextStepAt = 0;
  #takeoverAt: number | undefined;
  #step: Promise<void> | undefined;
  #inflight: AbortController | undefined;
  #stopped: Promise<void> | undefined;

  readonly #roundTrips = new RoundTripWindow();
  #slowWarned = false;
  #failures = 0;
  #elections = 0;
  #demotions = 0;
  #withoutPrimaryMs = 0;
  #withoutPrimarySince: number | undefined;

  constructor(options: PrimaryElectorOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError('Expected the PrimaryElector options to be an object such as { utype: "scheduler", endpoint: "http://127.0.0.1:7071/api" }.');
    }
    this.utype = checkId("utype", options.utype);
    this.address = checkOptionalAddress("address", options.address);
    this.affinity = options.affinity === undefined ? undefined : checkId("affinity", options.affinity);
    if (this.affinity !== undefined && this.address === undefined) {
      throw new TypeError("Expected `address` to be set when `affinity` is: the elector competes only while the affinity utype's primary has this address.");
    }
    if (this.affinity === this.utype) {
      throw new TypeError("Expected `affinity` to name another utype than `utype` itself.");
    }
    if (options.transport !== undefined && options.endpoint !== undefined) {
      throw new TypeError("Expected either `transport` or `endpoint`, not both: `endpoint` builds an HaClient, `transport` replaces it.");
    }
    if (options.transport !== undefined) {
      if (typeof options.transport?.heartbeat !== "function") {
        throw new TypeError("Expected `transport` to implement LeaseTransport (getPrimary, heartbeat, release), e.g. an HaClient.");
      }
      this.#transport = options.transport;
    } else if (options.endpoint !== undefined) {
      checkEndpoint("endpoint", options.endpoint);
      const apiKey = checkOptionalString("apiKey", options.apiKey);
      this.#transport = new HaClient({ endpoint: options.endpoint, ...(apiKey === undefined ? {} : { apiKey }) });
    } else {
      throw new TypeError("Expected `endpoint` (the service URL, e.g. http://127.0.0.1:7071/api) or `transport` to be set.");
    }
    this.#retryDelayMs = checkPositiveMs("retryDelayInMs", options.retryDelayInMs, DEFAULT_RETRY_DELAY_MS);
    this.#abortSignal = checkOptionalSignal("abortSignal", options.abortSignal);
    this.#clock = options.clock ?? systemElectorClock;
    if (typeof this.#clock.now !== "function" || typeof this.#clock.setTimeout !== "function" || typeof this.#clock.clearTimeout !== "function") {
      throw new TypeError("Expected `clock` to have now(), setTimeout() and clearTimeout().");
    }
    this.#newUuid = checkOptionalFunction("newUuid", options.newUuid) ?? randomUUID;
    this.#uuid = checkId("newUuid()", this.#newUuid());
    this.membership =
      options.membership === undefined
        ? undefined
        : new ElectorMembership(options.membership, { utype: this.utype, address: this.address, transport: this.#transport, clock: options.clock, retryDelayInMs: options.retryDelayInMs });
  }

  on<E extends keyof ElectorEvents>(event: E, handler: (payload: ElectorEvents[E]) => unknown): this {
    this.#listeners.on(event, handler);
    return this;
  }

  off<E extends keyof ElectorEvents>(event: E, handler: (payload: ElectorEvents[E]) => unknown): this {
    this.#listeners.off(event, handler);
    return this;
  }

  /** This incarnation's id; a new one is drawn after every demotion. */
  get uuid(): string {
    return this.#uuid;
  }

  /** The fencing token of the lease held now, or undefined when not primary. */
  get epoch(): number | undefined {
    return this.isPrimary() ? this.#holding?.epoch : undefined;
  }

  /** I and T as the service last reported them, or undefined before its first answer. */
  get timing(): { readonly intervalMs: number; readonly timeoutMs: number } | undefined {
    return this.#timing;
  }

  /** True only while running and before the deadline of the last accepted heartbeat. */
  isPrimary(): boolean {
    return this.#lifecycle === "running" && this.#holding !== undefined && this.#clock.now() < this.#holding.deadline;
  }

  /**
   * Milliseconds left before this elector stops being primary unless a renewal is accepted
   * first (its deadline, sentAt + (T − I), minus now); 0 when not primary. Work that needs
   * time to wind down must begin stopping while this is still larger than that time.
   */
  leaseTimeLeftMs(): number {
    if (!this.isPrimary()) return 0;
    return Math.max(0, (this.#holding as Holding).deadline - this.#clock.now());
  }

  stats(): ElectorStats {
    const now = this.#clock.now();
    return {
      heartbeatRoundTrip: {
        count: this.#roundTrips.count,
        p50Ms: this.#roundTrips.percentile(50),
        p99Ms: this.#roundTrips.percentile(99),
      },
      failures: this.#failures,
      withoutPrimaryMs: this.#withoutPrimaryMs + (this.#withoutPrimarySince === undefined ? 0 : now - this.#withoutPrimarySince),
      elections: this.#elections,
      demotions: this.#demotions,
    };
  }

  /** Joins the election. Call once. */
  start(): this {
    if (this.#lifecycle !== "idle") throw new Error("This PrimaryElector was already started; create a new one to compete again.");
    if (this.#abortSignal?.aborted) {
      this.#lifecycle = "stopped";
      this.#stopped = Promise.resolve();
      return this;
    }
    this.#lifecycle = "running";
    this.#abortSignal?.addEventListener("abort", () => void this.stop(), { once: true });
    this.#schedule(this.#clock.now());
    this.membership?.start();
    return this;
  }

  /**
   * Leaves the election. If primary: emits `demoted` {reason: "stopped"} and awaits its
   * handlers (the lease is kept, unused, meanwhile), then releases the lease so that a
   * standby can take over at its next poll instead of waiting for expiry.
   */
  stop(): Promise<void> {
    if (this.#stopped !== undefined) return this.#stopped;
    if (this.#lifecycle === "idle") {
      this.#lifecycle = "stopped";
      this.#stopped = Promise.resolve();
      return this.#stopped;
    }
    this.#stopped = this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<void> {
    this.#expireIfDue();
    const holding = this.#holding;
    this.#lifecycle = "stopping";
    if (holding !== undefined) {
      this.#demotions += 1;
      await this.#listeners.emit("demoted", { reason: "stopped", uuid: this.#uuid, epoch: holding.epoch });
    }
    this.#lifecycle = "stopped";
    this.#clearTimer("loop");
    this.#clearTimer("deadline");
    // An acquiring PUT cut off here may still have been applied: release to be sure.
    const acquireWasInFlight = this.#acquireInFlight;
    this.#inflight?.abort(new Error("The elector is stopping."));
    await this.#step;
    const mayHold = this.#holding !== undefined || acquireWasInFlight;
    // With the token the release is proven and a standby may take over at once. Without
    // one (only an acquire was in flight) the service revokes or retires the uuid instead:
    // either way that acquire cannot leave a lease behind that nobody renews.
    const lease = this.#holding?.lease;
    this.#holding = undefined;
    if (mayHold) {
      try {
        const released = await this.#transport.release(this.utype, this.#uuid, {
          timeoutInMs: this.#releaseBudget(),
          ...(lease === undefined ? {} : { lease }),
        });
        if (released.outcome === "released") this.#observe(released.view);
      } catch (error) {
        this.#fail(error);
      }
    }
    this.#closeWithoutPrimary();
    await this.membership?.stop();
  }

  // ---- the loop -------------------------------------------------------------------------

  #schedule(at: number): void {
    this.#clearTimer("loop");
    this.#nextStepAt = at;
    const wake = this.#takeoverAt === undefined || this.#holding !== undefined ? at : Math.min(at, this.#takeoverAt);
    this.#loopTimer = this.#clock.setTimeout(() => this.#runStep(), Math.max(0, wake - this.#clock.now()));
  }

  #runStep(): void {
    this.#loopTimer = undefined;
    if (this.#step !== undefined || this.#lifecycle === "stopped") return;
    this.#step = this.#oneStep()
      .catch((error: unknown) => this.#report(asError(error)))
      .finally(() => {
        this.#step = undefined;
        if (this.#lifecycle === "running" || (this.#lifecycle === "stopping" && this.#holding !== undefined)) {
          this.#schedule(this.#nextStepAt);
        }
      });
  }

  async #oneStep(): Promise<void> {
    this.#expireIfDue();
    if (this.#holding !== undefined) {
      await this.#renew();
    } else if (this.#lifecycle === "running") {
      await this.#follow();
    }
  }

  /**
   * Primary: one fast-path heartbeat per I. Accepted → deadline = sentAt + (T − I).
   * 409 → demote at once, unless the answer names this uuid as the live holder at the held
   * epoch (our own echo won a race). A failure → try again, each call bounded by the time left.
   */
  async #renew(): Promise<void> {
    const holding = this.#holding as Holding;
    const timing = this.#timing as { intervalMs: number; timeoutMs: number };
    const sentAt = this.#clock.now();
    const budget = Math.min(holding.deadline - sentAt, this.#heartbeatBudget());
    this.#nextStepAt = sentAt + timing.intervalMs;
    const incarnation = this.#incarnation;
    const request: HeartbeatBody = this.#addressMismatch
      ? { uuid: this.#uuid, address: this.address ?? null, lease: holding.lease }
      : { uuid: this.#uuid, lease: holding.lease };
    const result = await this.#call(budget, (options) => this.#transport.heartbeat(this.utype, request, options));
    if (this.#expireIfDue() || incarnation !== this.#incarnation) return;
    if (result === undefined) {
      this.#nextStepAt = Math.max(this.#nextStepAt, this.#clock.now());
      return;
    }
    this.#recordRoundTrip(this.#clock.now() - sentAt);
    if (result.outcome !== "accepted") {
      if (namesHolder(result.view, this.#uuid, holding.epoch)) {
        // Our own echo (a retry, a duplicate) won the race: the lease is still ours, but
        // this answer says nothing about when it was renewed. Keep the deadline, do not
        // extend it, and renew again at once.
        this.#observe(result.view);
        this.#nextStepAt = this.#clock.now();
        return;
      }
      if (this.#lifecycle === "running") {
        this.#demote(result.outcome === "revoked" ? "revoked" : "rejected");
        this.#armTakeover(result.view);
      } else {
        this.#holding = undefined; // stopping: the user already heard `stopped`
      }
      this.#observe(result.view);
      return;
    }
    this.#observe(result.view);
    this.#hold(result, sentAt);
    this.#nextStepAt = sentAt + this.#timing!.intervalMs;
    const epoch = this.#holding!.epoch;
    if (epoch !== holding.epoch && this.#lifecycle === "running") this.#changeTerm(holding.epoch, epoch);
    if (this.affinity !== undefined && this.#lifecycle === "running" && !(await this.#affinityHolds(incarnation))) {
      if (incarnation === this.#incarnation && this.#holding !== undefined) this.#demote("affinity-lost");
    }
  }

  /**
   * Follower: GetPrimary every I. No primary (or ourselves, after a lost answer) → send
   * UpdateHeartBeat now. A live other primary → arm a takeover for its expiresInMs.
   */
  async #follow(): Promise<void> {
    const sentAt = this.#clock.now();
    this.#nextStepAt = sentAt + (this.#timing?.intervalMs ?? this.#retryDelayMs);
    const incarnation = this.#incarnation;
    if (this.affinity !== undefined && !(await this.#affinityHolds(incarnation))) {
      this.#takeoverAt = undefined;
      return;
    }
    if (this.#takeoverAt !== undefined && this.#clock.now() >= this.#takeoverAt) {
      this.#takeoverAt = undefined;
      await this.#acquire();
      return;
    }
    const view = await this.#call(this.#pollBudget(), (options) => this.#transport.getPrimary(this.utype, options));
    if (view === undefined || incarnation !== this.#incarnation || this.#lifecycle !== "running") return;
    this.#observe(view);
    this.#nextStepAt = sentAt + view.intervalMs;
    if (view.primary === null || view.primary.uuid === this.#uuid) {
      await this.#acquire();
    } else {
      this.#armTakeover(view);
    }
  }

  async #acquire(): Promise<void> {
    const sentAt = this.#clock.now();
    const incarnation = this.#incarnation;
    this.#acquireInFlight = true;
    const result = await this.#call(this.#heartbeatBudget(), (options) =>
      this.#transport.heartbeat(this.utype, { uuid: this.#uuid, address: this.address ?? null }, options),
    ).finally(() => {
      if (incarnation === this.#incarnation) this.#acquireInFlight = false;
    });
    if (result === undefined || incarnation !== this.#incarnation) return;
    this.#recordRoundTrip(this.#clock.now() - sentAt);
    this.#observe(result.view);
    if (result.outcome === "revoked") {
      // This uuid's term ended (an earlier acquire of ours landed and was revoked or taken
      // over, or a release retired it): it can never hold the lease again. Compete on as a
      // new incarnation.
      this.#newIncarnation();
      this.#armTakeover(result.view);
      return;
    }
    if (result.outcome !== "accepted") {
      this.#armTakeover(result.view);
      return;
    }
    if (this.#lifecycle !== "running") {
      // stop() began while the PUT was out: hold it only so that stop() releases it.
      this.#holding = { epoch: result.view.primary!.epoch, lease: result.lease, deadline: -Infinity };
      return;
    }
    this.#hold(result, sentAt);
    if (!this.isPrimary()) {
      // Accepted, but answered after its own deadline: it proves nothing about now. The
      // lease is probably still ours on the server, so ask again at once (same uuid).
      this.#report(new Error(`UpdateHeartBeat(${this.utype}) was accepted only after its deadline (round trip ${Math.round(this.#clock.now() - sentAt)} ms); trying again at once.`));
      this.#holding = undefined;
      this.#nextStepAt = this.#clock.now();
      return;
    }
    this.#nextStepAt = sentAt + result.view.intervalMs;
    this.#elections += 1;
    void this.#listeners.emit("elected", { uuid: this.#uuid, epoch: this.#holding!.epoch });
  }

  /** Affinity: the other utype's live primary is at our address. A failed read proves nothing. */
  async #affinityHolds(incarnation: number): Promise<boolean> {
    const affinity = this.affinity as string;
    const budget = this.#holding === undefined ? this.#pollBudget() : Math.max(1, this.#holding.deadline - this.#clock.now());
    const view = await this.#call(budget, (options) => this.#transport.getPrimary(affinity, options));
    if (view === undefined || incarnation !== this.#incarnation) return this.#holding !== undefined;
    return view.primary !== null && view.primary.address === this.address;
  }

  // ---- state changes --------------------------------------------------------------------

  #hold(result: Extract<HeartbeatResult, { outcome: "accepted" }>, sentAt: number): void {
    const { intervalMs, timeoutMs } = result.view;
    this.#holding = { epoch: result.view.primary!.epoch, lease: result.lease, deadline: sentAt + (timeoutMs - intervalMs) };
    this.#addressMismatch = result.view.primary!.address !== (this.address ?? null);
    this.#takeoverAt = undefined;
    this.#clearTimer("deadline");
    const delay = this.#holding.deadline - this.#clock.now();
    if (delay > 0) this.#deadlineTimer = this.#clock.setTimeout(() => this.#onDeadline(), delay);
  }

  #onDeadline(): void {
    this.#deadlineTimer = undefined;
    if (this.#holding === undefined) return;
    if (!this.#expireIfDue()) {
      const delay = this.#holding.deadline - this.#clock.now();
      this.#deadlineTimer = this.#clock.setTimeout(() => this.#onDeadline(), delay);
    }
  }

  /** Demotes with `lease-expired` when the deadline has passed. True when it did. */
  #expireIfDue(): boolean {
    if (this.#holding === undefined || this.#clock.now() < this.#holding.deadline) return false;
    if (this.#lifecycle === "running") {
      this.#demote("lease-expired");
    } else {
      // Stopping: the user already heard `stopped`; the lease is simply gone.
      this.#holding = undefined;
      this.#clearTimer("deadline");
    }
    return true;
  }

  /**
   * Not primary any more: a new incarnation (new uuid) competes from here on. After an
   * expiry or a lost affinity the old uuid's lease is released in the background, so a
   * standby need not wait out the rest of T.
   */
  #demote(reason: Exclude<DemotionReason, "stopped" | "epoch-changed">): void {
    const holding = this.#holding as Holding;
    const oldUuid = this.#uuid;
    this.#holding = undefined;
    this.#clearTimer("deadline");
    this.#inflight?.abort(new Error(`Demoted (${reason}).`));
    this.#newIncarnation();
    this.#takeoverAt = undefined;
    this.#demotions += 1;
    // Refused (another holder, or revoked): the lease is not ours to release, and a revoked
    // one must run out on its own because our user's work may still be winding down.
    const refused = reason === "rejected" || reason === "revoked";
    this.#nextStepAt = this.#clock.now() + (refused ? (this.#timing?.intervalMs ?? 0) : 0);
    if (!refused) {
      // The deadline has passed (or affinity is lost and we step down): a proven release
      // lets a standby take over at once instead of waiting out the rest of T.
      this.#transport
        .release(this.utype, oldUuid, { timeoutInMs: this.#releaseBudget(), lease: holding.lease })
        .catch((error: unknown) => this.#fail(error));
    }
    void this.#listeners.emit("demoted", { reason, uuid: oldUuid, epoch: holding.epoch });
    if (this.#lifecycle === "running" && this.#step === undefined) this.#schedule(this.#nextStepAt);
  }

  /** A new incarnation: a new uuid, and answers to the old one's calls are ignored. */
  #newIncarnation(): void {
    this.#incarnation += 1;
    this.#acquireInFlight = false;
    this.#uuid = this.#newUuid();
  }

  /**
   * SPEC §5: a term is one (uuid, epoch). A renewal accepted at another epoch (the service
   * lost its state and the lease was created afresh) ends the old term and starts a new
   * one: never a silent change of the fencing token the user's writes carry.
   */
  #changeTerm(oldEpoch: number, newEpoch: number): void {
    this.#demotions += 1;
    this.#elections += 1;
    void this.#listeners.emit("demoted", { reason: "epoch-changed", uuid: this.#uuid, epoch: oldEpoch });
    void this.#listeners.emit("elected", { uuid: this.#uuid, epoch: newEpoch });
  }

  #armTakeover(view: LeaseView): void {
    const primary = view.primary;
    if (primary === null || primary.uuid === this.#uuid) {
      this.#takeoverAt = undefined;
      return;
    }
    // The answer left the server before it reached us, so this is at or after the real
    // expiry; the +1 is because the service takes over only once the lease is older than T.
    this.#takeoverAt = this.#clock.now() + Math.max(0, primary.expiresInMs) + 1;
  }

  /** Keeps I and T, the primaryChanged event and the time spent without a primary. */
  #observe(view: LeaseView): void {
    this.#timing = { intervalMs: view.intervalMs, timeoutMs: view.timeoutMs };
    const now = this.#clock.now();
    if (view.primary === null) {
      this.#withoutPrimarySince ??= now;
    } else {
      this.#closeWithoutPrimary();
    }
    const key = view.primary === null ? null : `${view.primary.uuid}#${view.primary.epoch}`;
    if (key !== this.#observedPrimary) {
      this.#observedPrimary = key;
      void this.#listeners.emit("primaryChanged", { primary: view.primary });
    }
  }

  #closeWithoutPrimary(): void {
    if (this.#withoutPrimarySince === undefined) return;
    this.#withoutPrimaryMs += this.#clock.now() - this.#withoutPrimarySince;
    this.#withoutPrimarySince = undefined;
  }

  // ---- calls ----------------------------------------------------------------------------

  /** One call with a budget; a failure is counted and reported, and yields undefined. */
  async #call<T>(budgetMs: number, send: (options: { timeoutInMs: number; abortSignal: AbortSignal }) => Promise<T>): Promise<T | undefined> {
    const controller = new AbortController();
    this.#inflight = controller;
    try {
      return await send({ timeoutInMs: Math.max(1, Math.ceil(budgetMs)), abortSignal: controller.signal });
    } catch (error) {
      if (!controller.signal.aborted) this.#fail(error);
      return undefined;
    } finally {
      if (this.#inflight === controller) this.#inflight = undefined;
    }
  }

  /**
   * A poll answered after I is overtaken by the next one, so I bounds it: a lost call must
   * not stall the loop (the retry delay stands in for I before the first answer).
   */
  #pollBudget(): number {
    return this.#timing?.intervalMs ?? this.#retryDelayMs;
  }

  /**
   * A heartbeat's answer is worth something until sentAt + (T − I). Half that margin, but
   * at least I, bounds it: one lost call leaves time for another before the deadline, and
   * a slow start of the service (seconds) is still waited for. A renewal is bounded by the
   * time left before its deadline too.
   */
  #heartbeatBudget(): number {
    if (this.#timing === undefined) return this.#retryDelayMs;
    return Math.max(this.#timing.intervalMs, (this.#timing.timeoutMs - this.#timing.intervalMs) / 2);
  }

  /** Releases are not racing anything; T − I bounds them. */
  #releaseBudget(): number {
    return this.#timing === undefined ? this.#retryDelayMs : this.#timing.timeoutMs - this.#timing.intervalMs;
  }

  #recordRoundTrip(ms: number): void {
    this.#roundTrips.add(ms);
    if (this.#timing === undefined || this.#roundTrips.count < MIN_SAMPLES_FOR_WARNING) return;
    const margin = this.#timing.timeoutMs - this.#timing.intervalMs;
    const p99 = this.#roundTrips.percentile(99) ?? 0;
    if (p99 > margin / 10) {
      if (!this.#slowWarned) this.#report(new SlowRoundTripWarning(p99, margin));
      this.#slowWarned = true;
    } else {
      this.#slowWarned = false;
    }
  }

  #fail(error: unknown): void {
    this.#failures += 1;
    this.#report(asError(error));
  }

  #report(error: Error): void {
    if (this.#listeners.count("error") > 0) void this.#listeners.emit("error", error);
  }

  #clearTimer(which: "loop" | "deadline"): void {
    const handle = which === "loop" ? this.#loopTimer : this.#deadlineTimer;
    if (handle !== undefined) this.#clock.clearTimeout(handle);
    if (which === "loop") this.#loopTimer = undefined;
    else this.#deadlineTimer = undefined;
  }
}

/** The view shows `uuid` as the live, unrevoked holder at `epoch`. */
function namesHolder(view: LeaseView, uuid: string, epoch: number): boolean {
  return view.primary !== null && view.primary.uuid === uuid && view.primary.epoch === epoch && !view.primary.revoked;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
