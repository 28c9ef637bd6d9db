import { Prng } from "./prng.js";

/** Bugs the tests plant through the simulation's seams, to prove each checker can fail. */
export type PlantedBug =
  /** The store's conditional merge (the renewal fast path) ignores the ETag. */
  | "renew-ignores-etag"
  /** The store's replace (take over, release) ignores the ETag. */
  | "replace-ignores-etag"
  /** The store loses the epoch when a lease is released (as deleting the entry would), and the service counts epochs by the stored counter alone. */
  | "release-resets-epoch"
  /** A new term's epoch is the stored one + 1, with no floor from the clock: after the store forgets its last writes, epochs repeat. */
  | "epoch-stored-plus-one"
  /** The store acknowledges one write in five without making it. */
  | "acknowledges-lost-writes"
  /** The store forgets the ended uuids and heartbeats reach the service without their token, so a dead incarnation's late request can land. */
  | "forgets-ended-uuids"
  /** The service takes over at age ≥ T − I while it tells everyone T. */
  | "takeover-at-t-minus-i"
  /** The service never takes over an expired lease (it judges age against 1000·T). */
  | "never-takes-over"
  /** The service has no request budget: a request queued in a frozen instance is applied on resume. */
  | "no-request-budget"
  /** Each elector is told T + I, so its deadline is sentAt + T instead of sentAt + (T − I). */
  | "elector-deadline-sent-at-plus-t"
  /** A holder told of a planned handover releases its lease before it steps down (it goes on believing until its deadline). */
  | "handover-releases-before-step-down"
  /** A participant heartbeat's parts run without the request's arrival: a batch queued in a frozen instance is applied on resume. */
  | "participant-parts-without-budget"
  /** A standby is not told that its calls met an outage (each failure reaches it as a corrupted answer): it takes an expired lease at once after contact returns. */
  | "standby-ignores-lost-contact"
  /** A primary riding through an outage is told a refusal of its renewal as a timeout: its ride goes on past the refusal. */
  | "ride-through-past-refusal"
  /** The fenced resource's conditional write ignores the ETag (a read-check-write with no If-Match). */
  | "fenced-write-ignores-etag"
  /**
   * The renewal budget's doubling shared by the electors of one transport (as it was): each
   * role of a lost participant heartbeat doubles the budget the next one reads, so the last
   * gets fewer copies than a lone elector.
   */
  | "shared-renewal-doubling"
  /** The service's ranking of a free role's candidates sees no standby rows (its read of them answers none): the first to ask wins. */
  | "ranking-ignores-standbys"
  /** Each elector is told a hold-down of 0: it asks to preempt on its first announcement. */
  | "preempt-without-hold-down"
  /** A restarted elector is told the hold-down less the time its slot's earlier processes were up, as a hold-down kept across restarts would be. */
  | "hold-down-across-restarts";

export const PLANTED_BUGS: readonly PlantedBug[] = [
  "renew-ignores-etag",
  "replace-ignores-etag",
  "release-resets-epoch",
  "epoch-stored-plus-one",
  "acknowledges-lost-writes",
  "forgets-ended-uuids",
  "takeover-at-t-minus-i",
  "never-takes-over",
  "no-request-budget",
  "elector-deadline-sent-at-plus-t",
  "handover-releases-before-step-down",
  "participant-parts-without-budget",
  "standby-ignores-lost-contact",
  "ride-through-past-refusal",
  "fenced-write-ignores-etag",
  "shared-renewal-doubling",
  "ranking-ignores-standbys",
  "preempt-without-hold-down",
  "hold-down-across-restarts",
];

/** What the checker judges after every event; see checker.ts and sticky-judge.ts. */
export type Invariant =
  | "epochs-increase"
  | "one-primary"
  | "store-agrees"
  | "no-phantom"
  | "liveness"
  | "ended-stays-ended"
  | "ride-through"
  | "fenced-writes"
  | "sticky"
  | "renewal-copies"
  | "highest-wins"
  | "preempt-hold-down"
  | "no-flapping";

export const ALL_INVARIANTS: readonly Invariant[] = [
  "epochs-increase",
  "one-primary",
  "store-agrees",
  "no-phantom",
  "liveness",
  "ended-stays-ended",
  "ride-through",
  "fenced-writes",
  "sticky",
  "renewal-copies",
  "highest-wins",
  "preempt-hold-down",
  "no-flapping",
];

