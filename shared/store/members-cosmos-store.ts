import type { Container, IndexingPolicy, ItemDefinition, PatchOperation, SqlQuerySpec } from "@azure/cosmos";
import type { StoreCallOptions, WriteOutcome } from "../service/store-call.js";
import type { DeleteOutcome, GroupSnapshot, MemberAndMarker, MemberRenewal, MemberStore } from "../members/member-store.js";
import { SWEEP_MARKER_ID, type MemberRecord, type MemberRow, type ReplacedSession, type SweepMarker, type SweepMarkerRecord } from "../members/member.js";
import { CosmosContainerStore, ifMatch, toCosmosItem, type CosmosCallOptions } from "./cosmos-call.js";
import { conditionalCosmosWrite, lostRace } from "./cosmos-errors.js";
import { toMemberRecord, toSweepMarkerRecord } from "./member-row.js";

const STORE = "Cosmos DB";

/** The members container's partition key: a group is one logical partition. */
export const MEMBERS_PARTITION_KEY_PATH = "/group";

/**
 * Only `/group` is indexed: the partition queries filter on it (and on `id`, which Cosmos
 * always indexes in consistent mode). Nothing else is, so a heartbeat's write costs the
 * fewest RUs.
 */
export const MEMBERS_INDEXING_POLICY: IndexingPolicy = {
  indexingMode: "consistent",
  automatic: true,
  includedPaths: [{ path: "/group/?" }],
  excludedPaths: [{ path: "/*" }],
};

/** A member row (id = member) or the group's sweep marker (id = `~sweep`). */
interface MemberItem extends ItemDefinition {
  id: string;
  group: string;
  session?: string;
  address?: string | null;
  joinedAt?: number;
  renewedAt?: number;
  heartbeats?: number;
  leftAt?: number | null;
  previous?: ReplacedSession | null;
  endedSessions?: string[];
  sweptAt?: number;
  gapStart?: number | null;
  gapEnd?: number | null;
  removedSessions?: string[];
}

/**
 * Membership in its own Cosmos DB container (HA_COSMOS_MEMBERS_CONTAINER, default
 * `members`), partitioned on /group, id = member, with the group's sweep marker in the
 * same partition: one partition query reads a member (or the group) with its marker.
 * Writes are a create, or If-Match; throttling is waited out as for leases (CosmosCaller).
 */
export class CosmosMemberStore extends CosmosContainerStore implements MemberStore {
  /** Its container is partitioned on /group, indexing only /group. */
  constructor(container: Container, options: CosmosCallOptions = {}) {
    super(container, options, { partitionKeyPath: MEMBERS_PARTITION_KEY_PATH, indexingPolicy: MEMBERS_INDEXING_POLICY });
  }

  async read(group: string, member: string, options?: StoreCallOptions): Promise<MemberAndMarker> {
    const query: SqlQuerySpec = {
      query: 'SELECT * FROM c WHERE c["group"] = @group AND (c.id = @member OR c.id = @marker)',
      parameters: [
        { name: "@group", value: group },
        { name: "@member", value: member },
        { name: "@marker", value: SWEEP_MARKER_ID },
      ],
    };
    const snapshot = await this.#queryGroup("read a member", group, query, options);
    return { row: snapshot.rows[0], marker: snapshot.marker };
  }

  async listGroup(group: string, options?: StoreCallOptions): Promise<GroupSnapshot> {
    const query: SqlQuerySpec = { query: 'SELECT * FROM c WHERE c["group"] = @group', parameters: [{ name: "@group", value: group }] };
    return this.#queryGroup("list a group", group, query, options);
  }

  /** A cross-partition feed read: the sweeper's and GET /api/members', not a hot path. */
  async listAll(options?: StoreCallOptions): Promise<GroupSnapshot[]> {
    return this.caller.call("list every group", options, async (requestOptions) => {
      const { resources } = await this.container.items.readAll<MemberItem>(requestOptions).fetchAll();
      return toSnapshots(resources);
    });
  }

  async create(row: MemberRow, options?: StoreCallOptions): Promise<WriteOutcome> {
    return this.#create("create a member", toItem(row), options);
  }

  async replace(row: MemberRow, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    return this.#replace("replace a member", toItem(row), etag, options);
  }

