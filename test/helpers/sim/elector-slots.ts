import { MemberSession } from "../../../shared/sdk/membership/member-session.js";
import { MembersWatcher } from "../../../shared/sdk/membership/members-watcher.js";
import { PrimaryElector, type PrimaryElectorOptions } from "../../../shared/sdk/election/primary-elector.js";
import { fencedTableEntity } from "../../../shared/sdk/fencing/fenced-table-entity.js";
import { FencedOutError } from "../../../shared/sdk/fencing/fenced-out-error.js";
import type { SimFencedTable } from "./fenced-resource.js";
import { SimParticipantTransport } from "./participant-link.js";
import type { Checker, Participant } from "./checker.js";
import { SimTransport, type NetworkDeps } from "./network.js";
import { SimProcess } from "./process.js";
import { Prng } from "./prng.js";
import type { Scenario } from "./scenario.js";
import type { SimStats } from "./stats.js";
import type { SimWorld } from "./world.js";

export interface ElectorSlotsDeps {
  readonly world: SimWorld;
  readonly scenario: Scenario;
  readonly network: NetworkDeps;
  readonly checker: Checker;
  readonly stats: SimStats;
  readonly utype: string;
  readonly healed: () => boolean;
  /** One per further role a participant of several parts holds (`<utype>-b`, `<utype>-c`), judging it. */
  readonly companions: readonly Checker[];
  /** The resource the primaries of the judged role write to, fenced by their epoch (scenario.fencedWrites). */
  readonly fenced: SimFencedTable | undefined;
  /** The judged role's elector, when not this tree's (another build's, measured side by side). */
  readonly elector?: ElectorClass | undefined;
}

/** A PrimaryElector as the simulation drives it: this tree's, or another build's of the same shape. */
export type ElectorClass = new (options: PrimaryElectorOptions) => PrimaryElector;

/** The rest of a participant: two more roles, its member session and its group watch, on the elector's transport. */
interface Extras {
  readonly companions: readonly Participant[];
  readonly session: MemberSession;
  readonly watcher: MembersWatcher;
}

/**
 * The further roles a participant of several parts may hold, after the judged one: the
 * suffix of its utype, and the letter its electors' names ("c0.1") and uuids ("u7-c0.1")
 * begin with (sticky-judge.ts reads the slot back from them).
 */
const COMPANION_ROLES = [
  { role: "b", letter: "c" },
  { role: "c", letter: "d" },
] as const;

/** The further roles the participants of several parts hold. */
export function companionRoles(): readonly { readonly role: string; readonly letter: string }[] {
  return COMPANION_ROLES;
}

/**
 * The participants: one slot per elector of the scenario, each running a real
 * PrimaryElector in its own simulated process. After a crash or a stop, a fresh elector
 * (a new process, as a restarted service would be) takes the slot later.
 */
export class ElectorSlots {
  readonly #current: (Participant | undefined)[];
  readonly #started: number[];
  readonly #extras: (Extras | undefined)[];
  /** How long the slot's earlier processes were up in all (the `hold-down-across-restarts` plant's memory). */
  readonly #upBefore: number[];
  #uuids = 0;

  constructor(private readonly deps: ElectorSlotsDeps) {
    this.#current = deps.scenario.starts.map(() => undefined);
    this.#started = deps.scenario.starts.map(() => 0);
    this.#extras = deps.scenario.starts.map(() => undefined);
    this.#upBefore = deps.scenario.starts.map(() => 0);
  }

  /** The process of the slot's running elector, if it has one. */
  process(slot: number): SimProcess | undefined {
    return this.#current[slot]?.process;
  }

