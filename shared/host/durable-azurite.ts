import { AsyncLocalStorage } from "node:async_hooks";
import { replaceFileDurably } from "./durable-file.js";
import { SavedState } from "./saved-state.js";

interface DataMethod {
  /** A write changes the data; a read only looks at it. */
  readonly access: "write" | "read";
  /** Its parameter count, checked at start-up. */
  readonly arity: number;
  /** Where it takes the batch id, if it can run inside a batch. */
  readonly batchIdAt?: number;
}

/**
 * The methods of Azurite's LokiTableMetadataStore (azurite 3.35) through which its Table
 * handlers reach the data. The operations of a batch ($batch) carry a batch id, and the
 * batch ends with endBatchTransaction.
 */
const DATA_METHODS: ReadonlyMap<string, DataMethod> = new Map<string, DataMethod>([
  ["createTable", { access: "write", arity: 2 }],
  ["deleteTable", { access: "write", arity: 3 }],
  ["setTableACL", { access: "write", arity: 4 }],
  ["setServiceProperties", { access: "write", arity: 2 }],
  ["insertTableEntity", { access: "write", arity: 5, batchIdAt: 4 }],
  ["insertOrUpdateTableEntity", { access: "write", arity: 6, batchIdAt: 5 }],
  ["insertOrMergeTableEntity", { access: "write", arity: 6, batchIdAt: 5 }],
  ["deleteTableEntity", { access: "write", arity: 7, batchIdAt: 6 }],
  ["endBatchTransaction", { access: "write", arity: 5 }],
  ["getTable", { access: "read", arity: 3 }],
  ["queryTable", { access: "read", arity: 4 }],
  ["queryTableEntities", { access: "read", arity: 6 }],
  ["queryTableEntitiesWithPartitionAndRowKey", { access: "read", arity: 6, batchIdAt: 5 }],
  ["getServiceProperties", { access: "read", arity: 2 }],
]);

/**
 * Every other method of that store: lifecycle, internals that only the methods above
 * call (updateTableEntity, mergeTableEntity, the rollback helpers), and the access
 * policy pair, which Azurite does not implement (both always throw). A method in
 * neither list means Azurite changed under us, and start-up refuses (see below).
 */
const OTHER_METHODS: ReadonlySet<string> = new Set([
  "constructor", "init", "close", "clean", "isInitialized", "isClosed", "getTableAccessPolicy",
  "setTableAccessPolicy", "beginBatchTransaction", "finalizeInitializationState", "loadDB", "saveDBState",
  "createServicePropsCollection", "createTablesCollection", "createCollectionForTable", "checkIfTableExists",
  "checkIfResourceExists", "removeTableCollection", "getEntityCollection", "trackRollback",
  "checkIfMatchPrecondition", "checkForMissingEntity", "getMaxResultsOption", "adjustQueryResultforTop",
  "decodeContinuationHeader", "encodeContinuationHeader", "updateTableEntity", "mergeTableEntity",
  "filterOdataMetaData", "encodeIfMatch", "getTableCollectionName", "rollbackEntityChanges",
  "removeEntitiesAddedInBatch",
]);

type Callback = (error?: unknown) => void;

/** What this file needs of the LokiJS database inside that store. */
interface LokiDatabase {
  readonly persistenceAdapter: {
    readonly mode?: unknown;
    saveDatabase(name: string, data: string, callback: Callback): void;
  } | null;
  /** Serializes the whole database at once, then hands it to the adapter. */
  saveDatabase(callback: Callback): void;
}

type MetadataStore = Record<string, unknown> & { readonly db: LokiDatabase };

/**
 * Makes the embedded Azurite answer only what is on disk, the promise the cloud stores
 * make (docs/protocol.md#the-stores-durability-assumption). Left alone, Azurite saves its LokiJS file every 5 s, and a crash in
 * between loses writes it has already answered: a restarted service then hands out an
 * epoch again.
 *
 * Every call of the Table service into its data, whichever client or table it is for,
 * holds its answer until everything it changed or saw is saved (SavedState: writes
 * that land during a save share the next one). Each save replaces the data file
 * durably (replaceFileDurably: fsync, rename, fsync the directory). The operations of a
 * batch are saved once, when the batch ends, so a crash never keeps half a batch. A
 * failed save fails the call (Azurite answers 500; the lease store reports the store
 * unavailable) and every later one, until a save succeeds.
 *
 * Must run after the TableServer is built and before it starts. Throws when Azurite's
 * internals are not the ones this was written for, so that a changed Azurite fails at
 * start-up instead of silently losing writes.
 */
export function makeWritesDurable(metadataStore: unknown): void {
  const store = checkMetadataStore(metadataStore);
  const db = store.db;
  db.persistenceAdapter!.saveDatabase = (name, data, callback) => {
    replaceFileDurably(name, data).then(() => callback(), callback);
  };
  const state = new SavedState(
    () => new Promise<void>((resolve, reject) => db.saveDatabase((error) => (error ? reject(toError(error)) : resolve()))),
  );
  // A method the store calls on itself (an upsert reads, then inserts) is part of the
  // outer call: it must neither wait for a save in the middle of it (another request
  // could slip in) nor count twice.
  const outerCall = new AsyncLocalStorage<true>();
  for (const [name, { access, batchIdAt }] of DATA_METHODS) {
    const method = store[name] as (...args: unknown[]) => Promise<unknown>;
    store[name] = (...args: unknown[]): Promise<unknown> => {
      const batchId = batchIdAt === undefined ? undefined : args[batchIdAt];
      // Inside a batch nothing is saved, so that no save holds half of it: Azurite runs
      // a batch's operations without pausing for I/O, and the batch's end saves.
      if (outerCall.getStore() === true || (batchId !== undefined && batchId !== "")) {
        const result = method.apply(store, args);
        if (access === "write") result.then(() => state.changed(), () => undefined);
        return result;
      }
      return outerCall.run(true, async () => {
        let result: unknown;
        try {
          result = await method.apply(store, args);
        } catch (error) {
          // A refused write or a failed read tells something about the data too.
          await state.settle();
          throw error;
        }
        if (access === "write") state.changed();
        await state.settle();
        return result;
      });
    };
  }
}

function checkMetadataStore(candidate: unknown): MetadataStore {
  const problem = (what: string): Error =>
    new Error(
      `The embedded store cannot make its writes durable: ${what}. shared/host/durable-azurite.ts was written for azurite 3.35; install that version (npm ci) or update that file for the one installed.`,
    );
  if (typeof candidate !== "object" || candidate === null) throw problem("Azurite's TableServer has no metadataStore");
  const store = candidate as MetadataStore;
  const adapter = store.db?.persistenceAdapter;
  if (typeof store.db?.saveDatabase !== "function" || typeof adapter?.saveDatabase !== "function" || adapter.mode !== undefined) {
    throw problem("its LokiJS database has no plain file adapter");
  }
  for (const [name, { arity }] of DATA_METHODS) {
    const method = store[name];
    if (typeof method !== "function" || method.length !== arity) throw problem(`its metadata store has no ${name}(${arity} parameters)`);
  }
  const unknown = Object.getOwnPropertyNames(Object.getPrototypeOf(store)).filter(
    (name) => !DATA_METHODS.has(name) && !OTHER_METHODS.has(name),
  );
  if (unknown.length > 0) throw problem(`its metadata store has methods this file does not classify: ${unknown.join(", ")}`);
  return store;
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
