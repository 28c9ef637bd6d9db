import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedCosmos } from "../../shared/host/embedded-cosmos.js";
import type { ConfiguredStore } from "../../shared/store/configured-store.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import {
  createFreshCosmosStore,
  startFaultyTestCosmos,
  startTestCosmos,
  type CosmosFault,
  type FaultyCosmos,
} from "../helpers/cosmos.js";
import { describeLeaseStoreConformance } from "./lease-store-conformance.js";
import { describeLeaseServiceOnStore } from "./lease-service-on-store.js";
import { CosmosClient } from "@azure/cosmos";
import { TERM_HISTORY_SLOTS } from "../../shared/contract/term-history.js";
import { Agent } from "node:https";

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

let cosmosForService: EmbeddedCosmos;
let serviceContainers = 0;
const serviceClients: CosmosClient[] = [];

describeLeaseServiceOnStore("Azure Cosmos DB on @vercel/cosmosdb-server", {
  setUp: async () => {
    cosmosForService = await startTestCosmos();
  },
  tearDown: async () => {
    for (const configured of opened) configured.close();
    for (const client of serviceClients) client.dispose();
    await cosmosForService.close();
  },
  createStore: async () => {
    serviceContainers += 1;
    const containerName = `service-${process.pid}-${serviceContainers}`;
    const configured = await createFreshCosmosStore(cosmosForService, containerName, { createIfMissing: true });
    opened.push(configured);
    // A client of its own, as an operator's script would use, to delete items behind the service.
    const client = new CosmosClient({ endpoint: cosmosForService.endpoint, key: cosmosForService.key, agent: new Agent({ ca: [cosmosForService.certificatePem] }) });
    serviceClients.push(client);
    const container = client.database("ha").container(containerName);
    return {
      store: configured.store,
      deleteEntry: async (utype) => void (await container.item(utype, utype).delete()),
      // A history item as earlier versions wrote it: id ~term-N (the ring slot), no `transactional`.
      writeLegacyTerm: async (term) => void (await container.items.upsert({ id: `~term-${term.epoch % TERM_HISTORY_SLOTS}`, ...term })),
    };
  },
});

const lease = { utype: "a", uuid: "u", address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] };

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
    // Node warns on stderr when it sees the variable. Collected here instead of printed, and
    // asserted: it proves Node did read the insecure setting that the store then ignored.
    const printers = process.listeners("warning");
    process.removeAllListeners("warning");
    const warnings: string[] = [];
    const collect = (warning: Error): void => void warnings.push(warning.message);
    process.on("warning", collect);
    const configured = await createFreshCosmosStore({ ...emulator, certificatePem: other.certificatePem }, "leases");
    try {
      await expect(configured.store.ping()).rejects.toThrow(/certificate/i);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      configured.close();
      process.off("warning", collect);
      for (const printer of printers) process.on("warning", printer);
      if (before === undefined) delete process.env["NODE_TLS_REJECT_UNAUTHORIZED"];
      else process.env["NODE_TLS_REJECT_UNAUTHORIZED"] = before;
    }
    expect(warnings).toContainEqual(expect.stringMatching(/NODE_TLS_REJECT_UNAUTHORIZED/));
  });
});

describe("Cosmos store throttling through the real SDK", () => {
  let faulty: FaultyCosmos;
  let configured: ConfiguredStore;
  beforeAll(async () => {
    faulty = await startFaultyTestCosmos();
    configured = await createFreshCosmosStore(faulty);
  });
  afterAll(async () => {
    configured.close();
    await faulty.close();
  });

  const throttle: CosmosFault = { status: 429, headers: { "x-ms-retry-after-ms": "0", "x-ms-substatus": "3200" } };

  it("retries a throttled write itself, honouring retry-after, and then succeeds", async () => {
    const before = faulty.documentRequests();
    faulty.inject(throttle, throttle);
    const created = await configured.store.create({ ...lease, utype: "throttled-then-ok" });
    expect(created.ok).toBe(true);
    expect(faulty.documentRequests() - before).toBe(3);
  });

  it("gives up after its own attempts: the SDK's 429 retries are off", async () => {
    const before = faulty.documentRequests();
    faulty.inject(throttle, throttle, throttle);
    // The store's 3 attempts, one request each. With the SDK's own retries on, a 4th
    // request would have been sent, found no fault left, and the read would succeed.
    await expect(configured.store.read("throttled")).rejects.toThrow(/HTTP 429/);
    expect(faulty.documentRequests() - before).toBe(3);
  });

  it("waits out a throttled transactional batch (a takeover's entry and term row) as it does a single call's 429", async () => {
    const utype = "batch-throttled";
    const created = await configured.store.create({ ...lease, utype });
    if (!created.ok) throw new Error("the lease was not created");
    const endedTerm = { utype, epoch: 1, uuid: "u", address: null, startedAt: 1, endedAt: 2, endedBy: "taken-over" as const };
    const before = faulty.documentRequests();
    faulty.inject(throttle);
    // The SDK rethrows a batch's HTTP error without status or headers unless the store's client keeps them.
    const replaced = await configured.store.replace({ ...lease, utype, uuid: "v", epoch: 2 }, created.etag, undefined, { endedTerm });
    expect(replaced.ok).toBe(true);
    expect(faulty.documentRequests() - before).toBe(2);
    expect(await configured.store.readTerms(utype)).toEqual([expect.objectContaining(endedTerm)]);
  });

  it("gives up on a batch throttled past its attempts as a 503 naming HTTP 429, and keeps a batch's 5xx status in the message", async () => {
    const utype = "batch-throttled-out";
    const created = await configured.store.create({ ...lease, utype });
    if (!created.ok) throw new Error("the lease was not created");
    const endedTerm = { utype, epoch: 1, uuid: "u", address: null, startedAt: 1, endedAt: 2, endedBy: "released" as const };
    const before = faulty.documentRequests();
    faulty.inject(throttle, throttle, throttle);
    await expect(configured.store.replace({ ...lease, utype, uuid: "", epoch: 1 }, created.etag, undefined, { endedTerm })).rejects.toThrow(/HTTP 429/);
    expect(faulty.documentRequests() - before).toBe(3);
    faulty.inject({ status: 503 });
    const error = await configured.store.replace({ ...lease, utype, uuid: "", epoch: 1 }, created.etag, undefined, { endedTerm }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/HTTP 503/);
    // Nothing was written by the refused batches.
    expect(await configured.store.readTerms(utype)).toEqual([]);
  });

  it("maps service errors to StoreUnavailableError", async () => {
    for (const status of [500, 503]) {
      faulty.inject({ status });
      const error = await configured.store.create({ ...lease, utype: `fails-${status}` }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(new RegExp(`HTTP ${status}`));
    }
  });
});
