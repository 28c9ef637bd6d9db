/* global console, process, URL, fetch */
// How long a role is without its work when an operator moves it, with real processes: one
// `ha-module serve` (in-memory embedded Azurite) and P `ha-module run` supervisors of one
// role, each running a command that appends "<name> <epoch> <ms>" to a shared log every
// 10 ms. The gap of a trial is the new command's first line minus the old command's last
// line (both on this machine's clock). Three ways, side by side in one run:
//
//   handover  `ha-module handover <role> --to <standby>` (the named standby must win)
//   stop      SIGTERM to the primary's `run`: it stops its command and releases with its
//             token; a standby takes over at its next poll (the supervisor is started
//             again, as a standby, before the next trial)
//   revoke    `ha-module release <role> --revoke`: no token, so nobody may take over before
//             the lease runs out (T)
//
// Needs `npm run build`.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { readArgs } from "../dist/bench/helpers/args.js";

const USAGE = `Usage: npm run bench -- handover [options]

Gaps between the old primary's last line of work and the new primary's first, for a
planned handover, a stop (release with the token) and a revoke, side by side in one run.

Options:
  --trials N          trials per way (default 20)
  --interval-ms I     the service's heartbeat interval (default 1000)
  --timeout-ms T      the service's lease timeout (default 5000)
  --participants P    run supervisors of the role, 2 or more (default 3)
  --modes LIST        which ways, comma-separated: handover,stop,revoke (default all)
  --json FILE         also write the results as JSON`;

const { values } = readArgs(USAGE, {
  trials: { type: "string", default: "20" },
  "interval-ms": { type: "string", default: "1000" },
  "timeout-ms": { type: "string", default: "5000" },
  participants: { type: "string", default: "3" },
  modes: { type: "string", default: "handover,stop,revoke" },
  json: { type: "string" },
});
const positive = (name) => {
  const value = Number(values[name]);
  if (!Number.isSafeInteger(value) || value < 1) {
    console.error(`--${name} must be a positive whole number, got ${JSON.stringify(values[name])}.\n\n${USAGE}`);
    process.exit(2);
  }
  return value;
};
const TRIALS = positive("trials");
const I = positive("interval-ms");
const T = positive("timeout-ms");
const PARTICIPANTS = positive("participants");
const MODES = values.modes.split(",").map((mode) => mode.trim());
if (PARTICIPANTS < 2 || T <= 2 * I || MODES.some((mode) => !["handover", "stop", "revoke"].includes(mode))) {
  console.error(`Need --participants ≥ 2, T > 2·I and --modes from handover,stop,revoke.\n\n${USAGE}`);
  process.exit(2);
}

const ROOT = path.resolve(new URL("..", import.meta.url).pathname);
const CLI = path.join(ROOT, "dist/shared/cli/main.js");
const ROLE = "bench-handover";
const work = mkdtempSync(path.join(tmpdir(), "ha-handover-"));
const LOG = path.join(work, "work.log");
writeFileSync(LOG, "");
const children = new Set();
const cleanup = () => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
};
process.on("exit", cleanup);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

function start(args, env = {}) {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  child.once("exit", () => children.delete(child));
  child.output = "";
  child.stdout.on("data", (chunk) => (child.output += chunk));
  child.stderr.on("data", (chunk) => (child.output += chunk));
  return child;
}