/**
 * What a run judges unless told otherwise: everything. `ended-stays-ended` was off until
 * the elector stopped reusing a follower's uuid after an unanswered acquire (docs/testing.md,
 * "What the simulation found").
 */
export const DEFAULT_INVARIANTS: readonly Invariant[] = ALL_INVARIANTS;

/**
 * `safe`: every fault, with ε + ρ·(T − I) < I (docs/protocol.md#timing-rules): must stay green.
 * `skew`: ε = 1.5·I between two function instances, and lossy renewals that let a lease
 * age while its holder still believes: must be found unsafe.
 * `skew-margin`: the same race with ε as large as docs/protocol.md#timing-rules allows (and ρ): must stay green.
 * `outage`: the service's own outages (for everyone: the service, the store, a restart of
 * every instance) among one-participant partitions, crashes and pauses, with no message
 * loss, so that the `sticky` invariant can judge who holds each role after an outage; with
 * ride-through in every other run: must stay green.
 * `loss`: lost messages and nothing else, a fast service, I = 1 s and T = 5 s, slot 0 (and
 * slot 1 in half the runs) a participant of three roles: every lease that runs out must
 * have had a lone elector's copies (`renewal-copies`): must stay green.
 * `priority`: candidates of priorities 0–2 (ties too), a hold-down of 2·T, crashes, stops,
 * a preferred slot that flaps (up for less than its hold-down, down, up again), and a
 * partitioned participant now and then, on a fast network that loses nothing: the
 * `highest-wins`, `preempt-hold-down` and `no-flapping` invariants judge it
 * (docs/protocol.md#priorities-and-preemption): must stay green.
 */
export type Profile = "safe" | "skew" | "skew-margin" | "outage" | "loss" | "priority";

export const PROFILES: readonly Profile[] = ["safe", "skew", "skew-margin", "outage", "loss", "priority"];

export interface NetworkFaults {
  /** Probability that a request, or its answer, is lost (the caller times out). */
  readonly lossRate: number;
  /** Each leg takes 0..maxDelayMs; answers arrive in any order. */
  readonly maxDelayMs: number;
  /** A slow tail: with this probability a leg takes another 0..slowMs (none when absent). */
  readonly slowRate?: number;
  readonly slowMs?: number;
  /** Probability that a gateway answers 503 without reaching the service. */
  readonly unavailableRate: number;
  /** Probability that a request is delivered a second time, up to maxDelayMs after the first. */
  readonly duplicateRate: number;
  /**
   * Loss and gateway 503s hit only a primary's renewals (heartbeats with a lease token); every
   * other call is only delayed. The skew profiles' race needs a lease that ages while its holder
   * believes and a standby that takes it over: a standby whose own calls fail holds back
   * (docs/protocol.md#sticky-recovery), so its calls must get through.
   */
  readonly renewalsOnly?: boolean;
}

export interface StoreFaults {
  /** Each store call takes 0..maxLatencyMs each way. */
  readonly maxLatencyMs: number;
  /** Probability that a write is made and then its answer is lost: 503 although it wrote. */
  readonly ambiguousRate: number;
  /** Probability that a write times out before it reaches the store: 503, nothing written. */
  readonly lostBeforeStoreRate: number;
}

