/* global console, process, setInterval, clearInterval */
// What each overload signal reads in a process that keeps up, with and without CPU hogs
// beside it: event-loop utilization alone (HA_SHED_BUSY_PERCENT's first signal), the busy
// time the gate reads now (LoopLoad: the smaller of utilization and the process's CPU
// time, HA_SHED_BUSY_PERCENT) and the event loop's lag (LoopLag, HA_SHED_DELAY_MS). The process does a paced, fixed amount
// of CPU work (every 10 ms, a loop calibrated to `--load` of a core when alone), so
// whatever changes between the phases is the machine, not the work. Also a phase past
// capacity (work due faster than it can be done), alone and with the hogs. Needs `npm run build`.
import { spawn } from "node:child_process";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { LoopLag } from "../dist/shared/service/loop-lag.js";
import { LoopLoad } from "../dist/shared/service/loop-load.js";
import { readArgs } from "../dist/bench/helpers/args.js";

const USAGE = `Usage: npm run bench -- busy-signal [--load 0.3] [--hogs N] [--seconds 8]

What each overload signal reads in a process doing a paced, fixed amount of CPU work:
event-loop utilization, the busy time the shedding gate reads (the smaller of utilization
and the process's CPU time) and the event loop's lag; alone, past capacity (work due at
150 % of a core), and both again with CPU hogs beside it. Prints one table row per phase.

Options:
  --load F        the work, as a fraction of a core when alone (default 0.3)
  --hogs N        busy loops beside it in the later phases (default: one per core)
  --seconds S     each phase's length (default 8)`;
const { values } = readArgs(USAGE, { load: { type: "string", default: "0.3" }, hogs: { type: "string", default: String(os.availableParallelism()) }, seconds: { type: "string", default: "8" } });
const load = Number(values.load);
const hogCount = Number(values.hogs);
const seconds = Number(values.seconds);
const hogs = new Set();
process.on("exit", () => hogs.forEach((hog) => hog.kill("SIGKILL")));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

let sink = 0;
function spin(iterations) {
  for (let i = 0; i < iterations; i += 1) sink = (sink + i * 7) % 1_000_003;
}
// Iterations per ms of CPU, measured alone, before any hog starts (best of 5).
let perMs = 0;
for (let trial = 0; trial < 5; trial += 1) {
  const began = performance.now();
  spin(2_000_000);
  perMs = Math.max(perMs, 2_000_000 / (performance.now() - began));
}

async function phase(name, workFraction) {
  const lag = new LoopLag().start();
  const own = new LoopLoad().start();
  const owns = [];
  const elu = [];
  const lags = [];
  let last = performance.eventLoopUtilization();
  const sampler = setInterval(() => {
    const now = performance.eventLoopUtilization();
    elu.push(performance.eventLoopUtilization(now, last).utilization);
    last = now;
    const delay = lag.delayMs();
    if (delay !== undefined) lags.push(delay);
    const busy = own.busyFraction();
    if (busy !== undefined) owns.push(busy);
  }, 500);
  const began = performance.now();
  let due = 0;
  // Paced on the clock: a late turn does the work that fell due meanwhile, for at most
  // 100 ms, then yields, as a server's loop turns through its many short requests: past
  // capacity the loop keeps cycling (timers fire) while the work owed grows.
  while (performance.now() - began < seconds * 1000) {
    const owed = Math.floor((performance.now() - began) / 10);
    const turn = performance.now();
    for (; due < owed && performance.now() - turn < 100 && performance.now() - began < seconds * 1000; due += 1) spin(Math.round(perMs * 10 * workFraction));
    await sleep(1);
  }
  clearInterval(sampler);
  lag.stop();
  own.stop();
  const mean = (xs) => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
  const most = (xs) => (xs.length === 0 ? Number.NaN : Math.max(...xs));
  const skip = elu.slice(1); // the first half second holds start-up
  return {
    phase: name,
    busyPercentMean: Math.round(100 * mean(skip)),
    busyPercentMax: Math.round(100 * most(skip)),
    halfSecondsOver90: skip.filter((u) => u >= 0.9).length,
    ownPercentMean: Math.round(100 * mean(owns)),
    ownPercentMax: Math.round(100 * most(owns)),
    ownHalfSecondsOver90: owns.filter((u) => u >= 0.9).length,
    lagMsMean: Number(mean(lags).toFixed(1)),
    lagMsMax: Number(most(lags).toFixed(1)),
    halfSecondsOver100: lags.filter((l) => l > 100).length,
  };
}

console.log(`machine: ${os.cpus()[0]?.model ?? "?"} × ${os.availableParallelism()}, node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
const rows = [await phase(`alone, ${Math.round(load * 100)} % of a core`, load)];
rows.push(await phase("alone, work due at 150 % of a core (past capacity)", 1.5));
for (let n = 0; n < hogCount; n += 1) {
  const hog = spawn("nice", ["-n", "0", "sh", "-c", "while :; do :; done"], { stdio: "ignore" });
  hogs.add(hog);
}
await sleep(500);
rows.push(await phase(`${hogCount} hogs beside, ${Math.round(load * 100)} % of a core`, load));
rows.push(await phase(`${hogCount} hogs beside, work due at 150 % of a core (past capacity)`, 1.5));
hogs.forEach((hog) => hog.kill("SIGKILL"));
console.log(
  "\n| phase | utilization % (mean, max of ½ s windows) | ½ s windows ≥ 90 % | own busy % (min with CPU time; mean, max) | ½ s windows ≥ 90 % own busy | lag ms (mean, max) | ½ s windows with lag > 100 ms |\n|---|---:|---:|---:|---:|---:|---:|",
);
for (const r of rows) {
  console.log(`| ${r.phase} | ${r.busyPercentMean}, ${r.busyPercentMax} | ${r.halfSecondsOver90} | ${r.ownPercentMean}, ${r.ownPercentMax} | ${r.ownHalfSecondsOver90} | ${r.lagMsMean}, ${r.lagMsMax} | ${r.halfSecondsOver100} |`);
}
process.exit(0);
