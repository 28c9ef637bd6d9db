import { readArgs } from "../helpers/args.js";

const USAGE = `Usage: npm run bench -- compare [--quick] [--out DIR]

Three client algorithms against one local service in one run (ours, the protocol's seed
client, client-go's leaderelection; each participant a real process killed with real
signals, calls and store operations counted on the wire): crash and graceful failover,
cost on the wire, 10 % message loss; then the service's heartbeats/s against raw merges/s
on the same Azurite, and its capacity at I = 1 s. Writes report.md, results.json and SVG
plots. About 9 minutes on an idle 2-core machine.

Options:
  --quick      the CI-sized run (I = 500 ms, 2 roles, short windows; about 40 s)
  --out DIR    where the report goes (default bench-results, git-ignored)`;

/** Everything a run's size decides; `--quick` is CI-sized, the default is the full run. */
export interface Plan {
  readonly quick: boolean;
  readonly outDir: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  /** Roles per algorithm in the algorithm phases, each with a primary and a standby. */
  readonly roles: number;
  /** Crash trials = roles × failoverRounds per algorithm. */
  readonly failoverRounds: number;
  readonly gracefulRounds: number;
  readonly leaderWindowMs: number;
  readonly steadyWindowMs: number;
  readonly lossWindowMs: number;
  readonly loss: number;
  readonly ratioConcurrency: number;
  readonly ratioWindowMs: number;
  /** Roles per capacity step, each with two participants; stepping stops at the first break. */
  readonly capacitySteps: readonly number[];
  readonly capacityWindowMs: number;
}

export function readPlan(argv: string[]): Plan {
  const { values } = readArgs(USAGE, { quick: { type: "boolean", default: false }, out: { type: "string", default: "bench-results" } }, { args: argv });
  const outDir = values.out;
  if (outDir.trim() === "") throw new Error("Expected --out to name a directory, e.g. --out bench-results.");
  if (values.quick) {
    return {
      quick: true,
      outDir,
      intervalMs: 500,
      timeoutMs: 2000,
      roles: 2,
      failoverRounds: 1,
      gracefulRounds: 1,
      leaderWindowMs: 1500,
      steadyWindowMs: 2000,
      lossWindowMs: 3000,
      loss: 0.1,
      ratioConcurrency: 8,
      ratioWindowMs: 1500,
      capacitySteps: [10, 40],
      capacityWindowMs: 2000,
    };
  }
  return {
    quick: false,
    outDir,
    intervalMs: 1000,
    timeoutMs: 5000,
    roles: 6,
    failoverRounds: 5,
    gracefulRounds: 2,
    leaderWindowMs: 8000,
    steadyWindowMs: 10_000,
    lossWindowMs: 60_000,
    loss: 0.1,
    ratioConcurrency: 16,
    ratioWindowMs: 8000,
    capacitySteps: [50, 100, 200, 400, 600, 800],
    capacityWindowMs: 60_000,
  };
}
