/* global console, process */
// Capacity at I = 1 s, builds side by side in one run: each tree gets what `compare`
// measures capacity against — its own Azurite process (durable, as `npm start` embeds it)
// and its own `ha-module serve` over it — and, at each size, the trees' fleets take turns
// (bench/compare/capacity.ts of each tree: two fleet processes of PrimaryElectors, a primary
// and a standby per role, one window each), the order reversed every round, so that the
// machine's drift falls on both. A step is clean with no leader change, no demotion and a
// primary for every role at every sample. Only one fleet runs at a time. Needs
// `npm run build` in each tree. The trees' Azurite and service are started with this tree's
// helpers; each tree's own capacity step (dist/bench/compare/capacity.js) drives its fleet.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { readArgs } from "../dist/bench/helpers/args.js";
import { startLineProcess, startService } from "../dist/bench/helpers/processes.js";
import { treesOf } from "../dist/bench/helpers/trees.js";

const USAGE = `Usage: npm run bench -- capacity-ab [--tree [LABEL=]DIR]... [--rounds 3] [--seconds 60] [SIZE...]

Capacity at I = 1 s, builds side by side in one run: each tree its own Azurite (durable)
and its own \`ha-module serve\`; at each size the trees' fleets of PrimaryElectors (a
primary and a standby per role) take turns, one at a time, the order reversed every round.
A step is clean with no leader change, no demotion and a primary for every role at every
sample. Prints a JSON line per window and a table per size and tree.

Arguments and options:
  SIZE...              roles per step, each with two participants (default 50 200 400)
  --tree [LABEL=]DIR   a built checkout; more than one side by side (default .)
  --rounds N           windows per tree and size (default 3)
  --seconds S          each window's length (default 60)`;
const { values, positionals } = readArgs(USAGE, { tree: { type: "string", multiple: true, default: ["."] }, rounds: { type: "string", default: "3" }, seconds: { type: "string", default: "60" } }, { allowPositionals: true });
const sizes = positionals.length === 0 ? [50, 200, 400] : positionals.map(Number);
const rounds = Number(values.rounds);
const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const log = (line) => process.stderr.write(`capacity-ab: ${line}\n`);
const dataDir = await mkdtemp(path.join(tmpdir(), "ha-capacity-ab-"));
const started = [];
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));
process.on("exit", () => started.forEach((child) => child.kill("SIGKILL")));

/** The tree's Azurite and service, started from its own build. */
async function startTree({ label, dir }, index) {
  const { measureCapacity } = await import(path.join(dir, "dist/bench/compare/capacity.js"));
  const azurite = startLineProcess(path.join(dir, "dist/test/chaos/azurite-process.js"), [path.join(dataDir, `store-${index}`), "0"]);
  started.push(azurite.child);
  const store = await azurite.waitFor((line) => typeof line.connectionString === "string", 30_000);
  const service = await startService(path.join(dir, "dist/shared/cli/main.js"), {
    HA_INTERVAL_MS: String(TIMING.intervalMs),
    HA_TIMEOUT_MS: String(TIMING.timeoutMs),
    HA_TABLE_CONNECTION_STRING: String(store.connectionString),
  });
  started.push(service.process.child);
  log(`${label}: service ${service.url}, Azurite port ${store.port}`);
  return { label, measureCapacity, service, azurite };
}

const trees = [];
for (const [index, tree] of treesOf(values.tree).entries()) trees.push(await startTree(tree, index));
const rows = [];
for (const roles of sizes) {
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? trees : [...trees].reverse();
    for (const tree of order) {
      const plan = { ...TIMING, capacitySteps: [roles], capacityWindowMs: Number(values.seconds) * 1000 };
      const { steps } = await tree.measureCapacity(plan, tree.service.url, tree.service.process.child.pid, tree.azurite.child.pid, (line) => log(`${tree.label}: ${line}`));
      const row = { tree: tree.label, round: round + 1, ...steps[0] };
      rows.push(row);
      console.log(JSON.stringify(row));
      // The killed fleet's leases run out before the next fleet adds load.
      await sleep(TIMING.timeoutMs);
    }
  }
}

console.log(`\n| roles × 2 | tree | clean runs | leader changes | demotions | failed calls | heartbeats/s | p99 round trip ms (worst run) | without primary | service cores | Azurite cores |`);
console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`);
const sum = (list, key) => list.reduce((total, row) => total + row[key], 0);
const mean = (list, key) => sum(list, key) / list.length;
for (const roles of sizes) {
  for (const { label } of trees) {
    const mine = rows.filter((row) => row.roles === roles && row.tree === label);
    const demotions = {};
    for (const row of mine) for (const [reason, count] of Object.entries(row.demotions)) demotions[reason] = (demotions[reason] ?? 0) + count;
    const reasons = Object.entries(demotions).map(([reason, count]) => `${count} ${reason}`).join(", ") || "0";
    const worstP99 = Math.max(...mine.map((row) => row.p99Ms ?? 0));
    console.log(
      `| ${roles} × 2 | ${label} | ${mine.filter((row) => row.clean).length} / ${mine.length} | ${sum(mine, "leaderChanges")} | ${reasons} | ${sum(mine, "failedCalls")} (${mine.map((row) => row.failedCalls).join(", ")}) | ${Math.round(mean(mine, "heartbeatsPerSecond"))} | ${Math.round(worstP99)} | ${(mean(mine, "withoutPrimaryShare") * 100).toFixed(2)} % | ${mean(mine, "serviceCores").toFixed(2)} | ${mean(mine, "storeCores").toFixed(2)} |`,
    );
  }
}
for (const tree of trees) {
  await tree.service.process.kill("SIGTERM");
  await tree.azurite.kill("SIGTERM");
}
await rm(dataDir, { recursive: true, force: true });
process.exit(0);
