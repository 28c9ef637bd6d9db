import { performance } from "node:perf_hooks";
import { TableClient } from "@azure/data-tables";
import { cpuSeconds } from "./processes.js";

export interface RatioFigures {
  readonly concurrency: number;
  readonly heartbeatsPerSecond: number;
  readonly rawUpdatesPerSecond: number;
  /** heartbeats/s ÷ raw conditional updates/s: what our layer keeps of the store's rate. */
  readonly ratio: number;
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
  const heartbeatWorker = async (i: number, until: number): Promise<number> => {
    const uuid = `ratio-holder-${i}`;
    const utype = `ratio-w${i}`;
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
  const hbStarted = performance.now();
  const hbUntil = hbStarted + windowMs;
  const heartbeats = (await Promise.all(Array.from({ length: concurrency }, (_, i) => heartbeatWorker(i, hbUntil)))).reduce((a, b) => a + b, 0);
  const hbSeconds = (performance.now() - hbStarted) / 1000;
  const cpuAfter = cpuSeconds(servicePid);

  const table = TableClient.fromConnectionString(connectionString, "benchraw", { allowInsecureConnection: true });
  await table.createTable();
  const rawWorker = async (i: number, until: number): Promise<number> => {
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
  const rawStarted = performance.now();
  const rawUntil = rawStarted + windowMs;
  const raw = (await Promise.all(Array.from({ length: concurrency }, (_, i) => rawWorker(i, rawUntil)))).reduce((a, b) => a + b, 0);
  const rawSeconds = (performance.now() - rawStarted) / 1000;

  const heartbeatsPerSecond = heartbeats / hbSeconds;
  const rawUpdatesPerSecond = raw / rawSeconds;
  return {
    concurrency,
    heartbeatsPerSecond,
    rawUpdatesPerSecond,
    ratio: heartbeatsPerSecond / rawUpdatesPerSecond,
    serviceCpuMsPerHeartbeat: cpuBefore === undefined || cpuAfter === undefined || heartbeats === 0 ? undefined : ((cpuAfter - cpuBefore) * 1000) / heartbeats,
  };
}
