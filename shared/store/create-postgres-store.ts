import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { ConfigError } from "../config/config-error.js";
import type { StoreConfig } from "../config/server-config.js";
import type { ConfiguredStore } from "./configured-store.js";
import { EntraPassword } from "./entra-password.js";
import { PostgresMemberStore } from "./members-postgres-store.js";
import { PostgresCaller } from "./postgres-call.js";
import { postgresSchemaDdl } from "./postgres-schema.js";
import { PostgresLeaseStore } from "./postgres-store.js";

/** Connections per service instance: a heartbeat holds one for one statement. */
const POOL_SIZE = 10;

/** What only the caller can give: never read from the environment. */
export interface PostgresStoreOptions {
  /** The password of every connection, instead of the URL's (the embedded server's, kept in its data directory). */
  readonly password?: string;
  /** With HA_POSTGRES_AUTH=entra, the credential whose tokens are the passwords (default DefaultAzureCredential; a test's stand-in). */
  readonly credential?: TokenCredential;
}

/**
 * Builds the PostgreSQL store (HA_STORE=postgres) on one pool of connections to
 * HA_POSTGRES_URL, TLS as its sslmode says. With HA_POSTGRES_AUTH=entra, each new
 * connection's password is a Microsoft Entra token of DefaultAzureCredential (EntraPassword).
 * No network I/O happens here.
 */
export function createPostgresStore(config: Extract<StoreConfig, { kind: "postgres" }>, options: PostgresStoreOptions = {}): ConfiguredStore {
  const connection = config.connection;
  if (connection.mode === "embedded") {
    throw new ConfigError("HA_POSTGRES_URL", "HA_STORE=postgres needs HA_POSTGRES_URL (postgres://<user>:<password>@<host>:5432/<database>). Only `npm start` embeds a PostgreSQL when it is not set.");
  }
  const entra = connection.auth === "entra" ? new EntraPassword(options.credential ?? new DefaultAzureCredential()) : undefined;
  const pool = new pg.Pool({
    // Parsed here, not given as connectionString: pg would let the URL's (empty) password override the one given below.
    ...parseIntoClientConfig(connection.url),
    max: POOL_SIZE,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: "ha-module",
    ...(entra !== undefined ? { password: () => entra.password() } : options.password !== undefined ? { password: options.password } : {}),
  });
  // An idle connection the server dropped (a restart, a failover) is an event, not a crash:
  // the pool discards it, and the next call opens another.
  pool.on("error", () => undefined);
  // A connection's own 'error' (the server ending it while the pool ends it too, at a
  // shutdown) must never be uncaught: a failing statement still rejects its call.
  // close() waits for every connection's end: pg-pool ends idle ones without waiting, and a
  // server stopped meanwhile (the embedded one, right after) would fail that end unhandled.
  const open = new Set<Promise<void>>();
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
    const ended = new Promise<void>((done) => client.once("end", () => done()));
    open.add(ended);
    void ended.then(() => open.delete(ended));
  });
  const store = new PostgresLeaseStore(pool, config.schema);
  const members = new PostgresMemberStore(pool, config.schema);
  const caller = new PostgresCaller(pool);
  return {
    store,
    members,
    secrets: store,
    prepare: async (prepareOptions) => {
      if (!config.createIfMissing) return;
      await caller.call("create the tables", prepareOptions, async (run) => {
        // Several instances starting at once: one creates, the others wait and find the tables.
        const ddl = `BEGIN; SELECT pg_advisory_xact_lock(hashtext('ha-module schema')); ${postgresSchemaDdl(config.schema)} COMMIT;`;
        await run({ name: "", text: ddl }, []);
      });
    },
    close: async () => {
      await pool.end().catch(() => undefined);
      await Promise.all(open);
    },
  };
}
