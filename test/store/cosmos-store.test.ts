import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedCosmos } from "../../shared/host/embedded-cosmos.js";
import type { ConfiguredStore } from "../../shared/store/create-store.js";
import { StoreUnavailableError } from "../../shared/store/store-unavailable-error.js";
import { createFreshCosmosStore, startTestCosmos } from "../helpers/cosmos.js";
import { describeLeaseStoreConformance } from "./lease-store-conformance.js";

let cosmos: EmbeddedCosmos;
const opened: ConfiguredStore[] = [];

describeLeaseStoreConformance("Azure Cosmos DB on @vercel/cosmosdb-server", {
  setUp: async () => {
    cosmos = await startTestCosmos();
  },
  tearDown: async () => {
    for (const configured of opened) configured.close();
    await cosmos.close();
  },
  createStore: async () => {
    const configured = await createFreshCosmosStore(cosmos);
    opened.push(configured);
    return configured.store;
  },
});

const lease = { utype: "a", uuid: "u", address: null, epoch: 1, renewedAt: 1 };

describe("Cosmos store failures", () => {
  let down: ConfiguredStore;

  beforeAll(async () => {
    const emulator = await startTestCosmos();
    down = await createFreshCosmosStore(emulator);
    await emulator.close();
  });
  afterAll(() => down.close());

  it("maps an unreachable endpoint to StoreUnavailableError on every call", async () => {
    const store = down.store;
    await expect(store.read("a")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.create(lease)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.replace(lease, "etag")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.renew("a", { renewedAt: 2, address: null }, "etag")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.list()).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe("Cosmos store TLS", () => {
  let emulator: EmbeddedCosmos;
  let other: EmbeddedCosmos;
  beforeAll(async () => {
    [emulator, other] = await Promise.all([startTestCosmos(), startTestCosmos()]);
  });
  afterAll(async () => Promise.all([emulator.close(), other.close()]));

  it("refuses an emulator whose certificate it was not told to trust", async () => {
    // This emulator's endpoint, but a client that trusts the other emulator's certificate.
    const configured = await createFreshCosmosStore({ ...emulator, certificatePem: other.certificatePem }, "leases");
    try {
      const refused = await configured.store.read("a").catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StoreUnavailableError);
      expect((refused as Error).message).toMatch(/certificate/i);
    } finally {
      configured.close();
    }
  });

  it("keeps verifying when NODE_TLS_REJECT_UNAUTHORIZED=0 is set", async () => {
    const before = process.env["NODE_TLS_REJECT_UNAUTHORIZED"];
    process.env["NODE_TLS_REJECT_UNAUTHORIZED"] = "0";
    const configured = await createFreshCosmosStore({ ...emulator, certificatePem: other.certificatePem }, "leases");
    try {
      await expect(configured.store.ping()).rejects.toThrow(/certificate/i);
    } finally {
      configured.close();
      if (before === undefined) delete process.env["NODE_TLS_REJECT_UNAUTHORIZED"];
      else process.env["NODE_TLS_REJECT_UNAUTHORIZED"] = before;
    }
  });
});
