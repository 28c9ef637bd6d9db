import { Prng } from "./prng.js";
import type { ElectorClass } from "./elector-slots.js";
import type { Scenario } from "./scenario.js";
import { simulate } from "./simulate.js";

/** One setting of a crash failover under message loss. */
export interface CrashUnderLoss {
  readonly timing: { readonly intervalMs: number; readonly timeoutMs: number };
  /** The share of calls that get no answer: each request lost with p, each answer with p, 1 − (1 − p)² = callLoss. */
  readonly callLoss: number;
}

/** One trial: a holder SIGKILLed, and when its standby was elected. */
export interface CrashTrial {
  readonly seed: number;
  /** From the SIGKILL to the standby's `elected`; undefined when the crashed elector was not the holder then. */
  readonly failoverMs: number | undefined;
}

/**
 * A primary and a standby of one role (slot 0 starts first, so it is the holder), each a
 * lone elector on the single routes (no participant of several roles: only the judged role's
 * elector is another build's when measured side by side), message loss on every call of
 * both, each leg 0–10 ms; slot 0 is SIGKILLed at 3·T plus up to 2·I (any point of its
 * renewal cycle), and the standby must take over. The scenario replays from its seed alone,
 * like every run of the simulation.
 */
export function crashUnderLoss(seed: number, setting: CrashUnderLoss): Scenario {
  const { intervalMs, timeoutMs } = setting.timing;
  const crashAt = Math.round(3 * timeoutMs + new Prng(seed ^ 0x2545f491).between(0, 2 * intervalMs));
  return {
    seed,
    profile: "safe",
    timing: setting.timing,
    storeTimeoutMs: Math.min(400, intervalMs),
    safetyPhaseMs: crashAt + 6 * timeoutMs,
    rates: [1, 1],
    starts: [0, Math.round(intervalMs / 2)],
    skews: [0],
    sharedSecret: true,
    batched: [],
    network: { lossRate: 1 - Math.sqrt(1 - setting.callLoss), maxDelayMs: 10, unavailableRate: 0, duplicateRate: 0 },
    store: { maxLatencyMs: 2, ambiguousRate: 0, lostBeforeStoreRate: 0 },
    outages: [],
    pauses: [],
    stalls: [],
    crashes: [{ who: 0, at: crashAt, restartAfterMs: 1e9 }],
    stops: [],
    revokes: [],
    deletions: [],
    handovers: [],
  };
}

/** Runs one trial; `elector` is another build's PrimaryElector, when measured side by side. */
export async function crashTrial(seed: number, setting: CrashUnderLoss, elector?: ElectorClass): Promise<CrashTrial> {
  const scenario = crashUnderLoss(seed, setting);
  const crashAt = scenario.crashes[0]!.at;
  const { log } = await simulate(scenario, elector === undefined ? {} : { elector });
  // The crashed elector was the holder if its last election before the crash was not followed by a demotion.
  let holding = false;
  for (const entry of log) {
    if (entry.at > crashAt || entry.who !== "e0.0") continue;
    if (entry.kind === "elected") holding = true;
    if (entry.kind === "demoted") holding = false;
  }
  const next = log.find((entry) => entry.kind === "elected" && entry.at >= crashAt && entry.who !== "e0.0");
  return { seed, failoverMs: holding && next !== undefined ? next.at - crashAt : undefined };
}
