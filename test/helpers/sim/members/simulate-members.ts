import { MemberTokenSigner } from "../../../../shared/members/member-token.js";
import { MemberSession } from "../../../../shared/sdk/membership/member-session.js";
import { MembersWatcher, type MemberEventName } from "../../../../shared/sdk/membership/members-watcher.js";
import { SimProcess } from "../process.js";
import { Prng } from "../prng.js";
import { SimWorld } from "../world.js";
import { MemberChecker, type SessionRecord, type WatcherRecord } from "./member-checker.js";
import { MemberSimInstance } from "./member-instance.js";
import { SimMembersTransport, type MemberNetworkDeps } from "./member-network.js";
import type { MemberScenario } from "./member-scenario.js";
import { MemberSimStats } from "./member-stats.js";
import { RecordingMemberStore } from "./recording-member-store.js";

const GROUP = "sim";
const HEALED_NETWORK = { lossRate: 0, maxDelayMs: 10, unavailableRate: 0, duplicateRate: 0 };
const HEALED_STORE = { maxLatencyMs: 5, ambiguousRate: 0, lostBeforeStoreRate: 0 };
const EVENTS: readonly MemberEventName[] = ["memberJoined", "memberActive", "memberUnreachable", "memberLeaving", "memberRemoved"];

export interface MemberOutcome {
  readonly stats: MemberSimStats;
  readonly sessions: number;
  readonly watcherEvents: number;
}

/**
 * Runs one membership scenario: real MemberSessions and MembersWatchers in simulated
 * processes, real MemberServices and the real MemberSweeper on function instances with
 * skewed clocks, the real MemoryMemberStore; a safety phase with every fault of the
 * scenario, then everything healed for long enough that every dead session must be gone.
 * The checker judges the whole record at the end; a violation is thrown with its replay.
 */
export async function simulateMembers(scenario: MemberScenario): Promise<MemberOutcome> {
  const timeout = AbortSignal.timeout;
  AbortSignal.timeout = () => new AbortController().signal;
  try {
    return await run(scenario);
  } finally {
    AbortSignal.timeout = timeout;
  }
}