export interface Scenario {
  readonly seed: number;
  readonly profile: Profile;
  readonly timing: { readonly intervalMs: number; readonly timeoutMs: number };
  /** HA_STORE_TIMEOUT_MS of every function instance. */
  readonly storeTimeoutMs: number;
  readonly safetyPhaseMs: number;
  /** Clock rate error of each elector slot's monotonic clock: 1 ± ρ. */
  readonly rates: readonly number[];
  /** When each elector slot starts. */
  readonly starts: readonly number[];
  /** ha_time of function instance k = simulated time + skews[k]; ε = max − min. */
  readonly skews: readonly number[];
  /** All instances share HA_LEASE_SECRET, or each drew its own (tokens then only work where issued). */
  readonly sharedSecret: boolean;
  readonly network: NetworkFaults;
  readonly store: StoreFaults;
  /** Every store call fails at once (`fail`) or hangs until its request's budget (`hang`). */
  readonly outages: readonly { readonly at: number; readonly forMs: number; readonly mode: "fail" | "hang" }[];
  /** An elector process frozen (SIGSTOP … SIGCONT). */
  readonly pauses: readonly { readonly who: number; readonly at: number; readonly forMs: number }[];
  /** A function instance frozen; its stall monitor must notice. */
  readonly stalls: readonly { readonly instance: number; readonly at: number; readonly forMs: number }[];
  /** An elector process killed (no release); a fresh one starts in its slot later. */
  readonly crashes: readonly { readonly who: number; readonly at: number; readonly restartAfterMs: number }[];
  /** An elector stopped gracefully (stop(): proven release); a fresh one starts later. */
  readonly stops: readonly { readonly who: number; readonly at: number; readonly restartAfterMs: number }[];
  /** An operator revokes the current holder (DELETE without its token). */
  readonly revokes: readonly { readonly at: number }[];
  /** An operator deletes the lease entry behind the service (its history rows stay). */
  readonly deletions: readonly { readonly at: number }[];
  /** An operator asks for a planned handover: to a standby it names (`named`), or to any. */
  readonly handovers: readonly { readonly at: number; readonly named: boolean }[];
  /**
   * The service out for everyone: every request reaching it meanwhile gets no answer
   * (`silent`: the caller times out) or is refused at once (`refused`: a connection refused).
   */
  readonly serviceOutages?: readonly { readonly at: number; readonly forMs: number; readonly mode: "silent" | "refused" }[];
  /**
   * Every function instance restarts at once (a deploy): the answers of the requests they are
   * serving are lost (their writes may still land), and every request is refused for `downForMs`.
   */
  readonly restarts?: readonly { readonly at: number; readonly downForMs: number }[];
  /** One participant (the elector in slot `who`) cut off from the service: its requests and their answers are dropped. */
  readonly partitions?: readonly { readonly who: number; readonly at: number; readonly forMs: number }[];
  /**
   * The store forgets its last writes (docs/design/epochs.md): at `at` it stops answering (every
   * call fails, as during a failover) for `downMs`, then comes back as it was at `at − lostMs`.
   */
  readonly rollbacks?: readonly { readonly at: number; readonly lostMs: number; readonly downMs: number }[];
  /** The electors' `rideThroughMs` (docs/protocol.md#ride-through); 0 or absent: off. */
  readonly rideThroughMs?: number;
  /**
   * While primary, each elector writes to a fenced resource (the SDK's fencedTableEntity over a
   * simulated table) every I/2 with its epoch; the `fenced-writes` invariant judges what landed.
   */
  readonly fencedWrites?: boolean;
  /**
   * The slots whose elector is a participant of several parts: two more roles, a member
   * session and a group watch on its transport, batched. When absent, slot 0 in one run in
   * four (seeds divisible by 4), and in every run with a planted bug of the participant path.
   */
  readonly batched?: readonly number[];
  readonly plant?: PlantedBug;
  /** The invariants judged; all by default. */
  readonly invariants?: readonly Invariant[];
  /**
   * Each slot's `priority` (docs/protocol.md#priorities-and-preemption); absent: every
   * candidate 0, and the priority invariants judge nothing.
   */
  readonly priorities?: readonly number[];
  /** The electors' `preemptAfterMs` with `priorities`. */
  readonly preemptAfterMs?: number;
}

const TIMING = { intervalMs: 200, timeoutMs: 1000 };
/**
 * The loss profile's: the defaults. Its judge (`renewal-copies`) needs every round trip an
 * elector measures (the batch's gather window of up to 20 ms included) within a fifth of
 * the floor (T − 2I)/8, which at 200 ms and 1 s is 15 ms.
 */
const LOSS_TIMING = { intervalMs: 1000, timeoutMs: 5000 };
/** The elector clocks' rate error bound ρ. */
const RHO = 0.02;
const SAFETY_PHASE_MS = 15_000;

/**
 * The largest skew between function instances that docs/protocol.md#timing-rules allows with this ρ: the holder
 * stops by sentAt + (T − I)/(1 − ρ) of real time, the earliest takeover is at sentAt + T − ε.
 */
export function safeSkewBoundMs(timing = TIMING, rho = RHO): number {
  return timing.intervalMs - ((timing.timeoutMs - timing.intervalMs) * rho) / (1 - rho);
}

