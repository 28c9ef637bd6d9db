import { odata, type TransactionAction } from "@azure/data-tables";
import type { LeaseRecord, LeaseState } from "../lease/lease.js";
import type { CreateAlso, StandbyRecord, LeaseRenewal, LeaseStore, ReplaceAlso } from "../lease/lease-store.js";
import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import { checkStoredTokenSecret, type TokenSecretStore } from "../service/token-keys.js";
import { termSlot, type TermRecord } from "../lease/term-record.js";
import { toLeaseRecord, toStandbyRecord } from "./lease-row.js";
import { toTermRecord } from "./term-row.js";
import { isEntityNotFound } from "./table-errors.js";
import type { StoredRow } from "./table-rest.js";
import { conditionalTableWrite, fromTableProperties, guardTableCall, int64, toTableProperties, updateIfMatch, type TableFields, type TableRow } from "./table-values.js";
import { TABLE_STORE as STORE, TableClientStore } from "./table-client-store.js";

/** Every utype has one row: PartitionKey = utype, RowKey = this constant. */
export const LEASE_ROW_KEY = "lease";
/**
 * A role's ended terms share its partition: RowKey `term-00` … `term-15`, one per ring slot
 * (`lease` sorts after them, and `list` asks for RowKey `lease` only).
 */
const TERM_ROW_PREFIX = "term-";
/** A role's standbys share its partition too: RowKey `standby-<uuid>` (after `lease`, before nothing the others read). */
const STANDBY_ROW_PREFIX = "standby-";
/** "." follows "-": RowKey ge STANDBY_ROW_PREFIX and lt this are exactly the standby rows. */
const STANDBY_ROW_END = "standby.";
/** A partition no utype can name (`~` is outside the utype charset), read by `ping`. */
const HEALTH_PARTITION = "~health";
/**
 * The token secret's row (tokenSecret): in a partition no utype can name, under a RowKey
 * that neither `list` (RowKey `lease`) nor the standby queries (`standby-…`) ask for.
 */
const SECRET_PARTITION = "~service";
const SECRET_ROW_KEY = "token-secret";

/** The entry row: endedUuids a JSON array, handover `{"to", "requestedAt", "reason"?}` as JSON (absent when none); priority absent when 0; ranked a Boolean, absent when not. */
const LEASE_FIELDS = { uuid: "text", address: "address", epoch: "int64", renewedAt: "int64", startedAt: "int64", revoked: "text", endedUuids: "json", handover: "json", priority: "int64", ranked: "text" } as const satisfies TableFields;
/** `transactional` a Boolean, absent on rows of earlier versions. */
const TERM_FIELDS = { epoch: "int64", uuid: "text", address: "address", startedAt: "int64", endedAt: "int64", endedBy: "text", transactional: "text" } as const satisfies TableFields;
/** `priority` absent when 0. */
const STANDBY_FIELDS = { uuid: "text", address: "address", seenAt: "int64", priority: "int64" } as const satisfies TableFields;

type LeaseEntity = {
  partitionKey: string;
  rowKey: string;
  [property: string]: unknown;
};

/**
 * Leases in Azure Table Storage (or Azurite), on the clients TableClientStore takes. A
 * heartbeat's calls (point reads, If-Match updates, standby upserts, queries) go through
 * `rows` (table-rest.ts); creates, transactions, deletes and the term history through the SDK.
 *
 * Every update passes its ETag explicitly: TableClient.updateEntity defaults to "*",
 * which would make a forgotten ETag a silent unconditional write.
 */
export class TableLeaseStore extends TableClientStore implements LeaseStore, TokenSecretStore {
  async read(utype: string, options?: StoreCallOptions): Promise<LeaseRecord | undefined> {
    return guard("read a lease", async () => {
      try {
        return toRecord(await this.rows.getEntity(utype, LEASE_ROW_KEY, options));
      } catch (error) {
        if (isEntityNotFound(error)) return undefined;
        throw error;
      }
    });
  }

