/**
 * `npm run bench -- <name> [options]`: every benchmark of ha-module, by name. A benchmark is
 * one file directly in bench/ (TypeScript built to dist/bench/, or an .mjs run as it is) and
 * one row of BENCHMARKS below; its options are its own (`npm run bench -- <name> --help`).
 * Helpers they share are in bench/helpers/, the compare benchmark's parts in bench/compare/.
 * test/bench/bench-entry.test.ts holds the table to the folder: a file without a row fails it.
 * docs/benchmarks.md has each benchmark's current figures and the command behind them.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { closest } from "../shared/cli/command-spec.js";

interface Row {
  /** In bench/: `.ts` runs from dist/bench/ (built), `.mjs` from bench/ as it is. */
  readonly file: `${string}.ts` | `${string}.mjs`;
  /** What it measures, in one line of --help. */
  readonly about: string;
}

interface Benchmark extends Row {
  /** The file's name without its extension: what `npm run bench -- <name>` takes. */
  readonly name: string;
}

const ROWS: readonly Row[] = [
  { file: "compare.ts", about: "ours, the seed client and client-go on one service; the service's ratio and capacity" },
  { file: "failover.ts", about: "crash and graceful failover, real `serve` and `elect` processes" },
  { file: "handover.mjs", about: "a role's gap for a planned handover, a stop and a revoke, real `run` processes" },
  { file: "outage.ts", about: "outages of the service for everyone: role moves, work lost, time to a primary; `run` and others" },
  { file: "rollback.ts", about: "a store restored from a copy under running electors, losing 1, 2, 5 terms: epochs reused, overlap, time to accepted fenced writes; builds side by side" },
  { file: "upgrade.ts", about: "a rolling restart and a restart of every serve instance under 20 participants × 20 roles" },
  { file: "loss-ab.mjs", about: "spurious leader changes under message loss, builds and the seed client side by side" },
  { file: "priority.mjs", about: "priorities: who wins a crash failover, a preferred candidate's return, a flapping one; builds side by side" },
  { file: "failover-loss.mjs", about: "crash failover under message loss, builds side by side (real processes, or --sim)" },
  { file: "capacity-ab.mjs", about: "roles × 2 held at I = 1 s without a spurious failover, builds side by side" },
  { file: "overload-curve.mjs", about: "roles with a primary past capacity, builds side by side" },
  { file: "shed-hog.mjs", about: "load shedding beside CPU hogs: refusals and holders kept, builds side by side" },
  { file: "poll-flood.mjs", about: "a flood of GetPrimary polls past capacity: answers by status, refusals by reason" },
  { file: "busy-signal.mjs", about: "what the overload signals read, alone and beside CPU hogs" },
  { file: "accept-starvation.mjs", about: "why a saturated node:http server starves callers that reconnect (no ha-module)" },
  { file: "store-compare.ts", about: "the service over Azurite and over PostgreSQL: renewals/s, CPU per renewal, store calls per operation" },
  { file: "service-cost.ts", about: "heartbeats/s through the service against raw merges/s, and against another build" },
  { file: "heartbeat.ts", about: "round trips and store operations per request, with and without metrics" },
  { file: "durable-heartbeat.ts", about: "what the on-disk store of `npm start` costs a heartbeat" },
  { file: "participant-cost.ts", about: "requests, store operations and service CPU per participant, builds side by side" },
  { file: "participant-cycle-cost.ts", about: "service CPU per participant cycle: five requests against one heartbeat" },
  { file: "store-op-cost.mjs", about: "the CPU one Table call costs its caller: the floor under the service's" },
  { file: "cold-import.mjs", about: "cold import of the deploy package's entry, builds side by side" },
  { file: "client-install.mjs", about: "what a worker installs (the client package) and how fast `ha-module --version` starts, builds side by side" },
];

const BENCHMARKS: readonly Benchmark[] = ROWS.map((row) => ({ ...row, name: row.file.replace(/\.(ts|mjs)$/, "") }));

const USAGE = [
  "Usage: npm run bench -- <name> [options]   build, then run one benchmark",
  "       npm run bench -- <name> --help      its options",
  "",
  "Benchmarks (docs/benchmarks.md has their current figures, each with its command):",
  ...BENCHMARKS.map((benchmark) => `  ${benchmark.name.padEnd(24)}${benchmark.about}`),
  "",
].join("\n");

/** The script that runs it: the build's for TypeScript, the source for an .mjs. */
function scriptOf(benchmark: Benchmark): string {
  return fileURLToPath(benchmark.file.endsWith(".ts") ? new URL(`./${benchmark.name}.js`, import.meta.url) : new URL(`../../bench/${benchmark.file}`, import.meta.url));
}

/** Runs the benchmark as its own node process (stdio shared), and answers with its exit code. */
function run(benchmark: Benchmark, args: readonly string[]): Promise<number> {
  const child = spawn(process.execPath, [scriptOf(benchmark), ...args], { stdio: "inherit" });
  // Ctrl-C reaches the child from the terminal; a signal sent to this process alone is passed on.
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, forward);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal])));
  });
}

async function main(argv: readonly string[]): Promise<number> {
  // The entry's own options come before the name; everything after it is the benchmark's.
  const at = argv.findIndex((arg) => !arg.startsWith("-"));
  const own = at === -1 ? [...argv] : argv.slice(0, at);
  let help: boolean | undefined;
  try {
    help = parseArgs({ args: own, options: { help: { type: "boolean", short: "h" } }, strict: true }).values.help;
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  let name = at === -1 ? undefined : argv[at];
  let args = argv.slice(at + 1);
  if (name === "help" && args.length > 0) [name, args] = [args[0], ["--help"]];
  if (help === true || name === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (name === undefined) {
    process.stderr.write(`bench: name a benchmark.\n\n${USAGE}`);
    return 2;
  }
  const benchmark = BENCHMARKS.find((candidate) => candidate.name === name);
  if (benchmark === undefined) {
    const meant = closest(name, BENCHMARKS.map((candidate) => candidate.name));
    process.stderr.write(`bench: no benchmark is called '${name}'.${meant === undefined ? "" : ` Did you mean ${meant}?`}\n\n${USAGE}`);
    return 2;
  }
  return run(benchmark, args);
}

process.exitCode = await main(process.argv.slice(2));
