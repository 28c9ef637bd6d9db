/**
 * The same service over two stores, side by side in one run: `ha-module serve` over Azurite
 * (its own durable process, as test/chaos runs it) and over PostgreSQL (a durable embedded
 * server: fsync on). Alternating windows of the same length and concurrency, in a rotating
 * order, so that a loaded machine's drift falls on both alike: renewals/s and the service's
 * CPU per renewal. Then, on services started anew behind counting proxies, the store
 * requests (Table) and statements (PostgreSQL) of a renewal, a poll, an acquisition and a
 * takeover, counted on the wire.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../shared/host/embedded-postgres.js";
import { heartbeatWindow } from "./compare/service-ratio.js";
import { positiveFlag, readArgs } from "./helpers/args.js";
import { countPostgresStatements } from "./helpers/postgres-wire.js";
import { startLineProcess, startService, type LineProcess } from "./helpers/processes.js";
import { startWireProxy } from "./helpers/wire-proxy.js";

const CLI = fileURLToPath(new URL("../shared/cli/main.js", import.meta.url));
const AZURITE = fileURLToPath(new URL("../test/chaos/azurite-process.js", import.meta.url));

const USAGE = `Usage: npm run bench -- store-compare [--rounds 5] [--window-ms 3000] [--concurrency 16] [--ops 20]

The service over Azurite and over PostgreSQL side by side: renewals/s and service CPU per
renewal in alternating windows of the same length and concurrency (closed-loop holders
renewing with their token), after one unmeasured window each; then the store requests
(Table) and statements (PostgreSQL) of one renewal, poll, acquisition and takeover,
counted on the wire through proxies.

Options:
  --rounds N          measured rounds (default 5)
  --window-ms MS      each window's length (default 3000)
  --concurrency N     holders renewing at once (default 16)
  --ops N             renewals and polls counted for the per-operation figures (default 20)`;
const { values } = readArgs(USAGE, {
  rounds: { type: "string", default: "5" },
  "window-ms": { type: "string", default: "3000" },
  concurrency: { type: "string", default: "16" },
  ops: { type: "string", default: "20" },
});
const rounds = positiveFlag("rounds", values.rounds);
const windowMs = positiveFlag("window-ms", values["window-ms"]);
const concurrency = positiveFlag("concurrency", values.concurrency);
const ops = positiveFlag("ops", values.ops);
/** Short, so that a takeover is counted without a long wait (the windows renew closed-loop regardless); the sweepers kept out of the counts. */
const TIMING = { HA_INTERVAL_MS: "200", HA_TIMEOUT_MS: "1000", HA_SWEEP_SCHEDULE: "0 */30 * * * *" };

interface Side {
  readonly label: string;
  url: string;
  process: LineProcess | undefined;
  readonly rates: number[];
  readonly cpu: number[];
}

