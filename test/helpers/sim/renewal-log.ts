import type { SimProcess } from "./process.js";
import type { SimWorld } from "./world.js";

/**
 * What the network saw of heartbeats, for the `renewal-copies` judge (checker.ts): when each
 * renewal copy of a uuid left, when its latest accepted heartbeat left (the elector's
 * deadline counts from that one), and for each elector process whether every answer it
 * got came back within `fastMs` and none failed: then its renewal budget is the floor
 * (T − 2I)/8, and a lone elector sends a renewal four times before its deadline.
 */
export class RenewalLog {
  readonly #copies = new Map<string, number[]>();
  readonly #acceptedAt = new Map<string, number>();
  readonly #unsteady = new WeakSet<SimProcess>();

  constructor(
    private readonly world: SimWorld,
    /** The longest round trip, on the network, that still keeps an elector's budget at the floor. */
    readonly fastMs: number,
  ) {}

  /** A heartbeat of `uuid` leaves now (a renewal copy when it carries a lease token); returns now. */
  sent(uuid: string, renewal: boolean): number {
    const at = this.world.now;
    if (renewal) {
      const copies = this.#copies.get(uuid) ?? [];
      copies.push(at);
      this.#copies.set(uuid, copies);
    }
    return at;
  }

  /** An answer reached `process` now for a request that left at `sentAt`: a failure (a 503) or not. */
  answered(process: SimProcess, sentAt: number, failed: boolean): void {
    if (failed || this.world.now - sentAt > this.fastMs) this.#unsteady.add(process);
  }

  /** A part of an answer to `process` failed: a renewal in it may have ended early. */
  partFailed(process: SimProcess): void {
    this.#unsteady.add(process);
  }

  /** The heartbeat of `uuid` that left at `sentAt` was accepted, and its answer reached the elector. */
  accepted(uuid: string, sentAt: number): void {
    this.#acceptedAt.set(uuid, Math.max(sentAt, this.#acceptedAt.get(uuid) ?? sentAt));
  }

  /** Whether every answer `process` got came within fastMs, and none failed. */
  steady(process: SimProcess): boolean {
    return !this.#unsteady.has(process);
  }

  /** The renewal copies of `uuid` that left after its last accepted heartbeat did. */
  copiesSinceAccepted(uuid: string): number {
    const since = this.#acceptedAt.get(uuid) ?? Number.NEGATIVE_INFINITY;
    return (this.#copies.get(uuid) ?? []).filter((at) => at > since).length;
  }
}
