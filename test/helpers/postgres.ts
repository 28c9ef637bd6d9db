import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../../shared/host/embedded-postgres.js";
import { createPostgresStore } from "../../shared/store/create-postgres-store.js";
import type { ConfiguredStore } from "../../shared/store/configured-store.js";

/** A real PostgreSQL on 127.0.0.1 (a throwaway data directory), for one test file. */
export function startTestPostgres(options: { durable?: boolean; port?: number; dataDir?: string } = {}): Promise<EmbeddedPostgres> {
  return startEmbeddedPostgres({ dataDir: options.dataDir ?? "", inMemory: options.dataDir === undefined, port: options.port, durable: options.durable });
}

let schemaCounter = 0;

/** A fresh schema's name, so that tests never see each other's rows. */
export function freshSchema(prefix = "t"): string {
  schemaCounter += 1;
  return `${prefix}${process.pid}x${schemaCounter}`;
}

/**
 * The store built by the production factory in a fresh schema (created by prepare(), as
 * HA_STORE_CREATE does), with the embedded server's password. Close it when done.
 */
export async function createFreshPostgresStore(server: EmbeddedPostgres, schema = freshSchema(), createIfMissing = true): Promise<ConfiguredStore> {
  const configured = createPostgresStore({ kind: "postgres", schema, connection: { mode: "url", url: server.url, auth: "password" }, createIfMissing }, { password: server.password });
  await configured.prepare();
  return configured;
}

/** A client of its own, as a DBA's or an operator's script would use, to look at or damage rows behind the service. */
export async function rawClient(server: EmbeddedPostgres): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: urlWithPassword(server) });
  await client.connect();
  return client;
}

/** The server's URL with its password in it, as a user would write HA_POSTGRES_URL. */
export function urlWithPassword(server: EmbeddedPostgres): string {
  const url = new URL(server.url);
  url.password = server.password;
  return url.href;
}
