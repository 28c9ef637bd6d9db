/**
 * Fenced writes to one Cosmos DB item with the caller's own `Container` from @azure/cosmos
 * (docs/fencing.md). The epoch mark is a field of the item. The SDK imports nothing of that
 * package: the container is described by the few methods used.
 */

import {
  conditionalWrite,
  DEFAULT_EPOCH_FIELD,
  fencedWriter,
  parseStoredEpoch,
  type FenceableCallOptions,
  type FencedWriteOptions,
  type FencedWriteResult,
  type FencedWriterOptions,
} from "./fenced-write.js";

/** A partition key value: one value, or one per path of a hierarchical key. */
export type FenceablePartitionKey = string | number | boolean | null | Array<string | number | boolean | null>;

/** An item to write: its `id` and any fields, as @azure/cosmos takes them. */
export interface FenceableCosmosItem {
  /** The item's id. */
  readonly id: string;
  /** Any other field, as the item has it. */
  readonly [field: string]: unknown;
}

/** What @azure/cosmos' item calls answer, as far as a fenced write reads it. */
export interface FenceableCosmosItemResponse {
  /** The item, when there is one. */
  readonly resource?: unknown;
  /** Its ETag. */
  readonly etag?: string;
  /** The HTTP status of the call. */
  readonly statusCode?: number;
}

/** The methods of @azure/cosmos' `Container` a fenced write uses. */
export interface FenceableCosmosContainer {
  /** The container's id, for messages. */
  readonly id: string;
  /** Reads the container's definition, for its partition key paths. */
  read(options?: FenceableCallOptions): Promise<{ readonly resource?: { readonly partitionKey?: { readonly paths?: readonly string[] } } }>;
  /** The item `id` in partition `partitionKeyValue`: read it, or replace it with an access condition. */
  item(
    id: string,
    partitionKeyValue?: FenceablePartitionKey,
  ): {
    read(options?: FenceableCallOptions): Promise<FenceableCosmosItemResponse>;
    replace(body: FenceableCosmosItem, options?: FenceableCallOptions & { accessCondition?: { type: string; condition: string } }): Promise<FenceableCosmosItemResponse>;
  };
  /** Creates an item; fails with 409 when one with its id exists. */
  readonly items: { create(body: FenceableCosmosItem, options?: FenceableCallOptions): Promise<FenceableCosmosItemResponse> };
}

/** What each fenced Cosmos write takes: the epoch, and the item's partition key. */
export interface FencedCosmosWriteOptions extends FencedWriteOptions {
  /** The item's partition key value; read from the item by the container's partition key path(s) when omitted. */
  readonly partitionKey?: FenceablePartitionKey;
}

/** Fenced writes to the items of one container, as fencedCosmosItem() makes them. */
export interface FencedCosmosItems {
  /** Writes the item (its whole body) if no newer epoch has written it; throws FencedOutError if one has. */
  upsert(item: FenceableCosmosItem, options: FencedCosmosWriteOptions): Promise<FencedWriteResult>;
}

function valueAt(item: FenceableCosmosItem, path: string): FenceablePartitionKey | undefined {
  let value: unknown = item;
  for (const segment of path.split("/").filter((part) => part !== "")) {
    value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[segment] : undefined;
  }
  return value === undefined || ["string", "number", "boolean"].includes(typeof value) || value === null ? (value as FenceablePartitionKey | undefined) : undefined;
}

/** Fenced writes to the items of `container`; each item keeps its own epoch mark. */
export function fencedCosmosItem(container: FenceableCosmosContainer, options?: FencedWriterOptions): FencedCosmosItems {
  const writer = fencedWriter(options, DEFAULT_EPOCH_FIELD);
  const { epochField } = writer;
  if (typeof container?.item !== "function" || typeof container.read !== "function" || typeof container.items?.create !== "function") {
    throw new TypeError("Expected a Container from @azure/cosmos (client.database(name).container(name)).");
  }
  let paths: Promise<readonly string[]> | undefined;
  const partitionKeyPaths = (signal: AbortSignal | undefined): Promise<readonly string[]> => {
    paths ??= container.read({ abortSignal: signal }).then((answer) => answer.resource?.partitionKey?.paths ?? ["/id"]);
    paths.catch(() => (paths = undefined));
    return paths;
  };
  const partitionKeyOf = async (item: FenceableCosmosItem, given: FenceablePartitionKey | undefined, signal: AbortSignal | undefined): Promise<FenceablePartitionKey> => {
    if (given !== undefined) return given;
    const keyPaths = await partitionKeyPaths(signal);
    const values = keyPaths.map((path) => valueAt(item, path));
    const missing = keyPaths.filter((_, index) => values[index] === undefined);
    if (missing.length > 0) throw new TypeError(`The item has no value at the partition key path ${missing.join(", ")} of container ${JSON.stringify(container.id)}: add it, or pass \`partitionKey\`.`);
    return values.length === 1 ? values[0]! : (values as Array<string | number | boolean | null>);
  };
  return {
    upsert: (item, writeOptions) =>
      writer.write(writeOptions, async (epoch, signal) => {
        if (typeof item?.id !== "string" || item.id === "") throw new TypeError("Expected the item to have a non-empty string `id`.");
        const resource = `Cosmos item ${JSON.stringify(item.id)} in container ${JSON.stringify(container.id)}`;
        const partitionKey = await partitionKeyOf(item, writeOptions.partitionKey, signal);
        // The mark is the write's epoch, whatever mark an item read before carries.
        const marked: FenceableCosmosItem = { ...item, [epochField]: epoch };
        return {
          resource,
          read: async (abortSignal) => {
            const answer = await container.item(item.id, partitionKey).read({ abortSignal });
            const found = answer.resource as Record<string, unknown> | undefined;
            if (answer.statusCode === 404 || found === undefined) return undefined;
            const etag = answer.etag ?? (found._etag as string | undefined);
            if (etag === undefined) throw new Error(`${resource} was read without an ETag, so it cannot be written conditionally.`);
            return { epoch: parseStoredEpoch(resource, epochField, found[epochField]), etag };
          },
          // Created by someone since the read (409), or changed (412) or deleted (404) since. A
          // create's 404 is the container missing: the client's error, as it is.
          write: (etag, abortSignal) =>
            etag === undefined
              ? conditionalWrite(() => container.items.create(marked, { abortSignal }), [409])
              : conditionalWrite(() => container.item(item.id, partitionKey).replace(marked, { accessCondition: { type: "IfMatch", condition: etag }, abortSignal }), [404, 412]),
        };
      }),
  };
}