const median = (list: number[]): number => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const put = async (url: string, utype: string, body: object): Promise<{ status: number; lease?: string }> => {
  const response = await fetch(`${url}/primary/${utype}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const answer = (await response.json()) as { lease?: string };
  return { status: response.status, ...(answer.lease === undefined ? {} : { lease: answer.lease }) };
};

/** Store requests (or statements) per operation, `count` read before and after each. */
async function operationCosts(url: string, count: () => number, prefix: string): Promise<Record<string, number>> {
  const cost = async (run: () => Promise<unknown>): Promise<number> => {
    const before = count();
    await run();
    return count() - before;
  };
  const utype = `${prefix}-ops`;
  // One unmeasured request first: whatever a service does once, on its first call, is not an operation's cost.
  await put(url, `${prefix}-warm`, { uuid: "w" });
  let lease: string | undefined;
  const acquire = await cost(async () => (lease = (await put(url, utype, { uuid: "a" })).lease));
  let renewals = 0;
  for (let n = 0; n < ops; n += 1) renewals += await cost(async () => (lease = (await put(url, utype, { uuid: "a", lease })).lease ?? lease));
  let polls = 0;
  for (let n = 0; n < ops; n += 1) polls += await cost(() => fetch(`${url}/primary/${utype}`).then((response) => response.text()));
  await new Promise((resolve) => setTimeout(resolve, Number(TIMING.HA_TIMEOUT_MS) + 300));
  const takeover = await cost(() => put(url, utype, { uuid: "b" }));
  return { acquire, renew: renewals / ops, poll: polls / ops, takeover };
}

const dataDir = await mkdtemp(join(tmpdir(), "ha-store-compare-"));
// Under root the embedded server runs as nobody, who must enter the directory.
await chmod(dataDir, 0o755);
const azurite = startLineProcess(AZURITE, [join(dataDir, "azurite"), "0"]);
let postgres: EmbeddedPostgres | undefined;
const sides: Side[] = [
  { label: "Azurite", url: "", process: undefined, rates: [], cpu: [] },
  { label: "PostgreSQL", url: "", process: undefined, rates: [], cpu: [] },
];
const stopServices = async (): Promise<void> => {
  for (const side of sides) {
    await side.process?.kill("SIGTERM");
    side.process = undefined;
  }
};
try {
  const store = await azurite.waitFor((line) => typeof line["connectionString"] === "string", 30_000);
  const connectionString = String(store["connectionString"]);
  postgres = await startEmbeddedPostgres({ dataDir: join(dataDir, "pg"), inMemory: false, durable: true });
  const postgresUrl = (port: number): string => {
    const url = new URL(postgres!.url);
    url.password = postgres!.password;
    url.port = String(port);
    return url.href;
  };
  const envs = [
    { ...TIMING, HA_TABLE_CONNECTION_STRING: connectionString },
    { ...TIMING, HA_STORE: "postgres", HA_POSTGRES_URL: postgresUrl(postgres.port) },
  ];
  for (const [index, side] of sides.entries()) {
    const started = await startService(CLI, envs[index]!);
    side.url = started.url;
    side.process = started.process;
  }
  const jobs = sides.map((side, index) => async () => {
    const figures = await heartbeatWindow(side.url, side.process?.child.pid, `store${index}`, concurrency, windowMs);
    side.rates.push(figures.heartbeatsPerSecond);
    if (figures.serviceCpuMsPerHeartbeat !== undefined) side.cpu.push(figures.serviceCpuMsPerHeartbeat);
  });
  // A warm-up window each, not counted: JIT, connection pools, table creation.
  for (const job of jobs) await job();
  sides.forEach((side) => ((side.rates.length = 0), (side.cpu.length = 0)));
  for (let round = 0; round < rounds; round += 1) {
    for (let k = 0; k < jobs.length; k += 1) await jobs[(round + k) % jobs.length]!();
    process.stderr.write(`round ${round + 1}: ${sides.map((side) => `${side.label} ${Math.round(side.rates.at(-1)!)}/s, ${side.cpu.at(-1)?.toFixed(2) ?? "?"} ms CPU`).join("; ")}\n`);
  }
  await stopServices();

  // The per-operation counts, on services started anew behind counting proxies.
  const tableEndpoint = /TableEndpoint=([^;]+)/.exec(connectionString)![1]!;
  const tableProxy = await startWireProxy(new URL(tableEndpoint).origin);
  const statements = await countPostgresStatements(postgres.port);
  const counted = [
    { ...TIMING, HA_TABLE_CONNECTION_STRING: connectionString.replace(/TableEndpoint=http:\/\/[^/]+/, `TableEndpoint=${tableProxy.url}`) },
    { ...TIMING, HA_STORE: "postgres", HA_POSTGRES_URL: postgresUrl(statements.port) },
  ];
  let tableRequests = 0;
  const costs: Record<string, number>[] = [];
  try {
    for (const [index, side] of sides.entries()) {
      const started = await startService(CLI, counted[index]!);
      side.process = started.process;
      const count = index === 0 ? () => (tableRequests += tableProxy.take().length) : () => statements.statements();
      costs.push(await operationCosts(started.url, count, `count${index}`));
    }
  } finally {
    await stopServices();
    await tableProxy.close();
    await statements.close();
  }

  console.log(`\n${rounds} rounds × ${windowMs} ms windows, concurrency ${concurrency}, medians (each store durable: Azurite saves before answering, PostgreSQL fsyncs its commits):`);
  for (const side of sides) {
    console.log(`${side.label.padEnd(11)} renewals/s ${Math.round(median(side.rates))} (rounds ${side.rates.map((rate) => Math.round(rate)).join(" ")}), service CPU ${side.cpu.length === 0 ? "?" : median(side.cpu).toFixed(2)} ms/renewal`);
  }
  const [azuriteSide, postgresSide] = sides as [Side, Side];
  const ratios = postgresSide.rates.map((rate, i) => rate / azuriteSide.rates[i]!);
  console.log(`PostgreSQL ÷ Azurite, renewals/s per round: ${ratios.map((ratio) => ratio.toFixed(2)).join(" ")} (median ${median(ratios).toFixed(2)})`);
  console.log(`\nstore calls per operation, counted on the wire (Table: HTTP requests; PostgreSQL: statements), renew and poll averaged over ${ops}:`);
  console.log(`${"".padEnd(11)} ${["acquire", "renew", "poll", "takeover"].map((name) => name.padStart(9)).join("")}`);
  for (const [index, side] of sides.entries()) {
    const cost = costs[index]!;
    console.log(`${side.label.padEnd(11)} ${[cost["acquire"]!, cost["renew"]!, cost["poll"]!, cost["takeover"]!].map((value) => String(Math.round(value * 100) / 100).padStart(9)).join("")}`);
  }
} finally {
  await stopServices();
  await azurite.kill("SIGTERM");
  await postgres?.close();
  await rm(dataDir, { recursive: true, force: true });
}
