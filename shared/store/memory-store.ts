import type { LeaseRecord, LeaseState } from "../lease/lease.js";
import type {
  LeaseRenewal,
  LeaseStore,
  StoreCallOptions,
  WriteOutcome,
} from "../lease/lease-store.js";
import { StoreUnavailableError } from "../lease/store-unavailable-error.js";

/**
 * An in-process store for unit tests and simulation. Every write gets a new ETag, and
 * records are copied in and out so that callers can never mutate what is stored.
 */
export class MemoryLeaseStore implements LeaseStore {
  readonly kind = "memory";
  readonly #entries = new Map<string, LeaseRecord>();
  #version = 0;

  async read(utype: string, options?: StoreCallOptions): Promise<LeaseRecord | undefined> {
    throwIfAborted(options);
    const entry = this.#entries.get(utype);
    return entry === undefined ? undefined : { ...entry, endedUuids: [...entry.endedUuids] };
  }

  async create(lease: LeaseState, options?: StoreCallOptions): Promise<WriteOutcome> {
    throwIfAborted(options);
    if (this.#entries.has(lease.utype)) return { ok: false, reason: "exists" };
    return this.#write(lease);
  }

  async replace(lease: LeaseState, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    throwIfAborted(options);
    const current = this.#entries.get(lease.utype);
    if (current === undefined) return { ok: false, reason: "missing" };
    if (current.etag !== etag) return { ok: false, reason: "changed" };
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

  #write(lease: LeaseState): WriteOutcome {
    this.#version += 1;
    const etag = `W/"${this.#version}"`;
    const { utype, uuid, address, epoch, renewedAt, revoked, endedUuids } = lease;
    this.#entries.set(utype, { utype, uuid, address, epoch, renewedAt, revoked, endedUuids: [...endedUuids], etag });
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
