import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import { describeTableError } from "./table-errors.js";
import { unavailable } from "./store-failure.js";

/**
 * Table Storage's value conventions, for the membership table (the lease table's adapter
 * has its own copy of the first three): Int64 written as `{value, type}` and read back as
 * a bigint, no null (a property is absent or ""), no arrays or objects (JSON strings).
 */

export function int64(value: number): { value: string; type: "Int64" } {
  return { value: String(value), type: "Int64" };
}

/** Int64 comes back as a bigint by default, as `{value, type}` when type conversion is off. */
export function toNumber(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string" && /^[0-9]+$/.test(value)) return Number(value);
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

/** Runs one store call; anything that is not a typed outcome becomes StoreUnavailableError. */
export async function guardTableCall<T>(store: string, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw error;
    throw unavailable(store, what, describeTableError(error), error);
  }
}
