import type { Container, IndexingPolicy, ItemDefinition, PatchOperation, RequestOptions } from "@azure/cosmos";
import type { LeaseRecord, LeaseState } from "../lease/lease.js";
import type {
  LeaseRenewal,
  LeaseStore,
  StoreCallOptions,
  WriteOutcome,
} from "../lease/lease-store.js";
import { StoreUnavailableError } from "../lease/store-unavailable-error.js";

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

/** Cosmos answers 404 with this substatus when the database or container is missing. */
const OWNER_RESOURCE_NOT_FOUND = 1003;

const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_MAX_THROTTLE_WAIT_IN_MS = 1000;
/** Used when a 429 carries no retry-after hint (Cosmos always sends one). */
const FALLBACK_RETRY_AFTER_IN_MS = 100;

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
}

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
  readonly #maxThrottleWaitInMs: number;
  readonly #sleep: (ms: number, abortSignal: AbortSignal | undefined) => Promise<void>;

  constructor(
    private readonly container: Container,
    options: CosmosLeaseStoreOptions = {},
  ) {
    this.#maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.#maxThrottleWaitInMs = options.maxThrottleWaitInMs ?? DEFAULT_MAX_THROTTLE_WAIT_IN_MS;
    this.#sleep = options.sleep ?? abortableSleep;
    if (!Number.isSafeInteger(this.#maxAttempts) || this.#maxAttempts < 1) {
      throw new RangeError(`Expected \`maxAttempts\` to be a positive integer (got ${this.#maxAttempts}).`);
    }
    if (!(this.#maxThrottleWaitInMs >= 0)) {
      throw new RangeError(`Expected \`maxThrottleWaitInMs\` to be a non-negative number (got ${this.#maxThrottleWaitInMs}).`);
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
        return written(response.etag);
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
        return written(response.etag);
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
  async renew(
    utype: string,
    renewal: LeaseRenewal,
    etag: string,
    options?: StoreCallOptions,
  ): Promise<WriteOutcome> {
    const operations: PatchOperation[] = [{ op: "set", path: "/renewedAt", value: renewal.renewedAt }];
    if (renewal.address !== undefined) operations.push({ op: "set", path: "/address", value: renewal.address });
    return this.#call("renew a lease", options, async (requestOptions) => {
      try {
        const response = await this.container.item(utype, utype).patch<LeaseItem>(operations, ifMatch(requestOptions, etag));
        return written(response.etag);
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
    let waitedInMs = 0;
    for (let attempt = 1; ; attempt += 1) {
      throwIfAborted(what, abortSignal);
      try {
        return await call({ abortSignal });
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error;
        const retryAfterInMs = statusOf(error) === 429 ? retryAfterOf(error) : undefined;
        const canWait =
          retryAfterInMs !== undefined &&
          attempt < this.#maxAttempts &&
          waitedInMs + retryAfterInMs <= this.#maxThrottleWaitInMs &&
          !abortSignal?.aborted;
        if (!canWait) throw unavailable(what, error);
        try {
          await this.#sleep(retryAfterInMs, abortSignal);
        } catch (sleepError) {
          throw unavailable(what, sleepError);
        }
        waitedInMs += retryAfterInMs;
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
  const recordEtag = etag ?? item._etag;
  if (recordEtag === undefined) throw new StoreUnavailableError("Cosmos DB returned a lease without an ETag.");
  return {
    utype: item.utype,
    uuid: typeof item.uuid === "string" ? item.uuid : "",
    address: typeof item.address === "string" ? item.address : null,
    epoch: Number(item.epoch),
    renewedAt: Number(item.renewedAt),
    // Items written before these fields existed have neither.
    revoked: item.revoked === true,
    endedUuids: Array.isArray(item.endedUuids) ? item.endedUuids.filter((uuid): uuid is string => typeof uuid === "string") : [],
    etag: recordEtag,
  };
}

function ifMatch(requestOptions: RequestOptions, etag: string): RequestOptions {
  return { ...requestOptions, accessCondition: { type: "IfMatch", condition: etag } };
}

function written(etag: string | undefined): WriteOutcome {
  if (etag === undefined) throw new StoreUnavailableError("Cosmos DB answered a write without an ETag.");
  return { ok: true, etag };
}

/** The typed outcomes of an If-Match write; anything else is rethrown. */
function lostRace(error: unknown): WriteOutcome {
  const status = statusOf(error);
  if (status === 412 || status === 409) return { ok: false, reason: "changed" };
  if (status === 404 && substatusOf(error) !== OWNER_RESOURCE_NOT_FOUND) return { ok: false, reason: "missing" };
  throw error;
}

/** A missing database or container is a misconfiguration, never "no lease yet". */
function throwIfOwnerMissing(substatus: number | undefined): void {
  if (substatus === OWNER_RESOURCE_NOT_FOUND) {
    throw new StoreUnavailableError(
      "Cosmos DB has no such database or container (HTTP 404/1003): check HA_COSMOS_DATABASE and HA_COSMOS_CONTAINER, or set HA_STORE_CREATE=true.",
    );
  }
}

/** The SDK's ErrorResponse carries the HTTP status as a numeric `code`. */
function statusOf(error: unknown): number | undefined {
  const code = fieldOf(error, "code");
  return typeof code === "number" ? code : undefined;
}

function substatusOf(error: unknown): number | undefined {
  const substatus = fieldOf(error, "substatus");
  return typeof substatus === "number" ? substatus : undefined;
}

/** The retry-after hint of a 429, from the parsed field or the raw header. */
function retryAfterOf(error: unknown): number {
  const parsed = fieldOf(error, "retryAfterInMs");
  if (typeof parsed === "number" && Number.isFinite(parsed) && parsed >= 0) return parsed;
  const headers = fieldOf(error, "headers");
  const raw = typeof headers === "object" && headers !== null ? (headers as Record<string, unknown>)["x-ms-retry-after-ms"] : undefined;
  const header = Number(raw);
  return raw !== undefined && Number.isFinite(header) && header >= 0 ? header : FALLBACK_RETRY_AFTER_IN_MS;
}

function fieldOf(error: unknown, name: string): unknown {
  return typeof error === "object" && error !== null ? (error as Record<string, unknown>)[name] : undefined;
}

function throwIfAborted(what: string, abortSignal: AbortSignal | undefined): void {
  if (abortSignal?.aborted) {
    throw new StoreUnavailableError(`Could not ${what} in Cosmos DB (timed out).`, { cause: abortSignal.reason });
  }
}

function unavailable(what: string, error: unknown): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error;
  const status = statusOf(error);
  const substatus = substatusOf(error);
  const detail =
    status !== undefined
      ? `HTTP ${status}${substatus ? `/${substatus}` : ""}`
      : error instanceof Error && error.name === "AbortError"
        ? "timed out"
        : error instanceof Error
          ? error.message
          : String(error);
  return new StoreUnavailableError(`Could not ${what} in Cosmos DB (${detail}).`, { cause: error });
}

function abortableSleep(ms: number, abortSignal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (abortSignal?.aborted) {
      reject(abortSignal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortSignal?.reason);
    };
    const timer = setTimeout(() => {
      abortSignal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    abortSignal?.addEventListener("abort", onAbort, { once: true });
  });
}
