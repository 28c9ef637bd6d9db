import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { startEmbeddedAzurite, type EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { createTableStore } from "../../shared/store/create-table-store.js";
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
  const configured = createTableStore({
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
  const configured = createTableStore({
    kind: "table",
    tableName: `leases${process.pid}x${tableCounter}`,
    membersTableName: membersTableName ?? `members${process.pid}x${tableCounter}`,
    connection: { mode: "connection-string", connectionString: azurite.connectionString },
    createIfMissing: membersTableName === undefined,
  });
  await configured.prepare();
  return configured.members;
}

/** Azurite seen through a proxy that counts every request reaching its Table service. */
export interface CountedAzurite {
  /** The same Azurite, its TableEndpoint the proxy's. */
  readonly azurite: EmbeddedAzurite;
  /** Requests forwarded so far. */
  requests(): number;
  close(): Promise<void>;
}

/** Puts a counting proxy on 127.0.0.1 in front of `azurite`'s Table endpoint: store operations counted on the wire. */
export async function countTableRequests(azurite: EmbeddedAzurite): Promise<CountedAzurite> {
  const target = new URL(/TableEndpoint=([^;]+)/.exec(azurite.connectionString)![1]!);
  let count = 0;
  const proxy = createServer((incoming, outgoing) => {
    count += 1;
    const forwarded = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const port = (proxy.address() as AddressInfo).port;
  return {
    azurite: { ...azurite, connectionString: azurite.connectionString.replace(/TableEndpoint=[^;]+/, `TableEndpoint=http://127.0.0.1:${port}/devstoreaccount1`) },
    requests: () => count,
    close: () => new Promise<void>((resolve) => proxy.close(() => resolve())),
  };
}
