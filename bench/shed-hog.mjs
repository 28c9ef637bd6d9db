/* global console, process */
// Load shedding on a shared machine: does a process that keeps up refuse load because
// other processes hold the CPUs? One `ha-module serve` (in-memory embedded Azurite), a
// paced open-loop load of mixed requests (polls of held and free roles, acquisitions and
// takeover attempts by other uuids), and `--holders` roles held by SDK electors renewing
// every I, for `--seconds`; with `--hogs N` busy loops (`nice -n 0`, one per core by
// default) running beside it. Reports the 503 Overloaded count, other failures, the
// achieved rate and the holders' demotions. `--tree` as in overload-curve.mjs: given more
// than once, the trees take turns (e.g. the build before the change against this one).
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { readArgs } from "../dist/bench/helpers/args.js";
import { startServe, treesOf } from "../dist/bench/helpers/trees.js";

const USAGE = `Usage: npm run bench -- shed-hog [--tree [LABEL=]DIR]... [--rate 200] [--seconds 20] [--hogs N]
                                 [--holders 20]

Load shedding on a shared machine: one \`ha-module serve\` (in-memory embedded Azurite), a
paced open-loop load of mixed requests (polls of held and free roles, acquisitions and
takeover attempts) and --holders roles held by electors renewing every I, with --hogs busy
loops beside it. Prints the 503 Overloaded count, other failures, the achieved rate, the
holders demoted and those primary at the end, per tree.

Options:
  --tree [LABEL=]DIR   a built checkout; more than one take turns (default .)
  --rate N             requests per second (default 200)
  --seconds S          the load's length (default 20)
  --hogs N             busy loops (nice -n 0) beside it (default: one per core)
  --holders N          roles held by electors (default 20)`;
const { values } = readArgs(USAGE, {
  tree: { type: "string", multiple: true, default: ["."] },
  rate: { type: "string", default: "200" },
  seconds: { type: "string", default: "20" },
  hogs: { type: "string", default: String(os.availableParallelism()) },
  holders: { type: "string", default: "20" },
});
const trees = treesOf(values.tree);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const hogCount = Number(values.hogs);
const holderCount = Number(values.holders);
for (const [name, value] of Object.entries({ rate, seconds, hogs: hogCount, holders: holderCount })) {
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number of at least 0 (got ${values[name]})`);
}

const hogs = new Set();
process.on("exit", () => hogs.forEach((hog) => hog.kill("SIGKILL")));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

function startHogs(count) {
  for (let n = 0; n < count; n += 1) {
    const hog = spawn("nice", ["-n", "0", "sh", "-c", "while :; do :; done"], { stdio: "ignore" });
    hogs.add(hog);
    hog.once("exit", () => hogs.delete(hog));
  }
}

function stopHogs() {
  for (const hog of hogs) hog.kill("SIGKILL");
}

/** The paced open-loop load: polls of held and free roles, acquisitions and takeover attempts by other uuids. */
const LOAD = `
const { parentPort, workerData: { url, rate, seconds, holderCount, debug } } = require("node:worker_threads");
const { setTimeout: sleep } = require("node:timers/promises");
const counts = { sent: 0, answered: 0, overloaded: 0, failed: 0, elapsed: 0 };
const one = async (n) => {
  const kind = n % 10;
  const role = kind < 4 ? "held-" + (n % Math.max(1, holderCount)) : "free-" + (n % 50);
  const init = kind < 6 ? { method: "GET" } : { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ uuid: "other-" + (n % 7) }) };
  counts.sent += 1;
  try {
    const response = await fetch(url + "/primary/" + role, { ...init, signal: AbortSignal.timeout(10000) });
    const text = await response.text();
    counts.answered += 1;
    if (response.status === 503 && text.includes("Overloaded")) {
      counts.overloaded += 1;
      if (counts.overloaded <= 2 && debug) console.error(text);
    } else if (response.status >= 500) {
      counts.failed += 1;
      if (counts.failed <= 2 && debug) console.error(response.status, text);
    }
  } catch (error) {
    counts.failed += 1;
    if (counts.failed <= 2 && debug) console.error(String(error));
  }
};
(async () => {
  // Paced on the clock: a late turn sends what fell due, so the rate holds.
  const requests = [];
  const began = performance.now();
  let n = 0;
  while (performance.now() - began < seconds * 1000) {
    const due = Math.floor(((performance.now() - began) / 1000) * rate);
    for (; n < due; n += 1) requests.push(one(n));
    await sleep(10);
  }
  counts.elapsed = (performance.now() - began) / 1000;
  await Promise.all(requests);
  parentPort.postMessage(counts);
})();
`;

async function run(tree) {
  const { PrimaryElector, HaClient } = await import(path.join(tree, "dist/shared/sdk/index.js"));
  const { url, child } = await startServe(tree);
  const demotions = { count: 0 };
  const electors = [];
  for (let role = 0; role < holderCount; role += 1) {
    const elector = new PrimaryElector({ utype: `held-${role}`, transport: new HaClient({ endpoint: url }) });
    elector.on("demoted", () => (demotions.count += 1)).on("error", () => {});
    electors.push(elector.start());
  }
  await sleep(3000); // every holder elected, and the service's first half second measured
  startHogs(hogCount);
  await sleep(1000);
  // The load comes from a worker thread: its own event loop, so a load generator falling
  // behind does not make the holders' timers late (their demotions are the service's doing).
  const load = new Worker(LOAD, { eval: true, workerData: { url, rate, seconds, holderCount, debug: process.env.DEBUG_SHED !== undefined } });
  const [counts] = await once(load, "message");
  const elapsed = counts.elapsed;
  await load.terminate();
  stopHogs();
  const held = electors.filter((elector) => elector.isPrimary()).length;
  const demoted = demotions.count; // before stop(), which demotes each holder once more
  await Promise.race([Promise.all(electors.map((elector) => elector.stop())), sleep(5000)]);
  child.kill("SIGTERM");
  await sleep(500);
  return {
    requestsPerS: Math.round(counts.sent / elapsed),
    overloaded: counts.overloaded,
    otherFailures: counts.failed,
    holdersDemoted: demoted,
    holdersPrimaryAtEnd: `${held}/${holderCount}`,
  };
}

console.log(`machine: ${os.cpus()[0]?.model ?? "?"} × ${os.availableParallelism()}, node ${process.version}; ${hogCount} hog(s), ${rate} requests/s for ${seconds} s, ${holderCount} holders`);
const rows = [];
for (const { label, dir } of trees) {
  const row = { tree: label, ...(await run(dir)) };
  rows.push(row);
  console.log(JSON.stringify(row));
}
console.log("\n| tree | hogs | requests/s | 503 Overloaded | other failures | holders demoted | holders primary at the end |\n|---|---:|---:|---:|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.tree} | ${hogCount} | ${r.requestsPerS} | ${r.overloaded} | ${r.otherFailures} | ${r.holdersDemoted} | ${r.holdersPrimaryAtEnd} |`);
process.exit(0);
