import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import { describeTableError, isEntityNotFound, statusOf } from "./table-errors.js";
import { unavailable, written } from "./store-failure.js";
import type { TableRow, TableRowClient } from "./table-rest.js";

/**
 * Table Storage's value conventions and conditional writes, for both Table adapters (the
 * lease table and the membership table): Int64 written as `{value, type}` and read back as
 * a bigint, no null (a property is absent or ""), no arrays or objects (JSON strings).
 */

export function int64(value: number): { value: string; type: "Int64" } {
  return { value: String(value), type: "Int64" };
}

/** Int64 comes back as a bigint by default, as `{value, type}` when type conversion is off. */
export function toNumber(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string" && /^-?[0-9]+$/.test(value)) return Number(value);
  if (typeof value === "object" && value !== null && "value" in value) return toNumber(value.value);
  return value;
}

/** A stored JSON string parsed; absent stays absent, and what does not parse is passed on to be refused. */
export function parseJson(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/**
 * How a record's property is kept in a Table entity: `text` as it is, `address` with ""
 * for null, `int64` as Int64, `json` as a JSON string. An Int64 or JSON property that is
 * null or undefined is left out (a Replace then drops it).
 */
export type TableField = "text" | "address" | "int64" | "json";

/** The properties of one kind of row, by name. */
export type TableFields = Readonly<Record<string, TableField>>;

/** A record's properties as an entity keeps them (keys not included). */
export function toTableProperties(record: object, fields: TableFields): Record<string, unknown> {
  const values = record as Record<string, unknown>;
  const properties: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(fields)) {
    const value = values[name];
    if (kind === "address") properties[name] = value ?? "";
    else if (value === null || value === undefined) continue;
    else properties[name] = kind === "int64" ? int64(value as number) : kind === "json" ? JSON.stringify(value) : value;
  }
  return properties;
}

/** An entity's properties undone ("" → null, Int64 → number, JSON parsed), to be validated by the row's own check. */
export function fromTableProperties<F extends TableFields>(entity: Readonly<Record<string, unknown>>, fields: F): { [name in keyof F]: unknown } {
  const record: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(fields)) {
    const value = entity[name];
    record[name] = kind === "address" ? (value === "" ? null : value) : kind === "int64" ? toNumber(value) : kind === "json" ? parseJson(value) : value;
  }
  return record as { [name in keyof F]: unknown };
}

/** Runs one store call; anything that is not a typed outcome becomes StoreUnavailableError. */
export async function guardTableCall<T>(store: string, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw error;
    throw unavailable(store, what, describeTableError(error), error);
  }
}

/**
 * A conditional write: a `create` (fails when the row exists) or an `update` (an If-Match
 * update, merge or entity-group transaction, which fails when the row's ETag moved on or the
 * row is gone).
 */
export type ConditionalWriteKind = "create" | "update";

/**
 * The typed outcome a failed conditional write stands for: 409 on a create is `exists`;
 * 412 on an update is `changed` and 404 for the entity (not the table) `missing`. Undefined
 * for any other failure, which is the store being unavailable.
 */
export function lostTableRace(error: unknown, kind: ConditionalWriteKind): WriteOutcome | undefined {
  const status = statusOf(error);
  if (kind === "create") return status === 409 ? { ok: false, reason: "exists" } : undefined;
  if (status === 412) return { ok: false, reason: "changed" };
  if (isEntityNotFound(error)) return { ok: false, reason: "missing" };
  return undefined;
}

/**
 * Runs one conditional write and answers its outcome: the new ETag, a lost race
 * (lostTableRace), or StoreUnavailableError for anything else (guardTableCall).
 */
export async function conditionalTableWrite(
  store: string,
  what: string,
  kind: ConditionalWriteKind,
  write: () => Promise<{ readonly etag?: string | undefined }>,
): Promise<WriteOutcome> {
  return guardTableCall(store, what, async () => {
    let etag: string | undefined;
    try {
      ({ etag } = await write());
    } catch (error) {
      const lost = lostTableRace(error, kind);
      if (lost === undefined) throw error;
      return lost;
    }
    return written(store, etag);
  });
}

export type { TableRow } from "./table-rest.js";

/**
 * An If-Match update of one row: a Replace writes the row whole, a Merge only the
 * properties it names. The ETag is always passed (an update without one would be a silent
 * unconditional write).
 */
export function updateIfMatch(
  rows: TableRowClient,
  store: string,
  what: string,
  row: TableRow,
  mode: "Merge" | "Replace",
  etag: string,
  options: StoreCallOptions | undefined,
): Promise<WriteOutcome> {
  return conditionalTableWrite(store, what, "update", () => rows.updateEntity(row, mode, etag, options));
}
