import type { TermRecord } from "../../../shared/lease/term-record.js";
import type { LeaseRecord, LeaseState } from "../../../shared/lease/lease.js";
import type { CreateAlso, LeaseRenewal, LeaseStore, ReplaceAlso, StandbyRecord } from "../../../shared/lease/lease-store.js";
import type { StoreCallOptions, WriteOutcome } from "../../../shared/service/store-call.js";
import { StoreUnavailableError } from "../../../shared/service/store-unavailable-error.js";
import type { SimProcess } from "./process.js";
import type { Prng } from "./prng.js";
import type { StoreFaults } from "./scenario.js";
import type { SimStats } from "./stats.js";
import type { SimWorld } from "./world.js";

export type Outage = "fail" | "hang" | undefined;

/** The store as the network between it and the function instances makes it look. */
export interface StoreWeather {
  faults(): StoreFaults;
  outage(): Outage;
}

/**
 * One request's link from a function instance to the store (one LeaseService per request
 * is the same as one per instance: the service keeps nothing between requests; this way
 * each link knows when its request's budget ends).
 *
 * Every call travels 0..maxLatencyMs each way, as its own event. A write may reach the
 * store and lose its answer (ambiguous: 503 although it wrote), or time out before it
 * reaches the store (503, nothing written). During an outage every call fails at once or
 * hangs until the request's budget runs out. A call still running when the budget ends is
 * answered 503 then, as the real abort signal would, but its write, if it was on its way,
 * still lands: "a write started in time can land up to one store round trip later".
 *
 * The service's abort signals run on real time, so they are not passed on: simulated
 * time alone decides, and a run replays exactly.
 */
export class FaultyStoreLink implements LeaseStore {
  readonly kind = "memory";

  constructor(
    private readonly world: SimWorld,
    private readonly rng: Prng,
    private readonly target: LeaseStore,
    private readonly weather: StoreWeather,
    /** The instance serving the request: answers are delivered into it (not while frozen). */
    private readonly instance: SimProcess,
    /** Simulated time at which this request's budget runs out. */
    private readonly budgetEndsAt: number,
    private readonly stats: SimStats,
  ) {}

  read(utype: string): Promise<LeaseRecord | undefined> {
    return this.#call(false, () => this.target.read(utype));
  }

  create(lease: LeaseState, _options?: StoreCallOptions, also?: CreateAlso): Promise<WriteOutcome> {
    return this.#call(true, () => this.target.create(lease, undefined, also));
  }

  replace(lease: LeaseState, etag: string, _options?: StoreCallOptions, also?: ReplaceAlso): Promise<WriteOutcome> {
    return this.#call(true, () => this.target.replace(lease, etag, undefined, also));
  }

  renew(utype: string, renewal: LeaseRenewal, etag: string): Promise<WriteOutcome> {
    return this.#call(true, () => this.target.renew(utype, renewal, etag));
  }

  list(): Promise<LeaseRecord[]> {
    return this.#call(false, () => this.target.list());
  }

  ping(): Promise<void> {
    return this.#call(false, () => this.target.ping());
  }

  readTerms(utype: string): Promise<TermRecord[]> {
    return this.#call(false, () => this.target.readTerms(utype));
  }

  upsertStandby(standby: StandbyRecord): Promise<void> {
    return this.#call(true, () => this.target.upsertStandby(standby));
  }

  readStandbys(utype: string): Promise<StandbyRecord[]> {
    return this.#call(false, () => this.target.readStandbys(utype));
  }

  listStandbys(): Promise<StandbyRecord[]> {
    return this.#call(false, () => this.target.listStandbys());
  }

  deleteStandby(utype: string, uuid: string): Promise<void> {
    return this.#call(true, () => this.target.deleteStandby(utype, uuid));
  }

  #call<T>(write: boolean, perform: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      const answer = (settle: () => void): void => {
        this.instance.post(() => {
          if (answered) return;
          answered = true;
          settle();
        });
      };
      const unavailable = (why: string): (() => void) => () => reject(new StoreUnavailableError(`simulated store: ${why}`));
      const outage = this.weather.outage();
      const { maxLatencyMs, ambiguousRate, lostBeforeStoreRate } = this.weather.faults();
      const there = this.rng.int(0, maxLatencyMs);
      const back = this.rng.int(0, maxLatencyMs);
      const now = this.world.now;
      // A call that would outlast the request's budget is cut off then: the abort signal's 503.
      if (outage === "hang" || now + there + back > this.budgetEndsAt) {
        this.world.schedule(Math.max(now, this.budgetEndsAt), () => answer(unavailable("the request's budget ran out")));
      }
      if (outage === "hang") {
        this.stats.count(write ? "outageHungWrites" : "outageHungReads");
        return;
      }
      if (outage === "fail") {
        this.stats.count("outageFailedCalls");
        this.world.schedule(now + there, () => answer(unavailable("outage")));
        return;
      }
      if (write && this.rng.chance(lostBeforeStoreRate)) {
        this.stats.count("writesLostBeforeStore");
        this.world.schedule(now + there, () => answer(unavailable("the write timed out before reaching the store")));
        return;
      }
      const ambiguous = write && this.rng.chance(ambiguousRate);
      this.world.schedule(now + there, () => {
        perform().then(
          (value) => {
            if (ambiguous) this.stats.count("ambiguousWrites");
            this.world.schedule(this.world.now + back, () => answer(ambiguous ? unavailable("the answer was lost") : () => resolve(value)));
          },
          (error: unknown) => this.world.schedule(this.world.now + back, () => answer(() => reject(error))),
        );
      });
    });
  }
}
