import { Agent } from "node:https";
import { CosmosClient, type Container } from "@azure/cosmos";
import { TableClient } from "@azure/data-tables";
import { BlobServiceClient, type ContainerClient } from "@azure/storage-blob";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import type { EmbeddedCosmos } from "../../shared/host/embedded-cosmos.js";
import { FencedOutError, fencedBlob, fencedCosmosItem, fencedTableEntity, PrimaryElector } from "../../shared/sdk/index.js";
import { startTestAzurite } from "../helpers/azurite.js";
import { startTestAzuriteBlob, type TestAzuriteBlob } from "../helpers/azurite-blob.js";
import { startTestCosmos } from "../helpers/cosmos.js";
import { startPartitionProxy, type PartitionProxy } from "../helpers/partition-proxy.js";
import { realDelay, waitUntil } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * A partition of the holder alone (docs/protocol.md#sticky-recovery, #ride-through), against a
 * real `ha-module serve`: the holder reaches the service through a proxy that, once cut,
 * drops its requests; the standby talks to the service directly. Both do fenced work on the
 * three stores the SDK fences (a Table entity and a blob on Azurite, a Cosmos item on the
 * emulator), which the holder can still reach: the case ride-through is for.
 *
 * - The standby takes over within T + I of the cut, with ride-through or without.
 * - With ride-through the holder, cut off, stays primary and keeps writing; once the new
 *   primary has written a resource, every write the old holder starts there is refused
 *   (FencedOutError): 0 accepted. When the cut heals, its first answered renewal ends its
 *   term at once.
 * - Without it, the holder stops at its deadline; a write of its epoch delayed until after
 *   the new primary's first write (a packet held in a network) is refused all the same.
 */
const I = 200;
const T = 2000;
const RIDE_THROUGH = 30_000;
/** For a loaded 2-core machine's late timers: the protocol's bound plus this is asserted, the measured figure printed. */
const SLACK_MS = 500;

type Resource = "table" | "blob" | "cosmos";
const RESOURCES: readonly Resource[] = ["table", "blob", "cosmos"];

interface WriteRecord {
  readonly who: string;
  readonly resource: Resource;
  readonly epoch: number;
  readonly startedAt: number;
  endedAt?: number;
  outcome?: "accepted" | "fenced-out" | "failed";
}

describe("a partition of the holder alone, with fenced work on Azurite and the Cosmos emulator", () => {
  let service: ServiceProcess;
  let azurite: EmbeddedAzurite;
  let azuriteBlob: TestAzuriteBlob;
  let cosmos: EmbeddedCosmos;
  let cosmosClient: CosmosClient;
  let table: TableClient;
  let blobs: ContainerClient;
  let items: Container;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    [service, azurite, azuriteBlob, cosmos] = await Promise.all([
      startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) }),
      startTestAzurite(),
      startTestAzuriteBlob(),
      startTestCosmos(),
    ]);
    table = TableClient.fromConnectionString(azurite.connectionString, `partition${process.pid}`, { allowInsecureConnection: true });
    await table.createTable();
    blobs = BlobServiceClient.fromConnectionString(azuriteBlob.connectionString).getContainerClient("partition");
    await blobs.create();
    cosmosClient = new CosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key, agent: new Agent({ ca: [cosmos.certificatePem] }) });
    const { database } = await cosmosClient.databases.createIfNotExists({ id: "partition" });
    ({ container: items } = await database.containers.createIfNotExists({ id: "jobs", partitionKey: { paths: ["/tenant"] } }));
  }, 60_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    cosmosClient?.dispose();
    await Promise.all([service?.stop(), azurite?.close(), azuriteBlob?.close(), cosmos?.close()]);
  });

  /** One fenced write of `resource` (its own name per run) with `epoch`, recorded. */
  const fencedWrite = (run: string, resource: Resource, epoch: number): Promise<unknown> => {
    const value = `${run}@${epoch}`;
    switch (resource) {
      case "table":
        return fencedTableEntity(table).upsert({ partitionKey: run, rowKey: "work", value }, { epoch });
      case "blob":
        return fencedBlob(blobs.getBlockBlobClient(`${run}.txt`)).upload(value, { epoch });
      case "cosmos":
        return fencedCosmosItem(items).upsert({ id: run, tenant: "contoso", value }, { epoch });
    }
  };

  /** The epoch mark each resource of `run` holds now. */
  const marks = async (run: string): Promise<Record<Resource, number>> => {
    const entity = await table.getEntity<{ haEpoch: bigint }>(run, "work");
    const blob = await blobs.getBlockBlobClient(`${run}.txt`).getProperties();
    const { resource: item } = await items.item(run, "contoso").read<{ haEpoch: number }>();
    return { table: Number(entity.haEpoch), blob: Number(blob.metadata?.["haepoch"]), cosmos: item!.haEpoch };
  };

  /** While `elector` is primary, one write at a time per resource, every 50 ms: the primary's work. */
  const work = (run: string, who: string, elector: PrimaryElector, records: WriteRecord[]): (() => void) => {
    const busy = new Set<Resource>();
    const timer = setInterval(() => {
      const epoch = elector.epoch;
      if (epoch === undefined) return;
      for (const resource of RESOURCES) {
        if (busy.has(resource)) continue;
        busy.add(resource);
        const record: WriteRecord = { who, resource, epoch, startedAt: performance.now() };
        records.push(record);
        fencedWrite(run, resource, epoch).then(
          () => (record.outcome = "accepted"),
          (error: unknown) => (record.outcome = error instanceof FencedOutError ? "fenced-out" : "failed"),
        ).finally(() => {
          record.endedAt = performance.now();
          busy.delete(resource);
        });
      }
    }, 50);
    return () => clearInterval(timer);
  };

  const electorOf = (run: string, endpoint: string, address: string, rideThroughMs: number): PrimaryElector => {
    const elector = new PrimaryElector({ utype: run, endpoint, address, rideThroughMs });
    elector.on("error", () => undefined);
    cleanups.push(() => elector.stop());
    return elector;
  };

  it.each([
    { rideThroughMs: RIDE_THROUGH, title: "with ride-through: the holder works on, cut off, and every write it starts after the new primary's first is refused" },
    { rideThroughMs: 0, title: "without ride-through: the holder stops at its deadline, and its delayed writes are refused" },
  ])("$title; the standby takes over within T + I of the cut", { timeout: 90_000 }, async ({ rideThroughMs }) => {
    const run = `partition-${rideThroughMs === 0 ? "plain" : "ride"}-${process.pid}`;
    const proxy: PartitionProxy = await startPartitionProxy(service.url);
    cleanups.push(() => proxy.close());
    const holder = electorOf(run, proxy.url, "holder:1", rideThroughMs);
    const standby = electorOf(run, service.url, "standby:1", rideThroughMs);
    const demotions: { at: number; reason: string }[] = [];
    holder.on("demoted", ({ reason }) => void demotions.push({ at: performance.now(), reason }));
    const riding: number[] = [];
    holder.on("ridingThrough", () => void riding.push(performance.now()));
    let standbyElectedAt: number | undefined;
    standby.on("elected", () => void (standbyElectedAt ??= performance.now()));

    holder.start();
    await waitUntil(() => holder.isPrimary(), "the holder is elected");
    const holderEpoch = holder.epoch!;
    standby.start();
    const records: WriteRecord[] = [];
    const stopHolderWork = work(run, "holder", holder, records);
    const stopStandbyWork = work(run, "standby", standby, records);
    cleanups.push(async () => {
      stopHolderWork();
      stopStandbyWork();
    });
    // The holder's work is under way on every resource before the cut.
    await waitUntil(() => RESOURCES.every((r) => records.some((w) => w.who === "holder" && w.resource === r && w.outcome === "accepted")), "the holder has written every resource");
    await realDelay(3 * I);

    const cutAt = performance.now();
    proxy.cut();
    await waitUntil(() => standbyElectedAt !== undefined, "the standby is elected", 3 * T);
    const takeoverMs = standbyElectedAt! - cutAt;
    console.log(`partition (ride-through ${rideThroughMs} ms): the standby was elected ${Math.round(takeoverMs)} ms after the cut (T + I = ${T + I} ms)`);
    expect(takeoverMs).toBeLessThan(T + I + SLACK_MS);
    expect(standby.epoch).toBeGreaterThan(holderEpoch);

    // The new primary's first accepted write of each resource, then a while of both working.
    await waitUntil(() => RESOURCES.every((r) => records.some((w) => w.who === "standby" && w.resource === r && w.outcome === "accepted")), "the new primary has written every resource");
    if (rideThroughMs === 0) {
      expect(holder.isPrimary()).toBe(false);
      expect(demotions.map((d) => d.reason)).toEqual(["lease-expired"]);
      // Writes of the old term that a network held until now: each one refused.
      for (const resource of RESOURCES) {
        const record: WriteRecord = { who: "holder", resource, epoch: holderEpoch, startedAt: performance.now() };
        records.push(record);
        record.outcome = await fencedWrite(run, resource, holderEpoch).then(
          () => "accepted" as const,
          (error: unknown) => (error instanceof FencedOutError ? ("fenced-out" as const) : ("failed" as const)),
        );
        record.endedAt = performance.now();
      }
    } else {
      // Cut off, the holder rides through: still primary, the same epoch, and working.
      expect(riding.length).toBeGreaterThan(0);
      expect(holder.isPrimary()).toBe(true);
      expect(holder.epoch).toBe(holderEpoch);
      expect(holder.exclusiveTimeLeftMs()).toBe(0);
      await realDelay(T);
      expect(holder.isPrimary()).toBe(true);
    }

    for (const resource of RESOURCES) {
      const firstByNew = Math.min(...records.filter((w) => w.who === "standby" && w.resource === resource && w.outcome === "accepted").map((w) => w.endedAt!));
      const late = records.filter((w) => w.who === "holder" && w.resource === resource && w.startedAt > firstByNew);
      // The old holder went on writing (delayed writes) and none of them landed.
      expect(late.length, `${resource}: writes of the old holder after the new primary's first`).toBeGreaterThan(0);
      await waitUntil(() => late.every((w) => w.outcome !== undefined), `${resource}: the old holder's writes are answered`);
      expect(late.filter((w) => w.outcome === "accepted"), `${resource}: accepted writes of the old holder after the new primary's first`).toEqual([]);
      expect(late.every((w) => w.outcome === "fenced-out")).toBe(true);
    }
    const newEpoch = standby.epoch!;
    expect(await marks(run)).toEqual({ table: newEpoch, blob: newEpoch, cosmos: newEpoch });

    if (rideThroughMs > 0) {
      // The cut heals: the rider's first answered renewal is refused, and ends its term at once.
      const healedAt = performance.now();
      proxy.heal();
      await waitUntil(() => !holder.isPrimary(), "the rider is demoted once the service answers it", 3 * T);
      const endedMs = performance.now() - healedAt;
      console.log(`partition: the rider's term ended ${Math.round(endedMs)} ms after the cut healed`);
      expect(endedMs).toBeLessThan(2 * I + SLACK_MS);
      expect(demotions.map((d) => d.reason)).toEqual(["rejected"]);
      expect(standby.isPrimary()).toBe(true);
    }
    stopHolderWork();
    stopStandbyWork();
  });
});