  /** A patch, as for leases: the fast path knows only the ETag and what its token carries. */
  async renew(group: string, member: string, renewal: MemberRenewal, etag: string, options?: StoreCallOptions): Promise<WriteOutcome> {
    const operations: PatchOperation[] = [
      { op: "set", path: "/renewedAt", value: renewal.renewedAt },
      { op: "set", path: "/heartbeats", value: renewal.heartbeats },
    ];
    if (renewal.address !== undefined) operations.push({ op: "set", path: "/address", value: renewal.address });
    return this.caller.call("renew a member", options, async (requestOptions) => {
      return conditionalCosmosWrite(STORE, "update", () => this.container.item(member, group).patch<MemberItem>(operations, ifMatch(requestOptions, etag)));
    });
  }

  async delete(group: string, member: string, etag: string, options?: StoreCallOptions): Promise<DeleteOutcome> {
    return this.caller.call("delete a member", options, async (requestOptions) => {
      try {
        await this.container.item(member, group).delete(ifMatch(requestOptions, etag));
        return { ok: true };
      } catch (error) {
        const lost = lostRace(error);
        return { ok: false, reason: !lost.ok && lost.reason === "missing" ? "missing" : "changed" };
      }
    });
  }

  async writeMarker(marker: SweepMarker, etag: string | undefined, options?: StoreCallOptions): Promise<WriteOutcome> {
    const item: MemberItem = {
      id: SWEEP_MARKER_ID,
      group: marker.group,
      sweptAt: marker.sweptAt,
      gapStart: marker.gap?.startedAt ?? null,
      gapEnd: marker.gap?.endedAt ?? null,
      removedSessions: [...marker.removedSessions],
    };
    if (etag === undefined) return this.#create("create a sweep marker", item, options);
    return this.#replace("replace a sweep marker", item, etag, options);
  }

  async #create(what: string, item: MemberItem, options: StoreCallOptions | undefined): Promise<WriteOutcome> {
    return this.caller.call(what, options, async (requestOptions) => {
      return conditionalCosmosWrite(STORE, "create", () => this.container.items.create<MemberItem>(item, requestOptions));
    });
  }

  async #replace(what: string, item: MemberItem, etag: string, options: StoreCallOptions | undefined): Promise<WriteOutcome> {
    return this.caller.call(what, options, async (requestOptions) => {
      return conditionalCosmosWrite(STORE, "update", () => this.container.item(item.id, item.group).replace<MemberItem>(item, ifMatch(requestOptions, etag)));
    });
  }

  /** One partition query, every page of it. */
  async #queryGroup(what: string, group: string, query: SqlQuerySpec, options: StoreCallOptions | undefined): Promise<GroupSnapshot> {
    return this.caller.call(what, options, async (requestOptions) => {
      const { resources } = await this.container.items.query<MemberItem>(query, { ...requestOptions, partitionKey: group }).fetchAll();
      return toSnapshots(resources)[0] ?? { group, rows: [], marker: undefined };
    });
  }
}

/** What a member item keeps of the row (its id is the member). */
const MEMBER_ITEM_PROPERTIES = ["group", "session", "address", "joinedAt", "renewedAt", "heartbeats", "leftAt", "previous", "endedSessions"] as const;

function toItem(row: MemberRow): MemberItem {
  return toCosmosItem(row.member, row, MEMBER_ITEM_PROPERTIES) as MemberItem;
}

/** Items grouped by partition, each validated; a query's ETags are the items' own `_etag`. */
function toSnapshots(items: readonly MemberItem[]): GroupSnapshot[] {
  const groups = new Map<string, { rows: MemberRecord[]; marker: SweepMarkerRecord | undefined }>();
  for (const item of items) {
    let found = groups.get(item.group);
    if (found === undefined) {
      found = { rows: [], marker: undefined };
      groups.set(item.group, found);
    }
    if (item.id === SWEEP_MARKER_ID) {
      found.marker = toSweepMarkerRecord(
        { group: item.group, sweptAt: item.sweptAt, gapStart: item.gapStart, gapEnd: item.gapEnd, removedSessions: item.removedSessions, etag: item._etag },
        STORE,
      );
    } else {
      const { group, session, address, joinedAt, renewedAt, heartbeats, leftAt, previous, endedSessions } = item;
      found.rows.push(toMemberRecord({ group, member: item.id, session, address, joinedAt, renewedAt, heartbeats, leftAt, previous, endedSessions, etag: item._etag }, STORE));
    }
  }
  return [...groups.entries()].map(([group, found]) => ({ group, ...found }));
}
