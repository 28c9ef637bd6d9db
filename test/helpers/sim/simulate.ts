import { LeaseTokenSigner } from "../../../shared/lease/lease-token.js";
import { MemberTokenSigner } from "../../../shared/members/member-token.js";
import { MemoryMemberStore } from "../../../shared/store/members-memory-store.js";
import type { LeaseStore } from "../../../shared/lease/lease-store.js";
import { renewalFloorMs } from "../../../shared/sdk/loop/budgets.js";
import { GATHER_WINDOW_MS } from "../../../shared/sdk/transport/participant-batcher.js";
import { Checker, type SimLogEntry } from "./checker.js";
import { companionRoles, ElectorSlots, type ElectorClass } from "./elector-slots.js";
import type { StoreWeather } from "./faulty-store.js";
import { SimInstance } from "./instance.js";
import type { NetworkDeps } from "./network.js";
import { plantSharedRenewalDoubling } from "./planted-elector.js";
import { PlantedStore } from "./planted-store.js";
import { Prng } from "./prng.js";
import { RecordingStore } from "./recording-store.js";
import { RenewalLog } from "./renewal-log.js";
import type { NetworkFaults, PlantedBug, Scenario } from "./scenario.js";
import { SimStats } from "./stats.js";
import { SimWorld } from "./world.js";
import { SimFencedTable } from "./fenced-resource.js";
import type { RenewalAnswer } from "./network.js";
import { StickyJudge } from "./sticky-judge.js";
import { PriorityJudge } from "./priority-judge.js";

const UTYPE = "sim";
const HEALED_NETWORK: NetworkFaults = { lossRate: 0, maxDelayMs: 10, unavailableRate: 0, duplicateRate: 0 };
const HEALED_STORE = { maxLatencyMs: 5, ambiguousRate: 0, lostBeforeStoreRate: 0 };
/** StallMonitor's defaults: a gap of up to 3 periods goes unseen, plus the period the tick may lag. */
const UNSEEN_STALL_MS = 400;
const STORE_BUGS: ReadonlySet<PlantedBug> = new Set([
  "renew-ignores-etag",
  "replace-ignores-etag",
  "release-resets-epoch",
  "acknowledges-lost-writes",
  "forgets-ended-uuids",
  "ranking-ignores-standbys",
]);

export interface Outcome {
  readonly stats: SimStats;
  /** The further roles of participants of several parts (`<utype>-b`, `<utype>-c`): their elections and demotions. */
  readonly companions: readonly SimStats[];
  /** Every event the handlers and the world recorded, in order: equal runs have equal logs. */
  readonly logLength: number;
  readonly leader: string;
  readonly finalEntry: string;
  /** What the judged role's handlers and the world recorded (elections, demotions, ended uuids), in order. */
  readonly log: readonly SimLogEntry[];
}

/** What a run may swap for its own: the elector (another build's, measured side by side). */
export interface SimSeams {
  readonly elector?: ElectorClass;
}

/**
 * The longest a request sent before some moment can still be written after it: its copy
 * travels twice the largest delay (a duplicate leaves up to that much later), then it may
 * use its whole budget, overrun by a stall the monitor cannot see, and its write may
 * travel to the store for up to the store's latency.
 */
export function inFlightWindowMs(scenario: Scenario): number {
  return 2 * scenario.network.maxDelayMs + scenario.storeTimeoutMs + UNSEEN_STALL_MS + scenario.store.maxLatencyMs;
}

/**
 * Healed at h, a lease can still be written until h + W (requests in flight), lasts T on
 * a clock up to ε ahead, a standby looks within I (its clock up to ρ slow) and asks: one
 * round trip. Twice I covers the poll and the round trips with room.
 */
export function livenessBoundMs(scenario: Scenario): number {
  const epsilon = Math.max(...scenario.skews) - Math.min(...scenario.skews);
  return inFlightWindowMs(scenario) + scenario.timing.timeoutMs + epsilon + 2 * scenario.timing.intervalMs + 100;
}

/**
 * Runs one scenario: a safety phase with every fault it lists, then every fault healed and
 * one stable primary required within livenessBoundMs, then everyone stops. Throws
 * SimViolation (with the replay command) on the first broken invariant.
 */
export async function simulate(scenario: Scenario, seams: SimSeams = {}): Promise<Outcome> {
  // The service bounds each store call with AbortSignal.timeout(what is left of the budget),
  // on real time. Here simulated time alone decides (FaultyStoreLink cuts a call off when its
  // request's budget ends, and the budget's own check runs on the instance's simulated
  // monotonic clock), so during a run those signals never fire: real timers would only cost
  // time, and could not change the outcome since the link does not pass them on.
  const timeout = AbortSignal.timeout;
  AbortSignal.timeout = () => new AbortController().signal;
  const unplant = scenario.plant === "shared-renewal-doubling" ? plantSharedRenewalDoubling() : undefined;
  try {
    return await run(scenario, seams);
  } finally {
    AbortSignal.timeout = timeout;
    unplant?.();
  }
}

