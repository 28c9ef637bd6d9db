import { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { createFreshMemberTableStore, startTestAzurite } from "../helpers/azurite.js";
import { describeMemberStoreConformance } from "./member-store-conformance.js";

let azurite: EmbeddedAzurite;

describeMemberStoreConformance("Azure Table on Azurite", {
  setUp: async () => {
    azurite = await startTestAzurite();
  },
  tearDown: async () => azurite.close(),
  createStore: () => createFreshMemberTableStore(azurite),
});

describe("Table member store: what is in the table, and what it refuses", () => {
  let own: EmbeddedAzurite;
  beforeAll(async () => {
    own = await startTestAzurite();
  });
  afterAll(async () => own.close());

  it("keeps a group in one partition: PartitionKey = group, RowKey = member, the marker under RowKey ~sweep", async () => {
    const tableName = `layout${process.pid}`;
    const raw = TableClient.fromConnectionString(own.connectionString, tableName, { allowInsecureConnection: true });
    await raw.createTable();
    const store = await createFreshMemberTableStore(own, tableName);
    await store.create({ group: "g", member: "node-1", session: "s1", address: null, joinedAt: 1, renewedAt: 2, heartbeats: 1, leftAt: null, previous: null, endedSessions: [] });
    await store.writeMarker({ group: "g", sweptAt: 3, gap: null, removedSessions: [] }, undefined);
    const keys: string[] = [];
    for await (const entity of raw.listEntities()) keys.push(`${entity.partitionKey}/${entity.rowKey}`);
    expect(keys.sort()).toEqual(["g/node-1", "g/~sweep"]);
  });

  it("refuses a damaged row or marker as unavailable, naming the field", async () => {
    const tableName = `damagedmembers${process.pid}`;
    const raw = TableClient.fromConnectionString(own.connectionString, tableName, { allowInsecureConnection: true });
    await raw.createTable();
    const int64 = (value: number) => ({ value: String(value), type: "Int64" as const });
    const good = { session: "s", address: "", joinedAt: int64(1), renewedAt: int64(1), heartbeats: int64(1), endedSessions: "[]" };
    await raw.createEntity({ partitionKey: "badcount", rowKey: "m", ...good, heartbeats: "three" });
    await raw.createEntity({ partitionKey: "badended", rowKey: "m", ...good, endedSessions: "[not json" });
    await raw.createEntity({ partitionKey: "badmarker", rowKey: "~sweep", sweptAt: int64(1), gapStart: int64(5), removedSessions: "[]" });
    const store = await createFreshMemberTableStore(own, tableName);
    await expect(store.read("badcount", "m")).rejects.toThrow(/corrupt member row for "badcount\/m": heartbeats/);
    await expect(store.listGroup("badended")).rejects.toThrow(/corrupt member row for "badended\/m": endedSessions/);
    await expect(store.read("badmarker", "m")).rejects.toThrow(/corrupt sweep marker for "badmarker": gapStart and gapEnd/);
    await expect(store.listAll()).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("reports a missing members table as unavailable, never as an empty group", async () => {
    const store = await createFreshMemberTableStore(own, "nosuchmembers");
    await expect(store.listGroup("g")).rejects.toThrow(/TableNotFound/);
  });
});
