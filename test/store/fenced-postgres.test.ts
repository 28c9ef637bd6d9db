import pg from "pg";
import { expect, it } from "vitest";
import type { EmbeddedPostgres } from "../../shared/host/embedded-postgres.js";
import { fencedPostgresRow, type FenceablePostgresClient } from "../../shared/sdk/index.js";
import { startTestPostgres, urlWithPassword } from "../helpers/postgres.js";
import { describeFencedWrites, direct, type Around } from "./fenced-write-conformance.js";

let server: EmbeddedPostgres;
let pool: pg.Pool;
let rows = 0;
const connections: Array<Promise<void>> = [];

/** The user's Pool with its statements passed through `around`: a SELECT is the read, anything else the write. */
function aroundPool(user: pg.Pool, around: Around): FenceablePostgresClient {
  return { query: (config) => around(config.text.startsWith("SELECT") ? "read" : "write", () => user.query(config)) };
}

describeFencedWrites("PostgreSQL row on a real PostgreSQL", {
  setUp: async () => {
    server = await startTestPostgres();
    pool = new pg.Pool({ connectionString: urlWithPassword(server) });
    // The server's goodbye to connections the pool is still closing at tearDown is no error of the test's.
    pool.on("connect", (client) => {
      client.on("error", () => undefined);
      connections.push(new Promise<void>((done) => client.once("end", () => done())));
    });
    // The mark's column (named as the suite names it) is text here only so that the suite can plant a malformed mark ("seven"); a bigint is the usual choice.
    await pool.query(`CREATE TABLE jobs (tenant text NOT NULL, id text NOT NULL, value text, "haEpoch" text, PRIMARY KEY (tenant, id))`);
  },
  tearDown: async () => {
    await pool.end();
    await Promise.all(connections);
    await server.close();
  },
  fresh: async () => {
    rows += 1;
    const id = `job-${rows}`;
    return {
      resourcePattern: new RegExp(`^PostgreSQL row \\(tenant = "contoso", id = "${id}"\\) in table "jobs"$`),
      write: (value, epoch, { around = direct, maxAttempts } = {}) =>
        fencedPostgresRow(aroundPool(pool, around), { table: "jobs", key: ["tenant", "id"] }, { maxAttempts, epochField: "haEpoch" }).upsert({ tenant: "contoso", id, value }, { epoch }),
      read: async () => {
        const { rows: found } = await pool.query<{ value: string; ha_epoch: string | null }>(`SELECT value, "haEpoch" AS ha_epoch FROM jobs WHERE tenant = 'contoso' AND id = $1`, [id]);
        const row = found[0];
        if (row === undefined) return undefined;
        // A mark as the user's column holds it: numbers come back as numbers, anything else as it is.
        return { value: row.value, epoch: row.ha_epoch !== null && /^[0-9]+$/.test(row.ha_epoch) ? Number(row.ha_epoch) : (row.ha_epoch ?? undefined) };
      },
      writeUnfenced: async (value, mark) => {
        await pool.query(
          `INSERT INTO jobs (tenant, id, value, "haEpoch") VALUES ('contoso', $1, $2, $3) ON CONFLICT (tenant, id) DO UPDATE SET value = EXCLUDED.value, "haEpoch" = EXCLUDED."haEpoch"`,
          [id, value, mark === undefined ? null : String(mark)],
        );
      },
    };
  },
});

it("takes the user's pg client as it is: a bigint mark column, a schema-qualified table, a row as read written back", async () => {
  const local = await startTestPostgres();
  const user = new pg.Client({ connectionString: urlWithPassword(local) });
  await user.connect();
  try {
    await user.query("CREATE SCHEMA app; CREATE TABLE app.state (id integer PRIMARY KEY, doc jsonb, ha_epoch bigint)");
    const fenced = fencedPostgresRow(user, { table: "app.state", key: ["id"] });
    expect(await fenced.upsert({ id: 1, doc: { n: 1 } }, { epoch: 1_763_632_800_123 })).toMatchObject({ created: true, attempts: 1 });
    const { rows: [read] } = await user.query("SELECT * FROM app.state WHERE id = 1");
    expect(read).toEqual({ id: 1, doc: { n: 1 }, ha_epoch: "1763632800123" });
    // Read-modify-write: the row as read (its old mark included) goes back, marked with the new epoch.
    expect(await fenced.upsert({ ...read, doc: { n: 2 } }, { epoch: 1_763_632_800_124 })).toMatchObject({ created: false, previousEpoch: 1_763_632_800_123 });
    await expect(fenced.upsert({ id: 1, doc: { n: 3 } }, { epoch: 1_763_632_800_123 })).rejects.toMatchObject({ name: "FencedOutError", storedEpoch: 1_763_632_800_124 });
    expect((await user.query("SELECT doc FROM app.state")).rows).toEqual([{ doc: { n: 2 } }]);
    await expect(fenced.upsert({ doc: {} }, { epoch: 2 })).rejects.toThrow(/no value for the key column\(s\) id/);
    expect(() => fencedPostgresRow(user, { table: "jobs; DROP TABLE x", key: ["id"] })).toThrow(TypeError);
    expect(() => fencedPostgresRow(user, { table: "jobs", key: ["ha_epoch"] })).toThrow(/not the mark's column/);
    // A missing table: the client's own error, not a lost race.
    await expect(fencedPostgresRow(user, { table: "nosuchtable", key: ["id"] }).upsert({ id: 1 }, { epoch: 1 })).rejects.toMatchObject({ code: "42P01" });
  } finally {
    await user.end();
    await local.close();
  }
});
