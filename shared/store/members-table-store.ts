import { odata } from "@azure/data-tables";
import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import type { DeleteOutcome, GroupSnapshot, MemberAndMarker, MemberRenewal, MemberStore } from "../members/member-store.js";
import { SWEEP_MARKER_ID, type MemberRecord, type MemberRow, type SweepMarker, type SweepMarkerRecord } from "../members/member.js";
import { toMemberRecord, toSweepMarkerRecord } from "./member-row.js";
import type { StoredRow } from "./table-rest.js";
import { conditionalTableWrite, fromTableProperties, guardTableCall, int64, lostTableRace, toTableProperties, updateIfMatch, type TableFields } from "./table-values.js";
import { TABLE_STORE as STORE, TableClientStore } from "./table-client-store.js";

/**
 * Membership in its own table (HA_MEMBERS_TABLE_NAME, default `members`): PartitionKey =
 * group, RowKey = member, and the group's sweep marker under RowKey `~sweep` in the same
 * partition, so that one partition query reads a member (or the whole group) together with
 * the marker its ages depend on. On the clients TableClientStore takes: reads, If-Match
 * updates and queries go through `rows` (table-rest.ts), creates and deletes through the SDK.
 *
 * Every update and delete passes its ETag explicitly (TableClient defaults to "*").
 * Absent properties stand for null: a Replace drops what it does not name.
 */
export class TableMemberStore extends TableClientStore implements MemberStore {
  async read(group: string, member: string, options?: StoreCallOptions): Promise<MemberAndMarker> {
    const filter = odata`PartitionKey eq ${group} and (RowKey eq ${member} or RowKey eq ${SWEEP_MARKER_ID})`;
    const { rows, marker } = await this.#query("read a member", filter, options).then((snapshots) => snapshots[0] ?? empty(group));
    return { row: rows[0], marker };
  }

  async listGroup(group: string, options?: StoreCallOptions): Promise<GroupSnapshot> {
    const snapshots = await this.#query("list a group", odata`PartitionKey eq ${group}`, options);
    return snapshots[0] ?? empty(group);
  }

  async listAll(options?: StoreCallOptions): Promise<GroupSnapshot[]> {
    return this.#query("list every group", undefined, options);
  }

  async create(row: MemberRow, options?: StoreCallOptions): Promise<WriteOutcome> {
    return conditionalTableWrite(STORE, "create a member", "create", () => this.client.createEntity(toEntity(row), { abortSignal: options?.abortSignal }));
  }

  async replace(row: MemberRow, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    return updateIfMatch(this.rows, STORE, "update a member", toEntity(row), "Replace", etag, options);
  }

  async renew(group: string, member: string, renewal: MemberRenewal, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    // A Merge writes only what it names: session, joinedAt, previous and the ended list stay.
    const patch = {
      partitionKey: group,
      rowKey: member,
      renewedAt: int64(renewal.renewedAt),
      heartbeats: int64(renewal.heartbeats),
      ...(renewal.address === undefined ? {} : { address: renewal.address ?? "" }),
    };
    return updateIfMatch(this.rows, STORE, "update a member", patch, "Merge", etag, options);
  }

  async delete(group: string, member: string, etag: string, options?: StoreCallOptions): Promise<DeleteOutcome> {
    return guardTableCall(STORE, "delete a member", async () => {
      try {
        await this.client.deleteEntity(group, member, { etag, abortSignal: options?.abortSignal });
        return { ok: true };
      } catch (error) {
        const lost = lostTableRace(error, "update");
        if (lost === undefined || lost.ok) throw error;
        return { ok: false, reason: lost.reason === "missing" ? "missing" : "changed" };
      }
    });
  }

  async writeMarker(marker: SweepMarker, etag: string | undefined, options?: StoreCallOptions): Promise<WriteOutcome> {
    const { group, gap, ...rest } = marker;
    const entity = { partitionKey: group, rowKey: SWEEP_MARKER_ID, ...toTableProperties({ ...rest, gapStart: gap?.startedAt, gapEnd: gap?.endedAt }, MARKER_FIELDS) };
    if (etag !== undefined) return updateIfMatch(this.rows, STORE, "update a member", entity, "Replace", etag, options);
    return conditionalTableWrite(STORE, "create a sweep marker", "create", () => this.client.createEntity(entity, { abortSignal: options?.abortSignal }));
  }

  /** One query (every page of it), its rows grouped by partition. */
  async #query(what: string, filter: string | undefined, options: StoreCallOptions | undefined): Promise<GroupSnapshot[]> {
    return guardTableCall(STORE, what, async () => {
      const groups = new Map<string, { rows: MemberRecord[]; marker: SweepMarkerRecord | undefined }>();
      for (const entity of await this.rows.queryEntities(filter, options)) {
        const group = entity.partitionKey;
        let found = groups.get(group);
        if (found === undefined) {
          found = { rows: [], marker: undefined };
          groups.set(group, found);
        }
        if (entity.rowKey === SWEEP_MARKER_ID) found.marker = toMarker(entity);
        else found.rows.push(toRecord(entity));
      }
      return [...groups.entries()].map(([group, found]) => ({ group, ...found }));
    });
  }
}

function empty(group: string): GroupSnapshot {
  return { group, rows: [], marker: undefined };
}

/** A member's row (RowKey: the member): leftAt and previous absent while null, endedSessions a JSON array. */
const MEMBER_FIELDS = { session: "text", address: "address", joinedAt: "int64", renewedAt: "int64", heartbeats: "int64", leftAt: "int64", previous: "json", endedSessions: "json" } as const satisfies TableFields;
/** The sweep marker: the gap as two Int64 properties, absent when there is none. */
const MARKER_FIELDS = { sweptAt: "int64", gapStart: "int64", gapEnd: "int64", removedSessions: "json" } as const satisfies TableFields;

function toEntity(row: MemberRow): Record<string, unknown> & { partitionKey: string; rowKey: string } {
  return { partitionKey: row.group, rowKey: row.member, ...toTableProperties(row, MEMBER_FIELDS) };
}

function toRecord(entity: StoredRow): MemberRecord {
  return toMemberRecord({ group: entity.partitionKey, member: entity.rowKey, ...fromTableProperties(entity, MEMBER_FIELDS), etag: entity.etag }, STORE);
}

function toMarker(entity: StoredRow): SweepMarkerRecord {
  return toSweepMarkerRecord({ group: entity.partitionKey, ...fromTableProperties(entity, MARKER_FIELDS), etag: entity.etag }, STORE);
}