async function cli(args) {
  const child = start(args);
  const code = await new Promise((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`ha-module ${args.join(" ")} exited ${code}: ${child.output}`);
  return child.output;
}

// The service.
const serve = start(["serve"], { PORT: "0", HA_IN_MEMORY: "true", HA_DATA_DIR: "", HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
const endpoint = await new Promise((resolve, reject) => {
  const look = () => {
    const found = /http:\/\/127\.0\.0\.1:\d+\/api/.exec(serve.output);
    if (found) resolve(found[0]);
  };
  serve.stdout.on("data", look);
  serve.stderr.on("data", look);
  serve.once("exit", (code) => reject(new Error(`serve exited ${code}: ${serve.output}`)));
});

// The work: appends a line every 10 ms; stops at once on SIGTERM.
const WORK = `const fs = require("node:fs"); const tag = process.env.BENCH_NAME + " " + process.env.HA_EPOCH;
const line = () => fs.appendFileSync(process.env.BENCH_LOG, tag + " " + Date.now() + "\\n");
line(); const timer = setInterval(line, 10); process.on("SIGTERM", () => { clearInterval(timer); process.exit(0); });`;

const supervisors = new Map();
function startSupervisor(name) {
  const child = start(["run", ROLE, "--endpoint", endpoint, "--address", name, "--", process.execPath, "-e", WORK], { BENCH_NAME: name, BENCH_LOG: LOG });
  supervisors.set(name, child);
  return child;
}
const names = Array.from({ length: PARTICIPANTS }, (_, index) => `node-${index + 1}`);
names.forEach(startSupervisor);

/** Every line of work so far: {name, epoch, at}. */
function lines() {
  return readFileSync(LOG, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((text) => {
      const [name, epoch, at] = text.split(" ");
      return { name, epoch: Number(epoch), at: Number(at) };
    });
}

async function view() {
  const response = await fetch(`${endpoint}/primary/${ROLE}?standbys=true`);
  return response.json();
}

/** Waits until one primary works and every other supervisor is a standby the service shows. */
async function settled() {
  for (let waited = 0; waited < 60_000; waited += 100) {
    const shown = await view();
    const all = lines();
    const last = all.at(-1);
    const standbys = new Set((shown.standbys ?? []).map((standby) => standby.address));
    const primary = shown.primary?.address;
    if (last !== undefined && primary === last.name && Date.now() - last.at < 200 && names.every((name) => name === primary || standbys.has(name)) && shown.handover === null) {
      return { primary, epoch: last.epoch, count: all.length };
    }
    await sleep(100);
  }
  throw new Error(`no settled primary with ${PARTICIPANTS - 1} standbys within 60 s`);
}

/** The first line of a new term after `before` lines, and the old term's last line. */
async function nextTerm(before, old) {
  for (let waited = 0; waited < 4 * T + 10_000; waited += 10) {
    const all = lines();
    const first = all.slice(before.count).find((line) => line.epoch > old.epoch);
    if (first !== undefined) {
      const last = all.filter((line) => line.name === old.primary && line.epoch === old.epoch).at(-1);
      return { gapMs: first.at - last.at, winner: first.name, epoch: first.epoch };
    }
    await sleep(10);
  }
  throw new Error("no new term within 4·T + 10 s");
}

const results = {};
for (const mode of MODES) {
  const trials = [];
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const before = await settled();
    let named;
    if (mode === "handover") {
      const standbys = names.filter((name) => name !== before.primary);
      named = standbys[trial % standbys.length];
      await cli(["handover", ROLE, "--to", named, "--endpoint", endpoint]);
    } else if (mode === "stop") {
      supervisors.get(before.primary).kill("SIGTERM");
    } else {
      await cli(["release", ROLE, "--revoke", "--endpoint", endpoint]);
    }
    const after = await nextTerm(before, before);
    if (mode === "stop") {
      const stopped = supervisors.get(before.primary);
      if (stopped.exitCode === null && stopped.signalCode === null) await new Promise((resolve) => stopped.once("exit", resolve));
      startSupervisor(before.primary);
    }
    trials.push({ ...after, named });
    console.error(`${mode} #${trial + 1}: ${before.primary}@${before.epoch} → ${after.winner}@${after.epoch}, gap ${after.gapMs} ms${named === undefined ? "" : `, named ${named}`}`);
  }
  const gaps = trials.map((trial) => trial.gapMs).sort((a, b) => a - b);
  const rank = (p) => gaps[Math.min(gaps.length, Math.max(1, Math.ceil((p / 100) * gaps.length))) - 1];
  results[mode] = {
    trials: trials.length,
    medianGapMs: rank(50),
    p99GapMs: rank(99),
    maxGapMs: gaps.at(-1),
    namedWon: mode === "handover" ? trials.filter((trial) => trial.winner === trial.named).length : undefined,
  };
}

const report = { intervalMs: I, timeoutMs: T, participants: PARTICIPANTS, results };
console.log(JSON.stringify(report));
console.log(`\n| way | trials | gap median | gap p99 | gap max | median / I | named standby won |\n| --- | --- | --- | --- | --- | --- | --- |`);
for (const [mode, result] of Object.entries(results)) {
  console.log(
    `| ${mode} | ${result.trials} | ${result.medianGapMs} ms | ${result.p99GapMs} ms | ${result.maxGapMs} ms | ${(result.medianGapMs / I).toFixed(2)} | ${result.namedWon === undefined ? "—" : `${result.namedWon} / ${result.trials}`} |`,
  );
}
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
process.exit(0);
