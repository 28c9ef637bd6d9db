import { Prng } from "../prng.js";

/**
 * `faults`: loss, delay, duplicates, gateway 503s, slow and ambiguous store writes, store
 * outages, pauses, crashes (some restarted at once with a new session) and graceful stops.
 * `service-outage`: the functions are down for several T (every request 503, no sweep),
 * with members and watchers otherwise healthy: no failure may be reported at all.
 */
export type MemberProfile = "faults" | "service-outage";

export const MEMBER_PROFILES: readonly MemberProfile[] = ["faults", "service-outage"];

/** Bugs planted through the simulation's seams, to prove each checker can fail. */
export type MemberPlant =
  /** The service judges leaving at age > T + 1 instead of ttl (while telling ttl). */
  | "ttl-is-t"
  /** The service judges unreachable at age > 2·T instead of T (while telling T). */
  | "unreachable-at-2t"
  /** The service's ages count its own outages: no marker is ever stale, no gap recorded. */
  | "ages-count-outages";

export const MEMBER_PLANTS: readonly MemberPlant[] = ["ttl-is-t", "unreachable-at-2t", "ages-count-outages"];

export interface MemberTimingRules {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly ttlMs: number;
  readonly retentionMs: number;
  readonly sweepPeriodMs: number;
  readonly maxPerGroup: number;
}

/** A participant slot: `steady` ones keep heartbeating (short pauses only); `mortal` ones crash, stop and pause long. */
export type SlotKind = "steady" | "mortal";

export interface MemberScenario {
  readonly seed: number;
  readonly profile: MemberProfile;
  readonly plant?: MemberPlant;
  readonly timing: MemberTimingRules;
  readonly storeTimeoutMs: number;
  readonly safetyPhaseMs: number;
  readonly slots: readonly { readonly kind: SlotKind; readonly startAt: number; readonly rate: number }[];
  readonly watchers: readonly { readonly startAt: number; readonly rate: number }[];
  /** ha_time of function instance k = simulated time + skews[k]. */
  readonly skews: readonly number[];
  readonly network: { readonly lossRate: number; readonly maxDelayMs: number; readonly unavailableRate: number; readonly duplicateRate: number };
  readonly store: { readonly maxLatencyMs: number; readonly ambiguousRate: number; readonly lostBeforeStoreRate: number };
  readonly storeOutages: readonly { readonly at: number; readonly forMs: number; readonly mode: "fail" | "hang" }[];
  /** The functions are down: every request is answered 503 by the platform, and no sweep runs. */
  readonly serviceOutages: readonly { readonly at: number; readonly forMs: number }[];
  /** A member slot's process frozen (SIGSTOP … SIGCONT). */
  readonly pauses: readonly { readonly slot: number; readonly at: number; readonly forMs: number }[];
  /** A watcher's process frozen. */
  readonly watcherPauses: readonly { readonly watcher: number; readonly at: number; readonly forMs: number }[];
  /** A mortal member killed (no goodbye); a new process (a new session) starts after restartAfterMs, or never. */
  readonly crashes: readonly { readonly slot: number; readonly at: number; readonly restartAfterMs: number | null }[];
  /** A mortal member stopped gracefully (goodbye). */
  readonly stops: readonly { readonly slot: number; readonly at: number }[];
}

const TIMING: MemberTimingRules = { intervalMs: 200, timeoutMs: 1000, ttlMs: 3000, retentionMs: 1000, sweepPeriodMs: 500, maxPerGroup: 1000 };
const SAFETY_PHASE_MS = 15_000;
/** The elector clocks' rate error bound, as in the lease simulation. */
const RHO = 0.02;

export function generateMemberScenario(seed: number, profile: MemberProfile = "faults", plant?: MemberPlant): MemberScenario {
  const rng = new Prng(seed ^ 0x5bd1e995);
  const rate = (): number => rng.between(1 - RHO, 1 + RHO);
  const at = (): number => rng.int(1000, SAFETY_PHASE_MS - 1000);
  const base = { seed, profile, ...(plant === undefined ? {} : { plant }), timing: TIMING, storeTimeoutMs: 400, safetyPhaseMs: SAFETY_PHASE_MS };
  if (profile === "service-outage") {
    const forMs = rng.int(3 * TIMING.timeoutMs, 6 * TIMING.timeoutMs);
    return {
      ...base,
      slots: Array.from({ length: rng.int(2, 4) }, () => ({ kind: "steady" as const, startAt: rng.int(0, 500), rate: rate() })),
      watchers: Array.from({ length: rng.int(1, 2) }, () => ({ startAt: rng.int(0, 500), rate: rate() })),
      skews: Array.from({ length: rng.int(1, 3) }, () => rng.int(0, 50)),
      network: { lossRate: rng.between(0, 0.1), maxDelayMs: rng.int(0, 100), unavailableRate: 0, duplicateRate: rng.between(0, 0.2) },
      store: { maxLatencyMs: rng.int(0, 20), ambiguousRate: 0, lostBeforeStoreRate: 0 },
      storeOutages: [],
      serviceOutages: [{ at: rng.int(3000, SAFETY_PHASE_MS - forMs - 1000), forMs }],
      pauses: [],
      watcherPauses: [],
      crashes: [],
      stops: [],
    };
  }
  const steady = rng.int(2, 3);
  const mortal = rng.int(1, 3);
  const slots = [
    ...Array.from({ length: steady }, () => ({ kind: "steady" as const, startAt: rng.int(0, 1000), rate: rate() })),
    ...Array.from({ length: mortal }, () => ({ kind: "mortal" as const, startAt: rng.int(0, 1000), rate: rate() })),
  ];
  const mortalSlot = (): number => rng.int(steady, steady + mortal - 1);
  const watchers = Array.from({ length: rng.int(1, 2) }, () => ({ startAt: rng.int(0, 500), rate: rate() }));
  return {
    ...base,
    slots,
    watchers,
    skews: Array.from({ length: rng.int(1, 4) }, () => rng.int(0, 100)),
    network: { lossRate: rng.between(0, 0.3), maxDelayMs: rng.int(0, 300), unavailableRate: rng.between(0, 0.1), duplicateRate: rng.between(0, 0.3) },
    store: { maxLatencyMs: rng.int(0, 60), ambiguousRate: rng.between(0, 0.2), lostBeforeStoreRate: rng.between(0, 0.1) },
    storeOutages: Array.from({ length: rng.int(0, 2) }, () => ({ at: at(), forMs: rng.int(50, 2 * TIMING.timeoutMs), mode: rng.pick(["fail", "hang"] as const) })),
    serviceOutages: [],
    // Steady members pause at most T/2: they keep heartbeating. Mortal ones may pause past ttl.
    pauses: [
      ...Array.from({ length: rng.int(0, 3) }, () => ({ slot: rng.int(0, steady - 1), at: at(), forMs: rng.int(1, TIMING.timeoutMs / 2) })),
      ...Array.from({ length: rng.int(0, 2) }, () => ({ slot: mortalSlot(), at: at(), forMs: rng.int(1, 2 * TIMING.ttlMs) })),
    ],
    watcherPauses: Array.from({ length: rng.int(0, 2) }, () => ({ watcher: rng.int(0, watchers.length - 1), at: at(), forMs: rng.int(1, 3 * TIMING.ttlMs) })),
    crashes: Array.from({ length: rng.int(1, 3) }, () => ({ slot: mortalSlot(), at: at(), restartAfterMs: rng.chance(0.6) ? rng.int(0, 2000) : null })),
    stops: Array.from({ length: rng.int(0, 1) }, () => ({ slot: mortalSlot(), at: at() })),
  };
}
