import type { WriteOutcome } from "../../../../shared/service/store-call.js";
import type { DeleteOutcome, GroupSnapshot, MemberAndMarker, MemberRenewal, MemberStore } from "../../../../shared/members/member-store.js";
import type { MemberRow, SweepMarker } from "../../../../shared/members/member.js";
import { MemoryMemberStore } from "../../../../shared/store/members-memory-store.js";

/** The last heartbeat of a session that landed in the store. */
export interface SessionWrite {
  /** renewedAt as written: the ha_time of the instance that wrote it. */
  readonly renewedAt: number;
  /** Simulated time at which it landed. */
  readonly at: number;
}

/**
 * The member store as the checker sees it: the real MemoryMemberStore, with the last
 * heartbeat of every session that landed, every marker the sweeper wrote, and every row
 * it deleted. MemoryMemberStore does its work synchronously when a method is called, so a
 * read issued right after a write sees exactly what the write left.
 */
export class RecordingMemberStore implements MemberStore {
  readonly kind = "memory";
  readonly #inner = new MemoryMemberStore();
  readonly lastWrite = new Map<string, SessionWrite>();
  readonly markers: { readonly at: number; readonly marker: SweepMarker }[] = [];
  readonly deleted: { readonly at: number; readonly session: string }[] = [];

  constructor(private readonly now: () => number) {}

  read(group: string, member: string): Promise<MemberAndMarker> {
    return this.#inner.read(group, member);
  }

  listGroup(group: string): Promise<GroupSnapshot> {
    return this.#inner.listGroup(group);
  }

  listAll(): Promise<GroupSnapshot[]> {
    return this.#inner.listAll();
  }

  create(row: MemberRow): Promise<WriteOutcome> {
    return this.#heartbeat(row.group, row.member, this.#inner.create(row));
  }

  replace(row: MemberRow, etag: string): Promise<WriteOutcome> {
    return this.#heartbeat(row.group, row.member, this.#inner.replace(row, etag));
  }

  renew(group: string, member: string, renewal: MemberRenewal, etag: string): Promise<WriteOutcome> {
    return this.#heartbeat(group, member, this.#inner.renew(group, member, renewal, etag));
  }

  delete(group: string, member: string, etag: string): Promise<DeleteOutcome> {
    const at = this.now();
    const before = this.#inner.read(group, member);
    const outcome = this.#inner.delete(group, member, etag);
    return Promise.all([before, outcome]).then(([{ row }, deleted]) => {
      if (deleted.ok && row !== undefined) this.deleted.push({ at, session: row.session });
      return deleted;
    });
  }

  writeMarker(marker: SweepMarker, etag: string | undefined): Promise<WriteOutcome> {
    const at = this.now();
    return this.#inner.writeMarker(marker, etag).then((written) => {
      if (written.ok) this.markers.push({ at, marker });
      return written;
    });
  }

  /** A write that may have renewed a session: what it left is read at once, synchronously underneath. */
  #heartbeat(group: string, member: string, outcome: Promise<WriteOutcome>): Promise<WriteOutcome> {
    const at = this.now();
    const after = this.#inner.read(group, member);
    return Promise.all([outcome, after]).then(([written, { row }]) => {
      if (written.ok && row !== undefined) this.lastWrite.set(row.session, { renewedAt: row.renewedAt, at });
      return written;
    });
  }
}
