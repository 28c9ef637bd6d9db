import type { TermRecord } from "../../../shared/lease/term-record.js";
import type { LeaseRecord, LeaseState } from "../../../shared/lease/lease.js";
import type { CreateAlso, LeaseRenewal, LeaseStore, ReplaceAlso, StandbyRecord } from "../../../shared/lease/lease-store.js";
import type { StoreCallOptions, WriteOutcome } from "../../../shared/service/store-call.js";
import { MemoryLeaseStore, type MemoryLeaseSnapshot } from "../../../shared/store/memory-store.js";

/** The store as it was at `at`: what a rollback goes back to. */
export interface StoreCopy {
  readonly at: number;
  readonly state: MemoryLeaseSnapshot;
}

/** The store came back without the writes made after `to` (a geo failover, a restore from backup). */
export interface StoreRollback {
  /** When the store came back. */
  readonly at: number;
  /** The time of the copy it came back as. */
  readonly to: number;
  /** How many writes `writes` held then: the ones before it happened before the rollback. */
  readonly afterWrites: number;
}

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
  /**
   * The terms a rollback erased while they were the store's current term: their holders may
   * believe on until their next answered renewal, which must refuse them.
   */
  readonly erasedTerms: { readonly utype: string; readonly uuid: string; readonly epoch: number; readonly at: number }[] = [];
  readonly rollbacks: StoreRollback[] = [];
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

  /** A copy of the store now (entries, history, standbys), for a later rollBack. */
  copy(): StoreCopy {
    return { at: this.now(), state: this.#inner.snapshot() };
  }

  /** The store comes back as `copy` found it: every write since is forgotten (its ETags are never issued again). */
  rollBack(copy: StoreCopy): void {
    const at = this.now();
    for (const [utype, before] of this.#current) {
      const after = copy.state.entries.get(utype);
      if (before.uuid !== "" && (after === undefined || after.uuid !== before.uuid || after.epoch !== before.epoch)) {
        this.erasedTerms.push({ utype, uuid: before.uuid, epoch: before.epoch, at });
      }
    }
    this.#inner.restore(copy.state);
    this.#current.clear();
    for (const [utype, entry] of copy.state.entries) this.#current.set(utype, { ...entry });
    this.rollbacks.push({ at, to: copy.at, afterWrites: this.writes.length });
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
