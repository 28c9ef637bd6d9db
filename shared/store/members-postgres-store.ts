import type { Pool } from "pg";
import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import type { DeleteOutcome, GroupSnapshot, MemberAndMarker, MemberRenewal, MemberStore } from "../members/member-store.js";
import type { MemberRecord, MemberRow, SweepMarker, SweepMarkerRecord } from "../members/member.js";
import { toMemberRecord, toSweepMarkerRecord } from "./member-row.js";
import { quoteIdentifier } from "./postgres-schema.js";
import { etagParameter, etagOf, etagText, outcomeOf, PostgresCaller, type OutcomeRow, POSTGRES_STORE as STORE, statementName, type Statement } from "./postgres-call.js";
import { written } from "./store-failure.js";

const MEMBER_COLUMNS = "group_name, member, session, address, joined_at, renewed_at, heartbeats, left_at, previous, ended_sessions, etag";

function memberStatements(schema: string) {
  const s = quoteIdentifier(schema);
  const statement = (name: string, text: string): Statement => ({ name: statementName(schema, `members-${name}`), text });
  // A group's rows and its marker as JSON, read by one statement (one snapshot).
  const rowsOf = (where: string) => `(SELECT coalesce(json_agg(m ORDER BY m.member), '[]'::json) FROM ${s}.members m WHERE ${where})`;
  const markerOf = (group: string) => `(SELECT row_to_json(k) FROM ${s}.sweep_markers k WHERE k.group_name = ${group})`;
  const memberOutcome = (cte: string) => `SELECT (SELECT etag FROM ${cte}) AS etag, EXISTS (SELECT 1 FROM ${s}.members WHERE group_name = $1 AND member = $2) AS present`;
  return {
    read: statement("read", `SELECT ${rowsOf("m.group_name = $1 AND m.member = $2")} AS rows, ${markerOf("$1")} AS marker`),
    listGroup: statement("list-group", `SELECT ${rowsOf("m.group_name = $1")} AS rows, ${markerOf("$1")} AS marker`),
    listAll: statement(
      "list-all",
      `SELECT g.group_name, ${rowsOf("m.group_name = g.group_name")} AS rows, ${markerOf("g.group_name")} AS marker
       FROM (SELECT group_name FROM ${s}.members UNION SELECT group_name FROM ${s}.sweep_markers) g`,
    ),
    create: statement(
      "create",
      `INSERT INTO ${s}.members (${MEMBER_COLUMNS}) VALUES ($1, $2, $3, $4, $5::bigint, $6::bigint, $7::bigint, $8::bigint, $9::jsonb, $10::jsonb, nextval('${s}.etags'))
       ON CONFLICT (group_name, member) DO NOTHING RETURNING etag`,
    ),
    replace: statement(
      "replace",
      `WITH row AS (UPDATE ${s}.members SET session = $3, address = $4, joined_at = $5::bigint, renewed_at = $6::bigint, heartbeats = $7::bigint, left_at = $8::bigint,
         previous = $9::jsonb, ended_sessions = $10::jsonb, etag = nextval('${s}.etags') WHERE group_name = $1 AND member = $2 AND etag = $11::bigint RETURNING etag)
       ${memberOutcome("row")}`,
    ),
    // The fast path: one conditional UPDATE, no read first. $6 says whether the address is written.
    renew: statement(
      "renew",
      `WITH row AS (UPDATE ${s}.members SET renewed_at = $3::bigint, heartbeats = $4::bigint, address = CASE WHEN $6::boolean THEN $7 ELSE address END,
         etag = nextval('${s}.etags') WHERE group_name = $1 AND member = $2 AND etag = $5::bigint RETURNING etag)
       ${memberOutcome("row")}`,
    ),
    delete: statement(
      "delete",
      `WITH gone AS (DELETE FROM ${s}.members WHERE group_name = $1 AND member = $2 AND etag = $3::bigint RETURNING etag)
       ${memberOutcome("gone")}`,
    ),
    createMarker: statement(
      "create-marker",
      `INSERT INTO ${s}.sweep_markers (group_name, swept_at, gap_start, gap_end, removed_sessions, etag) VALUES ($1, $2::bigint, $3::bigint, $4::bigint, $5::jsonb, nextval('${s}.etags'))
       ON CONFLICT (group_name) DO NOTHING RETURNING etag`,
    ),
    replaceMarker: statement(
      "replace-marker",
      `WITH marker AS (UPDATE ${s}.sweep_markers SET swept_at = $2::bigint, gap_start = $3::bigint, gap_end = $4::bigint, removed_sessions = $5::jsonb, etag = nextval('${s}.etags')
         WHERE group_name = $1 AND etag = $6::bigint RETURNING etag)
       SELECT (SELECT etag FROM marker) AS etag, EXISTS (SELECT 1 FROM ${s}.sweep_markers WHERE group_name = $1) AS present`,
    ),
  };
}

interface SnapshotRow {
  rows: unknown;
  marker: unknown;
}

/**
 * Membership in PostgreSQL (HA_STORE=postgres): `members` keyed by (group, member), the
 * group's sweep marker in `sweep_markers`. A group is read with its marker by one statement;
 * a heartbeat's renewal is one conditional `UPDATE … RETURNING`; a lost race is a typed
 * outcome, told apart in the same statement.
 */
