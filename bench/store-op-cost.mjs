/* global console, process, performance, URL */
// What one Table call costs the process that makes it, in CPU, with nothing else in that
// process: the store's own client (shared/store/table-rest.ts, what the service's heartbeats
// use) against its own Azurite process, reads and If-Match merges of lease-like rows, in
// three patterns:
//
//   bursts    5 calls in parallel, 20 bursts a second: what 20 head nodes' participant
//             heartbeats ask of the store (5 store calls each, once per I = 1 s)
//   paced     one call every 10 ms, one at a time
//   busy      one call after another, no pause
//
// CPU is the process's own (user + system, process.cpuUsage) over the window, per call; the
// idle process's is printed beside it. This is the floor under the service's CPU per store
// operation in bench/participant-cost.ts. Needs `npm run build`.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { TableClient } from "@azure/data-tables";
import { readArgs } from "../dist/bench/helpers/args.js";

const USAGE = `Usage: npm run bench -- store-op-cost [--seconds 10] [--rounds 2]

What one Table call costs the process that makes it, in CPU, with nothing else in that
process: the store's own Table client against its own Azurite, reads and If-Match merges
of lease-like rows, in three patterns (bursts: 5 calls in parallel 20 times a second;
paced: one call every 10 ms; busy: back to back) beside the idle process. Prints the
process's CPU per second and per call, per round and pattern.

Options:
  --seconds S   each pattern's window (default 10)
  --rounds N    rounds of the four patterns (default 2)`;
const { values } = readArgs(USAGE, { seconds: { type: "string", default: "10" }, rounds: { type: "string", default: "2" } });
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
if (!(seconds > 0) || !Number.isSafeInteger(rounds) || rounds < 1) {
  console.error("--seconds must be a positive number and --rounds a positive whole number.");
  process.exit(2);
}

const ROOT = path.resolve(new URL("..", import.meta.url).pathname);
const { TableRest, TableConnections, sharedKeyFromConnectionString } = await import(path.join(ROOT, "dist/shared/store/table-rest.js"));
const { startLineProcess } = await import(path.join(ROOT, "dist/bench/helpers/processes.js"));
const dataDir = await mkdtemp(path.join(tmpdir(), "ha-store-op-cost-"));
const azurite = startLineProcess(path.join(ROOT, "dist/test/chaos/azurite-process.js"), [path.join(dataDir, "store"), "0"]);
process.on("exit", () => azurite.child.kill("SIGKILL"));
const { connectionString } = await azurite.waitFor((line) => typeof line.connectionString === "string", 30_000);

const TABLE = "opcost";
await TableClient.fromConnectionString(connectionString, TABLE, { allowInsecureConnection: true }).createTable();
const { endpoint, auth } = sharedKeyFromConnectionString(connectionString);
const connections = new TableConnections();
const rows = new TableRest(endpoint, TABLE, auth, connections);
const ROLES = 20;
const etags = new Map();
for (let role = 0; role < ROLES; role += 1) {
  await rows.upsertEntity({ partitionKey: `role-${role}`, rowKey: "lease", renewedAt: { value: "0", type: "Int64" } });
  etags.set(`role-${role}`, (await rows.getEntity(`role-${role}`, "lease")).etag);
}

/** A standby's poll (a point read) or a primary's renewal (an If-Match merge). */
async function call(role, kind) {
  const partitionKey = `role-${role % ROLES}`;
  if (kind === "read") {
    etags.set(partitionKey, (await rows.getEntity(partitionKey, "lease")).etag);
    return;
  }
  const written = await rows.updateEntity({ partitionKey, rowKey: "lease", renewedAt: { value: String(Date.now()), type: "Int64" } }, "Merge", etags.get(partitionKey));
  etags.set(partitionKey, written.etag);
}

/** Runs `step` (which answers how many calls it made) for the window; CPU per second and per call. */
async function measure(pattern, step) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  let calls = 0;
  while (performance.now() - started < seconds * 1000) calls += await step();
  const used = process.cpuUsage(cpu);
  const elapsedS = (performance.now() - started) / 1000;
  const cpuMs = (used.user + used.system) / 1000;
  return { pattern, calls, cpuMsPerS: cpuMs / elapsedS, systemMsPerS: used.system / 1000 / elapsedS, cpuMsPerCall: calls === 0 ? undefined : cpuMs / calls };
}

let next = 0;
const paced = (periodMs, step) => async () => {
  const at = performance.now();
  const calls = await step();
  await sleep(Math.max(0, periodMs - (performance.now() - at)));
  return calls;
};
const PATTERNS = {
  idle: paced(100, async () => 0),
  bursts: paced(50, async () => {
    const role = (next += 1);
    await Promise.all([call(role, "write"), call(role, "read"), call(role + 1, "write"), call(role + 2, "read"), call(role + 3, "write")]);
    return 5;
  }),
  paced: paced(10, async () => {
    next += 1;
    await call(next, next % 2 === 0 ? "read" : "write");
    return 1;
  }),
  busy: async () => {
    next += 1;
    await call(next, next % 2 === 0 ? "read" : "write");
    return 1;
  },
};

console.log("| round | pattern | calls | process CPU ms/s (of it system) | CPU ms per call |\n| --- | --- | --- | --- | --- |");
for (let round = 1; round <= rounds; round += 1) {
  for (const [name, step] of Object.entries(PATTERNS)) {
    const row = await measure(name, step);
    console.log(`| ${round} | ${row.pattern} | ${row.calls} | ${row.cpuMsPerS.toFixed(1)} (${row.systemMsPerS.toFixed(1)}) | ${row.cpuMsPerCall === undefined ? "—" : row.cpuMsPerCall.toFixed(3)} |`);
  }
}
connections.close();
azurite.child.kill("SIGTERM");
await new Promise((resolve) => azurite.child.once("exit", resolve));
await rm(dataDir, { recursive: true, force: true });
