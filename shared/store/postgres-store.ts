import type { Pool } from "pg";
import type { LeaseRecord, LeaseState } from "../lease/lease.js";
import type { CreateAlso, LeaseRenewal, LeaseStore, ReplaceAlso, StandbyRecord } from "../lease/lease-store.js";
import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import { checkStoredTokenSecret, type TokenSecretStore } from "../service/token-keys.js";
import { termSlot, type TermRecord } from "../lease/term-record.js";
import { toLeaseRecord, toStandbyRecord } from "./lease-row.js";
import { toTermRecord } from "./term-row.js";
import { quoteIdentifier } from "./postgres-schema.js";
import { bigintValue, etagParameter, etagOf, etagText, outcomeOf, PostgresCaller, type OutcomeRow, POSTGRES_STORE as STORE, statementName, sqlStateOf, UNIQUE_VIOLATION, type Statement } from "./postgres-call.js";
import { written } from "./store-failure.js";

/** The token secret's row in `secrets`. */
const SECRET_NAME = "token-secret";

const LEASE_COLUMNS = "utype, uuid, address, epoch, renewed_at, started_at, revoked, ended_uuids, handover, priority, ranked, etag";
const TERM_COLUMNS = "utype, slot, epoch, uuid, address, started_at, ended_at, ended_by, transactional";

/** The statements of the lease store, for one schema: built once, prepared by name on each connection. */
function leaseStatements(schema: string) {
  const s = quoteIdentifier(schema);
  // Prepared statements are per connection and per name: the schema is part of the name.
  const statement = (name: string, text: string): Statement => ({ name: statementName(schema, name), text });
  // The term's values, $n to $n+8, as a row of `terms`.
  const termValues = (n: number) => `$${n}, $${n + 1}::smallint, $${n + 2}::bigint, $${n + 3}, $${n + 4}, $${n + 5}::bigint, $${n + 6}::bigint, $${n + 7}, $${n + 8}::boolean`;
  const entryValues = `$1, $2, $3, $4::bigint, $5::bigint, $6::bigint, $7::boolean, $8::jsonb, $9::jsonb, $10::bigint, $11::boolean, nextval('${s}.etags')`;
  const termUpsert = `ON CONFLICT (utype, slot) DO UPDATE SET epoch = EXCLUDED.epoch, uuid = EXCLUDED.uuid, address = EXCLUDED.address,
      started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at, ended_by = EXCLUDED.ended_by, transactional = EXCLUDED.transactional`;
  // Whether the entry exists, read in the same statement as the write that missed it: `changed` or `missing` without a second round trip.
  const outcome = (cte: string) => `SELECT (SELECT etag FROM ${cte}) AS etag, EXISTS (SELECT 1 FROM ${s}.leases WHERE utype = $1) AS present`;
  return {
    read: statement("read", `SELECT ${LEASE_COLUMNS} FROM ${s}.leases WHERE utype = $1`),
    list: statement("list", `SELECT ${LEASE_COLUMNS} FROM ${s}.leases`),
    create: statement("create", `INSERT INTO ${s}.leases (${LEASE_COLUMNS}) VALUES (${entryValues}) ON CONFLICT (utype) DO NOTHING RETURNING etag`),
    // The mark and the entry, both plain inserts in one statement: either finding its row is a
    // unique violation that undoes the whole statement (`exists`).
    createWithMark: statement(
      "create-with-mark",
      `WITH mark AS (INSERT INTO ${s}.terms (${TERM_COLUMNS}) VALUES (${termValues(12)}) RETURNING 1)
       INSERT INTO ${s}.leases (${LEASE_COLUMNS}) SELECT ${entryValues} FROM mark RETURNING etag`,
    ),
    // The entry's insert, then its history row upserted only if the entry was written.
    createWithTerm: statement(
      "create-with-term",
      `WITH entry AS (INSERT INTO ${s}.leases (${LEASE_COLUMNS}) VALUES (${entryValues}) ON CONFLICT (utype) DO NOTHING RETURNING etag),
       term AS (INSERT INTO ${s}.terms (${TERM_COLUMNS}) SELECT ${termValues(12)} FROM entry ${termUpsert})
       SELECT etag FROM entry`,
    ),
    replace: statement(
      "replace",
      `WITH entry AS (UPDATE ${s}.leases SET uuid = $2, address = $3, epoch = $4::bigint, renewed_at = $5::bigint, started_at = $6::bigint,
         revoked = $7::boolean, ended_uuids = $8::jsonb, handover = $9::jsonb, priority = $10::bigint, ranked = $11::boolean, etag = nextval('${s}.etags')
         WHERE utype = $1 AND etag = $12::bigint RETURNING etag)
       ${outcome("entry")}`,
    ),
    // A takeover or a release: the entry's conditional update and its ended term's ring row, one statement, one transaction.
    replaceWithTerm: statement(
      "replace-with-term",
      `WITH entry AS (UPDATE ${s}.leases SET uuid = $2, address = $3, epoch = $4::bigint, renewed_at = $5::bigint, started_at = $6::bigint,
         revoked = $7::boolean, ended_uuids = $8::jsonb, handover = $9::jsonb, priority = $10::bigint, ranked = $11::boolean, etag = nextval('${s}.etags')
         WHERE utype = $1 AND etag = $12::bigint RETURNING etag),
       term AS (INSERT INTO ${s}.terms (${TERM_COLUMNS}) SELECT ${termValues(13)} FROM entry ${termUpsert})
       ${outcome("entry")}`,
    ),
    // The fast path: one conditional UPDATE, no read first. $4 says whether the address is written.
    renew: statement(
      "renew",
      `WITH entry AS (UPDATE ${s}.leases SET renewed_at = $2::bigint, address = CASE WHEN $4::boolean THEN $5 ELSE address END, etag = nextval('${s}.etags')
         WHERE utype = $1 AND etag = $3::bigint RETURNING etag)
       ${outcome("entry")}`,
    ),
    // Fails on a missing table, as every other call would: a misconfiguration is named by the health check.
    ping: statement("ping", `SELECT 1 FROM ${s}.leases WHERE utype = '~health'`),
    // Inserts the candidate, or (another instance was first) answers the stored one: one statement either way.
    tokenSecret: statement(
      "token-secret",
      `INSERT INTO ${s}.secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING secret`,
    ),
    readTerms: statement("read-terms", `SELECT ${TERM_COLUMNS} FROM ${s}.terms WHERE utype = $1`),
    upsertStandby: statement(
      "upsert-standby",
      `INSERT INTO ${s}.standbys (utype, uuid, address, seen_at, priority) VALUES ($1, $2, $3, $4::bigint, $5::bigint)
       ON CONFLICT (utype, uuid) DO UPDATE SET address = EXCLUDED.address, seen_at = EXCLUDED.seen_at, priority = EXCLUDED.priority`,
    ),
    readStandbys: statement("read-standbys", `SELECT utype, uuid, address, seen_at, priority FROM ${s}.standbys WHERE utype = $1`),
    listStandbys: statement("list-standbys", `SELECT utype, uuid, address, seen_at, priority FROM ${s}.standbys`),
    deleteStandby: statement("delete-standby", `DELETE FROM ${s}.standbys WHERE utype = $1 AND uuid = $2`),
  };
}