export class PostgresMemberStore implements MemberStore {
  readonly kind = "postgres";
  readonly #caller: PostgresCaller;
  readonly #sql: ReturnType<typeof memberStatements>;

  constructor(pool: Pool, schema: string) {
    this.#caller = new PostgresCaller(pool);
    this.#sql = memberStatements(schema);
  }

  async read(group: string, member: string, options?: StoreCallOptions): Promise<MemberAndMarker> {
    return this.#caller.call("read a member", options, async (run) => {
      const [row] = await run<SnapshotRow>(this.#sql.read, [group, member]);
      const snapshot = toSnapshot(group, row);
      return { row: snapshot.rows[0], marker: snapshot.marker };
    });
  }

  async listGroup(group: string, options?: StoreCallOptions): Promise<GroupSnapshot> {
    return this.#caller.call("list a group", options, async (run) => toSnapshot(group, (await run<SnapshotRow>(this.#sql.listGroup, [group]))[0]));
  }

  async listAll(options?: StoreCallOptions): Promise<GroupSnapshot[]> {
    return this.#caller.call("list every group", options, async (run) => {
      const rows = await run<SnapshotRow & { group_name: string }>(this.#sql.listAll, []);
      return rows.map((row) => toSnapshot(row.group_name, row));
    });
  }

  async create(row: MemberRow, options?: StoreCallOptions): Promise<WriteOutcome> {
    return this.#caller.call("create a member", options, async (run) => {
      const [created] = await run<{ etag: unknown }>(this.#sql.create, memberValues(row));
      return created === undefined ? { ok: false, reason: "exists" } : written(STORE, etagOf(created.etag));
    });
  }

  async replace(row: MemberRow, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    return this.#caller.call("replace a member", options, async (run) => outcomeOf((await run<OutcomeRow>(this.#sql.replace, [...memberValues(row), etagParameter(etag)]))[0]));
  }

  async renew(group: string, member: string, renewal: MemberRenewal, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    return this.#caller.call("renew a member", options, async (run) => {
      const values = [group, member, renewal.renewedAt, renewal.heartbeats, etagParameter(etag), renewal.address !== undefined, renewal.address ?? null];
      return outcomeOf((await run<OutcomeRow>(this.#sql.renew, values))[0]);
    });
  }

  async delete(group: string, member: string, etag: string, options?: StoreCallOptions): Promise<DeleteOutcome> {
    return this.#caller.call("delete a member", options, async (run) => {
      const [row] = await run<OutcomeRow>(this.#sql.delete, [group, member, etagParameter(etag)]);
      if (row === undefined) throw new StoreUnavailableError(`${STORE} answered a conditional delete with no row.`);
      if (row.etag !== null && row.etag !== undefined) return { ok: true };
      return { ok: false, reason: row.present ? "changed" : "missing" };
    });
  }

  async writeMarker(marker: SweepMarker, etag: string | undefined, options?: StoreCallOptions): Promise<WriteOutcome> {
    const values = [marker.group, marker.sweptAt, marker.gap?.startedAt ?? null, marker.gap?.endedAt ?? null, JSON.stringify(marker.removedSessions)];
    if (etag === undefined) {
      return this.#caller.call("create a sweep marker", options, async (run) => {
        const [created] = await run<{ etag: unknown }>(this.#sql.createMarker, values);
        return created === undefined ? { ok: false, reason: "exists" } : written(STORE, etagOf(created.etag));
      });
    }
    return this.#caller.call("replace a sweep marker", options, async (run) => outcomeOf((await run<OutcomeRow>(this.#sql.replaceMarker, [...values, etagParameter(etag)]))[0]));
  }
}

function memberValues(row: MemberRow): unknown[] {
  const { group, member, session, address, joinedAt, renewedAt, heartbeats, leftAt, previous, endedSessions } = row;
  return [
    group,
    member,
    session,
    address,
    joinedAt,
    renewedAt,
    heartbeats,
    leftAt,
    previous === null ? null : JSON.stringify({ session: previous.session, state: previous.state, at: previous.at }),
    JSON.stringify(endedSessions),
  ];
}

/** One group as the statement answered it (rows and marker as JSON), each row validated. */
function toSnapshot(group: string, row: SnapshotRow | undefined): GroupSnapshot {
  const rows = Array.isArray(row?.rows) ? (row.rows as Array<Record<string, unknown>>) : [];
  const members: MemberRecord[] = rows.map((member) =>
    toMemberRecord(
      {
        group: member["group_name"],
        member: member["member"],
        session: member["session"],
        address: member["address"],
        joinedAt: member["joined_at"],
        renewedAt: member["renewed_at"],
        heartbeats: member["heartbeats"],
        leftAt: member["left_at"],
        previous: member["previous"],
        endedSessions: member["ended_sessions"],
        etag: etagText(member["etag"]),
      },
      STORE,
    ),
  );
  const stored = row?.marker as Record<string, unknown> | null | undefined;
  const marker: SweepMarkerRecord | undefined =
    stored === null || stored === undefined
      ? undefined
      : toSweepMarkerRecord(
          { group: stored["group_name"], sweptAt: stored["swept_at"], gapStart: stored["gap_start"], gapEnd: stored["gap_end"], removedSessions: stored["removed_sessions"], etag: etagText(stored["etag"]) },
          STORE,
        );
  return { group, rows: members, marker };
}
