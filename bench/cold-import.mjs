#!/usr/bin/env node
// Cold import of the deploy package's entry, the part of a Flex Consumption cold start the
// app decides: each tree's `npm run package` zip is built, unpacked as Azure unpacks it, and
// its package.json "main" imported in a fresh Node process with the Bicep's app settings
// (test/helpers/bicep-settings.json: telemetry on, an ingestion endpoint nothing listens on)
// and the stand-in for the Node.js worker's @azure/functions-core preloaded, as Azure loads it,
// `--runs` times per tree, interleaved so that every tree sees the same machine load.
// A tree given as a git ref is taken with `git archive` into a temporary directory and
// packaged there with its own scripts/package.mjs (this tree's node_modules lent to it).
// Reported per tree: the zip's size and file
// count, the median and spread of the import (performance.now() around `await import`), the
// CPU time the process spent on it (process.cpuUsage(): what a busy machine inflates least),
// the whole process (spawn to exit), and the connections the import opened, by destination
// (none may go to the ingestion endpoint: no telemetry is exported while importing).
import { execFileSync, spawn } from "node:child_process";
import console from "node:console";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { fileURLToPath, pathToFileURL, URL } from "node:url";
import { readArgs } from "../dist/bench/helpers/args.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SETTINGS = JSON.parse(readFileSync(path.join(ROOT, "test", "helpers", "bicep-settings.json"), "utf8")).table;
const INGESTION = new URL(/IngestionEndpoint=([^;]+)/.exec(SETTINGS.APPLICATIONINSIGHTS_CONNECTION_STRING)[1]).host;
const MARK = "cold-import:";
/** The worker's @azure/functions-core, stood in for: the app registers its functions as in Azure (not @azure/functions' test mode, which warns for each). */
const STAND_IN = pathToFileURL(path.join(ROOT, "test", "helpers", "functions-core-stand-in.mjs")).href;

const USAGE = `Usage: npm run bench -- cold-import [--tree LABEL=SOURCE]... [--runs 11] [--work DIR]

Cold import of the deploy package's entry, the part of a Flex Consumption cold start the
app decides: each tree's \`npm run package\` zip, unpacked as Azure unpacks it, its "main"
imported in a fresh Node process with the Bicep's app settings (telemetry on), --runs times
per tree, interleaved. Prints per tree the zip's size and files, the import's median and
range, its CPU time, the whole process, and the connections opened while importing (none
may go to the telemetry ingestion endpoint: the exit code is 1 if one does).

Options:
  --tree LABEL=SOURCE   SOURCE a directory of sources (. for this working tree) or a git ref;
                        without a tree for ., after=. is added
  --runs N              fresh processes per tree (default 11)
  --work DIR            keep the packages there; a ref's package found there is not built again`;