interface LeaseRow {
  utype: unknown;
  uuid: unknown;
  address: unknown;
  epoch: unknown;
  renewed_at: unknown;
  started_at: unknown;
  revoked: unknown;
  ended_uuids: unknown;
  handover: unknown;
  priority: unknown;
  ranked: unknown;
  etag: unknown;
}

/**
 * Leases, term history, standbys and the token secret in PostgreSQL (HA_STORE=postgres), in
 * the tables of postgres-schema.ts. Every call is one statement: a renewal is one
 * conditional `UPDATE … RETURNING` (no read first), a takeover or a release one statement
 * that updates the entry and upserts its term's ring row (both, or neither), a poll one
 * `SELECT`. A lost race is a typed outcome, told apart (`changed`, `missing`) in that same
 * statement.
 */
export class PostgresLeaseStore implements LeaseStore, TokenSecretStore {
  readonly kind = "postgres";
  readonly #caller: PostgresCaller;
  readonly #sql: ReturnType<typeof leaseStatements>;

  constructor(pool: Pool, schema: string) {
    this.#caller = new PostgresCaller(pool);
    this.#sql = leaseStatements(schema);
  }

  async read(utype: string, options?: StoreCallOptions): Promise<LeaseRecord | undefined> {
    return this.#caller.call("read a lease", options, async (run) => {
      const [row] = await run<LeaseRow>(this.#sql.read, [utype]);
      return row === undefined ? undefined : toRecord(row);
    });
  }

  async create(lease: LeaseState, options?: StoreCallOptions, also?: CreateAlso): Promise<WriteOutcome> {
    const mark = also?.creationMark;
    const term = also?.term;
    const what = mark === undefined && term === undefined ? "create a lease" : "create a lease and its history row";
    return this.#caller.call(what, options, async (run) => {
      if (mark !== undefined) {
        try {
          const [row] = await run<{ etag: unknown }>(this.#sql.createWithMark, [...entryValues(lease), ...termValues(mark)]);
          return written(STORE, etagOf(row?.etag));
        } catch (error) {
          if (sqlStateOf(error) === UNIQUE_VIOLATION) return { ok: false, reason: "exists" };
          throw error;
        }
      }
      const rows = term === undefined ? await run<{ etag: unknown }>(this.#sql.create, entryValues(lease)) : await run<{ etag: unknown }>(this.#sql.createWithTerm, [...entryValues(lease), ...termValues(term)]);
      const [row] = rows;
      return row === undefined ? { ok: false, reason: "exists" } : written(STORE, etagOf(row.etag));
    });
  }

  async replace(lease: LeaseState, etag: string, options?: StoreCallOptions, also?: ReplaceAlso): Promise<WriteOutcome> {
    const endedTerm = also?.endedTerm;
    return this.#caller.call(endedTerm === undefined ? "replace a lease" : "replace a lease and record its term", options, async (run) => {
      const values = [...entryValues(lease), etagParameter(etag)];
      const [row] = await run<OutcomeRow>(endedTerm === undefined ? this.#sql.replace : this.#sql.replaceWithTerm, endedTerm === undefined ? values : [...values, ...termValues(endedTerm)]);
      return outcomeOf(row);
    });
  }

  async renew(utype: string, renewal: LeaseRenewal, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    return this.#caller.call("renew a lease", options, async (run) => {
      const [row] = await run<OutcomeRow>(this.#sql.renew, [utype, renewal.renewedAt, etagParameter(etag), renewal.address !== undefined, renewal.address ?? null]);
      return outcomeOf(row);
    });
  }

  async list(options?: StoreCallOptions): Promise<LeaseRecord[]> {
    return this.#caller.call("list leases", options, async (run) => (await run<LeaseRow>(this.#sql.list, [])).map(toRecord));
  }

  async ping(options?: StoreCallOptions): Promise<void> {
    await this.#caller.call("reach the database", options, async (run) => {
      await run(this.#sql.ping, []);
    });
  }

  async tokenSecret(candidate: string, options?: StoreCallOptions): Promise<string> {
    return this.#caller.call("read the token secret", options, async (run) => {
      const [row] = await run<{ secret: unknown }>(this.#sql.tokenSecret, [SECRET_NAME, candidate]);
      return checkStoredTokenSecret(row?.secret, STORE);
    });
  }

  async readTerms(utype: string, options?: StoreCallOptions): Promise<TermRecord[]> {
    return this.#caller.call("read the term history", options, async (run) => {
      const rows = await run<Record<string, unknown>>(this.#sql.readTerms, [utype]);
      return rows.map((row) =>
        toTermRecord(
          {
            utype: row["utype"],
            epoch: bigintValue(row["epoch"]),
            uuid: row["uuid"],
            address: row["address"],
            startedAt: bigintValue(row["started_at"]),
            endedAt: bigintValue(row["ended_at"]),
            endedBy: row["ended_by"],
            transactional: row["transactional"],
          },
          STORE,
        ),
      );
    });
  }

  async upsertStandby(standby: StandbyRecord, options?: StoreCallOptions): Promise<void> {
    await this.#caller.call("record a standby", options, async (run) => {
      await run(this.#sql.upsertStandby, [standby.utype, standby.uuid, standby.address, standby.seenAt, standby.priority ?? null]);
    });
  }

  async readStandbys(utype: string, options?: StoreCallOptions): Promise<StandbyRecord[]> {
    return this.#caller.call("read the standbys", options, async (run) => (await run<Record<string, unknown>>(this.#sql.readStandbys, [utype])).map(toStandby));
  }

  async listStandbys(options?: StoreCallOptions): Promise<StandbyRecord[]> {
    return this.#caller.call("list the standbys", options, async (run) => (await run<Record<string, unknown>>(this.#sql.listStandbys, [])).map(toStandby));
  }

  async deleteStandby(utype: string, uuid: string, options?: StoreCallOptions): Promise<void> {
    await this.#caller.call("delete a standby", options, async (run) => {
      await run(this.#sql.deleteStandby, [utype, uuid]);
    });
  }
}

