/**
 * Fenced writes to one Azure Table entity with the caller's own `TableClient` from
 * @azure/data-tables (docs/fencing.md). The SDK imports nothing of that package: the client
 * is described by the few methods used.
 */

import {
  conditionalWrite,
  DEFAULT_EPOCH_FIELD,
  fencedWriter,
  parseStoredEpoch,
  unlessMissing,
  type FenceableCallOptions,
  type FencedWriteOptions,
  type FencedWriteResult,
  type FencedWriterOptions,
} from "./fenced-write.js";

/** An entity to write: its keys and any properties, as @azure/data-tables takes them. */
export interface FenceableTableEntity {
  /** The entity's PartitionKey. */
  readonly partitionKey: string;
  /** The entity's RowKey. */
  readonly rowKey: string;
  /** Any other property, as the entity has it. */
  readonly [property: string]: unknown;
}

/** The methods of @azure/data-tables' `TableClient` a fenced write uses. */
export interface FenceableTableClient {
  /** The table's name, for messages. */
  readonly tableName: string;
  /** Reads the entity's ETag and epoch mark. */
  getEntity(partitionKey: string, rowKey: string, options?: FenceableCallOptions): Promise<{ readonly etag: string }>;
  /** Creates the entity; fails with 409 when it exists. */
  createEntity(entity: FenceableTableEntity, options?: FenceableCallOptions): Promise<{ readonly etag?: string }>;
  /** Writes the entity If-Match `etag`. */
  updateEntity(entity: FenceableTableEntity, mode?: "Merge" | "Replace", options?: FenceableCallOptions & { etag?: string }): Promise<{ readonly etag?: string }>;
}

/** What each fenced Table write takes: the epoch, and whether to replace or merge. */
export interface FencedTableWriteOptions extends FencedWriteOptions {
  /** "Replace" (default): the entity becomes exactly `entity` plus the mark. "Merge": properties not in `entity` stay. */
  readonly mode?: "Replace" | "Merge";
}

/** Fenced writes to the entities of one table, as fencedTableEntity() makes them. */
export interface FencedTableEntities {
  /**
   * Writes the entity (partitionKey, rowKey) if no newer epoch has; throws FencedOutError if one
   * has. The keys are typed optional so that an entity as `getEntity` returns it can be written
   * back, but both must be there.
   */
  upsert(entity: Partial<FenceableTableEntity>, options: FencedTableWriteOptions): Promise<FencedWriteResult>;
}

/** Fenced writes to the entities of `client`'s table; each entity keeps its own epoch mark. */
export function fencedTableEntity(client: FenceableTableClient, options?: FencedWriterOptions): FencedTableEntities {
  const writer = fencedWriter(options, DEFAULT_EPOCH_FIELD);
  const { epochField } = writer;
  if (typeof client?.getEntity !== "function" || typeof client.createEntity !== "function" || typeof client.updateEntity !== "function") {
    throw new TypeError("Expected a TableClient from @azure/data-tables (with getEntity, createEntity and updateEntity).");
  }
  return {
    upsert: (entity, writeOptions) =>
      writer.write(writeOptions, (epoch) => {
        const mode = writeOptions.mode ?? "Replace";
        if (mode !== "Replace" && mode !== "Merge") throw new TypeError(`Expected \`mode\` to be "Replace" or "Merge", got ${JSON.stringify(mode)}.`);
        if (typeof entity?.partitionKey !== "string" || typeof entity.rowKey !== "string") {
          throw new TypeError("Expected the entity to have string `partitionKey` and `rowKey`.");
        }
        // The mark is the write's epoch, whatever mark an entity read before carries; its etag is not the condition.
        const { partitionKey, rowKey } = entity;
        const marked: FenceableTableEntity = { ...entity, partitionKey, rowKey, [epochField]: { value: String(epoch), type: "Int64" } };
        const resource = `table entity (${JSON.stringify(partitionKey)}, ${JSON.stringify(rowKey)}) in table ${JSON.stringify(client.tableName)}`;
        return {
          resource,
          read: async (abortSignal) => {
            const found = (await unlessMissing(() => client.getEntity(partitionKey, rowKey, { abortSignal }))) as { readonly etag: string; readonly [property: string]: unknown } | undefined;
            return found === undefined ? undefined : { epoch: parseStoredEpoch(resource, epochField, found[epochField]), etag: found.etag };
          },
          // Created by someone since the read (409), or changed (412) or deleted (404) since. A
          // create's 404 is the table missing: the client's error, as it is.
          write: (etag, abortSignal) =>
            etag === undefined
              ? conditionalWrite(() => client.createEntity(marked, { abortSignal }), [409])
              : conditionalWrite(() => client.updateEntity(marked, mode, { etag, abortSignal }), [404, 412]),
        };
      }),
  };
}