  /**
   * With a history row, one entity-group transaction in the entry's partition: a creation
   * mark's insert then the entry's, or the entry's insert then a row's upsert. Table
   * Storage applies all or nothing, and an insert that finds its row fails the whole
   * transaction with its own 409 (`exists`).
   */
  async create(lease: LeaseState, options?: StoreCallOptions, also?: CreateAlso): Promise<WriteOutcome> {
    const batch = createTransaction(lease, also);
    if (batch === undefined) {
      return conditionalTableWrite(STORE, "create a lease", "create", () => this.client.createEntity(toEntity(lease), { abortSignal: options?.abortSignal }));
    }
    return conditionalTableWrite(STORE, "create a lease and its history row", "create", async () => {
      const response = await this.client.submitTransaction(batch.actions, { abortSignal: options?.abortSignal });
      // The SDK reads each sub-response's ETag header up to the line's end, CR included.
      return { etag: response.subResponses[batch.entryIndex]?.etag?.trim() };
    });
  }

  /**
   * With an ended term, one entity-group transaction: the entry's If-Match Replace and the
   * ring row's upsert, in the entry's partition. Table Storage applies both or neither, and a
   * failed If-Match fails the whole transaction with the operation's own 412.
   */
  async replace(lease: LeaseState, etag: string, options?: StoreCallOptions, also?: ReplaceAlso): Promise<WriteOutcome> {
    if (also?.endedTerm === undefined) return updateIfMatch(this.rows, STORE, "update a lease", toEntity(lease), "Replace", etag, options);
    const actions: TransactionAction[] = [
      ["update", toEntity(lease), "Replace", { etag }],
      ["upsert", toTermEntity(also.endedTerm), "Replace"],
    ];
    return conditionalTableWrite(STORE, "update a lease and its term history", "update", async () => {
      const response = await this.client.submitTransaction(actions, { abortSignal: options?.abortSignal });
      // The SDK reads each sub-response's ETag header up to the line's end, CR included.
      return { etag: response.subResponses[0]?.etag?.trim() };
    });
  }

  async renew(utype: string, renewal: LeaseRenewal, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    // A Merge writes only the properties it names: without `address` the stored one stays.
    const patch = {
      partitionKey: utype,
      rowKey: LEASE_ROW_KEY,
      renewedAt: int64(renewal.renewedAt),
      ...(renewal.address === undefined ? {} : { address: renewal.address ?? "" }),
    };
    return updateIfMatch(this.rows, STORE, "update a lease", patch, "Merge", etag, options);
  }

  async list(options?: StoreCallOptions): Promise<LeaseRecord[]> {
    return guard("list leases", async () => {
      const entities = await this.rows.queryEntities(odata`RowKey eq ${LEASE_ROW_KEY}`, options);
      return entities.map(toRecord);
    });
  }

  async ping(options?: StoreCallOptions): Promise<void> {
    await guard("reach the table", async () => {
      try {
        await this.rows.getEntity(HEALTH_PARTITION, LEASE_ROW_KEY, options);
      } catch (error) {
        if (!isEntityNotFound(error)) throw error;
      }
    });
  }

  /** A point read; when the row is missing, an insert (409 when another instance was first: its row is read). */
  async tokenSecret(candidate: string, options?: StoreCallOptions): Promise<string> {
    return guard("read the token secret", async () => {
      for (let tries = 0; ; tries += 1) {
        try {
          const row = await this.rows.getEntity(SECRET_PARTITION, SECRET_ROW_KEY, options);
          return checkStoredTokenSecret(row["secret"], STORE);
        } catch (error) {
          if (!isEntityNotFound(error) || tries > 0) throw error;
        }
        const created = await conditionalTableWrite(STORE, "store the token secret", "create", () =>
          this.client.createEntity({ partitionKey: SECRET_PARTITION, rowKey: SECRET_ROW_KEY, secret: candidate }, { abortSignal: options?.abortSignal }),
        );
        if (created.ok) return candidate;
      }
    });
  }

  async readTerms(utype: string, options?: StoreCallOptions): Promise<TermRecord[]> {
    return guard("read the term history", async () => {
      const terms: TermRecord[] = [];
      const entities = this.client.listEntities<Record<string, unknown>>({
        // "." follows "-": the range holds exactly the RowKeys that start with "term-".
        queryOptions: { filter: odata`PartitionKey eq ${utype} and RowKey ge ${TERM_ROW_PREFIX} and RowKey lt ${"term."}` },
        abortSignal: options?.abortSignal,
      });
      for await (const entity of entities) terms.push(toTermRecord({ utype: entity.partitionKey, ...fromTableProperties(entity, TERM_FIELDS) }, STORE));
      return terms;
    });
  }

