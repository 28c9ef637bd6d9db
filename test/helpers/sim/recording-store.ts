import type { TermRecord } from "../../../shared/lease/term-record.js";
import type { LeaseRecord, LeaseState } from "../../../shared/lease/lease.js";
import type { CreateAlso, LeaseRenewal, LeaseStore, ReplaceAlso, StandbyRecord } from "../../../shared/lease/lease-store.js";
import type { StoreCallOptions, WriteOutcome } from "../../../shared/service/store-call.js";
import { MemoryLeaseStore } from "../../../shared/store/memory-store.js";

/** One write the store made: the entry just before and just after it. */
export interface StoreWrite {
  readonly at: number;
  readonly method: "create" | "replace" | "renew";
  readonly before: LeaseRecord | undefined;
  readonly after: LeaseRecord;
}

/**
 * The store as the checker sees it: the real MemoryLeaseStore, with every write it made
 * logged (before and after) and its current entries readable synchronously. The checker
 * reads the truth here, under every fault and planted bug, never through the system.
 *
 * MemoryLeaseStore's methods do their work synchronously when called (they never await),
 * so a read issued right before and right after a write sees exactly the state around it,
 * whatever other calls are in flight.
 */
export class RecordingStore implements LeaseStore {
  readonly kind = "memory";
  readonly writes: StoreWrite[] = [];
  /** The terms whose entry was deleted behind the service: their holders may believe on until their deadline. */
  readonly deletedTerms: { readonly uuid: string; readonly epoch: number }[] = [];
  readonly #inner = new MemoryLeaseStore();
  readonly #current = new Map<string, LeaseRecord>();

  constructor(private readonly now: () => number) {}

  /** The entry as it is now: the checker's truth. */
  current(utype: string): LeaseRecord | undefined {
    return this.#current.get(utype);
  }

  /** Deletes the entry as an operator would, behind the service; the history stays. */
  deleteEntry(utype: string): void {
    const entry = this.#current.get(utype);
    if (entry !== undefined) this.deletedTerms.push({ uuid: entry.uuid, epoch: entry.epoch });
    this.#inner.deleteEntry(utype);
    this.#current.delete(utype);
  }

  read(utype: string, _options?: StoreCallOptions): Promise<LeaseRecord | undefined> {
    return this.#inner.read(utype);
  }

  create(lease: LeaseState, _options?: StoreCallOptions, also?: CreateAlso): Promise<WriteOutcome> {
    return this.#write("create", lease.utype, () => this.#inner.create(lease, undefined, also));
  }

  replace(lease: LeaseState, etag: string, _options?: StoreCallOptions, also?: ReplaceAlso): Promise<WriteOutcome> {
    return this.#write("replace", lease.utype, () => this.#inner.replace(lease, etag, undefined, also));
  }

  renew(utype: string, renewal: LeaseRenewal, etag: string, _options?: StoreCallOptions): Promise<WriteOutcome> {
    return this.#write("renew", utype, () => this.#inner.renew(utype, renewal, etag));
  }

  list(_options?: StoreCallOptions): Promise<LeaseRecord[]> {
    return this.#inner.list();
  }

  ping(_options?: StoreCallOptions): Promise<void> {
    return this.#inner.ping();
  }

  readTerms(utype: string, _options?: StoreCallOptions): Promise<TermRecord[]> {
    return this.#inner.readTerms(utype);
  }

  upsertStandby(standby: StandbyRecord, _options?: StoreCallOptions): Promise<void> {
    return this.#inner.upsertStandby(standby);
  }

  readStandbys(utype: string, _options?: StoreCallOptions): Promise<StandbyRecord[]> {
    return this.#inner.readStandbys(utype);
  }

  listStandbys(_options?: StoreCallOptions): Promise<StandbyRecord[]> {
    return this.#inner.listStandbys();
  }

  deleteStandby(utype: string, uuid: string, _options?: StoreCallOptions): Promise<void> {
    return this.#inner.deleteStandby(utype, uuid);
  }

  async #write(method: StoreWrite["method"], utype: string, write: () => Promise<WriteOutcome>): Promise<WriteOutcome> {
    const at = this.now();
    const [before, outcome, after] = await Promise.all([this.#inner.read(utype), write(), this.#inner.read(utype)]);
    if (outcome.ok && after !== undefined) {
      this.writes.push({ at, method, before, after });
      this.#current.set(utype, after);
    }
    return outcome;
  }
}