/** The scenario of run `seed`, drawn from its own stream of the seed. */
export function generateScenario(seed: number, profile: Profile = "safe", plant?: PlantedBug): Scenario {
  const rng = new Prng(seed ^ 0x9e3779b9);
  if (profile === "skew") return skewScenario(seed, rng, profile, 1.5 * TIMING.intervalMs, plant);
  if (profile === "skew-margin") return skewScenario(seed, rng, profile, Math.floor(safeSkewBoundMs()) - 1, plant);
  if (profile === "outage") return outageScenario(seed, rng, plant);
  if (profile === "loss") return lossScenario(seed, rng, plant);
  if (profile === "priority") return priorityScenario(seed, rng, plant);
  return safeScenario(seed, rng, plant);
}

function safeScenario(seed: number, rng: Prng, plant: PlantedBug | undefined): Scenario {
  const electors = rng.int(2, 5);
  // Without a budget (for every request, or for a participant heartbeat's parts), what
  // matters is a frozen instance that every request reaches.
  const frozenEveryRequest = plant === "no-request-budget" || plant === "participant-parts-without-budget";
  const instances = frozenEveryRequest ? 1 : rng.int(1, 4);
  // Biased to the edge: half the runs use the whole margin the safety argument allows.
  const epsilon = rng.chance(0.5) ? Math.floor(safeSkewBoundMs()) - 1 : rng.int(0, Math.floor(safeSkewBoundMs()) - 1);
  const at = (): number => rng.int(0, SAFETY_PHASE_MS);
  const who = (): number => rng.int(0, electors - 1);
  return {
    seed,
    profile: "safe",
    timing: TIMING,
    storeTimeoutMs: 400,
    safetyPhaseMs: SAFETY_PHASE_MS,
    rates: Array.from({ length: electors }, () => (rng.chance(0.3) ? rng.pick([1 - RHO, 1 + RHO]) : rng.between(1 - RHO, 1 + RHO))),
    starts: Array.from({ length: electors }, () => rng.int(0, 2000)),
    skews: spread(rng, instances, epsilon),
    sharedSecret: rng.chance(0.8),
    network: {
      lossRate: rng.between(0, 0.3),
      maxDelayMs: rng.int(0, 450),
      unavailableRate: rng.between(0, 0.1),
      duplicateRate: rng.between(0, 0.3),
    },
    store: {
      maxLatencyMs: rng.int(0, 60),
      ambiguousRate: rng.between(0, 0.2),
      lostBeforeStoreRate: rng.between(0, 0.1),
    },
    outages: Array.from({ length: rng.int(0, 3) }, () => ({ at: at(), forMs: rng.int(50, 2 * TIMING.timeoutMs), mode: rng.pick(["fail", "hang"] as const) })),
    pauses: Array.from({ length: rng.int(0, 6) }, () => ({ who: who(), at: at(), forMs: rng.int(1, 2 * TIMING.timeoutMs + 500) })),
    stalls:
      frozenEveryRequest
        ? Array.from({ length: rng.int(4, 8) }, () => ({ instance: 0, at: at(), forMs: rng.int(TIMING.timeoutMs, 3 * TIMING.timeoutMs) }))
        : Array.from({ length: rng.int(0, 3) }, () => ({ instance: rng.int(0, instances - 1), at: at(), forMs: rng.int(50, 2 * TIMING.timeoutMs) })),
    crashes: Array.from({ length: plant === "never-takes-over" ? rng.int(1, 3) : rng.int(0, 2) }, () => ({ who: who(), at: at(), restartAfterMs: rng.int(0, 2000) })),
    stops: Array.from({ length: rng.int(0, 3) }, () => ({ who: who(), at: at(), restartAfterMs: rng.int(0, 2000) })),
    revokes: Array.from({ length: plant === "renew-ignores-etag" ? rng.int(3, 6) : rng.int(0, 2) }, () => ({ at: at() })),
    // Drawn last, so that the faults above are what they were for every seed; none with a
    // planted bug, whose runs are tuned to find it.
    deletions: plant === undefined ? Array.from({ length: rng.int(0, 2) }, () => ({ at: at() })) : [],
    // Drawn after everything else, for the same reason.
    handovers:
      plant === undefined || plant === "handover-releases-before-step-down"
        ? Array.from({ length: plant === undefined ? rng.int(0, 3) : rng.int(3, 6) }, () => ({ at: at(), named: rng.chance(0.5) }))
        : [],
    // The service's own outages, drawn after everything else, for the same reason; and
    // ride-through in one run in three. The fenced resource is written in every run without
    // a planted bug (the planted runs stay as they were tuned).
    ...(plant === undefined ? serviceFaults(rng, at, who) : {}),
    rideThroughMs: plant === undefined && rng.chance(1 / 3) ? rng.int(TIMING.timeoutMs, 4 * TIMING.timeoutMs) : 0,
    fencedWrites: plant === undefined || plant === "epoch-stored-plus-one",
    // Drawn after everything else, for the same reason: a store that forgets its last writes
    // in one run in four, and several times in the runs of the bug it finds.
    ...(plant === undefined || plant === "epoch-stored-plus-one" ? { rollbacks: rollbacksOf(rng, at, plant === undefined ? (rng.chance(0.25) ? 1 : 0) : rng.int(2, 4)) } : {}),
    ...(plant === undefined ? {} : { plant }),
  };
}

