import type { WriteOutcome } from "../../../../shared/service/store-call.js";
import { StoreUnavailableError } from "../../../../shared/service/store-unavailable-error.js";
import type { DeleteOutcome, GroupSnapshot, MemberAndMarker, MemberRenewal, MemberStore } from "../../../../shared/members/member-store.js";
import type { MemberRow, SweepMarker } from "../../../../shared/members/member.js";
import type { SimProcess } from "../process.js";
import type { Prng } from "../prng.js";
import type { SimWorld } from "../world.js";
import type { MemberSimStats } from "./member-stats.js";

/** The store as the network between it and a function instance makes it look. */
export interface MemberStoreWeather {
  faults(): { readonly maxLatencyMs: number; readonly ambiguousRate: number; readonly lostBeforeStoreRate: number };
  outage(): "fail" | "hang" | undefined;
}

/**
 * One request's (or one sweep's) link from a function instance to the member store, with
 * the lease simulation's fault model: each call travels 0..maxLatencyMs each way; a write
 * may land and lose its answer (ambiguous), or time out before it lands; during an outage
 * every call fails or hangs until the budget; a call past the budget is answered 503 then,
 * though a write on its way still lands. Simulated time alone decides (no real signals).
 */
export class FaultyMemberLink implements MemberStore {
  readonly kind = "memory";
  /** The group as the last listGroup through this link read it (a listing's marker, for the checker). */
  listed: GroupSnapshot | undefined;

  constructor(
    private readonly world: SimWorld,
    private readonly rng: Prng,
    private readonly target: MemberStore,
    private readonly weather: MemberStoreWeather,
    private readonly instance: SimProcess,
    private readonly budgetEndsAt: number,
    private readonly stats: MemberSimStats,
  ) {}

  read(group: string, member: string): Promise<MemberAndMarker> {
    return this.#call(false, () => this.target.read(group, member));
  }

  listGroup(group: string): Promise<GroupSnapshot> {
    return this.#call(false, () =>
      this.target.listGroup(group).then((snapshot) => {
        this.listed = snapshot;
        return snapshot;
      }),
    );
  }

  listAll(): Promise<GroupSnapshot[]> {
    return this.#call(false, () => this.target.listAll());
  }

  create(row: MemberRow): Promise<WriteOutcome> {
    return this.#call(true, () => this.target.create(row));
  }

  replace(row: MemberRow, etag: string): Promise<WriteOutcome> {
    return this.#call(true, () => this.target.replace(row, etag));
  }

  renew(group: string, member: string, renewal: MemberRenewal, etag: string): Promise<WriteOutcome> {
    return this.#call(true, () => this.target.renew(group, member, renewal, etag));
  }

  delete(group: string, member: string, etag: string): Promise<DeleteOutcome> {
    return this.#call(true, () => this.target.delete(group, member, etag));
  }

  writeMarker(marker: SweepMarker, etag: string | undefined): Promise<WriteOutcome> {
    return this.#call(true, () => this.target.writeMarker(marker, etag));
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
      if (outage === "hang" || now + there + back > this.budgetEndsAt) {
        this.world.schedule(Math.max(now, this.budgetEndsAt), () => answer(unavailable("the request's budget ran out")));
      }
      if (outage === "hang") {
        this.stats.count("storeOutageCalls");
        return;
      }
      if (outage === "fail") {
        this.stats.count("storeOutageCalls");
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
