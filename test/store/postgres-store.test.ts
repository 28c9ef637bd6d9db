import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import type { EmbeddedPostgres } from "../../shared/host/embedded-postgres.js";
import type { ConfiguredStore } from "../../shared/store/configured-store.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { TERM_HISTORY_SLOTS } from "../../shared/contract/term-history.js";
import { createFreshPostgresStore, freshSchema, rawClient, startTestPostgres } from "../helpers/postgres.js";
import { createPostgresStore } from "../../shared/store/create-postgres-store.js";
import { postgresGrantsDdl, postgresSchemaDdl } from "../../shared/store/postgres-schema.js";
import { describeLeaseStoreConformance } from "./lease-store-conformance.js";
import { describeLeaseServiceOnStore } from "./lease-service-on-store.js";

let server: EmbeddedPostgres;
let raw: pg.Client;
const opened: ConfiguredStore[] = [];

describeLeaseStoreConformance("PostgreSQL (embedded-postgres)", {
  setUp: async () => {
    server = await startTestPostgres();
    raw = await rawClient(server);
  },
  tearDown: async () => {
    await Promise.all(opened.splice(0).map((configured) => configured.close()));
    await raw.end();
    await server.close();
  },
  createStore: async () => {
    const schema = freshSchema();
    const configured = await createFreshPostgresStore(server, schema);
    opened.push(configured);
    // A limit on history rows only, as Table Storage has one on any property: the entry's
    // write runs, then the row's fails, and the one statement must undo both.
    await raw.query(`ALTER TABLE "${schema}".terms ADD CONSTRAINT address_limit CHECK (length(address) < 65536)`);
    return configured.store;
  },
  unwritableAddress: "x".repeat(70_000),
});

let serviceServer: EmbeddedPostgres;
let serviceRaw: pg.Client;

describeLeaseServiceOnStore("PostgreSQL (embedded-postgres)", {
  setUp: async () => {
    serviceServer = await startTestPostgres();
    serviceRaw = await rawClient(serviceServer);
  },
  tearDown: async () => {
    await Promise.all(opened.splice(0).map((configured) => configured.close()));
    await serviceRaw.end();
    await serviceServer.close();
  },
  createStore: async () => {
    const schema = freshSchema("service");
    const configured = await createFreshPostgresStore(serviceServer, schema);
    opened.push(configured);
    return {
      store: configured.store,
      // A client of its own, as an operator's script would use, to delete rows behind the service.
      deleteEntry: async (utype) => void (await serviceRaw.query(`DELETE FROM "${schema}".leases WHERE utype = $1`, [utype])),
      // A history row as an earlier version would have written it: by itself, without `transactional`.
      writeLegacyTerm: async ({ utype, epoch, uuid, address, startedAt, endedAt, endedBy }) =>
        void (await serviceRaw.query(
          `INSERT INTO "${schema}".terms (utype, slot, epoch, uuid, address, started_at, ended_at, ended_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (utype, slot) DO UPDATE SET epoch = EXCLUDED.epoch, uuid = EXCLUDED.uuid, address = EXCLUDED.address, started_at = EXCLUDED.started_at,
             ended_at = EXCLUDED.ended_at, ended_by = EXCLUDED.ended_by, transactional = NULL`,
          [utype, epoch % TERM_HISTORY_SLOTS, epoch, uuid, address, startedAt, endedAt, endedBy],
        )),
    };
  },
});

const lease = { utype: "a", uuid: "u", address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] };

