import { systemMonotonicClock, type Clock, type MonotonicClock } from "../service/clock.js";
import { RequestBudget } from "../service/request-budget.js";
import { noMemberMetrics, type MemberMetrics } from "./member-metrics.js";
import type { MemberStore } from "./member-store.js";
import type { ServiceGap } from "./member.js";
import type { MembershipRules } from "./membership-rules.js";
import { planSweep, type SweepDeletion } from "./sweep-plan.js";

export interface MemberSweeperDeps {
  readonly store: MemberStore;
  readonly clock: Clock;
  readonly monotonic?: MonotonicClock;
  readonly rules: MembershipRules;
  /** The time budget of each store call (the listing, each marker write, each delete). */
  readonly storeTimeoutMs: number;
  /** Where each sweep and each removal is counted; nothing by default. */
  readonly metrics?: MemberMetrics;
}

/** Where the sweeper says what it found (a recorded gap, rows held back): the timer's context log. */
export type SweepLog = (message: string) => void;

/** What one sweep did, for logs and tests. */
export interface SweepReport {
  readonly groups: number;
  readonly deleted: readonly (SweepDeletion & { readonly group: string })[];
  /** Deletions that found the row changed (it heartbeat meanwhile) or gone: not made. */
  readonly notDeleted: number;
  readonly heldBack: readonly (SweepDeletion & { readonly group: string })[];
  readonly gaps: readonly (ServiceGap & { readonly group: string })[];
  /** Groups whose marker another writer changed first: swept next time. */
  readonly skippedGroups: readonly string[];
}

/**
 * The sweeper (the `sweepMembers` timer function; the local host runs it on a timer):
 * one cross-partition read of every group, judged at one ha_time taken after it, then per
 * group the plan of planSweep(): the marker first (If-Match, so two sweepers never both
 * act on one reading), then each deletion If-Match. A store failure ends the sweep (the
 * next one starts over); nothing here is retried.
 */
export class MemberSweeper {
  readonly #monotonic: MonotonicClock;

  constructor(private readonly deps: MemberSweeperDeps) {
    this.#monotonic = deps.monotonic ?? systemMonotonicClock;
  }

  /** One sweep; counted as completed or failed, with the rows it removed (also when a later call failed). */
  async sweep(warn: SweepLog = (message) => console.warn(message)): Promise<SweepReport> {
    const metrics = this.deps.metrics ?? noMemberMetrics;
    const startedAt = this.#monotonic.now();
    let removed = 0;
    let result: "completed" | "failed" = "failed";
    try {
      const report = await this.#sweep(warn, () => (removed += 1));
      result = "completed";
      return report;
    } finally {
      if (removed > 0) metrics.transition("removed", removed);
      metrics.sweep(result, this.#monotonic.now() - startedAt);
    }
  }

  async #sweep(warn: SweepLog, onRemoved: () => void): Promise<SweepReport> {
    const { store, clock, rules } = this.deps;
    const snapshots = await store.listAll(this.#budget().forStoreCall("read"));
    const haTime = clock.now();
    const report = { groups: 0, deleted: [] as (SweepDeletion & { group: string })[], notDeleted: 0, heldBack: [] as (SweepDeletion & { group: string })[], gaps: [] as (ServiceGap & { group: string })[], skippedGroups: [] as string[] };
    for (const snapshot of snapshots) {
      // A group without rows keeps its marker as it is (its removed sessions still count); refreshing it would cost a write per sweep for nothing.
      if (snapshot.rows.length === 0) continue;
      report.groups += 1;
      const { group } = snapshot;
      const plan = planSweep(snapshot, haTime, rules);
      const marked = await store.writeMarker(plan.marker, plan.markerEtag, this.#budget().forStoreCall("write"));
      if (!marked.ok) {
        report.skippedGroups.push(group);
        continue;
      }
      if (plan.gapRecorded !== null) {
        report.gaps.push({ group, ...plan.gapRecorded });
        warn(`sweepMembers: ${group}: the service did not sweep for ${plan.gapRecorded.endedAt - plan.gapRecorded.startedAt} ms; member ages do not count that gap.`);
      }
      if (plan.heldBack.length > 0) {
        report.heldBack.push(...plan.heldBack.map((held) => ({ group, ...held })));
        warn(`sweepMembers: ${group}: every member looks failed (${plan.heldBack.map((held) => held.member).join(", ")}): suspect the service, not the members; none of them is removed.`);
      }
      for (const gone of plan.deletions) {
        const deleted = await store.delete(group, gone.member, gone.etag, this.#budget().forStoreCall("write"));
        if (deleted.ok) {
          report.deleted.push({ group, ...gone });
          onRemoved();
        }
        else report.notDeleted += 1;
      }
    }
    return report;
  }

  #budget(): RequestBudget {
    return new RequestBudget(this.#monotonic, this.#monotonic.now(), this.deps.storeTimeoutMs);
  }
}
