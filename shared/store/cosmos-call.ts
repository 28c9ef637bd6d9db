import { setTimeout as sleep } from "node:timers/promises";
import { debuglog } from "node:util";
import type { Container, IndexingPolicy, RequestOptions } from "@azure/cosmos";
import type { StoreCallOptions } from "../service/store-call.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import { describeCosmosError, throttleWaitOf } from "./cosmos-errors.js";
import { unavailable } from "./store-failure.js";

const STORE = "Cosmos DB";
const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_MAX_THROTTLE_WAIT_MS = 1000;

/** How a Cosmos adapter waits out throttling; the same options for the lease and the member store. */
export interface CosmosCallOptions {
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

/**
 * Runs store calls against Cosmos DB, waiting out 429s within each call's budget.
 * Throttling is the adapter's decision, not the SDK's: the client is built with its own
 * 429 retries off, and a throttled call waits out `retry-after` only while both its
 * abortSignal and `maxThrottleWaitInMs` allow. A 429 means the request was not applied, so
 * sending the same conditional write again is safe. Anything that is not a typed outcome
 * leaves as StoreUnavailableError.
 */
export class CosmosCaller {
  readonly #maxAttempts: number;
  readonly #maxThrottleWaitMs: number;
  readonly #sleep: (ms: number, abortSignal: AbortSignal | undefined) => Promise<void>;
  readonly #debug: (message: string) => void;

  constructor(options: CosmosCallOptions = {}) {
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

  async call<T>(what: string, options: StoreCallOptions | undefined, call: (requestOptions: RequestOptions) => Promise<T>): Promise<T> {
    const abortSignal = options?.abortSignal;
    let waitedMs = 0;
    for (let attempt = 1; ; attempt += 1) {
      if (abortSignal?.aborted) throw unavailable(STORE, what, "timed out", abortSignal.reason);
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

/** The request options of an If-Match write. */
/**
 * A record as a Cosmos item: `id` and the named properties, each a copy (the SDK may hold
 * the body while the caller's record changes), undefined ones left out (a replace drops them).
 */
export function toCosmosItem<T extends object, K extends keyof T & string>(id: string, record: T, properties: readonly K[]): { id: string } & Partial<Pick<T, K>> {
  const item: Record<string, unknown> = { id };
  for (const name of properties) {
    const value = record[name];
    if (value !== undefined) item[name] = typeof value === "object" && value !== null ? structuredClone(value) : value;
  }
  return item as { id: string } & Partial<Pick<T, K>>;
}

export function ifMatch(requestOptions: RequestOptions, etag: string): RequestOptions {
  return { ...requestOptions, accessCondition: { type: "IfMatch", condition: etag } };
}

/**
 * Creates the container's database and the container itself, partitioned on
 * `partitionKeyPath` with `indexingPolicy`, when they are missing: local runs and
 * HA_STORE_CREATE=true (in Azure, Bicep creates them). One call of `caller`.
 */
export async function createContainerIfMissing(
  caller: CosmosCaller,
  container: Container,
  shape: { readonly partitionKeyPath: string; readonly indexingPolicy: IndexingPolicy },
  options: StoreCallOptions | undefined,
): Promise<void> {
  const database = container.database;
  await caller.call(`create the container ${container.id}`, options, async (requestOptions) => {
    await database.client.databases.createIfNotExists({ id: database.id }, requestOptions);
    await database.containers.createIfNotExists(
      { id: container.id, partitionKey: { paths: [shape.partitionKeyPath] }, indexingPolicy: shape.indexingPolicy },
      requestOptions,
    );
  });
}

/**
 * What both Cosmos stores are built on: one container, every call through a CosmosCaller
 * (throttling waited out within the call's budget), and the container created with its own
 * partition key and indexing when missing (local runs and HA_STORE_CREATE=true; in Azure,
 * Bicep creates it).
 */
export abstract class CosmosContainerStore {
  readonly kind = "cosmos";
  protected readonly caller: CosmosCaller;

  constructor(
    protected readonly container: Container,
    options: CosmosCallOptions,
    private readonly shape: { readonly partitionKeyPath: string; readonly indexingPolicy: IndexingPolicy },
  ) {
    this.caller = new CosmosCaller(options);
  }

  async createContainerIfMissing(options?: StoreCallOptions): Promise<void> {
    await createContainerIfMissing(this.caller, this.container, this.shape, options);
  }
}
