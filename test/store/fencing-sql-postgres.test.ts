import { readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedPostgres } from "../../shared/host/embedded-postgres.js";
import { startTestPostgres, urlWithPassword } from "../helpers/postgres.js";

/**
 * docs/fencing.md's SQL form of fencing, its statements taken from the page itself, on a
 * real PostgreSQL (test/unit/fencing-sql.test.ts runs the same on SQLite). The page writes
 * parameters as @name; here each name becomes its $n.
 */
const page = readFileSync(new URL("../../docs/fencing.md", import.meta.url), "utf8");
const block = /```sql\n([\s\S]*?)```/.exec(page)?.[1] ?? "";
const statements = block
  .split("\n")
  .map((line) => line.replace(/--.*$/, "").trim())
  .join(" ")
  .split(";")
  .map((statement) => statement.replace(/\s+/g, " ").trim())
  .filter((statement) => statement !== "");
const [create, update, insert, upsert] = statements;
const NAMES = ["id", "state", "epoch"] as const;
const numbered = (sql: string): string => sql.replace(/@(id|state|epoch)\b/g, (_, name: (typeof NAMES)[number]) => `$${NAMES.indexOf(name) + 1}`);

/** An epoch as the service hands them out once floored by the clock: beyond a 32-bit INTEGER. */
const OLD = 1_763_632_800_123;
const NEW = OLD + 1;

describe("the SQL form of fencing in docs/fencing.md, on PostgreSQL", () => {
  let server: EmbeddedPostgres;
  let client: pg.Client;
  const run = async (sql: string | undefined, id: string, state: string, epoch: number): Promise<{ rows?: number; error?: string }> => {
    try {
      return { rows: (await client.query(numbered(sql!), [id, state, epoch])).rowCount ?? 0 };
    } catch (error) {
      return { error: (error as Error).message };
    }
  };
  const table = async (): Promise<unknown[]> => (await client.query("SELECT id, state, epoch FROM jobs ORDER BY id")).rows.map((row: { id: string; state: string; epoch: string }) => [row.id, row.state, Number(row.epoch)]);

  beforeAll(async () => {
    expect(statements.map((statement) => statement.split(" ")[0])).toEqual(["CREATE", "UPDATE", "INSERT", "INSERT"]);
    server = await startTestPostgres();
    client = new pg.Client({ connectionString: urlWithPassword(server) });
    await client.connect();
    await client.query(create!);
  });
  afterAll(async () => {
    await client?.end();
    await server?.close();
  });

  it("UPDATE … WHERE epoch <= @epoch, then INSERT for the first write: equal and higher epochs apply, a lower one affects 0 rows", async () => {
    expect(await run(update, "a", "first", OLD)).toEqual({ rows: 0 });
    expect(await run(insert, "a", "first", OLD)).toEqual({ rows: 1 });
    expect(await run(update, "a", "again", OLD)).toEqual({ rows: 1 });
    expect(await run(update, "a", "newer", NEW)).toEqual({ rows: 1 });
    expect(await run(update, "a", "stale", OLD)).toEqual({ rows: 0 });
    expect((await run(insert, "a", "stale", OLD)).error).toMatch(/duplicate key value violates unique constraint "jobs_pkey"/);
    expect(await table()).toEqual([["a", "newer", NEW]]);
  });

  it("INSERT … ON CONFLICT … WHERE jobs.epoch <= excluded.epoch: one statement for both, 0 rows when fenced out", async () => {
    const results = [await run(upsert, "b", "first", OLD), await run(upsert, "b", "again", OLD), await run(upsert, "b", "newer", NEW), await run(upsert, "b", "stale", OLD)];
    expect(results).toEqual([{ rows: 1 }, { rows: 1 }, { rows: 1 }, { rows: 0 }]);
    expect((await table()).filter((row) => (row as string[])[0] === "b")).toEqual([["b", "newer", NEW]]);
  });

  it("two writers racing in two transactions: the older epoch's UPDATE waits for the newer's commit, then affects 0 rows", async () => {
    await run(upsert, "c", "start", OLD);
    const other = new pg.Client({ connectionString: urlWithPassword(server) });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query(numbered(update!), ["c", "newer", NEW]);
      // The stale writer's statement blocks on the row lock until the newer commits, then re-checks the row.
      const stale = client.query(numbered(update!), ["c", "stale", OLD]);
      await new Promise((done) => setTimeout(done, 100));
      await other.query("COMMIT");
      expect((await stale).rowCount).toBe(0);
      expect((await table()).filter((row) => (row as string[])[0] === "c")).toEqual([["c", "newer", NEW]]);
    } finally {
      await other.end();
    }
  });
});
