import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * docs/fencing.md shows fencing in SQL as an example. Its statements, taken from the page
 * itself, run here on SQLite (python3's sqlite3 module: Node 20 has no SQL engine of its own).
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

const PYTHON = `
import json, sqlite3, sys
steps = json.load(sys.stdin)
db = sqlite3.connect(":memory:")
out = []
for sql, params in steps:
    try:
        out.append({"rows": db.execute(sql, params).rowcount})
    except sqlite3.Error as error:
        out.append({"error": str(error)})
out.append({"table": db.execute("SELECT id, state, epoch FROM jobs ORDER BY id").fetchall()})
print(json.dumps(out))
`;

type Step = [string, Record<string, unknown>];
async function run(steps: Step[]): Promise<Array<{ rows?: number; error?: string; table?: unknown[] }>> {
  const child = promisify(execFile)("python3", ["-c", PYTHON]);
  child.child.stdin?.end(JSON.stringify([[create, {}], ...steps]));
  const { stdout } = await child;
  return (JSON.parse(stdout) as Array<{ rows?: number; error?: string; table?: unknown[] }>).slice(1);
}

const write = (sql: string | undefined, id: string, state: string, epoch: number): Step => [sql!, { id, state, epoch }];

describe("the SQL form of fencing in docs/fencing.md, on SQLite", () => {
  beforeAll(() => {
    expect(statements.map((statement) => statement.split(" ")[0])).toEqual(["CREATE", "UPDATE", "INSERT", "INSERT"]);
  });

  it("keeps the epoch in a 64-bit column: the service's epochs are ms of its clock (about 1.8e12), past INTEGER's 32 bits in PostgreSQL and SQL Server", async () => {
    expect(create).toMatch(/\bepoch BIGINT NOT NULL\b/);
    const CLOCK = 1_795_168_800_004;
    const results = await run([write(insert, "a", "counter", 4), write(update, "a", "clock", CLOCK), write(update, "a", "stale", 4), write(upsert, "a", "next", CLOCK + 16)]);
    expect(results.slice(0, 4)).toEqual([{ rows: 1 }, { rows: 1 }, { rows: 0 }, { rows: 1 }]);
    expect(results[4]?.table).toEqual([["a", "next", CLOCK + 16]]);
  });

  it("UPDATE … WHERE epoch <= @epoch, then INSERT for the first write: equal and higher epochs apply, a lower one affects 0 rows", async () => {
    const results = await run([
      write(update, "a", "first", 4), // no row yet: 0
      write(insert, "a", "first", 4), // the first write creates it
      write(update, "a", "again", 4), // same term: applies
      write(update, "a", "newer", 5), // newer term: applies, raises the mark
      write(update, "a", "stale", 4), // older term: 0 rows, nothing changed
      write(insert, "a", "stale", 4), // the INSERT never replaces a row: duplicate key
    ]);
    expect(results.slice(0, 5)).toEqual([{ rows: 0 }, { rows: 1 }, { rows: 1 }, { rows: 1 }, { rows: 0 }]);
    expect(results[5]?.error).toMatch(/UNIQUE constraint failed: jobs\.id/);
    expect(results[6]).toEqual({ table: [["a", "newer", 5]] });
  });

  it("INSERT … ON CONFLICT … WHERE jobs.epoch <= excluded.epoch: one statement for both, 0 rows when fenced out", async () => {
    const results = await run([write(upsert, "b", "first", 4), write(upsert, "b", "again", 4), write(upsert, "b", "newer", 5), write(upsert, "b", "stale", 4)]);
    expect(results).toEqual([{ rows: 1 }, { rows: 1 }, { rows: 1 }, { rows: 0 }, { table: [["b", "newer", 5]] }]);
  });
});