  /** Starts an elector in the slot, unless one runs there. */
  start(slot: number): void {
    const { world, scenario, network, checker, utype } = this.deps;
    if (this.#current[slot] !== undefined) return;
    const n = this.#started[slot]!++;
    const process = new SimProcess(world, scenario.rates[slot]!, 100_000 * slot + 10_000 * n);
    // In one run in four (seeds divisible by 4), slot 0 is a participant of several parts
    // (three roles, a member session, a group watch) on one transport: its calls travel as
    // participant heartbeats, one message each, beside electors on the single routes. Only
    // one run in four, so that the simulation's run time stays about what it was; in every
    // run while a bug of the participant path is planted, so that its checker is given it;
    // in the slots a scenario names (the loss profile's).
    const several = scenario.batched?.includes(slot) ?? (slot === 0 && (scenario.seed % 4 === 0 || scenario.plant === "participant-parts-without-budget"));
    const transport = several ? new SimParticipantTransport(network, process, slot) : new SimTransport(network, process, slot);
    const Elector = this.deps.elector ?? PrimaryElector;
    const elector = new Elector({
      utype,
      address: `node-${slot}`,
      transport,
      clock: process,
      newUuid: () => `u${++this.#uuids}-e${slot}.${n}`,
      retryDelayInMs: scenario.timing.intervalMs,
      // The poll jitter, from a stream of its own: the run's faults draw the same numbers
      // whatever the electors draw, and the seed still replays the run exactly.
      random: jitterStream(scenario.seed, slot, n),
      // Standbys announce themselves only where an operator may name one in a handover, or
      // where priorities rank them (the service ranks the standbys it has rows of).
      announce: scenario.handovers.length > 0 || scenario.priorities !== undefined,
      rideThroughMs: scenario.rideThroughMs ?? 0,
      ...(scenario.priorities === undefined ? {} : { priority: scenario.priorities[slot] ?? 0, preemptAfterMs: this.#preemptAfterMs(slot) }),
    });
    const participant: Participant = { name: `e${slot}.${n}`, elector, process, lastUuid: elector.uuid, gone: false, startedAt: world.now, calls: transport.calls };
    this.#current[slot] = participant;
    checker.watch(participant);
    const extras = several ? this.#extrasOf(slot, n, process, transport) : undefined;
    this.#extras[slot] = extras;
    const riders = [elector, ...(extras?.companions ?? []).map((companion) => companion.elector)];
    transport.riding = (role) => riders.some((one) => one.utype === role && one.isPrimary() && one.exclusiveTimeLeftMs() === 0);
    if (this.deps.fenced !== undefined) this.#work(participant, this.deps.fenced);
    process.post(() => {
      elector.start();
      for (const companion of extras?.companions ?? []) companion.elector.start();
      extras?.session.start();
      extras?.watcher.start();
    });
  }

  /**
   * The hold-down the slot's elector is told: the scenario's, or a planted bug's — 0
   * (`preempt-without-hold-down`), or the scenario's less the time the slot's earlier
   * processes were up (`hold-down-across-restarts`, as a hold-down kept across restarts would be).
   */
  #preemptAfterMs(slot: number): number {
    const { scenario } = this.deps;
    const hold = scenario.preemptAfterMs ?? 0;
    if (scenario.plant === "preempt-without-hold-down") return 0;
    if (scenario.plant !== "hold-down-across-restarts") return hold;
    const up = this.#upBefore[slot] ?? 0;
    return Math.max(0, Math.round(hold - up));
  }

  #extrasOf(slot: number, n: number, process: SimProcess, transport: SimTransport): Extras {
    const { scenario, utype, companions: checkers, world } = this.deps;
    const shared = { transport: transport as SimParticipantTransport, clock: process, retryDelayInMs: scenario.timing.intervalMs };
    const companions = companionRoles().map(({ role, letter }, index) => {
      const elector = new PrimaryElector({
        ...shared,
        utype: `${utype}-${role}`,
        address: `node-${slot}`,
        newUuid: () => `u${++this.#uuids}-${letter}${slot}.${n}`,
        random: jitterStream(scenario.seed, slot + 512 + 256 * index, n),
        announce: false,
        rideThroughMs: scenario.rideThroughMs ?? 0,
      });
      const companion: Participant = { name: `${letter}${slot}.${n}`, elector, process, lastUuid: elector.uuid, gone: false, startedAt: world.now, calls: transport.calls };
      checkers[index]!.watch(companion);
      return companion;
    });
    let sessions = 0;
    return {
      companions,
      session: new MemberSession({ ...shared, group: utype, member: `node-${slot}`, address: `node-${slot}`, newSession: () => `s${slot}.${n}.${++sessions}` }),
      watcher: new MembersWatcher({ ...shared, group: utype, random: jitterStream(scenario.seed, slot + 1024, n), wallClock: () => world.now }),
    };
  }

  /**
   * The primary's work: every I/2 while its elector reports isPrimary() (riding through
   * included), one fenced write of the shared resource with its epoch, through the SDK's
   * fencedTableEntity; one at a time. A FencedOutError is the fence at work (counted).
   */
  #work(participant: Participant, table: SimFencedTable): void {
    const { scenario, stats } = this.deps;
    const { elector, process } = participant;
    const writer = fencedTableEntity(table.clientFor(process, () => participant.name));
    let writing = false;
    let n = 0;
    const tick = (): void => {
      if (participant.gone) return;
      const epoch = elector.epoch;
      if (!writing && epoch !== undefined) {
        writing = true;
        writer
          .upsert({ partitionKey: "sim", rowKey: "work", n: ++n }, { epoch })
          .catch((error: unknown) => {
            if (error instanceof FencedOutError) stats.count("fencedWritesRefused");
          })
          .finally(() => (writing = false));
      }
      process.setTimeout(tick, scenario.timing.intervalMs / 2);
    };
    process.post(tick);
  }

