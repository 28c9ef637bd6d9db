import type { TermRecord } from "../../../shared/lease/term-record.js";
import type { LeaseRecord, LeaseState } from "../../../shared/lease/lease.js";
import type { CreateAlso, LeaseRenewal, LeaseStore, ReplaceAlso, StandbyRecord } from "../../../shared/lease/lease-store.js";
import type { StoreCallOptions, WriteOutcome } from "../../../shared/service/store-call.js";
import type { Prng } from "./prng.js";
import type { PlantedBug } from "./scenario.js";

/**
 * A store with one planted bug, between the service and the recorded truth. It exists
 * only to prove that the checker fails when the store breaks a promise of the LeaseStore
 * port (assumption 3 of docs/protocol.md): the recorder still logs what really happened.
 */
export class PlantedStore implements LeaseStore {
  readonly kind = "memory";
  #lostWrites = 0;

  constructor(
    private readonly inner: LeaseStore,
    private readonly bug: PlantedBug,
    private readonly rng: Prng,
  ) {}

  read(utype: string, options?: StoreCallOptions): Promise<LeaseRecord | undefined> {
    return this.inner.read(utype, options);
  }

  async create(lease: LeaseState, options?: StoreCallOptions, also?: CreateAlso): Promise<WriteOutcome> {
    if (this.#loseThisWrite()) return { ok: true, etag: `W/"lost-${++this.#lostWrites}"` };
    return this.inner.create(this.#rewrite(lease), options, also);
  }

  async replace(lease: LeaseState, etag: string, options?: StoreCallOptions, also?: ReplaceAlso): Promise<WriteOutcome> {
    if (this.#loseThisWrite()) return { ok: true, etag: `W/"lost-${++this.#lostWrites}"` };
    const presented = this.bug === "replace-ignores-etag" ? ((await this.inner.read(lease.utype))?.etag ?? etag) : etag;
    return this.inner.replace(this.#rewrite(lease), presented, options, also);
  }

  async renew(utype: string, renewal: LeaseRenewal, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    if (this.#loseThisWrite()) return { ok: true, etag: `W/"lost-${++this.#lostWrites}"` };
    const presented = this.bug === "renew-ignores-etag" ? ((await this.inner.read(utype))?.etag ?? etag) : etag;
    return this.inner.renew(utype, renewal, presented, options);
  }

  list(options?: StoreCallOptions): Promise<LeaseRecord[]> {
    return this.inner.list(options);
  }

  ping(options?: StoreCallOptions): Promise<void> {
    return this.inner.ping(options);
  }

  readTerms(utype: string, options?: StoreCallOptions): Promise<TermRecord[]> {
    return this.inner.readTerms(utype, options);
  }

  upsertStandby(standby: StandbyRecord, options?: StoreCallOptions): Promise<void> {
    return this.inner.upsertStandby(standby, options);
  }

  readStandbys(utype: string, options?: StoreCallOptions): Promise<StandbyRecord[]> {
    if (this.bug === "ranking-ignores-standbys") return Promise.resolve([]);
    return this.inner.readStandbys(utype, options);
  }

  listStandbys(options?: StoreCallOptions): Promise<StandbyRecord[]> {
    return this.inner.listStandbys(options);
  }

  deleteStandby(utype: string, uuid: string, options?: StoreCallOptions): Promise<void> {
    return this.inner.deleteStandby(utype, uuid, options);
  }

  #loseThisWrite(): boolean {
    return this.bug === "acknowledges-lost-writes" && this.rng.chance(0.2);
  }

  #rewrite(lease: LeaseState): LeaseState {
    if (this.bug === "forgets-ended-uuids") return { ...lease, endedUuids: [] };
    if (this.bug === "release-resets-epoch" && lease.uuid === "") return { ...lease, epoch: 0 };
    return lease;
  }
}
