import { setTimeout as sleep } from "node:timers/promises";
import { debuglog } from "node:util";
import type { Container, IndexingPolicy, ItemDefinition, PatchOperation, RequestOptions } from "@azure/cosmos";
import type { LeaseRecord, LeaseState } from "../lease/lease.js";
import type {
  LeaseRenewal,
  LeaseStore,
  StoreCallOptions,
  WriteOutcome,
} from "../lease/lease-store.js";
import { StoreUnavailableError } from "../lease/store-unavailable-error.js";
import { describeCosmosError, lostRace, statusOf, throttleWaitOf, throwIfOwnerMissing } from "./cosmos-errors.js";
import { toLeaseRecord } from "./lease-row.js";
import { unavailable, written } from "./store-failure.js";

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

const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_MAX_THROTTLE_WAIT_MS = 1000;

export interface CosmosLeaseStoreOptions {
  /** Attempts one call makes while Cosmos answers 429, the first one included. */
  readonly maxAttempts?: number;
  /**
   * The longest one call waits, in total, on retry-after hints. The call's abortSignal
   * (its share of the request's time budget) can cut a wait shorter.
   */
  readonly maxThrottleWaitInMs?: number;
  /** Waits `ms` or rejects when the signal aborts; injected by tests. */
  readonly sleep?: (ms: number, abortSignal: AbortSignal | undefined) => Promise<void>;
  /** Where a waited-out 429 is logged; by default Node's debuglog (NODE_DEBUG=ha-module). */
  readonly debug?: (message: string) => void;
}

const defaultDebug = debuglog("ha-module");
const abortableSleep = async (ms: number, abortSignal: AbortSignal | undefined): Promise<void> => {
  await sleep(ms, undefined, abortSignal === undefined ? {} : { signal: abortSignal });
};

/** The item stored per utype: id and partition key are both the utype. */
interface LeaseItem extends ItemDefinition {
  id: string;
  utype: string;
  uuid: string;
  address: string | null;
  epoch: number;
  renewedAt: number;
  revoked: boolean;
  endedUuids: string[];
}

/**
 * Leases in an Azure Cosmos DB (SQL API) container partitioned on /utype. Takes an
 * already-built Container, so the caller chooses the credential (key or Entra ID).
 *
 * Reads are point reads by id and partition key; writes are a create for the first lease
 * and If-Match writes afterwards, so a lost race is a typed outcome, never an overwrite.
 *
 * Throttling is this class's decision, not the SDK's: the client is built with its own
 * 429 retries off, and a throttled call waits out `retry-after` only while both its
 * abortSignal and `maxThrottleWaitInMs` allow. A 429 means the request was not applied,
 * so sending the same conditional write again is safe.
 */
export class CosmosLeaseStore implements LeaseStore {
  readonly kind = "cosmos";
  readonly #maxAttempts: number;
  readonly #maxThrottleWaitMs: number;
  readonly #sleep: (ms: number, abortSignal: AbortSignal | undefined) => Promise<void>;
  readonly #debug: (message: string) => void;