/**
 * `count` rollbacks, each losing 0.5–6 s of writes (up to several takeovers at T = 1 s),
 * after the store was away for longer than the instances' skew can reach (the bound of
 * docs/design/epochs.md: a failover takes its time) and up to 2 s.
 */
function rollbacksOf(rng: Prng, at: () => number, count: number): NonNullable<Scenario["rollbacks"]> {
  return Array.from({ length: count }, () => ({ at: at(), lostMs: rng.int(500, 6 * TIMING.timeoutMs), downMs: rng.int(Math.ceil(safeSkewBoundMs()) + 50, 2000) }));
}

/** Outages of the service for everyone, restarts of every instance, one-participant partitions. */
function serviceFaults(rng: Prng, at: () => number, who: () => number): Pick<Scenario, "serviceOutages" | "restarts" | "partitions"> {
  return {
    serviceOutages: Array.from({ length: rng.int(0, 2) }, () => ({ at: at(), forMs: rng.int(50, 3 * TIMING.timeoutMs), mode: rng.pick(["silent", "refused"] as const) })),
    restarts: Array.from({ length: rng.int(0, 2) }, () => ({ at: at(), downForMs: rng.int(0, 2 * TIMING.timeoutMs) })),
    partitions: Array.from({ length: rng.int(0, 2) }, () => ({ who: who(), at: at(), forMs: rng.int(50, 2 * TIMING.timeoutMs + 500) })),
  };
}

/**
 * The service's own outages with nothing else muddying who should hold the role: no message
 * loss, no 503s but the outages' (a standby whose own calls fail holds back, and a lone lost
 * poll must not be taken for an outage here), round trips well below I (the holder must
 * find the returning service before a standby's hold-back of 2·I after its first answer
 * ends: docs/protocol.md#sticky-recovery), and no operator faults (a revoke or a handover
 * moves a role on purpose). Crashes fall inside an outage half the time: the holder dies
 * meanwhile, and a standby must take over at most T after the return.
 */