async function run(scenario: MemberScenario): Promise<MemberOutcome> {
  const world = new SimWorld();
  const rng = new Prng(scenario.seed);
  const stats = new MemberSimStats();
  stats.count("runs");
  let healed = false;
  const store = new RecordingMemberStore(() => world.now);
  const checker = new MemberChecker(scenario, store, stats);
  const tokens = new MemberTokenSigner("simulation-secret-shared-by-every-instance");
  const within = (windows: readonly { at: number; forMs: number }[]): boolean => windows.some((w) => w.at <= world.now && world.now < w.at + w.forMs);
  const instances = scenario.skews.map(
    (skewMs, k) =>
      new MemberSimInstance(
        {
          world,
          rng,
          store,
          weather: {
            faults: () => (healed ? HEALED_STORE : scenario.store),
            outage: () => (healed ? undefined : scenario.storeOutages.find((o) => o.at <= world.now && world.now < o.at + o.forMs)?.mode),
          },
          scenario,
          tokens,
          stats,
        },
        k,
        skewMs,
      ),
  );
  let serviceError: unknown;
  const network: MemberNetworkDeps = {
    world,
    rng,
    instances,
    faults: () => (healed ? HEALED_NETWORK : scenario.network),
    serviceDown: () => !healed && within(scenario.serviceOutages),
    stats,
    onServiceError: (error) => (serviceError ??= error),
  };

  // ---- the sweeper: the timer trigger fires every period on some instance, unless the functions are down ----
  const sweep = (): void => {
    world.schedule(world.now + scenario.timing.sweepPeriodMs, sweep);
    if (network.serviceDown()) return;
    stats.count("sweeps");
    rng
      .pick(instances)
      .sweep()
      .then(
        (report) => {
          stats.count("rowsRemoved", report.deleted.length);
          stats.count("gapsRecorded", report.gaps.length);
        },
        () => stats.count("sweepFailures"),
      );
  };
  world.schedule(scenario.timing.sweepPeriodMs, sweep);

  // ---- members: one process per incarnation, a real MemberSession in it ----
  const slots: ({ process: SimProcess; session: MemberSession } | undefined)[] = scenario.slots.map(() => undefined);
  let incarnations = 0;
  const startSlot = (slot: number): void => {
    if (slots[slot] !== undefined) return;
    const { kind, rate } = scenario.slots[slot]!;
    const n = ++incarnations;
    const process = new SimProcess(world, rate, 10_000 * n);
    let sessions = 0;
    const session = new MemberSession({
      group: GROUP,
      member: `m${slot}`,
      address: `node-${slot}:${n}`,
      transport: new SimMembersTransport(network, process),
      clock: process,
      newSession: () => `m${slot}.${n}.${++sessions}`,
      retryDelayInMs: scenario.timing.intervalMs,
    });
    const recordOf = (id: string): SessionRecord => {
      let record = checker.sessions.get(id);
      if (record === undefined) {
        record = { session: id, slot, kind };
        checker.sessions.set(id, record);
      }
      return record;
    };
    session.on("joined", ({ session: id }) => {
      stats.count("sessionsJoined");
      recordOf(id).joinedAt = world.now;
    });
    session.on("lost", ({ session: id, reason }) => {
      if (reason === "expired") stats.count("sessionsLostExpired");
      const record = recordOf(id);
      record.lostAt = world.now;
      record.lostReason = reason;
    });
    slots[slot] = { process, session };
    process.post(() => {
      session.start();
      recordOf(session.session!);
    });
  };
  scenario.slots.forEach(({ startAt }, slot) => world.schedule(startAt, () => startSlot(slot)));
  for (const { slot, at, restartAfterMs } of scenario.crashes) {
    world.schedule(at, () => {
      const current = slots[slot];
      if (healed || current === undefined) return;
      stats.count("crashes");
      current.process.kill();
      const id = current.session.session;
      if (id !== undefined) {
        const record = checker.sessions.get(id) ?? { session: id, slot, kind: scenario.slots[slot]!.kind };
        record.crashedAt = world.now;
        checker.sessions.set(id, record);
      }
      slots[slot] = undefined;
      if (restartAfterMs !== null) {
        world.schedule(world.now + restartAfterMs, () => {
          if (healed) return;
          stats.count("restarts");
          startSlot(slot);
        });
      }
    });
  }
  for (const { slot, at } of scenario.stops) {
    world.schedule(at, () => {
      const current = slots[slot];
      if (healed || current === undefined) return;
      stats.count("stops");
      current.process.post(() => {
        const id = current.session.session;
        if (id !== undefined) {
          const record = checker.sessions.get(id);
          if (record !== undefined) record.stoppedAt = world.now;
        }
        void current.session.stop();
      });
    });
  }
  for (const { slot, at, forMs } of scenario.pauses) {
    world.schedule(at, () => {
      const process = slots[slot]?.process;
      if (healed || process === undefined || process.paused) return;
      stats.count("memberPauses");
      process.pause();
      world.schedule(at + forMs, () => process.resume());
    });
  }

  // ---- watchers: a real MembersWatcher each, in its own process ----
  const watcherProcesses = scenario.watchers.map(({ rate }, index) => new SimProcess(world, rate, 5_000_000 + 10_000 * index));
  const watchers = scenario.watchers.map(({ startAt }, index) => {
    const record: WatcherRecord = { events: [], lists: [] };
    checker.watchers.push(record);
    const process = watcherProcesses[index]!;
    const watcher = new MembersWatcher({
      group: GROUP,
      transport: new SimMembersTransport(network, process, (received) => record.lists.push(received)),
      clock: process,
      random: () => rng.next(),
      wallClock: () => world.now,
      retryDelayInMs: scenario.timing.intervalMs,
    });
    for (const event of EVENTS) watcher.on(event, ({ member, session }) => void record.events.push({ at: world.now, event, member, session }));
    world.schedule(startAt, () => process.post(() => watcher.start()));
    return watcher;
  });
  for (const { watcher, at, forMs } of scenario.watcherPauses) {
    const process = watcherProcesses[watcher]!;
    world.schedule(at, () => {
      if (healed || process.paused) return;
      stats.count("watcherPauses");
      process.pause();
      world.schedule(at + forMs, () => process.resume());
    });
  }

  const check = (): void => {
    if (serviceError !== undefined) checker.fail("service-error", `the service threw ${String(serviceError)} (a 500)`);
  };
  await world.runUntil(scenario.safetyPhaseMs, check);

  // ---- everything heals: long enough for every dead session to be leaving, then removed ----
  healed = true;
  for (const slot of slots) slot?.process.resume();
  for (const process of watcherProcesses) process.resume();
  const { ttlMs, retentionMs, sweepPeriodMs, timeoutMs } = scenario.timing;
  await world.runUntil(world.now + ttlMs + retentionMs + 4 * sweepPeriodMs + 2 * timeoutMs, check);
  checker.judge();
  for (const watcher of watchers) void watcher.stop();
  stats.count("worldEvents", world.events);
  return { stats, sessions: checker.sessions.size, watcherEvents: checker.watchers.reduce((sum, watcher) => sum + watcher.events.length, 0) };
}
