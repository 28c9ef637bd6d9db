import type { Container, IndexingPolicy, ItemDefinition, OperationInput, PatchOperation, RequestOptions } from "@azure/cosmos";
import type { LeaseRecord, LeaseState } from "../lease/lease.js";
import type { CreateAlso, StandbyRecord, LeaseRenewal, LeaseStore, ReplaceAlso } from "../lease/lease-store.js";
import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import { checkStoredTokenSecret, type TokenSecretStore } from "../service/token-keys.js";
import { termSlot, type TermRecord } from "../lease/term-record.js";
import { toTermRecord } from "./term-row.js";
import { CosmosContainerStore, ifMatch, toCosmosItem, type CosmosCallOptions } from "./cosmos-call.js";
import { batchOutcome, conditionalCosmosWrite, statusOf, throwIfOwnerMissing } from "./cosmos-errors.js";
import { toLeaseRecord, toStandbyRecord } from "./lease-row.js";

const STORE = "Cosmos DB";

/** The container's partition key path: one logical partition per utype. */
export const LEASE_PARTITION_KEY_PATH = "/utype";

/**
 * Every path is excluded from the index: the store only does point reads and writes by
 * id and partition key, which never use the index, and an unindexed write costs the
 * fewest RUs. `list()` reads the feed, which needs no index either.
 */
export const LEASE_INDEXING_POLICY: IndexingPolicy = {
  indexingMode: "consistent",
  automatic: true,
  includedPaths: [],
  excludedPaths: [{ path: "/*" }],
};

/** An id no utype can name (`~` is outside the utype charset), point-read by `ping`. */
const HEALTH_ID = "~health";
/**
 * The token secret's item (tokenSecret), in a partition no utype can name. Its id is not
 * its partition key, so `list` (lease items: id = utype) never takes it for a lease, and
 * it is no standby (`~standby-…`).
 */
const SECRET_ID = "~token-secret";
const SECRET_PARTITION = "~service";

/** The token secret's item. */
interface SecretItem extends ItemDefinition {
  id: string;
  utype: string;
  secret: string;
}

/**
 * A role's ended terms share its partition, as items with id `~term-0` … `~term-15`, one per
 * ring slot: `~` is outside the utype charset, so no lease item can have such an id.
 */
const TERM_ID_PREFIX = "~term-";
/** A role's standbys share its partition too, as items with id `~standby-<uuid>`. */
const STANDBY_ID_PREFIX = "~standby-";

/** A standby item. */
interface StandbyItem extends ItemDefinition {
  id: string;
  utype: string;
  uuid: string;
  address: string | null;
  seenAt: number;
  /** Absent when 0. */
  priority?: number;
}

/** A term item of the ring. */
interface TermItem extends ItemDefinition {
  id: string;
  utype: string;
  epoch: number;
  uuid: string;
  address: string | null;
  startedAt: number;
  endedAt: number;
  endedBy: string;
  /** Absent on items written by earlier versions. */
  transactional?: boolean;
}

/** How the store waits out throttling (see CosmosCaller). */
export type CosmosLeaseStoreOptions = CosmosCallOptions;

/** The item stored per utype: id and partition key are both the utype. */
interface LeaseItem extends ItemDefinition {
  id: string;
  utype: string;
  uuid: string;
  address: string | null;
  epoch: number;
  renewedAt: number;
  startedAt?: number;
  revoked: boolean;
  endedUuids: string[];
  /** Absent when none (a replace drops it). */
  handover?: { to: string | null; requestedAt: number; reason?: "preempt" };
  /** The holder's priority; absent when 0. */
  priority?: number;
  /** Absent until a candidate states a priority. */
  ranked?: true;
}

/**
 * Leases in an Azure Cosmos DB (SQL API) container partitioned on /utype. Takes an
 * already-built Container, so the caller chooses the credential (key or Entra ID).
 *
 * Reads are point reads by id and partition key; writes are a create for the first lease
 * and If-Match writes afterwards, so a lost race is a typed outcome, never an overwrite.
 *
 * Throttling is this class's decision, not the SDK's (CosmosCaller): a throttled call
 * waits out `retry-after` only while its budget allows, then is unavailable.
 */
export class CosmosLeaseStore extends CosmosContainerStore implements LeaseStore, TokenSecretStore {
  /** Its container is partitioned on /utype, nothing indexed. */
  constructor(container: Container, options: CosmosLeaseStoreOptions = {}) {
    super(container, options, { partitionKeyPath: LEASE_PARTITION_KEY_PATH, indexingPolicy: LEASE_INDEXING_POLICY });
  }

