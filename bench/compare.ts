/**
 * `npm run bench -- compare [--quick] [--out <dir>]`: three client algorithms against one
 * local service in one run, the service's cost against the raw store, and its capacity;
 * writes report.md, results.json and SVG plots to the results folder (bench-results/ by
 * default, git-ignored). Its parts are in bench/compare/; docs/benchmarks.md has the
 * figures of the latest full run.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem, type } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { runAlgorithmPhase } from "./compare/algorithms-phase.js";
import { measureCapacity } from "./compare/capacity.js";
import { readPlan } from "./compare/plan.js";
import { startLineProcess, startService, type LineProcess } from "./helpers/processes.js";
import { renderReport, type Results } from "./compare/report.js";
import { measureServiceRatio } from "./compare/service-ratio.js";
import { barChart, curve, stripPlot } from "./helpers/svg.js";
import { startWireProxy, type WireProxy } from "./helpers/wire-proxy.js";

const CLI = fileURLToPath(new URL("../shared/cli/main.js", import.meta.url));
const AZURITE = fileURLToPath(new URL("../test/chaos/azurite-process.js", import.meta.url));

const plan = readPlan(process.argv.slice(2));
const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
const started = performance.now();
const startedAt = new Date().toISOString();
const loadAtStart = loadavg()[0] ?? 0;
const dataDir = await mkdtemp(join(tmpdir(), "ha-bench-"));
const processes: LineProcess[] = [];
const proxies: WireProxy[] = [];

function commit(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { encoding: "utf8" }).trim() !== "";
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return "unknown";
  }
}

function machine(): string {
  const cpu = cpus();
  return `${type()} ${process.arch}, ${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

try {
  const azurite = startLineProcess(AZURITE, [join(dataDir, "store"), "0"]);
  processes.push(azurite);
  const store = await azurite.waitFor((line) => typeof line["connectionString"] === "string", 30_000);
  const directConnection = String(store["connectionString"]);
  const azuriteUrl = `http://127.0.0.1:${String(store["port"])}`;
  const storeProxy = await startWireProxy(azuriteUrl);
  proxies.push(storeProxy);
  const timing = { HA_INTERVAL_MS: String(plan.intervalMs), HA_TIMEOUT_MS: String(plan.timeoutMs) };
  const proxied = await startService(CLI, { ...timing, HA_TABLE_CONNECTION_STRING: directConnection.replace(azuriteUrl, storeProxy.url) });
  processes.push(proxied.process);
  const serviceProxy = await startWireProxy(proxied.url.replace(/\/api$/, ""));
  proxies.push(serviceProxy);
  log(`service ${proxied.url} behind ${serviceProxy.url}, Azurite ${azuriteUrl} behind ${storeProxy.url}`);

  const algorithms = await runAlgorithmPhase(plan, { service: serviceProxy, store: storeProxy }, log);
  await proxied.process.kill("SIGTERM");

  // The service on its own, straight on Azurite: its cost and its capacity.
  const direct = await startService(CLI, { ...timing, HA_TABLE_CONNECTION_STRING: directConnection });
  processes.push(direct.process);
  const ratio = await measureServiceRatio(direct.url, direct.process.child.pid, directConnection, plan.ratioConcurrency, plan.ratioWindowMs);
  log(`ratio ${ratio.ratio.toFixed(2)} (${Math.round(ratio.heartbeatsPerSecond)} heartbeats/s, ${Math.round(ratio.rawUpdatesPerSecond)} raw merges/s)`);
  const capacity = await measureCapacity(plan, direct.url, direct.process.child.pid, azurite.child.pid, log);

  const results: Results = {
    plan,
    command: `npm run bench -- compare${plan.quick ? " --quick" : ""}`,
    machine: machine(),
    loadAverage: { start: loadAtStart, end: loadavg()[0] ?? 0, cores: cpus().length },
    commit: commit(),
    startedAt,
    durationS: (performance.now() - started) / 1000,
    algorithms,
    ratio,
    capacity,
  };
  const out = resolve(plan.outDir);
  await mkdir(out, { recursive: true });
  await writeFile(join(out, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(out, "report.md"), renderReport(results));
  await writeFile(
    join(out, "failover.svg"),
    stripPlot(
      `Crash failover (SIGKILL → another primary), I = ${plan.intervalMs} ms, T = ${plan.timeoutMs} ms`,
      "ms",
      algorithms.map((f) => ({ name: f.algorithm, samples: f.crash.samples, median: f.crash.median })),
    ),
  );
  await writeFile(
    join(out, "store-ops.svg"),
    barChart(
      "Per participant per second, steady state, on the wire",
      "per second",
      algorithms.map((f) => f.algorithm),
      [
        { name: "HTTP calls", values: algorithms.map((f) => f.callsPerParticipantPerSecond) },
        { name: "store operations", values: algorithms.map((f) => f.storeOpsPerParticipantPerSecond) },
      ],
    ),
  );
  await writeFile(
    join(out, "capacity.svg"),
    curve(
      `Capacity at I = ${plan.intervalMs} ms (× = spurious failovers)`,
      "participants (roles × 2)",
      "heartbeats answered per second",
      capacity.steps.map((s) => ({ x: s.participants, y: s.heartbeatsPerSecond, bad: !s.clean })),
    ),
  );
  log(`report written to ${join(out, "report.md")} in ${Math.round(results.durationS)} s`);
} finally {
  await Promise.all(processes.map((p) => p.kill("SIGTERM")));
  await Promise.all(proxies.map((p) => p.close()));
  await rm(dataDir, { recursive: true, force: true });
}
