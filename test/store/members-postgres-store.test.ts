import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import type { EmbeddedPostgres } from "../../shared/host/embedded-postgres.js";
import type { ConfiguredStore } from "../../shared/store/configured-store.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { createFreshPostgresStore, freshSchema, rawClient, startTestPostgres } from "../helpers/postgres.js";
import { describeMemberStoreConformance } from "./member-store-conformance.js";

let server: EmbeddedPostgres;
const opened: ConfiguredStore[] = [];

describeMemberStoreConformance("PostgreSQL (embedded-postgres)", {
  setUp: async () => {
    server = await startTestPostgres();
  },
  tearDown: async () => {
    await Promise.all(opened.splice(0).map((configured) => configured.close()));
    await server.close();
  },
  createStore: async () => {
    const configured = await createFreshPostgresStore(server);
    opened.push(configured);
    return configured.members;
  },
});

describe("PostgreSQL member store: what is in the tables, and what it refuses", () => {
  let own: EmbeddedPostgres;
  let raw: pg.Client;
  beforeAll(async () => {
    own = await startTestPostgres();
    raw = await rawClient(own);
  });
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((configured) => configured.close()));
    await raw.end();
    await own.close();
  });

  it("keeps a member as a row keyed by (group, member), and the group's marker in sweep_markers", async () => {
    const schema = freshSchema("layout");
    const configured = await createFreshPostgresStore(own, schema);
    opened.push(configured);
    await configured.members.create({ group: "g", member: "node-1", session: "s1", address: null, joinedAt: 1_763_632_700_000, renewedAt: 1_763_632_800_123, heartbeats: 1, leftAt: null, previous: null, endedSessions: [] });
    await configured.members.writeMarker({ group: "g", sweptAt: 3, gap: null, removedSessions: [] }, undefined);
    const members = await raw.query(`SELECT group_name, member, joined_at, renewed_at FROM "${schema}".members`);
    // BIGINT columns: ha_time in milliseconds is beyond an INTEGER's range.
    expect(members.rows).toEqual([{ group_name: "g", member: "node-1", joined_at: "1763632700000", renewed_at: "1763632800123" }]);
    const markers = await raw.query(`SELECT group_name, swept_at FROM "${schema}".sweep_markers`);
    expect(markers.rows).toEqual([{ group_name: "g", swept_at: "3" }]);
  });

  it("refuses a damaged row or marker as unavailable, naming the field", async () => {
    const schema = freshSchema("damaged");
    const configured = await createFreshPostgresStore(own, schema);
    opened.push(configured);
    const insert = `INSERT INTO "${schema}".members (group_name, member, session, address, joined_at, renewed_at, heartbeats, left_at, previous, ended_sessions, etag) VALUES ($1, 'm', 's', NULL, 1, 1, $2, NULL, NULL, $3::jsonb, 1)`;
    await raw.query(insert, ["badcount", 0, "[]"]);
    await raw.query(insert, ["badended", 1, '["not an id!"]']);
    await raw.query(`INSERT INTO "${schema}".sweep_markers (group_name, swept_at, gap_start, gap_end, removed_sessions, etag) VALUES ('badmarker', 1, 5, NULL, '[]', 2)`);
    await expect(configured.members.read("badcount", "m")).rejects.toThrow(/corrupt member row for "badcount\/m": heartbeats/);
    await expect(configured.members.listGroup("badended")).rejects.toThrow(/corrupt member row for "badended\/m": endedSessions/);
    await expect(configured.members.read("badmarker", "m")).rejects.toThrow(/corrupt sweep marker for "badmarker": gapStart and gapEnd/);
    await expect(configured.members.listAll()).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("reports missing tables as unavailable, naming what to do, never as an empty group", async () => {
    const configured = await createFreshPostgresStore(own, freshSchema("missing"), false);
    opened.push(configured);
    await expect(configured.members.listGroup("g")).rejects.toThrow(/42P01.*HA_STORE_CREATE=true/);
  });
});
