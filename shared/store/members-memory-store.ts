import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import type { DeleteOutcome, GroupSnapshot, MemberAndMarker, MemberRenewal, MemberStore } from "../members/member-store.js";
import type { MemberRecord, MemberRow, SweepMarker, SweepMarkerRecord } from "../members/member.js";

interface Partition {
  readonly rows: Map<string, MemberRecord>;
  marker: SweepMarkerRecord | undefined;
}

/**
 * Membership in process memory, for unit tests and the simulation. Every write gets a new
 * ETag, and records are copied in and out, so a caller can never change what is stored.
 */
export class MemoryMemberStore implements MemberStore {
  readonly kind = "memory";
  readonly #groups = new Map<string, Partition>();
  #version = 0;

  async read(group: string, member: string, options?: StoreCallOptions): Promise<MemberAndMarker> {
    throwIfAborted(options);
    const partition = this.#groups.get(group);
    const row = partition?.rows.get(member);
    return { row: row === undefined ? undefined : copyRow(row), marker: copyMarker(partition?.marker) };
  }

  async listGroup(group: string, options?: StoreCallOptions): Promise<GroupSnapshot> {
    throwIfAborted(options);
    return this.#snapshot(group, this.#groups.get(group));
  }

  async listAll(options?: StoreCallOptions): Promise<GroupSnapshot[]> {
    throwIfAborted(options);
    return [...this.#groups.entries()]
      .filter(([, partition]) => partition.rows.size > 0 || partition.marker !== undefined)
      .map(([group, partition]) => this.#snapshot(group, partition));
  }

  async create(row: MemberRow, options?: StoreCallOptions): Promise<WriteOutcome> {
    throwIfAborted(options);
    if (this.#partition(row.group).rows.has(row.member)) return { ok: false, reason: "exists" };
    return this.#put(row);
  }

  async replace(row: MemberRow, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    throwIfAborted(options);
    const current = this.#groups.get(row.group)?.rows.get(row.member);
    if (current === undefined) return { ok: false, reason: "missing" };
    if (current.etag !== etag) return { ok: false, reason: "changed" };
    return this.#put(row);
  }

  async renew(group: string, member: string, renewal: MemberRenewal, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    throwIfAborted(options);
    const current = this.#groups.get(group)?.rows.get(member);
    if (current === undefined) return { ok: false, reason: "missing" };
    if (current.etag !== etag) return { ok: false, reason: "changed" };
    const address = renewal.address === undefined ? current.address : renewal.address;
    return this.#put({ ...current, renewedAt: renewal.renewedAt, heartbeats: renewal.heartbeats, address });
  }

  async delete(group: string, member: string, etag: string, options?: StoreCallOptions): Promise<DeleteOutcome> {
    throwIfAborted(options);
    const rows = this.#groups.get(group)?.rows;
    const current = rows?.get(member);
    if (current === undefined) return { ok: false, reason: "missing" };
    if (current.etag !== etag) return { ok: false, reason: "changed" };
    rows?.delete(member);
    return { ok: true };
  }

  async writeMarker(marker: SweepMarker, etag: string | undefined, options?: StoreCallOptions): Promise<WriteOutcome> {
    throwIfAborted(options);
    const partition = this.#partition(marker.group);
    if (etag === undefined && partition.marker !== undefined) return { ok: false, reason: "exists" };
    if (etag !== undefined && partition.marker === undefined) return { ok: false, reason: "missing" };
    if (etag !== undefined && partition.marker?.etag !== etag) return { ok: false, reason: "changed" };
    const written = this.#nextEtag();
    partition.marker = { ...copyMarker(marker)!, etag: written };
    return { ok: true, etag: written };
  }

  #put(row: MemberRow): WriteOutcome {
    const etag = this.#nextEtag();
    const { group, member, session, address, joinedAt, renewedAt, heartbeats, leftAt, previous, endedSessions } = row;
    this.#partition(group).rows.set(member, copyRow({ group, member, session, address, joinedAt, renewedAt, heartbeats, leftAt, previous, endedSessions, etag }));
    return { ok: true, etag };
  }

  #snapshot(group: string, partition: Partition | undefined): GroupSnapshot {
    return { group, rows: [...(partition?.rows.values() ?? [])].map(copyRow), marker: copyMarker(partition?.marker) };
  }

  #partition(group: string): Partition {
    let partition = this.#groups.get(group);
    if (partition === undefined) {
      partition = { rows: new Map(), marker: undefined };
      this.#groups.set(group, partition);
    }
    return partition;
  }

  #nextEtag(): string {
    this.#version += 1;
    return `W/"${this.#version}"`;
  }
}

function copyRow(row: MemberRecord): MemberRecord {
  return { ...row, previous: row.previous === null ? null : { ...row.previous }, endedSessions: [...row.endedSessions] };
}

function copyMarker<M extends SweepMarker>(marker: M | undefined): M | undefined {
  if (marker === undefined) return undefined;
  return { ...marker, gap: marker.gap === null ? null : { ...marker.gap }, removedSessions: [...marker.removedSessions] };
}

function throwIfAborted(options: StoreCallOptions | undefined): void {
  if (options?.abortSignal?.aborted) {
    throw new StoreUnavailableError("The store call was aborted.", { cause: options.abortSignal.reason });
  }
}
