/**
 * Fenced writes to one row of a PostgreSQL table with the caller's own client from `pg`
 * (a `Pool`, a `Client` or a `PoolClient`; docs/fencing.md). The SDK imports nothing of that
 * package: the client is described by its one method used, `query`.
 *
 * The row's version is PostgreSQL's own `xmin` (the transaction that wrote the row's current
 * version), read with the mark and named in the write's WHERE clause: an If-Match that needs
 * no column of its own. The mark is a column of the row (default `ha_epoch`); a table whose
 * key columns are its primary key (or a unique key) is all it needs.
 */

import { fencedWriter, LOST_RACE, parseStoredEpoch, type FencedWriteOptions, type FencedWriteResult, type FencedWriterOptions } from "./fenced-write.js";

/** What `pg`'s `query` answers, as far as a fenced write reads it. */
export interface FenceablePostgresResult {
  /** The rows the statement returned. */
  readonly rows: ReadonlyArray<Record<string, unknown>>;
}

/** The method of `pg`'s `Pool`, `Client` or `PoolClient` a fenced write uses. */
export interface FenceablePostgresClient {
  /** Runs one parameterised statement ($1, $2, …). */
  query(config: { text: string; values: unknown[] }): Promise<FenceablePostgresResult>;
}

/** Which rows a fenced writer writes: the table, and the columns that identify a row. */
export interface FencedPostgresTable {
  /** The table, `name` or `schema.name` (each part letters, digits, `_` or `$`, starting with a letter or `_`; quoted as written). */
  readonly table: string;
  /** The columns of its primary key (or of a unique key): each write's row names a value for each. */
  readonly key: readonly string[];
}

/** A row to write: a value for each key column and each column to set, by column name. */
export type FenceablePostgresRow = Readonly<Record<string, unknown>>;

/** Fenced writes to the rows of one table, as fencedPostgresRow() makes them. */
export interface FencedPostgresRows {
  /** Inserts the row, or updates its columns, if no newer epoch has written it; throws FencedOutError if one has. */
  upsert(row: FenceablePostgresRow, options: FencedWriteOptions): Promise<FencedWriteResult>;
}

/** The default column of the mark: a SQL table's columns are usually snake case. */
export const DEFAULT_POSTGRES_EPOCH_COLUMN = "ha_epoch";

const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

function quote(name: string): string {
  return `"${name}"`;
}

/** Fenced writes to the rows of `table` through `client`; each row keeps its own epoch mark in the column `epochField` (default `ha_epoch`). */
export function fencedPostgresRow(client: FenceablePostgresClient, table: FencedPostgresTable, options?: FencedWriterOptions): FencedPostgresRows {
  const writer = fencedWriter(options, DEFAULT_POSTGRES_EPOCH_COLUMN);
  const { epochField } = writer;
  if (typeof client?.query !== "function") throw new TypeError("Expected a client from pg (a Pool, a Client or a PoolClient): something with query({ text, values }).");
  const parts = typeof table?.table === "string" ? table.table.split(".") : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((part) => NAME_PATTERN.test(part))) {
    throw new TypeError(`Expected \`table\` to be name or schema.name, each part letters, digits, '_' or '$', starting with a letter or '_', got ${JSON.stringify(table?.table)}.`);
  }
  const key = Array.isArray(table.key) ? [...table.key] : [];
  if (key.length === 0 || !key.every((column) => typeof column === "string" && NAME_PATTERN.test(column)) || key.includes(epochField)) {
    throw new TypeError(`Expected \`key\` to be the table's key columns (one or more names, not the mark's column \`${epochField}\`), got ${JSON.stringify(table.key)}.`);
  }
  const qualified = parts.map(quote).join(".");
  const where = key.map((column, index) => `${quote(column)} = $${index + 1}`).join(" AND ");
  return {
    upsert: (row, writeOptions) =>
      writer.write(writeOptions, (epoch) => {
        if (typeof row !== "object" || row === null || Array.isArray(row)) throw new TypeError("Expected the row to be an object of column values.");
        const missing = key.filter((column) => row[column] === undefined);
        if (missing.length > 0) throw new TypeError(`The row has no value for the key column(s) ${missing.join(", ")} of ${qualified}.`);
        const columns = Object.keys(row).filter((column) => column !== epochField && row[column] !== undefined);
        const bad = columns.find((column) => !NAME_PATTERN.test(column));
        if (bad !== undefined) throw new TypeError(`The row's column ${JSON.stringify(bad)} is not a plain column name (letters, digits, '_' or '$').`);
        const keyValues = key.map((column) => row[column]);
        const resource = `PostgreSQL row (${key.map((column) => `${column} = ${JSON.stringify(row[column])}`).join(", ")}) in table ${JSON.stringify(table.table)}`;
        // The mark is the write's epoch, whatever mark a row read before carries.
        const written = [...columns, epochField];
        const values = [...columns.map((column) => row[column]), epoch];
        const settable = columns.filter((column) => !key.includes(column));
        return {
          resource,
          read: async () => {
            const { rows } = await client.query({ text: `SELECT ${quote(epochField)} AS mark, xmin::text AS version FROM ${qualified} WHERE ${where}`, values: keyValues });
            const found = rows[0];
            if (found === undefined) return undefined;
            if (typeof found["version"] !== "string") throw new Error(`${resource} was read without its version (xmin), so it cannot be written conditionally.`);
            return { epoch: parseStoredEpoch(resource, epochField, found["mark"]), etag: found["version"] };
          },
          // Created by someone since the read (a key conflict: nothing inserted), or changed or
          // deleted since (no row at that version): the race is lost, and read again.
          write: async (version) => {
            const { rows } =
              version === undefined
                ? await client.query({
                    text: `INSERT INTO ${qualified} (${written.map(quote).join(", ")}) VALUES (${written.map((_, index) => `$${index + 1}`).join(", ")}) ON CONFLICT DO NOTHING RETURNING xmin::text AS version`,
                    values,
                  })
                : await client.query({
                    text: `UPDATE ${qualified} SET ${[...settable, epochField].map((column, index) => `${quote(column)} = $${key.length + index + 1}`).join(", ")} WHERE ${where} AND xmin = $${key.length + settable.length + 2}::xid RETURNING xmin::text AS version`,
                    values: [...keyValues, ...settable.map((column) => row[column]), epoch, version],
                  });
            const answer = rows[0];
            return answer === undefined ? LOST_RACE : { etag: typeof answer["version"] === "string" ? answer["version"] : undefined };
          },
        };
      }),
  };
}
