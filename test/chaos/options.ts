import { parseArgs } from "node:util";
import { ALL_FAULTS, PARTICIPANT_FAULTS, SERVICE_FAULTS, STORE_FAULTS, type FaultKind } from "./fault-plan.js";
import { randomSeed } from "../helpers/sim/prng.js";

export interface ChaosOptions {
  /** --help: print USAGE and run nothing. */
  readonly help: boolean;
  readonly seed: number;
  readonly cycles: number;
  readonly participants: number;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly slackMs: number;
  /**
   * `embedded`: the store inside `ha-module serve`, as `npm start` runs it; `process`: Azurite
   * as its own process; `postgres`: PostgreSQL as its own server (HA_STORE=postgres).
   */
  readonly store: (typeof STORES)[number];
  readonly faults: readonly FaultKind[];
  /** A planted bug that must make the judge fail (see docs/chaos.md). */
  readonly plant: (typeof PLANTS)[number] | undefined;
  /** Where the log and every process's output go; a fresh temporary directory if not given. */
  readonly workDir: string | undefined;
  readonly keep: boolean;
  readonly reportJson: string | undefined;
}

/** The stores a run can use (docs/chaos.md, "What runs"). */
export const STORES = ["embedded", "process", "postgres"] as const;

/** Planted bugs (docs/chaos.md, "The judge can fail"). */
export const PLANTS = ["escaped-worker", "two-services", "reused-epoch"] as const;

export class ChaosUsageError extends Error {
  override readonly name = "ChaosUsageError";
}

export const USAGE = `Usage: npm run chaos -- [options]

  --cycles N            faults to inject, one per cycle (default 20)
  --participants K      ha-module run processes competing for one role (default 3, at least 2)
  --timing fast|default I = 200 ms, T = 2000 ms (fast, the default) or the service defaults I = 1000 ms, T = 5000 ms
  --interval-ms I, --timeout-ms T   set I and T directly (T > 2·I)
  --seed S              replay a run's fault schedule (printed at the start of every run)
  --store embedded|process|postgres
                        the store inside serve, as npm start runs it (default); Azurite as its
                        own process; or PostgreSQL as its own server (HA_STORE=postgres). With
                        process or postgres the store alone can be frozen and killed
  --faults a,b,…        only these fault kinds (default: all the store mode allows):
                        ${ALL_FAULTS.join(", ")}
  --slack-ms MS         room for process start-up on a loaded machine in the failover and
                        liveness bounds (default 1000); never in the safety checks
  --plant escaped-worker|two-services|reused-epoch
                        plant a bug the judge must catch (exits 1 when it does): a split
                        brain, or two workers one after the other under one epoch
  --work-dir DIR        keep the log and every process's output here (default: a temporary
                        directory, removed after a clean run)
  --keep                keep the temporary directory after a clean run
  --report-json FILE    write the fault record and the verdict as JSON
  --help                this text

Exit code: 0 no violation, 1 violations, 2 bad options or a harness failure.`;

const TIMINGS = { fast: { intervalMs: 200, timeoutMs: 2000 }, default: { intervalMs: 1000, timeoutMs: 5000 } } as const;

/** Parses and checks `npm run chaos` options; a bad one throws ChaosUsageError naming it. */
export function parseChaosOptions(args: readonly string[]): ChaosOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        cycles: { type: "string" },
        participants: { type: "string" },
        timing: { type: "string" },
        "interval-ms": { type: "string" },
        "timeout-ms": { type: "string" },
        seed: { type: "string" },
        store: { type: "string" },
        faults: { type: "string" },
        "slack-ms": { type: "string" },
        plant: { type: "string" },
        "work-dir": { type: "string" },
        keep: { type: "boolean" },
        "report-json": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw new ChaosUsageError(error instanceof Error ? error.message : String(error));
  }
  const timingName = values.timing ?? "fast";
  if (timingName !== "fast" && timingName !== "default") throw new ChaosUsageError(`--timing must be fast or default (got "${timingName}").`);
  const intervalMs = integer("--interval-ms", values["interval-ms"], TIMINGS[timingName].intervalMs, 1, 3_600_000);
  const timeoutMs = integer("--timeout-ms", values["timeout-ms"], TIMINGS[timingName].timeoutMs, 1, 3_600_000);
  if (timeoutMs <= 2 * intervalMs) {
    throw new ChaosUsageError(`--timeout-ms (${timeoutMs}) must be greater than 2 × --interval-ms (${intervalMs}), as the service requires.`);
  }
  const store = values.store ?? "embedded";
  if (!(STORES as readonly string[]).includes(store)) throw new ChaosUsageError(`--store must be embedded, process or postgres (got "${store}").`);
  const ownStore = store !== "embedded";
  const plant = values.plant;
  if (plant !== undefined && !(PLANTS as readonly string[]).includes(plant)) {
    throw new ChaosUsageError(`--plant must be escaped-worker, two-services or reused-epoch (got "${plant}").`);
  }
  if (plant === "two-services" && ownStore) {
    throw new ChaosUsageError(`--plant two-services gives each service an embedded store of its own; leave out --store ${store}.`);
  }
  // A rollback puts a store's file back: Azurite's (embedded or its own process), not PostgreSQL's data directory.
  const allowed: readonly FaultKind[] = (
    ownStore ? ALL_FAULTS : plant === "two-services" ? PARTICIPANT_FAULTS : [...PARTICIPANT_FAULTS, ...SERVICE_FAULTS]
  ).filter((kind) => kind !== "store-rollback" || store !== "postgres");
  return {
    help: values.help ?? false,
    seed: integer("--seed", values.seed, randomSeed(), 0, 2 ** 32 - 1),
    cycles: integer("--cycles", values.cycles, 20, 0, 100_000),
    participants: integer("--participants", values.participants, 3, 2, 16),
    intervalMs,
    timeoutMs,
    slackMs: integer("--slack-ms", values["slack-ms"], 1000, 0, 600_000),
    store: store as ChaosOptions["store"],
    faults: faultList(values.faults, allowed, store),
    plant: plant as ChaosOptions["plant"],
    workDir: values["work-dir"],
    keep: values.keep ?? false,
    reportJson: values["report-json"],
  };
}

function integer(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ChaosUsageError(`${flag} must be a whole number from ${min} to ${max} (got "${text}").`);
  }
  return value;
}

function faultList(text: string | undefined, allowed: readonly FaultKind[], store: string): FaultKind[] {
  if (text === undefined) return [...allowed];
  const kinds = text.split(",").map((kind) => kind.trim());
  for (const kind of kinds) {
    if (!(ALL_FAULTS as readonly string[]).includes(kind)) {
      throw new ChaosUsageError(`--faults: unknown fault kind "${kind}"; the kinds are ${ALL_FAULTS.join(", ")}.`);
    }
    if (!(allowed as readonly string[]).includes(kind)) {
      const needs =
        kind === "store-rollback"
          ? "a store kept in a file: the embedded store or --store process (PostgreSQL's data directory cannot be put back while it runs)"
          : (STORE_FAULTS as readonly string[]).includes(kind)
            ? "--store process or --store postgres"
            : "one service (not --plant two-services)";
      throw new ChaosUsageError(`--faults: ${kind} needs ${needs} (the store is "${store}").`);
    }
  }
  return [...new Set(kinds as FaultKind[])];
}