  constructor(
    private readonly container: Container,
    options: CosmosLeaseStoreOptions = {},
  ) {
    this.#maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.#maxThrottleWaitMs = options.maxThrottleWaitInMs ?? DEFAULT_MAX_THROTTLE_WAIT_MS;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#debug = options.debug ?? defaultDebug;
    if (!Number.isSafeInteger(this.#maxAttempts) || this.#maxAttempts < 1) {
      throw new RangeError(`Expected \`maxAttempts\` to be a positive integer (got ${this.#maxAttempts}).`);
    }
    if (!(this.#maxThrottleWaitMs >= 0)) {
      throw new RangeError(`Expected \`maxThrottleWaitInMs\` to be a non-negative number (got ${this.#maxThrottleWaitMs}).`);
    }
  }

  /**
   * Creates the database and the container (partitioned on /utype, nothing indexed) when
   * they are missing: local runs and HA_STORE_CREATE=true. In Azure, Bicep creates them.
   */
  async createContainerIfMissing(options?: StoreCallOptions): Promise<void> {
    const database = this.container.database;
    await this.#call("create the container", options, async (requestOptions) => {
      await database.client.databases.createIfNotExists({ id: database.id }, requestOptions);
      await database.containers.createIfNotExists(
        {
          id: this.container.id,
          partitionKey: { paths: [LEASE_PARTITION_KEY_PATH] },
          indexingPolicy: LEASE_INDEXING_POLICY,
        },
        requestOptions,
      );
    });
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

  async create(lease: LeaseState, options?: StoreCallOptions): Promise<WriteOutcome> {
    return this.#call("create a lease", options, async (requestOptions) => {
      try {
        const response = await this.container.items.create<LeaseItem>(toItem(lease), requestOptions);
        return written(STORE, response.etag);
      } catch (error) {
        if (statusOf(error) === 409) return { ok: false, reason: "exists" };
        throw error;
      }
    });
  }

  async replace(lease: LeaseState, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    return this.#call("replace a lease", options, async (requestOptions) => {
      try {
        const response = await this.container
          .item(lease.utype, lease.utype)
          .replace<LeaseItem>(toItem(lease), ifMatch(requestOptions, etag));
        return written(STORE, response.etag);
      } catch (error) {
        return lostRace(error);
      }
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
      try {
        const response = await this.container.item(utype, utype).patch<LeaseItem>(operations, ifMatch(requestOptions, etag));
        return written(STORE, response.etag);
      } catch (error) {
        return lostRace(error);
      }
    });
  }

  /** A cross-partition feed read: name resolving across roles, not a hot path. */
  async list(options?: StoreCallOptions): Promise<LeaseRecord[]> {
    return this.#call("list leases", options, async (requestOptions) => {
      const { resources } = await this.container.items.readAll<LeaseItem>(requestOptions).fetchAll();
      return resources.map((item) => toRecord(item, undefined));
    });
  }

  async ping(options?: StoreCallOptions): Promise<void> {
    await this.#call("reach the container", options, async (requestOptions) => {
      const response = await this.container.item(HEALTH_ID, HEALTH_ID).read(requestOptions);
      if (response.statusCode === 404) throwIfOwnerMissing(response.substatus);
    });
  }

  /**
   * Runs one store call, waiting out 429s within the call's budget. Anything that is not
   * a typed outcome leaves as StoreUnavailableError.
   */
  async #call<T>(
    what: string,
    options: StoreCallOptions | undefined,
    call: (requestOptions: RequestOptions) => Promise<T>,
  ): Promise<T> {
    const abortSignal = options?.abortSignal;
    let waitedMs = 0;
    for (let attempt = 1; ; attempt += 1) {
      throwIfAborted(what, abortSignal);
      try {
        return await call({ abortSignal });
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error;
        const retryAfterMs = throttleWaitOf(error);
        const canWait =
          retryAfterMs !== undefined &&
          attempt < this.#maxAttempts &&
          waitedMs + retryAfterMs <= this.#maxThrottleWaitMs &&
          !abortSignal?.aborted;
        if (!canWait) throw unavailable(STORE, what, describeCosmosError(error), error);
        this.#debug(`Cosmos DB throttled "${what}" (429): waiting ${retryAfterMs} ms as it asks, then attempt ${attempt + 1} of ${this.#maxAttempts}.`);
        try {
          await this.#sleep(retryAfterMs, abortSignal);
        } catch (sleepError) {
          throw unavailable(STORE, what, describeCosmosError(sleepError), sleepError);
        }
        waitedMs += retryAfterMs;
      }
    }
  }
}

function toItem(lease: LeaseState): LeaseItem {
  return {
    id: lease.utype,
    utype: lease.utype,
    uuid: lease.uuid,
    address: lease.address,
    epoch: lease.epoch,
    renewedAt: lease.renewedAt,
    revoked: lease.revoked,
    endedUuids: [...lease.endedUuids],
  };
}

function toRecord(item: LeaseItem, etag: string | undefined): LeaseRecord {
  // A point read's ETag is the response's; a feed read's is the item's own _etag.
  const { utype, uuid, address, epoch, renewedAt, revoked, endedUuids } = item;
  return toLeaseRecord({ utype, uuid, address, epoch, renewedAt, revoked, endedUuids, etag: etag ?? item._etag }, STORE);
}

function ifMatch(requestOptions: RequestOptions, etag: string): RequestOptions {
  return { ...requestOptions, accessCondition: { type: "IfMatch", condition: etag } };
}

function throwIfAborted(what: string, abortSignal: AbortSignal | undefined): void {
  if (abortSignal?.aborted) throw unavailable(STORE, what, "timed out", abortSignal.reason);
}