  /** Stops the rest of every participant (the caller stops the electors of the judged role). */
  stopExtras(): void {
    for (const extras of this.#extras) {
      if (extras === undefined || extras.companions[0]!.gone) continue;
      this.#retireExtras(extras, "stopped");
      extras.companions[0]!.process.post(() => stopExtras(extras));
    }
  }

  #retireExtras(extras: Extras, how: "stopped" | "crashed"): void {
    extras.companions.forEach((companion, index) => this.deps.companions[index]!.retire(companion, how));
  }

  /** The uuids of the running electors that are not primary now: the standbys an operator may name. */
  standbys(): string[] {
    return this.#current.filter((participant) => participant !== undefined && !participant.gone && !participant.elector.isPrimary()).map((participant) => participant!.elector.uuid);
  }

  /** Every empty slot gets an elector now. */
  fill(): void {
    this.#current.forEach((_, slot) => this.start(slot));
  }

  /**
   * Crash (SIGKILL: no release, nothing more sent) or graceful stop (stop(): a proven
   * release), then a fresh elector in the slot `restartAfterMs` later.
   */
  leave(slot: number, how: "stopped" | "crashed", restartAfterMs: number): void {
    const { world, checker, stats, healed } = this.deps;
    const participant = this.#current[slot];
    if (healed() || participant === undefined) return;
    this.#current[slot] = undefined;
    this.#upBefore[slot] = (this.#upBefore[slot] ?? 0) + (world.now - participant.startedAt);
    const extras = this.#extras[slot];
    this.#extras[slot] = undefined;
    if (how === "crashed") {
      stats.count("crashes");
      participant.process.kill();
      checker.retire(participant, "crashed");
      if (extras !== undefined) this.#retireExtras(extras, "crashed");
    } else {
      stats.count("stops");
      // It stops when it next runs (now, or when it resumes): only then does its uuid's life end.
      participant.process.post(() => {
        checker.retire(participant, "stopped");
        void participant.elector.stop();
        if (extras === undefined) return;
        this.#retireExtras(extras, "stopped");
        stopExtras(extras);
      });
    }
    world.schedule(world.now + restartAfterMs, () => {
      if (!healed()) this.start(slot);
    });
  }
}

function stopExtras(extras: Extras): void {
  for (const companion of extras.companions) void companion.elector.stop();
  void extras.session.stop();
  void extras.watcher.stop();
}

/** A PRNG of its own for the n-th elector of a slot, derived from the run's seed. */
function jitterStream(seed: number, slot: number, n: number): () => number {
  const prng = new Prng((seed ^ Math.imul(0x9e3779b1, 1 + slot * 1024 + n)) >>> 0);
  return () => prng.next();
}