const { values } = readArgs(USAGE, {
  tree: { type: "string", multiple: true, default: [] },
  runs: { type: "string", default: "11" },
  work: { type: "string" },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number of at least 1 (got ${values.runs})`);
const trees = values.tree.map((tree) => {
  const at = tree.indexOf("=");
  return at < 0 ? { label: tree, source: tree } : { label: tree.slice(0, at), source: tree.slice(at + 1) };
});
if (!trees.some((tree) => path.resolve(tree.source) === ROOT)) trees.push({ label: "after", source: "." });

// With --work DIR the packages stay there, and a ref's package found there is not built again.
const work = values.work === undefined ? mkdtempSync(path.join(os.tmpdir(), "ha-module-cold-import-")) : path.resolve(values.work);
mkdirSync(work, { recursive: true });

/** The tree's sources: a directory as given, or a git ref archived into the work directory. */
function sourcesOf(tree) {
  if (existsSync(tree.source) && statSync(tree.source).isDirectory()) return path.resolve(tree.source);
  const dir = path.join(work, `${tree.label}-src`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync("sh", ["-c", `git -C "$0" archive "$1" | tar -x -C "$2"`, ROOT, tree.source, dir]);
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

/** Builds the tree's zip and unpacks it; returns the app directory, its entry and the zip's figures. */
function packageOf(tree) {
  const zip = path.join(work, `${tree.label}.zip`);
  const app = path.join(work, `${tree.label}-app`);
  const reuse = values.work !== undefined && existsSync(zip) && existsSync(app) && path.resolve(tree.source) !== ROOT;
  if (!reuse) {
    const sources = sourcesOf(tree);
    const stage = path.join(work, `${tree.label}-stage`);
    console.error(`${tree.label}: packaging ${tree.source} …`);
    rmSync(stage, { recursive: true, force: true });
    rmSync(app, { recursive: true, force: true });
    execFileSync(process.execPath, [path.join(sources, "scripts", "package.mjs"), "--out", zip, "--stage", stage], { cwd: sources, stdio: ["ignore", "ignore", "inherit"] });
    rmSync(stage, { recursive: true, force: true });
    execFileSync("unzip", ["-q", zip, "-d", app]);
  }
  const files = readdirSync(app, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;
  const main = JSON.parse(readFileSync(path.join(app, "package.json"), "utf8")).main;
  return { ...tree, app, entry: path.join(app, main), zipBytes: statSync(zip).size, files };
}

/** Counts connections by destination; the child prints them with the import's duration. */
const PROBE = `
import net from "node:net";
const connects = [];
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const options = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (typeof options === "object" && options !== null) connects.push(options.path ?? (options.host ?? "localhost") + ":" + options.port);
  return connect.apply(this, args);
};
const started = performance.now();
const cpuBefore = process.cpuUsage();
await import(process.argv[1]);
const importMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
process.stdout.write("\\n${MARK}" + JSON.stringify({ importMs, cpuMs: (cpu.user + cpu.system) / 1000, connects }) + "\\n");
process.exit(0);
`;

/** One cold import in a fresh process. */
function importOnce(entry, cwd) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["--import", STAND_IN, "--input-type=module", "-e", PROBE, entry], { cwd, env: { PATH: process.env.PATH ?? "", ...SETTINGS }, stdio: ["ignore", "pipe", "ignore"] });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const line = stdout.split("\n").find((candidate) => candidate.startsWith(MARK));
      if (code !== 0 || line === undefined) return reject(new Error(`import of ${entry} exited with ${code}`));
      resolve({ ...JSON.parse(line.slice(MARK.length)), processMs: performance.now() - started });
    });
  });
}

const median = (numbers) => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const range = (numbers) => `${Math.round(Math.min(...numbers))}–${Math.round(Math.max(...numbers))}`;

try {
  const packages = trees.map(packageOf);
  const samples = new Map(packages.map((found) => [found.label, []]));
  for (let run = 0; run < runs; run++) {
    for (const found of packages) samples.get(found.label).push(await importOnce(found.entry, found.app));
  }
  const rows = packages.map((found) => {
    const taken = samples.get(found.label);
    const connects = new Map();
    for (const destination of taken.flatMap((sample) => sample.connects)) connects.set(destination, (connects.get(destination) ?? 0) + 1);
    return {
      label: found.label,
      source: found.source,
      mib: found.zipBytes / 1024 / 1024,
      files: found.files,
      importMs: median(taken.map((sample) => sample.importMs)),
      importRange: range(taken.map((sample) => sample.importMs)),
      processMs: median(taken.map((sample) => sample.processMs)),
      cpuMs: median(taken.map((sample) => sample.cpuMs)),
      connects: [...connects].map(([destination, count]) => `${destination} ×${(count / runs).toFixed(0)}`).join(", ") || "none",
      exported: connects.has(INGESTION),
    };
  });
  const fastest = Math.min(...rows.map((row) => row.importMs));
  console.log(`Cold import of the packaged entry, Bicep's settings (telemetry on), median of ${runs} fresh processes per tree, interleaved; Node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)} at the end.\n`);
  console.log("| tree | zip | files | import, median (range) | CPU time of the import, median | process, median | import × the fastest | connections during import, per run |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const row of rows) {
    console.log(
      `| ${row.label} (${row.source}) | ${row.mib.toFixed(1)} MiB | ${row.files} | ${Math.round(row.importMs)} ms (${row.importRange}) | ${Math.round(row.cpuMs)} ms | ` +
        `${Math.round(row.processMs)} ms | ${(row.importMs / fastest).toFixed(1)} | ${row.connects} |`,
    );
  }
  const exported = rows.filter((row) => row.exported).map((row) => row.label);
  if (exported.length > 0) {
    console.log(`\n${exported.join(", ")}: connected to the ingestion endpoint ${INGESTION} while importing.`);
    process.exitCode = 1;
  }
} finally {
  if (values.work === undefined) rmSync(work, { recursive: true, force: true });
}
