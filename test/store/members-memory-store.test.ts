import { expect, it } from "vitest";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { describeMemberStoreConformance } from "./member-store-conformance.js";

describeMemberStoreConformance("memory", { createStore: async () => new MemoryMemberStore() });

it("memory member store: copies out, so a caller cannot change what is stored", async () => {
  const store = new MemoryMemberStore();
  await store.create({ group: "g", member: "m", session: "s", address: null, joinedAt: 1, renewedAt: 1, heartbeats: 1, leftAt: null, previous: null, endedSessions: [] });
  const { row } = await store.read("g", "m");
  (row as { session: string }).session = "mutated";
  (row!.endedSessions as string[]).push("x");
  expect((await store.read("g", "m")).row).toMatchObject({ session: "s", endedSessions: [] });
});