function outageScenario(seed: number, rng: Prng, plant: PlantedBug | undefined): Scenario {
  const electors = rng.int(2, 4);
  const instances = rng.int(1, 3);
  const epsilon = rng.chance(0.5) ? Math.floor(safeSkewBoundMs()) - 1 : rng.int(0, Math.floor(safeSkewBoundMs()) - 1);
  const at = (): number => rng.int(500, SAFETY_PHASE_MS);
  const who = (): number => rng.int(0, electors - 1);
  const serviceOutages = Array.from({ length: rng.int(1, 3) }, () => ({ at: at(), forMs: rng.int(100, 3 * TIMING.timeoutMs), mode: rng.pick(["silent", "refused"] as const) }));
  const storeOutages = Array.from({ length: rng.int(0, 2) }, () => ({ at: at(), forMs: rng.int(100, 3 * TIMING.timeoutMs), mode: rng.pick(["fail", "hang"] as const) }));
  const restarts = Array.from({ length: rng.int(0, 2) }, () => ({ at: at(), downForMs: rng.int(0, 2 * TIMING.timeoutMs) }));
  const everyone = [...serviceOutages.map((o) => ({ at: o.at, forMs: o.forMs })), ...storeOutages.map((o) => ({ at: o.at, forMs: o.forMs })), ...restarts.map((r) => ({ at: r.at, forMs: r.downForMs }))];
  const crashAt = (): number => {
    if (!rng.chance(0.5)) return at();
    const outage = rng.pick(everyone);
    return outage.at + rng.int(0, outage.forMs);
  };
  const ride = plant === "ride-through-past-refusal" || (plant === undefined && seed % 2 === 1) || plant === "fenced-write-ignores-etag";
  return {
    seed,
    profile: "outage",
    timing: TIMING,
    storeTimeoutMs: 400,
    safetyPhaseMs: SAFETY_PHASE_MS,
    rates: Array.from({ length: electors }, () => (rng.chance(0.3) ? rng.pick([1 - RHO, 1 + RHO]) : rng.between(1 - RHO, 1 + RHO))),
    starts: Array.from({ length: electors }, () => rng.int(0, 400)),
    skews: spread(rng, instances, epsilon),
    sharedSecret: true,
    network: { lossRate: 0, maxDelayMs: rng.int(0, 10), unavailableRate: 0, duplicateRate: rng.between(0, 0.1) },
    store: { maxLatencyMs: rng.int(0, 5), ambiguousRate: 0, lostBeforeStoreRate: 0 },
    outages: storeOutages,
    pauses: Array.from({ length: rng.int(0, 2) }, () => ({ who: who(), at: at(), forMs: rng.int(1, 2 * TIMING.timeoutMs) })),
    stalls: [],
    crashes: Array.from({ length: rng.int(0, 2) }, () => ({ who: who(), at: crashAt(), restartAfterMs: rng.int(500, 3000) })),
    stops: Array.from({ length: rng.int(0, 1) }, () => ({ who: who(), at: at(), restartAfterMs: rng.int(0, 2000) })),
    revokes: [],
    deletions: [],
    handovers: [],
    serviceOutages,
    restarts,
    // One participant cut off: any slot, so sometimes the holder (replaced at T) and sometimes a standby.
    partitions: Array.from({ length: plant === "ride-through-past-refusal" || plant === "fenced-write-ignores-etag" ? rng.int(2, 4) : rng.int(0, 3) }, () => ({ who: who(), at: at(), forMs: rng.int(100, 3 * TIMING.timeoutMs) })),
    rideThroughMs: ride ? rng.int(2 * TIMING.timeoutMs, 5 * TIMING.timeoutMs) : 0,
    fencedWrites: true,
    ...(plant === undefined ? {} : { plant }),
  };
}

/**
 * Two function instances ε apart: the holder's renewal is written by the one whose clock
 * is behind, a standby's takeover is judged by the one whose clock is ahead, up to ε − I
 * before the holder stops believing. Lossy requests let the lease age meanwhile.
 */
function skewScenario(seed: number, rng: Prng, profile: Profile, epsilon: number, plant: PlantedBug | undefined): Scenario {
  const electors = rng.int(2, 4);
  return {
    seed,
    profile,
    timing: TIMING,
    storeTimeoutMs: 400,
    safetyPhaseMs: SAFETY_PHASE_MS,
    rates: Array.from({ length: electors }, () => (profile === "skew" ? 1 : rng.pick([1 - RHO, 1 + RHO]))),
    starts: Array.from({ length: electors }, () => rng.int(0, 500)),
    skews: spread(rng, 2, epsilon),
    sharedSecret: true,
    network: { lossRate: rng.between(0.3, 0.6), maxDelayMs: rng.int(0, 50), unavailableRate: rng.between(0, 0.1), duplicateRate: 0, renewalsOnly: true },
    store: { maxLatencyMs: rng.int(0, 10), ambiguousRate: 0, lostBeforeStoreRate: 0 },
    outages: [],
    pauses: [],
    stalls: [],
    crashes: [],
    stops: [],
    revokes: [],
    deletions: [],
    handovers: [],
    ...(plant === undefined ? {} : { plant }),
  };
}

/**
 * Lost messages and nothing else, as a lossy network does to a fast service (each leg
 * 0–10 ms, the store 0–5 ms each way, each request and each answer lost with p 0.05–0.3),
 * with a participant of three roles in slot 0, in slot 1 too in half the runs, and lone
 * electors in the others: every role of a participant must keep the copies of a lone elector.
 */
