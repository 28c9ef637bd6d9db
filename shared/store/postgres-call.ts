import { createHash } from "node:crypto";
import pg from "pg";
import type { Pool, PoolClient, QueryResultRow } from "pg";
import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import { describeFailure, unavailable, written } from "./store-failure.js";

export const POSTGRES_STORE = "PostgreSQL";

/** SQLSTATE of a unique violation: a create that found its row. */
export const UNIQUE_VIOLATION = "23505";
/** SQLSTATE of a missing table (or sequence): a misconfiguration, never "no lease yet". */
const UNDEFINED_TABLE = "42P01";
const INVALID_SCHEMA = "3F000";

/** One statement: its text, its parameters, and the name it is prepared under on each connection. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/**
 * The name a statement is prepared under on each connection: per schema (the same statement
 * text differs by schema) and short, since PostgreSQL cuts names at 63 bytes and two long
 * names cut alike would be one prepared statement. The schema is named by a hash of it.
 */
export function statementName(schema: string, name: string): string {
  return `ha_${createHash("sha256").update(schema).digest("hex").slice(0, 12)}_${name}`;
}

/** Runs one statement on the connection a call holds; answers its rows. */
export type RunStatement = <R extends QueryResultRow>(statement: Statement, values: readonly unknown[]) => Promise<R[]>;

/**
 * How both PostgreSQL stores reach the server: a connection from the pool per call, every
 * statement prepared by name (parsed once per connection), the call's abort signal obeyed.
 *
 * pg has no abort signal: a call whose budget runs out is answered unavailable at once, and
 * its connection is destroyed rather than returned to the pool, so that the statement still
 * running there cannot delay the next call (the server cancels it when the socket closes).
 *
 * Anything that is not a typed outcome (refused or lost connection, a timeout, a missing
 * table, any SQL error) is thrown as a StoreUnavailableError: the caller answers 503.
 */
export class PostgresCaller {
  constructor(private readonly pool: Pool) {}

  async call<T>(what: string, options: StoreCallOptions | undefined, work: (run: RunStatement) => Promise<T>): Promise<T> {
    const signal = options?.abortSignal;
    if (signal?.aborted === true) throw unavailable(POSTGRES_STORE, what, "timed out", signal.reason);
    let abortListener: (() => void) | undefined;
    const aborted = new Promise<never>((_resolve, reject) => {
      abortListener = () => reject(new AbortedCall(signal?.reason));
      signal?.addEventListener("abort", abortListener, { once: true });
    });
    let client: PoolClient | undefined;
    let broken: unknown;
    // A checked-out connection that the server drops (a restart, a failover, a kill) emits
    // 'error' on itself, not on the pool: without a listener that would end the process.
    const lost = (error: unknown): void => {
      broken ??= error;
    };
    try {
      const connecting = this.pool.connect();
      try {
        client = await Promise.race([connecting, aborted]);
      } catch (error) {
        // A connection that arrives after the call gave up goes back to the pool unused.
        connecting.then((late) => late.release(), () => undefined);
        throw error;
      }
      const held = client;
      held.on("error", lost);
      const run: RunStatement = async <R extends QueryResultRow>(statement: Statement, values: readonly unknown[]) => {
        const query = held.query<R>({ name: statement.name, text: statement.text, values: [...values] });
        query.catch(() => undefined); // answered by the race below, or abandoned with the connection
        try {
          return (await Promise.race([query, aborted])).rows;
        } catch (error) {
          if (!(error instanceof pg.DatabaseError)) broken = error;
          throw error;
        }
      };
      return await work(run);
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      if (error instanceof AbortedCall) {
        broken ??= error;
        throw unavailable(POSTGRES_STORE, what, "timed out", error.reason);
      }
      throw unavailable(POSTGRES_STORE, what, describePostgresError(error), error);
    } finally {
      if (abortListener !== undefined) signal?.removeEventListener("abort", abortListener);
      // A connection whose statement was abandoned or whose socket failed is closed, never reused.
      client?.removeListener("error", lost);
      client?.release(broken === undefined ? undefined : true);
    }
  }
}

class AbortedCall extends Error {
  constructor(readonly reason: unknown) {
    super("The store call's time budget ran out.");
  }
}

/** The SQLSTATE of a server's error, when it is one. */
export function sqlStateOf(error: unknown): string | undefined {
  return error instanceof pg.DatabaseError ? error.code : undefined;
}

/** For the StoreUnavailableError message: the SQLSTATE and message, what to do about a missing table, or what failed without one. */
export function describePostgresError(error: unknown): string {
  const state = sqlStateOf(error);
  if (state === undefined) return describeFailure(error);
  const message = (error as Error).message;
  if (state === UNDEFINED_TABLE || state === INVALID_SCHEMA) {
    return `SQLSTATE ${state}: ${message}; create the tables with HA_STORE_CREATE=true, or run the DDL of docs/stores.md, and check HA_POSTGRES_SCHEMA`;
  }
  return `SQLSTATE ${state}: ${message}`;
}

/** A BIGINT as pg answers it (a decimal string) as a number; anything else as it is, for the row's validation to refuse. */
export function bigintValue(value: unknown): unknown {
  if (typeof value !== "string" || !/^-?[0-9]+$/.test(value)) return value;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

/** A row's ETag as the stores hand it out: the decimal string of its sequence number. */
export function etagText(value: unknown): unknown {
  if (typeof value === "string" && /^[0-9]+$/.test(value)) return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return value;
}

/**
 * An ETag a caller gave back, as the number it compares to: one this store never handed out
 * (another store's, a forged one) is -1, which matches no row: the write is `changed`.
 */
export function etagParameter(etag: string): string {
  return /^[0-9]{1,18}$/.test(etag) ? etag : "-1";
}

/** What a conditional write's statement answers: the new ETag when it wrote, and whether the row was there. */
export interface OutcomeRow {
  etag: unknown;
  present: boolean;
}

/** A conditional write's outcome from its row: written with its ETag, or refused as `changed` (the row moved on) or `missing`. */
export function outcomeOf(row: OutcomeRow | undefined): WriteOutcome {
  if (row === undefined) throw new StoreUnavailableError(`${POSTGRES_STORE} answered a conditional write with no row.`);
  if (row.etag !== null && row.etag !== undefined) return written(POSTGRES_STORE, etagOf(row.etag));
  return { ok: false, reason: row.present ? "changed" : "missing" };
}

/** An ETag as the store answered it, for `written`: a string, else undefined (which `written` reports). */
export function etagOf(value: unknown): string | undefined {
  const text = etagText(value);
  return typeof text === "string" ? text : undefined;
}
