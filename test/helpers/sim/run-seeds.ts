import { SimViolation } from "./checker.js";
import { ALL_INVARIANTS, generateScenario, PLANTED_BUGS, PROFILES, type Invariant, type PlantedBug, type Profile, type Scenario } from "./scenario.js";
import { simulate } from "./simulate.js";
import { SimStats } from "./stats.js";

export interface SeedRunOptions {
  readonly profile: Profile;
  readonly plant?: PlantedBug;
  readonly invariants?: readonly Invariant[];
  readonly firstSeed: number;
  readonly runs: number;
  /** Stop at the first violation (when looking for one) instead of collecting them all. */
  readonly stopAtFirst?: boolean;
}

export interface SeedRunReport {
  readonly stats: SimStats;
  /** Runs made, the violating ones included. */
  readonly runs: number;
  readonly violations: SimViolation[];
  readonly elapsedMs: number;
}

/** The scenario of one run: drawn from its seed, with the planted bug and invariants asked for. */
export function scenarioFor(seed: number, options: Omit<SeedRunOptions, "firstSeed" | "runs">): Scenario {
  const scenario = generateScenario(seed, options.profile, options.plant);
  return options.invariants === undefined ? scenario : { ...scenario, invariants: options.invariants };
}

/** Runs seeds firstSeed, firstSeed + 1, …; anything but a SimViolation is a bug of the harness and is thrown. */
export async function runSeeds(options: SeedRunOptions): Promise<SeedRunReport> {
  const stats = new SimStats();
  const violations: SimViolation[] = [];
  const started = performance.now();
  let runs = 0;
  for (let n = 0; n < options.runs; n += 1) {
    const seed = (options.firstSeed + n) >>> 0;
    runs += 1;
    try {
      stats.add((await simulate(scenarioFor(seed, options))).stats);
    } catch (error) {
      if (!(error instanceof SimViolation)) throw error;
      violations.push(error);
      if (options.stopAtFirst === true) break;
    }
  }
  return { stats, runs, violations, elapsedMs: performance.now() - started };
}

/** An integer setting of the simulation from the environment, refused with a message when it is not one. */
export function integerFromEnv(name: string, fallback: number, min: number, max: number, env: NodeJS.ProcessEnv = process.env): number {
  const text = env[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new RangeError(`Expected ${name} to be an integer from ${min} to ${max}, got ${JSON.stringify(text)}.`);
  return value;
}

/** HA_SIM_SEED, HA_SIM_PROFILE, HA_SIM_PLANT and HA_SIM_INVARIANTS, as a failing run prints them. */
export function replayOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): { seed: number; options: Omit<SeedRunOptions, "firstSeed" | "runs"> } | undefined {
  if (env["HA_SIM_SEED"] === undefined) return undefined;
  const seed = integerFromEnv("HA_SIM_SEED", 0, 0, 0xffffffff, env);
  const profile = (env["HA_SIM_PROFILE"] ?? "safe") as Profile;
  if (!PROFILES.includes(profile)) throw new RangeError(`Expected HA_SIM_PROFILE to be one of ${PROFILES.join(", ")}, got ${profile}.`);
  const plant = env["HA_SIM_PLANT"] as PlantedBug | undefined;
  if (plant !== undefined && !PLANTED_BUGS.includes(plant)) throw new RangeError(`Expected HA_SIM_PLANT to be one of ${PLANTED_BUGS.join(", ")}, got ${plant}.`);
  const invariants = env["HA_SIM_INVARIANTS"]?.split(",") as Invariant[] | undefined;
  for (const invariant of invariants ?? []) {
    if (!ALL_INVARIANTS.includes(invariant)) throw new RangeError(`Expected HA_SIM_INVARIANTS to list some of ${ALL_INVARIANTS.join(", ")}, got ${invariant}.`);
  }
  return { seed, options: { profile, ...(plant === undefined ? {} : { plant }), ...(invariants === undefined ? {} : { invariants }) } };
}

/** One line for a log or the docs: runs, time, elections and the fault mix. */
export function summarize(label: string, report: SeedRunReport): string {
  const counts = Object.entries(report.stats.counts)
    .map(([name, count]) => `${name}=${count}`)
    .join(" ");
  return `${label}: ${report.runs} runs in ${(report.elapsedMs / 1000).toFixed(1)} s, ${report.violations.length} violations; ${counts}`;
}