  async upsertStandby(standby: StandbyRecord, options?: StoreCallOptions): Promise<void> {
    await guard("record a standby", async () => {
      const entity = { partitionKey: standby.utype, rowKey: `${STANDBY_ROW_PREFIX}${standby.uuid}`, ...toTableProperties(standby, STANDBY_FIELDS) };
      await this.rows.upsertEntity(entity, options);
    });
  }

  async readStandbys(utype: string, options?: StoreCallOptions): Promise<StandbyRecord[]> {
    const filter = odata`PartitionKey eq ${utype} and RowKey ge ${STANDBY_ROW_PREFIX} and RowKey lt ${STANDBY_ROW_END}`;
    return this.#standbyQuery("read the standbys", filter, options);
  }

  async listStandbys(options?: StoreCallOptions): Promise<StandbyRecord[]> {
    return this.#standbyQuery("list the standbys", odata`RowKey ge ${STANDBY_ROW_PREFIX} and RowKey lt ${STANDBY_ROW_END}`, options);
  }

  async deleteStandby(utype: string, uuid: string, options?: StoreCallOptions): Promise<void> {
    await guard("delete a standby", async () => {
      try {
        // Unconditional: the row is only ever the uuid's own announcement.
        await this.client.deleteEntity(utype, `${STANDBY_ROW_PREFIX}${uuid}`, { abortSignal: options?.abortSignal });
      } catch (error) {
        if (!isEntityNotFound(error)) throw error;
      }
    });
  }

  async #standbyQuery(what: string, filter: string, options: StoreCallOptions | undefined): Promise<StandbyRecord[]> {
    return guard(what, async () => {
      const entities = await this.rows.queryEntities(filter, options);
      return entities.map((entity) => toStandbyRecord({ utype: entity.partitionKey, ...fromTableProperties(entity, STANDBY_FIELDS) }, STORE));
    });
  }
}

/** A create's transaction with its history row (see TableLeaseStore.create), and which sub-response is the entry's; none without a row. */
function createTransaction(lease: LeaseState, also: CreateAlso | undefined): { actions: TransactionAction[]; entryIndex: number } | undefined {
  if (also?.creationMark !== undefined) {
    return {
      actions: [
        ["create", toTermEntity(also.creationMark)],
        ["create", toEntity(lease)],
      ],
      entryIndex: 1,
    };
  }
  if (also?.term !== undefined) {
    return {
      actions: [
        ["create", toEntity(lease)],
        ["upsert", toTermEntity(also.term), "Replace"],
      ],
      entryIndex: 0,
    };
  }
  return undefined;
}

function toEntity(lease: LeaseState): LeaseEntity {
  return { partitionKey: lease.utype, rowKey: LEASE_ROW_KEY, ...toTableProperties(lease, LEASE_FIELDS) };
}

/** A term's ring row, at its slot; an upsert of it replaces the slot's previous row (the term N epochs older) whole. */
function toTermEntity(term: TermRecord): TableRow {
  return { partitionKey: term.utype, rowKey: termRowKey(term.epoch), ...toTableProperties(term, TERM_FIELDS) };
}

/** `term-07`: two digits keep the slots in order as strings. */
function termRowKey(epoch: number): string {
  return `${TERM_ROW_PREFIX}${String(termSlot(epoch)).padStart(2, "0")}`;
}

/** Table Storage has no null, no arrays and returns Int64 as bigint: undone here, then validated. */
function toRecord(entity: StoredRow): LeaseRecord {
  return toLeaseRecord({ utype: entity.partitionKey, ...fromTableProperties(entity, LEASE_FIELDS), etag: entity.etag }, STORE);
}

/** Runs one store call; anything that is not a typed outcome becomes StoreUnavailableError. */
function guard<T>(what: string, call: () => Promise<T>): Promise<T> {
  return guardTableCall(STORE, what, call);
}