function lossScenario(seed: number, rng: Prng, plant: PlantedBug | undefined): Scenario {
  const electors = rng.int(2, 4);
  return {
    seed,
    profile: "loss",
    timing: LOSS_TIMING,
    storeTimeoutMs: 400,
    safetyPhaseMs: 30_000,
    rates: Array.from({ length: electors }, () => rng.between(1 - RHO, 1 + RHO)),
    starts: Array.from({ length: electors }, () => rng.int(0, 2000)),
    skews: [0],
    sharedSecret: true,
    network: { lossRate: rng.between(0.05, 0.3), maxDelayMs: rng.int(0, 10), unavailableRate: 0, duplicateRate: 0 },
    store: { maxLatencyMs: rng.int(0, 5), ambiguousRate: 0, lostBeforeStoreRate: 0 },
    outages: [],
    pauses: [],
    stalls: [],
    crashes: [],
    stops: [],
    revokes: [],
    deletions: [],
    handovers: [],
    batched: rng.chance(0.5) ? [0, 1] : [0],
    ...(plant === undefined ? {} : { plant }),
  };
}

/**
 * Candidates of priorities 0–2 (ties too) with a hold-down of 2·T, on a network and a store
 * that lose nothing and answer fast (a higher standby must be able to ask within I of the
 * role becoming free), among crashes, stops and a partition now and then; the slot of the
 * highest priority flaps: up for less than its hold-down, down, up again, a few times.
 */
function priorityScenario(seed: number, rng: Prng, plant: PlantedBug | undefined): Scenario {
  const electors = 3;
  const safetyPhaseMs = 30_000;
  const holdMs = 2 * TIMING.timeoutMs;
  const priorities = Array.from({ length: electors }, () => rng.int(0, 2));
  const at = (): number => rng.int(1000, safetyPhaseMs - 5000);
  const who = (): number => rng.int(0, electors - 1);
  const top = priorities.indexOf(Math.max(...priorities));
  // The flapping slot: up for less than its hold-down, down for a while, from a start of its own.
  const flaps: { who: number; at: number; restartAfterMs: number }[] = [];
  let flapAt = rng.int(2000, 8000);
  for (let cycle = rng.int(0, 3); cycle > 0; cycle--) {
    const downMs = rng.int(200, 1500);
    flaps.push({ who: top, at: flapAt, restartAfterMs: downMs });
    flapAt += downMs + rng.int(300, holdMs - 300);
  }
  return {
    seed,
    profile: "priority",
    timing: TIMING,
    storeTimeoutMs: 400,
    safetyPhaseMs,
    rates: Array.from({ length: electors }, () => rng.between(1 - RHO, 1 + RHO)),
    starts: Array.from({ length: electors }, () => rng.int(0, 2000)),
    skews: [0],
    sharedSecret: true,
    network: { lossRate: 0, maxDelayMs: rng.int(0, 30), unavailableRate: 0, duplicateRate: rng.between(0, 0.1) },
    store: { maxLatencyMs: rng.int(0, 10), ambiguousRate: 0, lostBeforeStoreRate: 0 },
    outages: [],
    pauses: [],
    stalls: [],
    crashes: Array.from({ length: rng.int(0, 2) }, () => ({ who: who(), at: at(), restartAfterMs: rng.int(500, 6000) })),
    stops: [...flaps, ...Array.from({ length: rng.int(0, 2) }, () => ({ who: who(), at: at(), restartAfterMs: rng.int(0, 4000) }))],
    revokes: [],
    deletions: [],
    handovers: [],
    partitions: Array.from({ length: rng.int(0, 1) }, () => ({ who: who(), at: at(), forMs: rng.int(100, 2 * TIMING.timeoutMs) })),
    fencedWrites: true,
    priorities,
    preemptAfterMs: holdMs,
    ...(plant === undefined ? {} : { plant }),
  };
}

/** `count` skews within [0, epsilon], the first two at its ends so that ε is reached. */
function spread(rng: Prng, count: number, epsilon: number): number[] {
  return Array.from({ length: count }, (_, k) => (k === 0 ? 0 : k === 1 ? epsilon : rng.int(0, epsilon)));
}
