import type { LeaseRecord, LeaseState } from "../lease/lease.js";
import type { CreateAlso, StandbyRecord, LeaseRenewal, LeaseStore, ReplaceAlso } from "../lease/lease-store.js";
import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import { termSlot, type TermRecord } from "../lease/term-record.js";
import type { TokenSecretStore } from "../service/token-keys.js";

/** What MemoryLeaseStore.snapshot() copies: the store's state at one instant. */
export interface MemoryLeaseSnapshot {
  readonly entries: ReadonlyMap<string, LeaseRecord>;
  readonly terms: ReadonlyMap<string, ReadonlyMap<number, TermRecord>>;
  readonly standbys: ReadonlyMap<string, ReadonlyMap<string, StandbyRecord>>;
}

/**
 * An in-process store for unit tests and simulation. Every write gets a new ETag, and
 * records are copied in and out so that callers can never mutate what is stored.
 */
export class MemoryLeaseStore implements LeaseStore, TokenSecretStore {
  readonly kind = "memory";
  readonly #entries = new Map<string, LeaseRecord>();
  /** Per utype, its ring of ended terms by slot. */
  readonly #terms = new Map<string, Map<number, TermRecord>>();
  /** Per utype, its standbys by uuid. */
  readonly #standbys = new Map<string, Map<string, StandbyRecord>>();
  #version = 0;
  #tokenSecret: string | undefined;

  async read(utype: string, options?: StoreCallOptions): Promise<LeaseRecord | undefined> {
    throwIfAborted(options);
    const entry = this.#entries.get(utype);
    return entry === undefined ? undefined : { ...entry, endedUuids: [...entry.endedUuids] };
  }

