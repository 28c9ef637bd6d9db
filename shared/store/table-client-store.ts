import type { TableClient } from "@azure/data-tables";
import type { StoreCallOptions } from "../service/store-call.js";
import type { TableRowClient } from "./table-rest.js";
import { guardTableCall } from "./table-values.js";

/** How store errors name the Table adapters' store (StoreUnavailableError, corrupted rows). */
export const TABLE_STORE = "Azure Table Storage";

/**
 * What both Table stores (leases, membership) are built on: already-built clients, so the
 * caller chooses the credential (connection string, or DefaultAzureCredential) — the SDK's
 * TableClient for creates, transactions and deletes, and `rows` (table-rest.ts) for a
 * heartbeat's calls — and their table created when missing (local runs and
 * HA_STORE_CREATE=true; in Azure, Bicep creates it).
 */
export abstract class TableClientStore {
  readonly kind = "table";

  constructor(
    protected readonly client: TableClient,
    protected readonly rows: TableRowClient,
  ) {}

  async createTableIfMissing(options?: StoreCallOptions): Promise<void> {
    await guardTableCall(TABLE_STORE, `create the table ${this.client.tableName}`, () => this.client.createTable({ abortSignal: options?.abortSignal }));
  }
}
