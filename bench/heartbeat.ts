/**
 * Heartbeat cost and latency through the real local host over an embedded Azurite.
 * Reports, per kind of request, round-trip p50/p99 over loopback HTTP and the number of
 * store operations each one cost (counted by a wrapper around the real Table store).
 * The service measures its metrics as `ha-module serve` does (a Prometheus reader, scraped
 * once at the end); --no-metrics runs it without a meter, to show what metrics cost.
 */
import { performance } from "node:perf_hooks";
import { operations } from "../functions/routes.js";
import { startEmbeddedAzurite } from "../shared/host/embedded-azurite.js";
import { startLocalHost } from "../shared/host/local-host.js";
import { createRuntime } from "../shared/http/runtime.js";
import { METER_NAME } from "../shared/http/metric-names.js";
import { createPrometheusMetrics } from "../shared/host/prometheus-metrics.js";
import { createTableStore } from "../shared/store/create-table-store.js";
import type { LeaseStore } from "../shared/lease/lease-store.js";
import { nearestRank } from "../shared/sdk/election/round-trip-stats.js";
import { readArgs } from "./helpers/args.js";

const USAGE = `Usage: npm run bench -- heartbeat [rounds] [--no-metrics]

Round trips (p50, p99) over loopback HTTP and store operations per request, for each kind
of request (a renewal with its token, one without, a GetPrimary), through the local host
over an embedded Azurite (in memory), its metrics wired as \`ha-module serve\` wires them.

Arguments and options:
  rounds         sequential requests of each kind, at least 10 (default 500)
  --no-metrics   run the service without a meter, to show what metrics cost`;
const { values, positionals } = readArgs(USAGE, { "no-metrics": { type: "boolean", default: false } }, { allowPositionals: true });
const withMetrics = !values["no-metrics"];
const rounds = Number(positionals[0] ?? 500);
if (!Number.isSafeInteger(rounds) || rounds < 10) throw new Error("Expected `rounds` to be an integer of at least 10.");

function counted(inner: LeaseStore): { store: LeaseStore; take(): number } {
  let operations = 0;
  const wrap =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      operations += 1;
      return call(...args);
    };
  const store: LeaseStore = {
    kind: inner.kind,
    read: wrap(inner.read.bind(inner)),
    create: wrap(inner.create.bind(inner)),
    replace: wrap(inner.replace.bind(inner)),
    renew: wrap(inner.renew.bind(inner)),
    list: wrap(inner.list.bind(inner)),
    ping: wrap(inner.ping.bind(inner)),
    readTerms: wrap(inner.readTerms.bind(inner)),
    upsertStandby: wrap(inner.upsertStandby.bind(inner)),
    readStandbys: wrap(inner.readStandbys.bind(inner)),
    listStandbys: wrap(inner.listStandbys.bind(inner)),
    deleteStandby: wrap(inner.deleteStandby.bind(inner)),
  };
  return {
    store,
    take: () => {
      const value = operations;
      operations = 0;
      return value;
    },
  };
}

/** The SDK's nearest-rank percentile, so the bench and `stats()` report the same p99. */
function percentile(sorted: number[], p: number): number {
  return nearestRank(sorted, p) ?? Number.NaN;
}

async function measure(name: string, take: () => number, call: () => Promise<Response>): Promise<void> {
  const times: number[] = [];
  take();
  for (let i = 0; i < rounds; i += 1) {
    const started = performance.now();
    const response = await call();
    await response.arrayBuffer();
    times.push(performance.now() - started);
    if (!response.ok && response.status !== 409) throw new Error(`${name}: HTTP ${response.status}`);
  }
  const ops = take() / rounds;
  times.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(34)} p50 ${percentile(times, 50).toFixed(2).padStart(6)} ms   p99 ${percentile(times, 99).toFixed(2).padStart(6)} ms   store ops/call ${ops.toFixed(2)}`,
  );
}

const azurite = await startEmbeddedAzurite({ dataDir: "", inMemory: true });
const configured = createTableStore({
  kind: "table",
  tableName: "leases",
  connection: { mode: "connection-string", connectionString: azurite.connectionString },
  createIfMissing: true,
});
await configured.prepare();
const { store, take } = counted(configured.store);
const metrics = withMetrics ? createPrometheusMetrics(METER_NAME) : undefined;
const runtime = createRuntime({ timing: { intervalMs: 1000, timeoutMs: 5000 }, storeTimeoutMs: 2000, leaseSecret: undefined }, { leases: store, telemetry: metrics === undefined ? {} : { meter: metrics.meter, metricsText: () => metrics.text() } });
const host = await startLocalHost({ operations, runtime: async () => runtime, port: 0 });
const put = (body: object): Promise<Response> =>
  fetch(`${host.url}/primary/bench`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

try {
  console.log(`${rounds} sequential requests each, loopback HTTP, embedded Azurite (in memory), metrics ${withMetrics ? "on" : "off"}\n`);
  const first = (await (await put({ uuid: "holder", address: "10.0.0.4:5800" })).json()) as { lease: string };
  let lease = first.lease;
  await measure("renewal with lease token (fast)", take, async () => {
    const response = await put({ uuid: "holder", address: "10.0.0.4:5800", lease });
    const body = (await response.clone().json()) as { lease: string };
    lease = body.lease;
    return response;
  });
  await measure("renewal without token (slow)", take, () => put({ uuid: "holder", address: "10.0.0.4:5800" }));
  await measure("GetPrimary", take, () => fetch(`${host.url}/primary/bench`));
  await measure("rejected rival heartbeat", take, () => put({ uuid: "rival" }));
  if (metrics !== undefined) {
    const scraped = await (await fetch(`${host.url}/metrics`)).text();
    const heartbeats = [...scraped.matchAll(/^ha_lease_heartbeats_total\{[^}]*\} (\d+)$/gm)].reduce((sum, found) => sum + Number(found[1]), 0);
    console.log(`\nscraped /api/metrics: ${heartbeats} heartbeats counted, ${scraped.length} bytes`);
  }
} finally {
  await host.close();
  await metrics?.shutdown();
  await azurite.close();
}