/** $1 … $11 of an entry write: its columns but the ETag, in LEASE_COLUMNS' order (a priority of 0 and no `ranked` stored as NULL). */
function entryValues(lease: LeaseState): unknown[] {
  const { utype, uuid, address, epoch, renewedAt, startedAt, revoked, endedUuids, handover, priority, ranked } = lease;
  const storedHandover = handover === undefined ? null : JSON.stringify({ to: handover.to, requestedAt: handover.requestedAt, ...(handover.reason === undefined ? {} : { reason: handover.reason }) });
  return [utype, uuid, address, epoch, renewedAt, startedAt ?? null, revoked, JSON.stringify(endedUuids), storedHandover, priority === undefined || priority === 0 ? null : priority, ranked === true ? true : null];
}

/** A term's ring row, at its slot: an upsert replaces whatever the slot held (the term N epochs older). */
function termValues(term: TermRecord): unknown[] {
  return [term.utype, termSlot(term.epoch), term.epoch, term.uuid, term.address, term.startedAt, term.endedAt, term.endedBy, term.transactional ?? null];
}

function toRecord(row: LeaseRow): LeaseRecord {
  return toLeaseRecord(
    {
      utype: row.utype,
      uuid: row.uuid,
      address: row.address,
      epoch: bigintValue(row.epoch),
      renewedAt: bigintValue(row.renewed_at),
      startedAt: bigintValue(row.started_at),
      revoked: row.revoked,
      endedUuids: row.ended_uuids,
      handover: row.handover,
      priority: bigintValue(row.priority),
      ranked: row.ranked,
      etag: etagText(row.etag),
    },
    STORE,
  );
}

function toStandby(row: Record<string, unknown>): StandbyRecord {
  return toStandbyRecord({ utype: row["utype"], uuid: row["uuid"], address: row["address"], seenAt: bigintValue(row["seen_at"]), priority: bigintValue(row["priority"]) }, STORE);
}