  /** Checks, then writes the entry and the history row with no await between: atomic, as the port demands. */
  async create(lease: LeaseState, options?: StoreCallOptions, also?: CreateAlso): Promise<WriteOutcome> {
    throwIfAborted(options);
    if (this.#entries.has(lease.utype)) return { ok: false, reason: "exists" };
    const mark = also?.creationMark;
    if (mark !== undefined && this.#terms.get(mark.utype)?.has(termSlot(mark.epoch)) === true) return { ok: false, reason: "exists" };
    const row = mark ?? also?.term;
    if (row !== undefined) this.#recordTerm(row);
    return this.#write(lease);
  }

  /** Checks, then writes the entry and the ended term with no await between: atomic, as the port demands. */
  async replace(lease: LeaseState, etag: string, options?: StoreCallOptions, also?: ReplaceAlso): Promise<WriteOutcome> {
    throwIfAborted(options);
    const current = this.#entries.get(lease.utype);
    if (current === undefined) return { ok: false, reason: "missing" };
    if (current.etag !== etag) return { ok: false, reason: "changed" };
    if (also?.endedTerm !== undefined) this.#recordTerm(also.endedTerm);
    return this.#write(lease);
  }

  async renew(
    utype: string,
    renewal: LeaseRenewal,
    etag: string,
    options?: StoreCallOptions,
  ): Promise<WriteOutcome> {
    throwIfAborted(options);
    const current = this.#entries.get(utype);
    if (current === undefined) return { ok: false, reason: "missing" };
    if (current.etag !== etag) return { ok: false, reason: "changed" };
    const address = renewal.address === undefined ? current.address : renewal.address;
    return this.#write({ ...current, renewedAt: renewal.renewedAt, address });
  }

  async list(options?: StoreCallOptions): Promise<LeaseRecord[]> {
    throwIfAborted(options);
    return [...this.#entries.values()].map((entry) => ({ ...entry, endedUuids: [...entry.endedUuids] }));
  }

  async ping(options?: StoreCallOptions): Promise<void> {
    throwIfAborted(options);
  }

  /** The first candidate offered is kept. */
  async tokenSecret(candidate: string, options?: StoreCallOptions): Promise<string> {
    throwIfAborted(options);
    this.#tokenSecret ??= candidate;
    return this.#tokenSecret;
  }

  #recordTerm(term: TermRecord): void {
    let ring = this.#terms.get(term.utype);
    if (ring === undefined) {
      ring = new Map();
      this.#terms.set(term.utype, ring);
    }
    ring.set(termSlot(term.epoch), { ...term });
  }

  async readTerms(utype: string, options?: StoreCallOptions): Promise<TermRecord[]> {
    throwIfAborted(options);
    return [...(this.#terms.get(utype)?.values() ?? [])].map((term) => ({ ...term }));
  }

  async upsertStandby(standby: StandbyRecord, options?: StoreCallOptions): Promise<void> {
    throwIfAborted(options);
    let role = this.#standbys.get(standby.utype);
    if (role === undefined) {
      role = new Map();
      this.#standbys.set(standby.utype, role);
    }
    role.set(standby.uuid, { ...standby });
  }

  async readStandbys(utype: string, options?: StoreCallOptions): Promise<StandbyRecord[]> {
    throwIfAborted(options);
    return [...(this.#standbys.get(utype)?.values() ?? [])].map((standby) => ({ ...standby }));
  }

  async listStandbys(options?: StoreCallOptions): Promise<StandbyRecord[]> {
    throwIfAborted(options);
    return [...this.#standbys.values()].flatMap((role) => [...role.values()].map((standby) => ({ ...standby })));
  }

  async deleteStandby(utype: string, uuid: string, options?: StoreCallOptions): Promise<void> {
    throwIfAborted(options);
    this.#standbys.get(utype)?.delete(uuid);
  }

  /**
   * Deletes a role's entry behind the service, as an operator or a script deleting its row
   * would (its term history stays): for tests and the simulation, never the service.
   */
  deleteEntry(utype: string): void {
    this.#entries.delete(utype);
  }

  /**
   * Writes one history row by itself, as versions before the rows were written with their
   * entry did (the creation mark before the entry, ended terms after it): for tests of
   * histories those versions left, never the service.
   */
  recordTermAlone(term: TermRecord): void {
    this.#recordTerm(term);
  }

  /**
   * A copy of everything stored now: entries, history rings and standbys (not the token
   * secret, which a real store keeps apart). With restore(), the store can come back
   * without its last writes, as a geo failover or a restore from backup brings an Azure
   * store back (docs/design/epochs.md): for the tests and the simulation of such a loss.
   */
  snapshot(): MemoryLeaseSnapshot {
    return {
      entries: new Map([...this.#entries].map(([utype, entry]) => [utype, { ...entry, endedUuids: [...entry.endedUuids] }])),
      terms: new Map([...this.#terms].map(([utype, ring]) => [utype, new Map([...ring].map(([slot, term]) => [slot, { ...term }]))])),
      standbys: new Map([...this.#standbys].map(([utype, rows]) => [utype, new Map([...rows].map(([uuid, row]) => [uuid, { ...row }]))])),
    };
  }

  /**
   * Puts the store back as `snapshot` found it: every write since is forgotten. ETags are
   * not reused (the version counter goes on), as an Azure store's never are: a token issued
   * for a forgotten write never matches a restored entry.
   */
  restore(snapshot: MemoryLeaseSnapshot): void {
    const copy = (({ entries, terms, standbys }) => ({ entries, terms, standbys }))(snapshot);
    this.#entries.clear();
    for (const [utype, entry] of copy.entries) this.#entries.set(utype, { ...entry, endedUuids: [...entry.endedUuids] });
    this.#terms.clear();
    for (const [utype, ring] of copy.terms) this.#terms.set(utype, new Map([...ring].map(([slot, term]) => [slot, { ...term }])));
    this.#standbys.clear();
    for (const [utype, rows] of copy.standbys) this.#standbys.set(utype, new Map([...rows].map(([uuid, row]) => [uuid, { ...row }])));
  }

  #write(lease: LeaseState): WriteOutcome {
    this.#version += 1;
    const etag = `W/"${this.#version}"`;
    const { utype, uuid, address, epoch, renewedAt, startedAt, revoked, endedUuids, handover, priority, ranked } = lease;
    const record: LeaseRecord = {
      utype,
      uuid,
      address,
      epoch,
      renewedAt,
      revoked,
      endedUuids: [...endedUuids],
      etag,
      ...(startedAt === undefined ? {} : { startedAt }),
      ...(handover === undefined ? {} : { handover: { ...handover } }),
      ...(priority === undefined || priority === 0 ? {} : { priority }),
      ...(ranked === true ? { ranked } : {}),
    };
    this.#entries.set(utype, record);
    return { ok: true, etag };
  }
}

function throwIfAborted(options: StoreCallOptions | undefined): void {
  if (options?.abortSignal?.aborted) {
    throw new StoreUnavailableError("The store call was aborted.", {
      cause: options.abortSignal.reason,
    });
  }
}
