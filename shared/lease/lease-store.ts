import type { LeaseRecord, LeaseState } from "./lease.js";
import type { TermRecord } from "./term-record.js";
import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";

/**
 * A participant that asked for a held role and announced itself (docs/protocol.md#standbys):
 * one row per uuid in the role's partition, beside the entry, never contending with it.
 */
export interface StandbyRecord {
  readonly utype: string;
  readonly uuid: string;
  readonly address: string | null;
  /** ha_time of its last announcement. */
  readonly seenAt: number;
  /** Its priority as its last announcement stated it; absent: 0 (never written as 0). */
  readonly priority?: number;
}

/**
 * The fields a fast-path renewal writes; holder, epoch, revoked and the ended list stay as
 * they are. An absent `address` is not written (the stored one stays); null clears it.
 */
export interface LeaseRenewal {
  readonly renewedAt: number;
  readonly address?: string | null;
}

/**
 * What a replace writes beside the entry, in the same transaction: the term the replace
 * ends (a takeover's or a release's), upserted into the role's ring at slot
 * `termSlot(term.epoch)`, replacing whatever that slot held (the term N epochs older).
 */
export interface ReplaceAlso {
  readonly endedTerm?: TermRecord;
}

/**
 * What a create writes beside the entry, in the same transaction (the role's partition).
 * At most one of the two.
 */
export interface CreateAlso {
  /**
   * The mark of a role's creation (roleCreated), inserted with the role's first entry. When
   * the role's history already has a row in the mark's slot (slot 0: the role was created
   * before, and its entry deleted since), the create fails as `exists` and writes nothing:
   * a decision that the role was never held, made before another request created the role
   * and someone deleted its entry, can never start epoch 1 again.
   */
  readonly creationMark?: TermRecord;
  /** A row upserted with the entry, as a replace's ended term is: a fence's own term (missingEntryFence). */
  readonly term?: TermRecord;
}

/**
 * The narrow interface every lease store implements. Only store adapters touch storage,
 * and every update names its ETag explicitly: there is no unconditional write.
 *
 * Anything other than a typed outcome (unreachable, throttled, 5xx, timeout, abort) is
 * thrown as a `StoreUnavailableError`.
 */
export interface LeaseStore {
  /** A short name for logs and the health endpoint: "table", "cosmos", "memory". */
  readonly kind: string;
  /**
   * Point read of one utype's entry; undefined when none was ever written. An entry written
   * before `revoked` and `endedUuids` existed reads as not revoked, with no ended uuids.
   */
  read(utype: string, options?: StoreCallOptions): Promise<LeaseRecord | undefined>;
  /**
   * Writes the entry only if none exists for its utype (and, with `also.creationMark`, only
   * if the mark's slot of its history is empty). The history row of `also` is written in
   * the same transaction: both are written, or, when either condition fails (`exists`) or
   * the store fails, neither. One store operation either way.
   */
  create(lease: LeaseState, options?: StoreCallOptions, also?: CreateAlso): Promise<WriteOutcome>;
  /**
   * Replaces the whole entry only if its ETag is still `etag`. With `also.endedTerm`, the
   * ring row of that term is written in the same transaction (the entry and the ring share
   * the role's partition): both are written, or, when the ETag moved on or the store fails,
   * neither. One store operation either way, so the history has no gap.
   */
  replace(lease: LeaseState, etag: string, options?: StoreCallOptions, also?: ReplaceAlso): Promise<WriteOutcome>;
  /** Merges `renewedAt` (and `address`, when given) into the entry only if its ETag is still `etag`. */
  renew(
    utype: string,
    renewal: LeaseRenewal,
    etag: string,
    options?: StoreCallOptions,
  ): Promise<WriteOutcome>;
  /** Every entry, for name resolving across roles (not a hot path). */
  list(options?: StoreCallOptions): Promise<LeaseRecord[]>;
  /** Resolves when the store answers; throws StoreUnavailableError when it does not. */
  ping(options?: StoreCallOptions): Promise<void>;
  /** Every row of the role's ring (at most TERM_HISTORY_SLOTS), in no particular order: one partition read. */
  readTerms(utype: string, options?: StoreCallOptions): Promise<TermRecord[]>;
  /** Writes the standby's row whatever it held (unconditional: only its own uuid writes it). */
  upsertStandby(standby: StandbyRecord, options?: StoreCallOptions): Promise<void>;
  /** The role's standby rows, stale ones too (the service filters by age): one partition read. */
  readStandbys(utype: string, options?: StoreCallOptions): Promise<StandbyRecord[]>;
  /** Every role's standby rows (the list with `?standbys=true`; not a hot path). */
  listStandbys(options?: StoreCallOptions): Promise<StandbyRecord[]>;
  /** Deletes the standby's row; none is fine. */
  deleteStandby(utype: string, uuid: string, options?: StoreCallOptions): Promise<void>;
}
