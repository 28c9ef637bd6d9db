import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import type { ConfiguredStore } from "../../shared/store/configured-store.js";
import { countTableRequests, startTestAzurite, type CountedAzurite } from "./azurite.js";
import { createFreshCosmosStore, startFaultyTestCosmos, type FaultyCosmos } from "./cosmos.js";
import type { EmbeddedPostgres } from "../../shared/host/embedded-postgres.js";
import { createFreshPostgresStore, startTestPostgres } from "./postgres.js";
import { countPostgresStatements, type CountedPostgres } from "../../bench/helpers/postgres-wire.js";

/** Real stores whose requests a cost test counts on the wire; one per test file, closed after it. */
export interface StoresOnTheWire {
  /** Azurite behind a counting proxy: every Table request. */
  table(): Promise<CountedAzurite>;
  /** The Cosmos emulator and fresh containers on it: every document request (not account, database or container ones). */
  cosmos(): Promise<{ readonly configured: ConfiguredStore; requests(): number }>;
  /** A real PostgreSQL behind a counting proxy, and a fresh schema on it: every statement (the schema's creation not counted). */
  postgres(): Promise<{ readonly configured: ConfiguredStore; requests(): number }>;
  close(): Promise<void>;
}

export function storesOnTheWire(): StoresOnTheWire {
  let azurite: EmbeddedAzurite | undefined;
  let counted: CountedAzurite | undefined;
  let cosmos: FaultyCosmos | undefined;
  let configured: ConfiguredStore | undefined;
  let postgres: EmbeddedPostgres | undefined;
  let statements: CountedPostgres | undefined;
  let postgresStore: ConfiguredStore | undefined;
  return {
    async table() {
      azurite = await startTestAzurite();
      counted = await countTableRequests(azurite);
      return counted;
    },
    async cosmos() {
      const emulator = await startFaultyTestCosmos();
      cosmos = emulator;
      configured = await createFreshCosmosStore(emulator);
      return { configured, requests: () => emulator.documentRequests() };
    },
    async postgres() {
      postgres = await startTestPostgres();
      const counted = await countPostgresStatements(postgres.port);
      statements = counted;
      const url = new URL(postgres.url);
      url.port = String(counted.port);
      postgresStore = await createFreshPostgresStore({ ...postgres, url: url.href });
      return { configured: postgresStore, requests: () => counted.statements() };
    },
    async close() {
      await postgresStore?.close();
      await statements?.close();
      await postgres?.close();
      configured?.close();
      await cosmos?.close();
      await counted?.close();
      await azurite?.close();
    },
  };
}