async function run(scenario: Scenario, seams: SimSeams): Promise<Outcome> {
  const world = new SimWorld();
  const rng = new Prng(scenario.seed);
  const stats = new SimStats();
  stats.count("runs");
  const { timing } = scenario;
  let healed = false;

  const store = new RecordingStore(() => world.now);
  const serviceStore: LeaseStore = scenario.plant !== undefined && STORE_BUGS.has(scenario.plant) ? new PlantedStore(store, scenario.plant, rng) : store;
  const weather: StoreWeather = {
    faults: () => (healed ? HEALED_STORE : scenario.store),
    outage: () =>
      healed
        ? undefined
        : (scenario.outages.find((o) => o.at <= world.now && world.now < o.at + o.forMs)?.mode ??
          // A store failing over: away, then back without its last writes.
          (scenario.rollbacks?.some((r) => r.at <= world.now && world.now < r.at + r.downMs) === true ? "fail" : undefined)),
  };
  const sharedSecret = "simulation-secret-shared-by-every-instance";
  const members = { store: new MemoryMemberStore(), tokens: new MemberTokenSigner("simulation-member-secret-shared-by-every-instance") };
  const instances = scenario.skews.map(
    (skewMs, k) =>
      new SimInstance(
        {
          world,
          rng,
          store: serviceStore,
          weather,
          timing,
          storeTimeoutMs: scenario.storeTimeoutMs,
          tokens: new LeaseTokenSigner(scenario.sharedSecret ? sharedSecret : `simulation-secret-of-instance-${k}-${rng.int(0, 0xffffff)}`),
          stats,
          plant: scenario.plant,
          members,
        },
        k,
        skewMs,
      ),
  );
  const renewalAnswers: RenewalAnswer[] = [];
  // The primaries' work writes here, fenced by their epochs; its own stream of draws, so that the faults draw what they would without it.
  const fenced = scenario.fencedWrites === true ? new SimFencedTable(world, new Prng((scenario.seed ^ 0x5bd1e995) >>> 0), scenario.store.maxLatencyMs, scenario.plant === "fenced-write-ignores-etag") : undefined;
  // An elector's budget is the floor (T − 2I)/8 while its round trips, as it measures them on
  // its clock (a batch's gather window included), stay within a fifth of it (renewal-log.ts).
  const fastMs = renewalFloorMs(timing) / 5 / Math.max(...scenario.rates) - GATHER_WINDOW_MS;
  const renewals = new RenewalLog(world, fastMs);
  const checker = new Checker(scenario, world, store, UTYPE, inFlightWindowMs(scenario), stats, renewals, renewalAnswers, fenced?.applied);
  // The further roles of the participants of several parts: judged alike (their own counts;
  // the liveness bound and the operator's faults are the first role's).
  const companions = companionRoles().map(({ role }) => new Checker(scenario, world, store, `${UTYPE}-${role}`, inFlightWindowMs(scenario), new SimStats(), renewals, renewalAnswers));
  const sticky = [
    new StickyJudge(scenario, world, checker, store, UTYPE, stats, livenessBoundMs(scenario)),
    ...companions.map((companion, index) => new StickyJudge(scenario, world, companion, store, `${UTYPE}-${companionRoles()[index]!.role}`, companion.stats, livenessBoundMs(scenario))),
  ];
  const priorities = new PriorityJudge(scenario, world, checker, store, UTYPE, stats);
  const during = <T extends { readonly at: number; readonly forMs: number }>(faults: readonly T[] | undefined, match: (fault: T) => boolean = () => true): T | undefined =>
    healed ? undefined : faults?.find((fault) => fault.at <= world.now && world.now < fault.at + fault.forMs && match(fault));
  let serviceError: unknown;
  const network: NetworkDeps = {
    world,
    rng,
    instances,
    faults: () => (healed ? HEALED_NETWORK : scenario.network),
    stats,
    inflateTimeoutMs: scenario.plant === "elector-deadline-sent-at-plus-t" ? timing.intervalMs : 0,
    releaseBeforeStepDown: scenario.plant === "handover-releases-before-step-down",
    partsWithoutBudget: scenario.plant === "participant-parts-without-budget",
    onServiceError: (error) => (serviceError ??= error),
    serviceOutage: () => during(scenario.serviceOutages)?.mode,
    cutOff: (slot) => during(scenario.partitions, (partition) => partition.who === slot) !== undefined,
    renewalAnswers,
    hideLostContact: scenario.plant === "standby-ignores-lost-contact",
    hideRefusalsWhileRiding: scenario.plant === "ride-through-past-refusal",
    heartbeatsWithoutToken: scenario.plant === "forgets-ended-uuids",
    renewals,
  };
  const check = (): void => {
    if (serviceError !== undefined) checker.fail("service-error", `the service threw ${String(serviceError)} (a 500)`);
    checker.check();
    for (const companion of companions) companion.check();
    for (const judge of sticky) judge.check();
    priorities.check();
  };

  const slots = new ElectorSlots({ world, scenario, network, checker, stats, utype: UTYPE, healed: () => healed, companions, fenced, elector: seams.elector });

  scenario.starts.forEach((at, slot) => world.schedule(at, () => slots.start(slot)));
  for (const { who, at, forMs } of scenario.pauses) {
    world.schedule(at, () => {
      const process = slots.process(who);
      if (healed || process === undefined || process.paused) return;
      stats.count("electorPauses");
      process.pause();
      world.schedule(at + forMs, () => process.resume());
    });
  }
  for (const { instance, at, forMs } of scenario.stalls) {
    const process = instances[instance]!.process;
    world.schedule(at, () => {
      if (healed || process.paused) return;
      stats.count("instanceStalls");
      process.pause();
      world.schedule(at + forMs, () => process.resume());
    });
  }
  for (const { who, at, restartAfterMs } of scenario.crashes) world.schedule(at, () => slots.leave(who, "crashed", restartAfterMs));
  for (const { at, downForMs } of scenario.restarts ?? []) {
    world.schedule(at, () => {
      // A deploy restarts every instance at once.
      if (healed) return;
      stats.count("instanceRestarts");
      for (const instance of instances) instance.restart(downForMs);
    });
  }
  for (const { at } of scenario.serviceOutages ?? []) world.schedule(at, () => void (healed || stats.count("serviceOutages")));
  for (const { at } of scenario.partitions ?? []) world.schedule(at, () => void (healed || stats.count("partitions")));
  for (const { who, at, restartAfterMs } of scenario.stops) world.schedule(at, () => slots.leave(who, "stopped", restartAfterMs));
  for (const { at } of scenario.deletions) {
    world.schedule(at, () => {
      // An operator (a script, a restore) deletes the entry behind the service.
      if (healed || store.current(UTYPE) === undefined) return;
      stats.count("entryDeletions");
      store.deleteEntry(UTYPE);
    });
  }
  for (const { at, lostMs, downMs } of scenario.rollbacks ?? []) {
    // The copy the store will come back as, then, after its time away, the return.
    let copy: ReturnType<RecordingStore["copy"]> | undefined;
    world.schedule(Math.max(0, at - lostMs), () => void (copy = store.copy()));
    world.schedule(at + downMs, () => {
      if (healed || copy === undefined) return;
      stats.count("storeRollbacks");
      const erased = store.erasedTerms.length;
      store.rollBack(copy);
      stats.count("termsErasedByRollbacks", store.erasedTerms.length - erased);
    });
  }
  for (const { at } of scenario.revokes) {
    world.schedule(at, () => {
      // An operator reads who holds the lease and DELETEs it without the token: a revoke.
      const holder = store.current(UTYPE)?.uuid;
      if (healed || holder === undefined || holder === "") return;
      stats.count("revokes");
      rng
        .pick(instances)
        .serve((service, arrival) => service.release({ utype: UTYPE, uuid: holder, lease: undefined }, arrival))
        .catch(() => undefined);
    });
  }

  for (const { at, named } of scenario.handovers) {
    world.schedule(at, () => {
      // An operator asks for a planned handover, to a standby it names (by uuid) or to any.
      if (healed) return;
      const to = named ? rng.pick([...slots.standbys(), undefined]) : undefined;
      stats.count("handovers");
      rng
        .pick(instances)
        .serve((service, arrival) => service.handover(UTYPE, to, arrival))
        .catch(() => undefined);
    });
  }

  // ---- safety phase: every fault on ----
  await world.runUntil(scenario.safetyPhaseMs, check);

  // ---- liveness phase: everything heals; one primary within the bound, and it stays ----
  healed = true;
  const healedAt = world.now;
  for (const participant of checker.participants) participant.process.resume();
  for (const instance of instances) {
    instance.process.resume();
    instance.up();
  }
  slots.fill();
  const bound = livenessBoundMs(scenario);
  await world.runUntil(healedAt + bound, check);
  // A crashed elector counts for safety as long as its clock says it holds (stricter); here,
  // where a crashed rider's clock runs on to the end of its ride-through, only the living do.
  const leaders = checker.primaries().filter((participant) => !participant.gone);
  if (leaders.length !== 1) {
    checker.fail("liveness", `${leaders.length} primaries ${bound} ms after every fault healed, expected 1`);
  }
  const leader = leaders[0];
  const uuid = leader?.elector.uuid;
  await world.runUntil(healedAt + bound + 3 * timing.timeoutMs, () => {
    check();
    if (leader !== undefined && (!leader.elector.isPrimary() || leader.elector.uuid !== uuid)) {
      checker.fail("liveness", `the primary ${leader.name} (${uuid}) lost the lease in a healed world`);
    }
  });

  // ---- everyone stops; the store must see nothing more of them ----
  for (const participant of checker.participants) {
    if (participant.gone) continue;
    checker.retire(participant, "stopped");
    participant.process.post(() => void participant.elector.stop());
  }
  slots.stopExtras();
  await world.runUntil(world.now + timing.timeoutMs, check);
  const entry = store.current(UTYPE);
  stats.count("worldEvents", world.events);
  return {
    stats,
    companions: companions.map((companion) => companion.stats),
    logLength: checker.log.length,
    leader: leader?.name ?? "none",
    finalEntry: entry === undefined ? "none" : `${entry.uuid || "(released)"}@${entry.epoch}`,
    log: checker.log,
  };
}