  async read(utype: string, options?: StoreCallOptions): Promise<LeaseRecord | undefined> {
    return this.#call("read a lease", options, async (requestOptions) => {
      const response = await this.container.item(utype, utype).read<LeaseItem>(requestOptions);
      if (response.statusCode === 404) {
        throwIfOwnerMissing(response.substatus);
        return undefined;
      }
      if (response.resource === undefined) {
        throw new StoreUnavailableError(`Cosmos DB answered a read with HTTP ${response.statusCode} and no item.`);
      }
      return toRecord(response.resource, response.etag);
    });
  }

  /**
   * With a history row, one transactional batch in the role's partition: a creation mark's
   * create then the entry's, or the entry's create then a row's upsert. Cosmos DB applies
   * all or nothing; a create that finds its item fails the batch with its own 409
   * (batchOutcome: `exists`). The create expected to fail comes first (the mark, which
   * exists once the role was created; the entry, for a row that is upserted), so that even
   * a store that runs a batch's operations one by one and stops at the first failure (the
   * test emulator) writes nothing in those cases.
   */
  async create(lease: LeaseState, options?: StoreCallOptions, also?: CreateAlso): Promise<WriteOutcome> {
    const mark = also?.creationMark;
    const row = also?.term;
    const what = mark === undefined && row === undefined ? "create a lease" : "create a lease and its history row";
    return this.#call(what, options, async (requestOptions) => {
      // Built anew for each attempt: the SDK rewrites an operation's partition key in place.
      const entry: OperationInput = { operationType: "Create", partitionKey: lease.utype, resourceBody: { ...toItem(lease) } };
      let operations: OperationInput[];
      if (mark !== undefined) operations = [{ operationType: "Create", partitionKey: lease.utype, resourceBody: { ...toTermItem(mark) } }, entry];
      else if (row !== undefined) operations = [entry, { operationType: "Upsert", partitionKey: lease.utype, resourceBody: { ...toTermItem(row) } }];
      else return conditionalCosmosWrite(STORE, "create", () => this.container.items.create<LeaseItem>(toItem(lease), requestOptions));
      const entryIndex = operations.indexOf(entry);
      return conditionalCosmosWrite(STORE, "create", async () => batchOutcome(await this.container.items.batch(operations, lease.utype, requestOptions), entryIndex));
    });
  }

  /**
   * With an ended term, one transactional batch in the role's partition: the entry's
   * If-Match replace, then the ring item's upsert. Cosmos DB applies both or neither, and
   * answers a failed batch with each operation's status: the failing one's own (412 when
   * the ETag moved on), 424 for the others (batchOutcome).
   */
  async replace(lease: LeaseState, etag: string, options?: StoreCallOptions, also?: ReplaceAlso): Promise<WriteOutcome> {
    const endedTerm = also?.endedTerm;
    return this.#call(endedTerm === undefined ? "replace a lease" : "replace a lease and record its term", options, async (requestOptions) => {
      if (endedTerm === undefined) {
        return conditionalCosmosWrite(STORE, "update", () =>
          this.container.item(lease.utype, lease.utype).replace<LeaseItem>(toItem(lease), ifMatch(requestOptions, etag)),
        );
      }
      // Built anew for each attempt: the SDK rewrites an operation's partition key in place.
      const operations: OperationInput[] = [
        { operationType: "Replace", id: lease.utype, partitionKey: lease.utype, resourceBody: { ...toItem(lease) }, ifMatch: etag },
        { operationType: "Upsert", partitionKey: lease.utype, resourceBody: { ...toTermItem(endedTerm) } },
      ];
      return conditionalCosmosWrite(STORE, "update", async () => batchOutcome(await this.container.items.batch(operations, lease.utype, requestOptions)));
    });
  }

  /**
   * A patch rather than a replace: the fast path knows only the ETag, not the holder or
   * the epoch, and a replace would have to read them first (a second operation). The
   * patch sets renewedAt (and the address, when given) and leaves the rest as stored;
   * If-Match proves it is what the lease token was issued for.
   */
  async renew(utype: string, renewal: LeaseRenewal, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    const operations: PatchOperation[] = [{ op: "set", path: "/renewedAt", value: renewal.renewedAt }];
    if (renewal.address !== undefined) operations.push({ op: "set", path: "/address", value: renewal.address });
    return this.#call("renew a lease", options, async (requestOptions) => {
      return conditionalCosmosWrite(STORE, "update", () => this.container.item(utype, utype).patch<LeaseItem>(operations, ifMatch(requestOptions, etag)));
    });
  }

  /** A cross-partition feed read: name resolving across roles, not a hot path. */
  async list(options?: StoreCallOptions): Promise<LeaseRecord[]> {
    return this.#call("list leases", options, async (requestOptions) => {
      const { resources } = await this.container.items.readAll<LeaseItem>(requestOptions).fetchAll();
      // A lease item's id is its utype; the term rows beside it are not leases.
      return resources.filter((item) => item.id === item.utype).map((item) => toRecord(item, undefined));
    });
  }

  async ping(options?: StoreCallOptions): Promise<void> {
    await this.#call("reach the container", options, async (requestOptions) => {
      const response = await this.container.item(HEALTH_ID, HEALTH_ID).read(requestOptions);
      if (response.statusCode === 404) throwIfOwnerMissing(response.substatus);
    });
  }

  /** A point read; when the item is missing, a create (409 when another instance was first: its item is read). */
  async tokenSecret(candidate: string, options?: StoreCallOptions): Promise<string> {
    return this.#call("read the token secret", options, async (requestOptions) => {
      for (let tries = 0; ; tries += 1) {
        const response = await this.container.item(SECRET_ID, SECRET_PARTITION).read<SecretItem>(requestOptions);
        if (response.statusCode !== 404) return checkStoredTokenSecret(response.resource?.secret, STORE);
        throwIfOwnerMissing(response.substatus);
        if (tries > 0) throw new StoreUnavailableError("Cosmos DB answered 409 to the token secret's create, then 404 to its read.");
        const item: SecretItem = { id: SECRET_ID, utype: SECRET_PARTITION, secret: candidate };
        const created = await conditionalCosmosWrite(STORE, "create", () => this.container.items.create<SecretItem>(item, requestOptions));
        if (created.ok) return candidate;
      }
    });
  }

  /** A feed read of the role's one partition: the lease item and its ring; no index needed. */
  async readTerms(utype: string, options?: StoreCallOptions): Promise<TermRecord[]> {
    return this.#call("read the term history", options, async (requestOptions) => {
      const { resources } = await this.container.items.readAll<TermItem>({ ...requestOptions, partitionKey: utype }).fetchAll();
      return resources
        .filter((item) => item.utype === utype && item.id.startsWith(TERM_ID_PREFIX))
        .map(({ utype, epoch, uuid, address, startedAt, endedAt, endedBy, transactional }) => toTermRecord({ utype, epoch, uuid, address, startedAt, endedAt, endedBy, transactional }, STORE));
    });
  }

  async upsertStandby(standby: StandbyRecord, options?: StoreCallOptions): Promise<void> {
    const item: StandbyItem = { id: `${STANDBY_ID_PREFIX}${standby.uuid}`, ...standby };
    await this.#call("record a standby", options, async (requestOptions) => {
      await this.container.items.upsert<StandbyItem>(item, requestOptions);
    });
  }

  /** A feed read of the role's one partition, keeping the standby items. */
  async readStandbys(utype: string, options?: StoreCallOptions): Promise<StandbyRecord[]> {
    return this.#call("read the standbys", options, async (requestOptions) => {
      const { resources } = await this.container.items.readAll<StandbyItem>({ ...requestOptions, partitionKey: utype }).fetchAll();
      return toStandbys(resources.filter((item) => item.utype === utype));
    });
  }

  /** A cross-partition feed read (the list with standbys; not a hot path). */
  async listStandbys(options?: StoreCallOptions): Promise<StandbyRecord[]> {
    return this.#call("list the standbys", options, async (requestOptions) => {
      const { resources } = await this.container.items.readAll<StandbyItem>(requestOptions).fetchAll();
      return toStandbys(resources);
    });
  }

  async deleteStandby(utype: string, uuid: string, options?: StoreCallOptions): Promise<void> {
    await this.#call("delete a standby", options, async (requestOptions) => {
      const response = await this.container.item(`${STANDBY_ID_PREFIX}${uuid}`, utype).delete(requestOptions).catch((error: unknown) => {
        if (statusOf(error) === 404) return undefined;
        throw error;
      });
      if (response?.statusCode === 404) throwIfOwnerMissing(response.substatus);
    });
  }

  #call<T>(what: string, options: StoreCallOptions | undefined, call: (requestOptions: RequestOptions) => Promise<T>): Promise<T> {
    return this.caller.call(what, options, call);
  }
}

