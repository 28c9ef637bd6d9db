/**
 * What `npm start`'s on-disk store costs a heartbeat: the service exactly as `serve`
 * composes it (embedded Azurite with its data in a temporary HA_DATA_DIR), in process,
 * driven over loopback HTTP. Reports round-trip p50/p99 of sequential fast-path renewals,
 * of slow-path renewals and of GetPrimary, then of `parallel` holders renewing at once (each
 * waits for its answer before the next renewal), which is where writes share a flush of
 * the data file.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { operations } from "../functions/routes.js";
import { startService } from "../shared/cli/commands/serve.js";
import { loadServerConfig } from "../shared/config/server-config.js";
import { nearestRank } from "../shared/sdk/election/round-trip-stats.js";
import { readArgs } from "./helpers/args.js";

const USAGE = `Usage: npm run bench -- durable-heartbeat [rounds] [parallel]

What \`npm start\`'s on-disk store costs a heartbeat: the service as \`serve\` composes it
(embedded Azurite, its data in a temporary directory), in process, over loopback HTTP.
Round trips (p50, p99) of sequential renewals with and without a token and of GetPrimary,
then of \`parallel\` holders renewing at once (where writes share a flush of the file).

Arguments:
  rounds     requests per line, at least 10 (default 300)
  parallel   holders renewing at once (default 16)`;
const [roundsArg = "300", parallelArg = "16"] = readArgs(USAGE, {}, { allowPositionals: true }).positionals;
const rounds = Number(roundsArg);
const parallel = Number(parallelArg);
if (!Number.isSafeInteger(rounds) || rounds < 10) throw new Error("Expected `rounds` to be an integer of at least 10.");
if (!Number.isSafeInteger(parallel) || parallel < 1) throw new Error("Expected `parallel` to be a positive integer.");

/** The SDK's nearest-rank percentile, so the bench and `stats()` report the same p99. */
function percentile(sorted: number[], p: number): number {
  return nearestRank(sorted, p) ?? Number.NaN;
}

function report(name: string, times: number[], wallMs?: number): void {
  times.sort((a, b) => a - b);
  const rate = wallMs === undefined ? "" : `   ${((times.length / wallMs) * 1000).toFixed(0).padStart(5)} calls/s`;
  console.log(
    `${name.padEnd(40)} p50 ${percentile(times, 50).toFixed(2).padStart(6)} ms   p99 ${percentile(times, 99).toFixed(2).padStart(6)} ms${rate}`,
  );
}

async function timed(call: () => Promise<Response>): Promise<[number, Response]> {
  const started = performance.now();
  const response = await call();
  await response.clone().arrayBuffer();
  const elapsed = performance.now() - started;
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  return [elapsed, response];
}

const dataDir = await mkdtemp(join(tmpdir(), "ha-bench-"));
const service = await startService(loadServerConfig({ HA_LEASE_SECRET: "bench-secret-bench-secret-bench-secret" }), {
  host: "127.0.0.1",
  port: 0,
  dataDir,
  inMemory: false,
  apiKey: undefined,
}, operations);
const put = (utype: string, body: object): Promise<Response> =>
  fetch(`${service.url}/primary/${utype}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** Renews `count` times as one holder, sequentially; returns each round trip. */
async function renewals(utype: string, count: number, withToken: boolean): Promise<number[]> {
  const holder = { uuid: `holder-${utype}`, address: "10.0.0.4:5800" };
  let [, response] = await timed(() => put(utype, holder));
  let lease = ((await response.json()) as { lease: string }).lease;
  const times: number[] = [];
  for (let i = 0; i < count; i += 1) {
    let elapsed: number;
    [elapsed, response] = await timed(() => put(utype, withToken ? { ...holder, lease } : holder));
    lease = ((await response.json()) as { lease: string }).lease;
    times.push(elapsed);
  }
  return times;
}

try {
  console.log(`embedded Azurite with its data in ${dataDir}, ${rounds} requests per line\n`);
  report("renewal with lease token (fast)", await renewals("fast", rounds, true));
  report("renewal without token (slow)", await renewals("slow", rounds, false));
  const reads: number[] = [];
  for (let i = 0; i < rounds; i += 1) reads.push((await timed(() => fetch(`${service.url}/primary/fast`)))[0]);
  report("GetPrimary", reads);
  const started = performance.now();
  const all = await Promise.all(
    Array.from({ length: parallel }, (_, i) => renewals(`parallel${i}`, Math.ceil(rounds / parallel), true)),
  );
  report(`${parallel} holders renewing at once (fast)`, all.flat(), performance.now() - started);
} finally {
  await service.close();
  await rm(dataDir, { recursive: true, force: true });
}
