import type { Prng } from "../helpers/sim/prng.js";

/**
 * The faults of a chaos run. "group" faults hit a participant as a container stop or a
 * VM freeze would: `run`'s own process group and its command's group (not the watchdog,
 * which `run` keeps in a session of its own). "run" faults hit the supervisor alone, so
 * its command lives on until the lifeline (docs/protocol.md) ends it.
 */
export const PARTICIPANT_FAULTS = ["group-kill", "group-term", "group-stop", "run-kill", "run-term", "run-stop"] as const;
/**
 * `ha-module serve` frozen, or killed and restarted on the same port and data directory; or
 * the store in use (serve's embedded one, or Azurite as its own process) rolled back: killed,
 * its file put back as a copy of one or two cycles earlier had it, started again (a restore
 * from a backup, a failover to a replica without the last writes: docs/design/epochs.md).
 */
export const SERVICE_FAULTS = ["serve-stop", "serve-kill", "store-rollback"] as const;
/** The store alone (Azurite as its own process) frozen, or killed and restarted on the same port and data. */
export const STORE_FAULTS = ["store-stop", "store-kill"] as const;

export type ParticipantFault = (typeof PARTICIPANT_FAULTS)[number];
export type FaultKind = ParticipantFault | (typeof SERVICE_FAULTS)[number] | (typeof STORE_FAULTS)[number];
export const ALL_FAULTS: readonly FaultKind[] = [...PARTICIPANT_FAULTS, ...SERVICE_FAULTS, ...STORE_FAULTS];

export function isParticipantFault(kind: FaultKind): kind is ParticipantFault {
  return (PARTICIPANT_FAULTS as readonly string[]).includes(kind);
}

/**
 * What the judge may expect after a fault that hit the primary, measured from the fault:
 * `crash` — the lease must run out, so a standby's worker starts within T + I (+ slack);
 * `graceful` — the lease is released, so within I (+ slack); `pause` — within T + I if a
 * failover happens at all, and it must when the pause lasted T or more.
 */
export type FailoverClass = "crash" | "graceful" | "pause";

export function failoverClass(kind: FaultKind): FailoverClass | undefined {
  switch (kind) {
    case "group-kill":
    case "run-kill":
      return "crash";
    case "group-term":
    case "run-term":
      return "graceful";
    case "group-stop":
    case "run-stop":
      return "pause";
    default:
      return undefined;
  }
}

export interface FaultPlan {
  readonly cycle: number;
  readonly kind: FaultKind;
  /** For participant faults: hit whoever is primary now, or a standby. */
  readonly aimAt: "primary" | "standby";
  /**
   * In [0, 1): which of the candidates to hit (a standby, or anyone when no worker runs).
   * Drawn for every fault, so the schedule after it replays whoever was primary.
   */
  readonly pick: number;
  /**
   * How long the fault lasts before it is healed: the pause for `-stop` faults (a quarter
   * of T to 2·T, so both shorter and longer than the lease), the time before a killed or
   * stopped process is started again for the others.
   */
  readonly holdMs: number;
  /** The quiet time after recovery, before the next cycle. */
  readonly settleMs: number;
}

export interface PlanTiming {
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/**
 * The schedule: rounds in which every enabled kind comes once, in an order shuffled by the
 * PRNG, so that a short run still meets every kind (11 cycles, 11 kinds: each once).
 */
export class FaultSchedule {
  #round: FaultKind[] = [];

  constructor(
    private readonly prng: Prng,
    private readonly kinds: readonly FaultKind[],
    private readonly timing: PlanTiming,
  ) {
    if (kinds.length === 0) throw new Error("FaultSchedule: no fault kinds enabled.");
  }

  next(cycle: number): FaultPlan {
    if (this.#round.length === 0) this.#round = this.prng.shuffle(this.kinds);
    const kind = this.#round.shift()!;
    const { intervalMs: I, timeoutMs: T } = this.timing;
    const prng = this.prng;
    const holdMs = kind.endsWith("-stop")
      ? prng.int(Math.round(T / 4), 2 * T)
      : kind === "serve-kill" || kind === "store-kill" || kind === "store-rollback"
        ? prng.int(0, Math.round(1.5 * T))
        : prng.int(0, Math.round(T / 2));
    return {
      cycle,
      kind,
      aimAt: isParticipantFault(kind) && !prng.chance(0.75) ? "standby" : "primary",
      pick: prng.next(),
      holdMs,
      settleMs: prng.int(I, 3 * I),
    };
  }
}
