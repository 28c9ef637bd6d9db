import { expect, it } from "vitest";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { describeLeaseStoreConformance } from "./lease-store-conformance.js";
import { describeLeaseServiceOnStore } from "./lease-service-on-store.js";

describeLeaseStoreConformance("memory", { createStore: async () => new MemoryLeaseStore() });

describeLeaseServiceOnStore("the memory store", {
  createStore: async () => {
    const store = new MemoryLeaseStore();
    return { store, deleteEntry: async (utype) => store.deleteEntry(utype), writeLegacyTerm: async (term) => store.recordTermAlone(term) };
  },
});

it("memory store: copies out, so a caller cannot change what is stored", async () => {
  const store = new MemoryLeaseStore();
  await store.create({ utype: "a", uuid: "u", address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] });
  const read = (await store.read("a")) as { uuid: string };
  read.uuid = "mutated";
  expect((await store.read("a"))?.uuid).toBe("u");
});
