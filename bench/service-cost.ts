/**
 * The service's own cost, A/B in one run: heartbeats/s through `ha-module serve` against
 * raw conditional merges/s straight to the same Azurite, alternating windows of the same
 * length and concurrency so that a loaded machine's drift falls on both sides alike.
 * With --base, a second service (another build, e.g. the commit before a change) runs
 * next to this tree's, on the same store, and every round measures raw, this, base in a
 * rotating order. --profile-dir runs each service under `node --cpu-prof` and leaves its
 * .cpuprofile there (written when the service stops). Ratios are the figures to quote.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { TableClient } from "@azure/data-tables";
import { startLineProcess, startService, type LineProcess } from "./helpers/processes.js";
import { heartbeatWindow, rawMergeWindow } from "./compare/service-ratio.js";
import { positiveFlag, readArgs } from "./helpers/args.js";

const CLI = fileURLToPath(new URL("../shared/cli/main.js", import.meta.url));
const AZURITE = fileURLToPath(new URL("../test/chaos/azurite-process.js", import.meta.url));

const USAGE = `Usage: npm run bench -- service-cost [--base CLI] [--rounds 5] [--window-ms 3000]
                                     [--concurrency 16] [--profile-dir DIR]

The service's own cost: heartbeats/s through \`ha-module serve\` against raw conditional
merges/s straight to the same Azurite, in alternating windows of the same length and
concurrency (closed-loop holders renewing with their token), after one unmeasured window
each. Prints heartbeats/s, the ratio to raw and the service's CPU per heartbeat.

Options:
  --base CLI          another build's dist/shared/cli/main.js, served beside this tree's on
                      the same store; every round measures raw, this, base in a rotating order
  --rounds N          measured rounds (default 5)
  --window-ms MS      each window's length (default 3000)
  --concurrency N     holders, and raw merges in flight (default 16)
  --profile-dir DIR   run each service under node --cpu-prof, its .cpuprofile left in DIR`;
const { values } = readArgs(USAGE, {
  base: { type: "string" },
  rounds: { type: "string", default: "5" },
  "window-ms": { type: "string", default: "3000" },
  concurrency: { type: "string", default: "16" },
  "profile-dir": { type: "string" },
});
const rounds = positiveFlag("rounds", values.rounds);
const windowMs = positiveFlag("window-ms", values["window-ms"]);
const concurrency = positiveFlag("concurrency", values.concurrency);
const profileDir = values["profile-dir"] === undefined ? undefined : resolve(values["profile-dir"]);

interface Side {
  readonly label: string;
  readonly cli: string;
  url: string;
  process: LineProcess | undefined;
  readonly rates: number[];
  readonly cpu: number[];
}

const sides: Side[] = [{ label: "this tree", cli: CLI, url: "", process: undefined, rates: [], cpu: [] }];
if (values.base !== undefined) sides.push({ label: "base", cli: resolve(values.base), url: "", process: undefined, rates: [], cpu: [] });
const raw: number[] = [];
const median = (list: number[]): number => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const dataDir = await mkdtemp(join(tmpdir(), "ha-service-cost-"));
const azurite = startLineProcess(AZURITE, [join(dataDir, "store"), "0"]);
try {
  const store = await azurite.waitFor((line) => typeof line["connectionString"] === "string", 30_000);
  const connectionString = String(store["connectionString"]);
  for (const [index, side] of sides.entries()) {
    const profile = profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=service-${index === 0 ? "this" : "base"}.cpuprofile`];
    const started = await startService(side.cli, { HA_TABLE_CONNECTION_STRING: connectionString }, profile);
    side.url = started.url;
    side.process = started.process;
  }
  const table = TableClient.fromConnectionString(connectionString, "benchraw", { allowInsecureConnection: true });
  const jobs: (() => Promise<void>)[] = [
    async () => void raw.push(await rawMergeWindow(table, concurrency, windowMs)),
    ...sides.map((side, index) => async () => {
      const figures = await heartbeatWindow(side.url, side.process?.child.pid, `cost${index}`, concurrency, windowMs);
      side.rates.push(figures.heartbeatsPerSecond);
      if (figures.serviceCpuMsPerHeartbeat !== undefined) side.cpu.push(figures.serviceCpuMsPerHeartbeat);
    }),
  ];
  // A warm-up window each, not counted: JIT, connection pools, table creation.
  for (const job of jobs) await job();
  raw.length = 0;
  sides.forEach((side) => ((side.rates.length = 0), (side.cpu.length = 0)));
  for (let round = 0; round < rounds; round += 1) {
    for (let k = 0; k < jobs.length; k += 1) await jobs[(round + k) % jobs.length]!();
    const line = [`round ${round + 1}: raw ${Math.round(raw.at(-1)!)}/s`];
    for (const side of sides) line.push(`${side.label} ${Math.round(side.rates.at(-1)!)}/s (ratio ${(side.rates.at(-1)! / raw.at(-1)!).toFixed(2)}, ${side.cpu.at(-1)?.toFixed(2) ?? "?"} ms CPU)`);
    process.stderr.write(`${line.join("; ")}\n`);
  }
  console.log(`\n${rounds} rounds × ${windowMs} ms windows, concurrency ${concurrency}, one Azurite process, medians:`);
  console.log(`raw conditional merges/s: ${Math.round(median(raw))}`);
  for (const side of sides) {
    const ratios = side.rates.map((rate, i) => rate / raw[i]!);
    console.log(
      `${side.label.padEnd(10)} heartbeats/s ${Math.round(median(side.rates))}, ratio to raw ${median(ratios).toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(" ")}), service CPU ${side.cpu.length === 0 ? "?" : median(side.cpu).toFixed(2)} ms/heartbeat`,
    );
  }
  if (sides.length === 2) {
    const [ours, base] = sides as [Side, Side];
    const speedups = ours.rates.map((rate, i) => rate / base.rates[i]!);
    console.log(`this tree ÷ base, heartbeats/s per round: ${speedups.map((r) => r.toFixed(2)).join(" ")} (median ${median(speedups).toFixed(2)})`);
    if (ours.cpu.length > 0 && base.cpu.length > 0) console.log(`CPU per heartbeat, this tree ÷ base: ${(median(ours.cpu) / median(base.cpu)).toFixed(2)}`);
  }
} finally {
  for (const side of sides) await side.process?.kill("SIGTERM");
  await azurite.kill("SIGTERM");
  await rm(dataDir, { recursive: true, force: true });
}
