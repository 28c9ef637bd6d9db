import { integerFromEnv } from "../run-seeds.js";
import { MemberSimViolation } from "./member-checker.js";
import { generateMemberScenario, MEMBER_PLANTS, MEMBER_PROFILES, type MemberPlant, type MemberProfile } from "./member-scenario.js";
import { MemberSimStats } from "./member-stats.js";
import { simulateMembers } from "./simulate-members.js";

export interface MemberSeedReport {
  readonly stats: MemberSimStats;
  readonly runs: number;
  readonly violations: MemberSimViolation[];
  readonly elapsedMs: number;
}

/** Runs seeds firstSeed, firstSeed + 1, …; anything but a MemberSimViolation is a bug of the harness and is thrown. */
export async function runMemberSeeds(options: { profile: MemberProfile; plant?: MemberPlant; firstSeed: number; runs: number; stopAtFirst?: boolean }): Promise<MemberSeedReport> {
  const stats = new MemberSimStats();
  const violations: MemberSimViolation[] = [];
  const started = performance.now();
  let runs = 0;
  for (let n = 0; n < options.runs; n += 1) {
    runs += 1;
    try {
      stats.add((await simulateMembers(generateMemberScenario((options.firstSeed + n) >>> 0, options.profile, options.plant))).stats);
    } catch (error) {
      if (!(error instanceof MemberSimViolation)) throw error;
      violations.push(error);
      if (options.stopAtFirst === true) break;
    }
  }
  return { stats, runs, violations, elapsedMs: performance.now() - started };
}

/** HA_SIM_SEED, HA_SIM_PROFILE and HA_SIM_PLANT, as a failing membership run prints them. */
export function memberReplayFromEnv(env: NodeJS.ProcessEnv = process.env): { seed: number; profile: MemberProfile; plant?: MemberPlant } | undefined {
  if (env["HA_SIM_SEED"] === undefined) return undefined;
  const seed = integerFromEnv("HA_SIM_SEED", 0, 0, 0xffffffff, env);
  const profile = (env["HA_SIM_PROFILE"] ?? "faults") as MemberProfile;
  if (!MEMBER_PROFILES.includes(profile)) throw new RangeError(`Expected HA_SIM_PROFILE to be one of ${MEMBER_PROFILES.join(", ")}, got ${profile}.`);
  const plant = env["HA_SIM_PLANT"] as MemberPlant | undefined;
  if (plant !== undefined && !MEMBER_PLANTS.includes(plant)) throw new RangeError(`Expected HA_SIM_PLANT to be one of ${MEMBER_PLANTS.join(", ")}, got ${plant}.`);
  return { seed, profile, ...(plant === undefined ? {} : { plant }) };
}

export function summarizeMembers(label: string, report: MemberSeedReport): string {
  const counts = Object.entries(report.stats.counts).map(([name, count]) => `${name}=${count}`).join(" ");
  return `${label}: ${report.runs} runs in ${(report.elapsedMs / 1000).toFixed(1)} s, ${report.violations.length} violations; ${counts}`;
}
