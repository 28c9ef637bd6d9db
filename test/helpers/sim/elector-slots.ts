import { PrimaryElector } from "../../../shared/sdk/primary-elector.js";
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
}

/**
 * The participants: one slot per elector of the scenario, each running a real
 * PrimaryElector in its own simulated process. After a crash or a stop, a fresh elector
 * (a new process, as a restarted service would be) takes the slot later.
 */
export class ElectorSlots {
  readonly #current: (Participant | undefined)[];
  readonly #started: number[];
  #uuids = 0;

  constructor(private readonly deps: ElectorSlotsDeps) {
    this.#current = deps.scenario.starts.map(() => undefined);
    this.#started = deps.scenario.starts.map(() => 0);
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
    const elector = new PrimaryElector({
      utype,
      address: `node-${slot}`,
      transport: new SimTransport(network, process),
      clock: process,
      newUuid: () => `u${++this.#uuids}-e${slot}.${n}`,
      retryDelayInMs: scenario.timing.intervalMs,
      // The poll jitter, from a stream of its own: the run's faults draw the same numbers
      // whatever the electors draw, and the seed still replays the run exactly.
      random: jitterStream(scenario.seed, slot, n),
      // Standbys announce themselves only where an operator may name one in a handover.
      announce: scenario.handovers.length > 0,
    });
    const participant: Participant = { name: `e${slot}.${n}`, elector, process, lastUuid: elector.uuid, gone: false };
    this.#current[slot] = participant;
    checker.watch(participant);
    process.post(() => elector.start());
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
    if (how === "crashed") {
      stats.count("crashes");
      participant.process.kill();
      checker.retire(participant, "crashed");
    } else {
      stats.count("stops");
      // It stops when it next runs (now, or when it resumes): only then does its uuid's life end.
      participant.process.post(() => {
        checker.retire(participant, "stopped");
        void participant.elector.stop();
      });
    }
    world.schedule(world.now + restartAfterMs, () => {
      if (!healed()) this.start(slot);
    });
  }
}

/** A PRNG of its own for the n-th elector of a slot, derived from the run's seed. */
function jitterStream(seed: number, slot: number, n: number): () => number {
  const prng = new Prng((seed ^ Math.imul(0x9e3779b1, 1 + slot * 1024 + n)) >>> 0);
  return () => prng.next();
}
