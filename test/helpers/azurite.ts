import { startEmbeddedAzurite, type EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { createConfiguredStore } from "../../shared/store/create-store.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import type { MemberStore } from "../../shared/members/member-store.js";

/** A real Azurite Table service on 127.0.0.1 (in memory), for one test file. */
export function startTestAzurite(): Promise<EmbeddedAzurite> {
  return startEmbeddedAzurite({ dataDir: "", inMemory: true });
}

let tableCounter = 0;

/**
 * A Table store built by the production factory on a fresh table, so that tests never
 * see each other's leases.
 */
export async function createFreshTableStore(azurite: EmbeddedAzurite, tableName?: string): Promise<LeaseStore> {
  tableCounter += 1;
  const configured = createConfiguredStore({
    kind: "table",
    tableName: tableName ?? `leases${process.pid}x${tableCounter}`,
    connection: { mode: "connection-string", connectionString: azurite.connectionString },
    createIfMissing: tableName === undefined,
  });
  await configured.prepare();
  return configured.store;
}

/** A membership store built by the production factory on fresh tables (leases and members). */
export async function createFreshMemberTableStore(azurite: EmbeddedAzurite, membersTableName?: string): Promise<MemberStore> {
  tableCounter += 1;
  const configured = createConfiguredStore({
    kind: "table",
    tableName: `leases${process.pid}x${tableCounter}`,
    membersTableName: membersTableName ?? `members${process.pid}x${tableCounter}`,
    connection: { mode: "connection-string", connectionString: azurite.connectionString },
    createIfMissing: membersTableName === undefined,
  });
  await configured.prepare();
  return configured.members;
}
