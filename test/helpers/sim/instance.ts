import { StallMonitor } from "../../../shared/service/stall-monitor.js";
import { LeaseService } from "../../../shared/lease/lease-service.js";
import type { LeaseTokenSigner } from "../../../shared/lease/lease-token.js";
import type { LeaseView } from "../../../shared/contract/lease-view.js";
import type { RequestArrival } from "../../../shared/service/request-budget.js";
import type { LeaseStore } from "../../../shared/lease/lease-store.js";
import { MemberService } from "../../../shared/members/member-service.js";
import type { MemberStore } from "../../../shared/members/member-store.js";
import type { MemberTokenSigner } from "../../../shared/members/member-token.js";
import { defaultMembershipRules } from "../../../shared/members/membership-rules.js";
import { FaultyStoreLink, type StoreWeather } from "./faulty-store.js";
import { SimProcess } from "./process.js";
import type { Prng } from "./prng.js";
import type { PlantedBug } from "./scenario.js";
import type { SimStats } from "./stats.js";
import type { SimWorld } from "./world.js";

export interface InstanceDeps {
  readonly world: SimWorld;
  readonly rng: Prng;
  readonly store: LeaseStore;
  readonly weather: StoreWeather;
  readonly timing: { readonly intervalMs: number; readonly timeoutMs: number };
  readonly storeTimeoutMs: number;
  readonly tokens: LeaseTokenSigner;
  readonly stats: SimStats;
  readonly plant: PlantedBug | undefined;
  /** The member rows participants heartbeat and watch (a fault-free store: the lease store is the one judged). */
  readonly members: { readonly store: MemberStore; readonly tokens: MemberTokenSigner };
}

/** A request that reached a restarting instance: refused at once, as a connection to a port nothing listens on. */
export class SimConnectionRefused extends Error {
  override readonly name = "SimConnectionRefused";
}

/** The instance restarted while it served the request: the answer never leaves (its write may have landed). */
export class SimAnswerLost extends Error {
  override readonly name = "SimAnswerLost";
}

/**
 * One function instance: its own ha_time (simulated time + its skew), its own process
 * (which can be frozen) with the real StallMonitor on its monotonic clock, and the real
 * LeaseService over the faulty link to the one shared store. It can be restarted (a
 * deploy): what it is serving then loses its answer, and it refuses requests until it is up.
 */
export class SimInstance {
  readonly process: SimProcess;
  readonly #monitor: StallMonitor;
  /** Bumped at each restart: a request started under an older one has lost its answer. */
  #generation = 0;
  #downUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly deps: InstanceDeps,
    readonly index: number,
    readonly skewMs: number,
  ) {
    // Only the stall monitor sets timers here; a request reaching the instance is no timer.
    this.process = new SimProcess(deps.world, 1, 1_000_000 * (index + 1), true);
    this.#monitor = new StallMonitor({ clock: this.process }).start();
  }

  /** ha_time: the only clock this instance compares with stored timestamps. */
  haTime(): number {
    return this.deps.world.now + this.skewMs;
  }

  /** Restarts now: the requests in progress lose their answers, and new ones are refused for `downForMs`. */
  restart(downForMs: number): void {
    this.#generation += 1;
    this.#downUntil = this.deps.world.now + downForMs;
  }

  /** Up again now, whatever a restart said (every fault heals). */
  up(): void {
    this.#downUntil = Number.NEGATIVE_INFINITY;
  }

  /** Handles a request that reaches this instance now (or when it resumes, if frozen). */
  serve<T>(handle: (service: LeaseService, arrival: RequestArrival, members: () => MemberService) => Promise<T>): Promise<T> {
    const { world, rng, store, weather, tokens, stats, plant } = this.deps;
    if (world.now < this.#downUntil) return Promise.reject(new SimConnectionRefused("the instance is restarting"));
    const generation = this.#generation;
    return new Promise<T>((resolveServed, rejectServed) => {
      const resolve = (value: T): void => (generation === this.#generation ? resolveServed(value) : rejectServed(new SimAnswerLost("restarted while serving")));
      const reject = (error: unknown): void => rejectServed(generation === this.#generation ? error : new SimAnswerLost("restarted while serving"));
      this.process.post(() => {
        // As the route dispatcher does: a request that sat through a freeze arrived before it.
        const reachedAt = this.process.now();
        const arrivedAt = this.#monitor.arrivalOf(reachedAt);
        if (arrivedAt < reachedAt) stats.count("requestsBackdatedByStallMonitor");
        const storeTimeoutMs = plant === "no-request-budget" ? 1e9 : this.deps.storeTimeoutMs;
        const budgetEndsAt = world.now - (reachedAt - arrivedAt) + storeTimeoutMs;
        const service = new LeaseService({
          store: new FaultyStoreLink(world, rng, store, weather, this.process, budgetEndsAt, stats),
          clock: { now: () => this.haTime() },
          // The planted bugs of a counter alone: a new term's epoch is the stored one + 1.
          ...(plant === "release-resets-epoch" || plant === "epoch-stored-plus-one" ? { epochClock: { now: () => 0 } } : {}),
          monotonic: this.process,
          timing: this.#decisionTiming(),
          tokens,
          storeTimeoutMs,
          // The simulation judges the lease, not the history: under its store faults a
          // term missing from the history is the documented outcome, not news.
          warn: () => undefined,
        });
        const members = (): MemberService =>
          new MemberService({
            store: this.deps.members.store,
            clock: { now: () => this.haTime() },
            monotonic: this.process,
            rules: defaultMembershipRules(this.deps.timing),
            tokens: this.deps.members.tokens,
            storeTimeoutMs,
          });
        handle(service, { arrivedAt }, members).then((value) => resolve(this.#toldTiming(value)), reject);
      });
    });
  }

  /** The planted service bugs judge a lease's age against another T than the one they report. */
  #decisionTiming(): { intervalMs: number; timeoutMs: number } {
    const { intervalMs, timeoutMs } = this.deps.timing;
    if (this.deps.plant === "takeover-at-t-minus-i") return { intervalMs, timeoutMs: timeoutMs - intervalMs };
    if (this.deps.plant === "never-takes-over") return { intervalMs, timeoutMs: 1000 * timeoutMs };
    return { intervalMs, timeoutMs };
  }

  #toldTiming<T>(value: T): T {
    if (this.deps.plant !== "takeover-at-t-minus-i" && this.deps.plant !== "never-takes-over") return value;
    const tell = (view: LeaseView): LeaseView => ({ ...view, timeoutMs: this.deps.timing.timeoutMs });
    const result = value as { view?: LeaseView };
    if (result.view !== undefined) return { ...result, view: tell(result.view) } as T;
    return tell(value as LeaseView) as T;
  }
}