/** A term's ring item, at its slot; an upsert of it replaces the slot's previous item (the term N epochs older) whole. */
function toTermItem(term: TermRecord): TermItem {
  return { id: `${TERM_ID_PREFIX}${termSlot(term.epoch)}`, ...term };
}

/** What an entry item keeps of the lease (and nothing else a record may carry, such as its ETag). */
const LEASE_ITEM_PROPERTIES = ["utype", "uuid", "address", "epoch", "renewedAt", "startedAt", "revoked", "endedUuids", "handover", "priority", "ranked"] as const;

function toItem(lease: LeaseState): LeaseItem {
  return toCosmosItem(lease.utype, lease, LEASE_ITEM_PROPERTIES) as LeaseItem;
}

function toRecord(item: LeaseItem, etag: string | undefined): LeaseRecord {
  // A point read's ETag is the response's; a feed read's is the item's own _etag.
  const { utype, uuid, address, epoch, renewedAt, startedAt, revoked, endedUuids, handover, priority, ranked } = item;
  return toLeaseRecord({ utype, uuid, address, epoch, renewedAt, startedAt, revoked, endedUuids, handover, priority, ranked, etag: etag ?? item._etag }, STORE);
}

function toStandbys(items: readonly StandbyItem[]): StandbyRecord[] {
  return items
    .filter((item) => item.id.startsWith(STANDBY_ID_PREFIX))
    .map(({ utype, uuid, address, seenAt, priority }) => toStandbyRecord({ utype, uuid, address, seenAt, priority }, STORE));
}