describe("PostgreSQL store failures", () => {
  let down: ConfiguredStore;

  beforeAll(async () => {
    const stopped = await startTestPostgres();
    down = await createFreshPostgresStore(stopped);
    await stopped.close();
  });
  afterAll(async () => down.close());

  it("maps an unreachable server to StoreUnavailableError on every call, naming the cause", async () => {
    const store = down.store;
    await expect(store.read("a")).rejects.toThrow(/Could not read a lease in PostgreSQL \(.*ECONNREFUSED/);
    await expect(store.create(lease)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.replace(lease, "1")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.renew("a", { renewedAt: 2 }, "1")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(down.members.listAll()).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe("PostgreSQL store: what is in the tables, and what it refuses", () => {
  let own: EmbeddedPostgres;
  let ownRaw: pg.Client;
  beforeAll(async () => {
    own = await startTestPostgres();
    ownRaw = await rawClient(own);
  });
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((configured) => configured.close()));
    await ownRaw.end();
    await own.close();
  });

  it("keeps epochs and times as BIGINT: an epoch floored by the clock in milliseconds reads back whole", async () => {
    const schema = freshSchema("bigint");
    const configured = await createFreshPostgresStore(own, schema);
    opened.push(configured);
    const epoch = 1_763_632_800_123;
    const created = await configured.store.create({ ...lease, epoch, renewedAt: epoch + 5, startedAt: epoch });
    expect(created.ok).toBe(true);
    expect(await configured.store.read("a")).toMatchObject({ epoch, renewedAt: epoch + 5, startedAt: epoch });
    const types = await ownRaw.query(`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND column_name IN ('epoch', 'renewed_at', 'started_at', 'ended_at', 'seen_at', 'joined_at', 'swept_at') ORDER BY table_name, column_name`, [schema]);
    expect(new Set(types.rows.map((row: { data_type: string }) => row.data_type))).toEqual(new Set(["bigint"]));
  });

  it("refuses a damaged entry as unavailable, naming the field", async () => {
    const schema = freshSchema("damaged");
    const configured = await createFreshPostgresStore(own, schema);
    opened.push(configured);
    await ownRaw.query(`INSERT INTO "${schema}".leases (utype, uuid, address, epoch, renewed_at, revoked, ended_uuids, etag) VALUES ('bad', 'u', NULL, 1, 1, false, '"not a list"', 1)`);
    await expect(configured.store.read("bad")).rejects.toThrow(/corrupt lease for "bad": endedUuids/);
    await expect(configured.store.list()).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("reports missing tables as unavailable, naming what to do, never as an empty lease", async () => {
    const configured = await createFreshPostgresStore(own, freshSchema("missing"), false);
    opened.push(configured);
    await expect(configured.store.read("a")).rejects.toThrow(/42P01.*HA_STORE_CREATE=true/);
    await expect(configured.store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("answers an ETag it never handed out as changed, not as an error", async () => {
    const configured = await createFreshPostgresStore(own);
    opened.push(configured);
    const created = await configured.store.create(lease);
    if (!created.ok) throw new Error(created.reason);
    expect(await configured.store.renew("a", { renewedAt: 2 }, 'W/"datetime\'2026\'"')).toEqual({ ok: false, reason: "changed" });
    expect(await configured.store.renew("nobody", { renewedAt: 2 }, created.etag)).toEqual({ ok: false, reason: "missing" });
  });

  it("with HA_POSTGRES_AUTH=entra, signs each new connection in with a token of the credential (no password in the URL); a credential that fails is a 503", async () => {
    const scopes: string[] = [];
    // The embedded server takes its password; Azure Database for PostgreSQL takes the identity's token the same way.
    const credential = { getToken: async (scope: string | string[]) => (scopes.push(String(scope)), { token: own.password, expiresOnTimestamp: Date.now() + 3_600_000 }) };
    const entra = createPostgresStore({ kind: "postgres", schema: freshSchema("entra"), connection: { mode: "url", url: own.url, auth: "entra" }, createIfMissing: true }, { credential });
    opened.push(entra);
    await entra.prepare();
    await Promise.all([1, 2, 3].map((n) => entra.store.create({ ...lease, utype: `entra-${n}` })));
    expect((await entra.store.list()).map((record) => record.utype).sort()).toEqual(["entra-1", "entra-2", "entra-3"]);
    expect(scopes.length).toBeGreaterThanOrEqual(1);
    expect(new Set(scopes)).toEqual(new Set(["https://ossrdbms-aad.database.windows.net/.default"]));
    const refused = createPostgresStore({ kind: "postgres", schema: freshSchema("entra"), connection: { mode: "url", url: own.url, auth: "entra" }, createIfMissing: false }, {
      credential: { getToken: async () => Promise.reject(new Error("ManagedIdentityCredential: no identity")) },
    });
    opened.push(refused);
    await expect(refused.store.read("a")).rejects.toThrow(/Could not read a lease in PostgreSQL \(ManagedIdentityCredential: no identity\)/);
  });

  it("runs as a user given only docs/stores.md's grants, on tables a DBA created with its DDL", async () => {
    const schema = freshSchema("dba");
    await ownRaw.query(postgresSchemaDdl(schema));
    await ownRaw.query(`DROP ROLE IF EXISTS "ha-func"; CREATE ROLE "ha-func" LOGIN PASSWORD 'only-the-grants-1234'`);
    await ownRaw.query(postgresGrantsDdl(schema, "ha-func"));
    const url = new URL(own.url);
    url.username = "ha-func";
    url.password = "only-the-grants-1234";
    const narrow = createPostgresStore({ kind: "postgres", schema, connection: { mode: "url", url: url.href, auth: "password" }, createIfMissing: false });
    opened.push(narrow);
    const created = await narrow.store.create({ ...lease, utype: "dba" }, undefined, { creationMark: { utype: "dba", epoch: 0, uuid: "u", address: null, startedAt: 1, endedAt: 1, endedBy: "released", transactional: true } });
    if (!created.ok) throw new Error(created.reason);
    expect(await narrow.store.renew("dba", { renewedAt: 2 }, created.etag)).toMatchObject({ ok: true });
    await narrow.store.upsertStandby({ utype: "dba", uuid: "s", address: null, seenAt: 3 });
    await narrow.store.deleteStandby("dba", "s");
    expect(await narrow.secrets.tokenSecret("a-candidate-secret-long-enough-1234567890")).toBe("a-candidate-secret-long-enough-1234567890");
    expect(await narrow.members.create({ group: "g", member: "m", session: "s", address: null, joinedAt: 1, renewedAt: 1, heartbeats: 1, leftAt: null, previous: null, endedSessions: [] })).toMatchObject({ ok: true });
    expect(await narrow.members.writeMarker({ group: "g", sweptAt: 1, gap: null, removedSessions: [] }, undefined)).toMatchObject({ ok: true });
    // It may not change the schema: creating tables is the DBA's.
    const creating = createPostgresStore({ kind: "postgres", schema, connection: { mode: "url", url: url.href, auth: "password" }, createIfMissing: true });
    opened.push(creating);
    await expect(creating.prepare()).rejects.toThrow(/42501|permission denied/);
  });

  it("works in a schema of the longest name PostgreSQL takes, every statement prepared on one connection", async () => {
    // Prepared statement names are cut at 63 bytes: names built from the schema would collide.
    const schema = `long_${process.pid}_`.padEnd(63, "x");
    const configured = await createFreshPostgresStore(own, schema);
    opened.push(configured);
    const created = await configured.store.create({ ...lease, utype: "long" });
    if (!created.ok) throw new Error(created.reason);
    const mark = { utype: "long-2", epoch: 0, uuid: "u", address: null, startedAt: 1, endedAt: 1, endedBy: "released" as const, transactional: true };
    expect(await configured.store.create({ ...lease, utype: "long-2" }, undefined, { creationMark: mark })).toMatchObject({ ok: true });
    expect(await configured.store.renew("long", { renewedAt: 5 }, created.etag)).toMatchObject({ ok: true });
    expect(await configured.store.replace({ ...lease, utype: "long", uuid: "next", epoch: 2 }, created.etag)).toEqual({ ok: false, reason: "changed" });
    expect(await configured.members.listAll()).toEqual([]);
  });

  it("creates its tables once when several instances start at once", async () => {
    const schema = freshSchema("race");
    const all = await Promise.all([1, 2, 3, 4].map(() => createFreshPostgresStore(own, schema)));
    opened.push(...all);
    expect(await all[0]!.secrets.tokenSecret("a-candidate-secret-long-enough-1234567890")).toBe(await all[3]!.secrets.tokenSecret("another-candidate-long-enough-1234567890"));
  });
});
