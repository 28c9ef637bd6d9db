import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { StoreUnavailableError } from "../../shared/store/store-unavailable-error.js";
import type { LeaseStore } from "../../shared/store/lease-store.js";
import { createFreshTableStore, startTestAzurite } from "../helpers/azurite.js";
import { describeLeaseStoreConformance } from "./lease-store-conformance.js";

let azurite: EmbeddedAzurite;

describeLeaseStoreConformance("Azure Table on Azurite", {
  setUp: async () => {
    azurite = await startTestAzurite();
  },
  tearDown: async () => azurite.close(),
  createStore: () => createFreshTableStore(azurite),
});

describe("Table store failures", () => {
  let down: EmbeddedAzurite;
  let store: LeaseStore;

  beforeAll(async () => {
    down = await startTestAzurite();
    store = await createFreshTableStore(down);
    await down.close();
  });

  it("maps an unreachable Table service to StoreUnavailableError on every call", async () => {
    const lease = { utype: "a", uuid: "u", address: null, epoch: 1, renewedAt: 1 };
    await expect(store.read("a")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.create(lease)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.replace(lease, "*")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe("Table store on a missing table", () => {
  let azuriteForMissing: EmbeddedAzurite;
  beforeAll(async () => {
    azuriteForMissing = await startTestAzurite();
  });
  afterAll(async () => azuriteForMissing.close());

  it("reports a missing table as unavailable rather than as an empty lease", async () => {
    const store = await createFreshTableStore(azuriteForMissing, "nosuchtable");
    await expect(store.read("a")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.ping()).rejects.toThrow(/TableNotFound/);
  });
});
