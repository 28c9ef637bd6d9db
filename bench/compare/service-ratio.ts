import { performance } from "node:perf_hooks";
import { TableClient } from "@azure/data-tables";
import { cpuSeconds } from "../helpers/processes.js";

export interface RatioFigures {
  readonly concurrency: number;
  readonly heartbeatsPerSecond: number;
  readonly rawUpdatesPerSecond: number;
  /** heartbeats/s ÷ raw conditional updates/s: what our layer keeps of the store's rate. */
  readonly ratio: number;
  /** The service's CPU per accepted heartbeat, when /proc tells. */
  readonly serviceCpuMsPerHeartbeat: number | undefined;
}

export interface HeartbeatWindow {
  readonly heartbeatsPerSecond: number;
  /** The service's CPU per accepted heartbeat, when /proc tells. */
  readonly serviceCpuMsPerHeartbeat: number | undefined;
}

/**
 * The cost of our layer: `concurrency` closed-loop holders renewing (token fast path)
 * through the service, against the same number of closed-loop conditional merges
 * (If-Match on the last ETag) straight to the same Azurite, each for `windowMs`.
 */
export async function measureServiceRatio(
  serviceUrl: string,
  servicePid: number | undefined,
  connectionString: string,
  concurrency: number,
  windowMs: number,
): Promise<RatioFigures> {
  const heartbeats = await heartbeatWindow(serviceUrl, servicePid, "ratio", concurrency, windowMs);
  const rawUpdatesPerSecond = await rawMergeWindow(TableClient.fromConnectionString(connectionString, "benchraw", { allowInsecureConnection: true }), concurrency, windowMs);
  return {
    concurrency,
    heartbeatsPerSecond: heartbeats.heartbeatsPerSecond,
    rawUpdatesPerSecond,
    ratio: heartbeats.heartbeatsPerSecond / rawUpdatesPerSecond,
    serviceCpuMsPerHeartbeat: heartbeats.serviceCpuMsPerHeartbeat,
  };
}

/** `concurrency` closed-loop holders (roles `<prefix>-w<i>`) renewing on the token fast path for `windowMs`. */
export async function heartbeatWindow(serviceUrl: string, servicePid: number | undefined, prefix: string, concurrency: number, windowMs: number): Promise<HeartbeatWindow> {
  const put = async (utype: string, body: object): Promise<{ ok: boolean; lease?: string }> => {
    const response = await fetch(`${serviceUrl}/primary/${utype}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    const answer = (await response.json()) as { lease?: string };
    return { ok: response.ok, ...(answer.lease === undefined ? {} : { lease: answer.lease }) };
  };
  const worker = async (i: number, until: number): Promise<number> => {
    const uuid = `${prefix}-holder-${i}`;
    const utype = `${prefix}-w${i}`;
    let lease = (await put(utype, { uuid })).lease;
    let accepted = 0;
    while (performance.now() < until) {
      const answer = await put(utype, lease === undefined ? { uuid } : { uuid, lease });
      if (answer.ok) accepted += 1;
      lease = answer.lease ?? lease;
    }
    return accepted;
  };
  const cpuBefore = cpuSeconds(servicePid);
  const started = performance.now();
  const until = started + windowMs;
  const heartbeats = (await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i, until)))).reduce((a, b) => a + b, 0);
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuSeconds(servicePid);
  return {
    heartbeatsPerSecond: heartbeats / seconds,
    serviceCpuMsPerHeartbeat: cpuBefore === undefined || cpuAfter === undefined || heartbeats === 0 ? undefined : ((cpuAfter - cpuBefore) * 1000) / heartbeats,
  };
}

/** `concurrency` closed-loop conditional merges straight to the store for `windowMs`; merges per second. */
export async function rawMergeWindow(table: TableClient, concurrency: number, windowMs: number): Promise<number> {
  await table.createTable();
  const worker = async (i: number, until: number): Promise<number> => {
    const entity = { partitionKey: `w${i}`, rowKey: "lease", holder: `raw-holder-${i}`, renewedAt: new Date() };
    let etag = (await table.upsertEntity(entity, "Replace")).etag!;
    let updated = 0;
    while (performance.now() < until) {
      // What a renewal is at its core: one conditional merge on the last ETag.
      etag = (await table.updateEntity({ ...entity, renewedAt: new Date() }, "Merge", { etag })).etag!;
      updated += 1;
    }
    return updated;
  };
  const started = performance.now();
  const until = started + windowMs;
  const raw = (await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i, until)))).reduce((a, b) => a + b, 0);
  return raw / ((performance.now() - started) / 1000);
}
