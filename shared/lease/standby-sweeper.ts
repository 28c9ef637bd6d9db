import type { LeaseTiming } from "../contract/timing.js";
import { systemMonotonicClock, type Clock, type MonotonicClock } from "../service/clock.js";
import { RequestBudget } from "../service/request-budget.js";
import type { LeaseStore, StandbyRecord } from "./lease-store.js";

export interface StandbySweeperDeps {
  readonly store: LeaseStore;
  readonly clock: Clock;
  readonly monotonic?: MonotonicClock;
  readonly timing: LeaseTiming;
  /** The time budget of each store call (the listing, each delete). */
  readonly storeTimeoutMs: number;
}

/** What one sweep removed, for logs and tests. */
export interface StandbySweepReport {
  /** Rows seen, stale or not. */
  readonly seen: number;
  readonly deleted: readonly StandbyRecord[];
}

/**
 * Deletes the standby rows not announced for T (a standby that stopped, became holder or
 * was retired): the `sweepStandbys` timer function, on HA_SWEEP_SCHEDULE (the local host
 * runs it on a timer). Reads never write, so this is what keeps a role's partition from
 * collecting the rows of every uuid that ever announced itself: after a sweep, a role holds
 * only the rows announced within the last T, and between sweeps those of one more sweep
 * period (docs/protocol.md#standbys). A stale row is out of view whether or not it was
 * deleted yet.
 *
 * One cross-partition read of every standby row, judged at one ha_time taken after it,
 * then one delete per stale row. A store failure ends the sweep; the next one starts over.
 * A delete is unconditional, as the row's owner writes it: a standby that announces again
 * between the read and the delete loses that one announcement, and writes its row again
 * at its next one (T/2 later).
 */
export class StandbySweeper {
  readonly #monotonic: MonotonicClock;

  constructor(private readonly deps: StandbySweeperDeps) {
    this.#monotonic = deps.monotonic ?? systemMonotonicClock;
  }

  async sweep(): Promise<StandbySweepReport> {
    const { store, clock, timing } = this.deps;
    const rows = await store.listStandbys(this.#budget().forStoreCall("read"));
    const haTime = clock.now();
    const deleted: StandbyRecord[] = [];
    for (const row of rows) {
      if (haTime - row.seenAt <= timing.timeoutMs) continue;
      await store.deleteStandby(row.utype, row.uuid, this.#budget().forStoreCall("write"));
      deleted.push(row);
    }
    return { seen: rows.length, deleted };
  }

  #budget(): RequestBudget {
    return new RequestBudget(this.#monotonic, this.#monotonic.now(), this.deps.storeTimeoutMs);
  }
}
