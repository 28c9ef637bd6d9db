import { freeSince } from "../../../shared/lease/decision.js";
import type { Checker, Participant } from "./checker.js";
import type { RecordingStore, StoreWrite } from "./recording-store.js";
import type { Scenario } from "./scenario.js";
import type { SimStats } from "./stats.js";
import type { SimWorld } from "./world.js";

/**
 * The priority invariants (docs/protocol.md#priorities-and-preemption), judged from outside
 * after every event, from the store's writes and the world's own record of who ran when:
 *
 * - `highest-wins`: a new term on a free role (expired, or released without naming anyone)
 *   goes to a candidate of lower priority than a standby that stood by (running, never cut
 *   off, its slot up for T and two intervals) only from I after the role became free: before
 *   then the higher one's ask would have been preferred.
 * - `preempt-hold-down`: a preemption (a handover `reason: "preempt"` written on the entry)
 *   names a uuid that was in use for the hold-down, never cut off (partitioned) meanwhile.
 * - `no-flapping`: a preemption names a participant whose process has been up for the
 *   hold-down: one that left and came back within it (a flapping machine) never gets the
 *   role by preemption.
 *
 * Judged only where the scenario gives priorities (the `priority` profile).
 */
export class PriorityJudge {
  #seen = 0;
  /** When the world first saw each uuid in use (simulated time). */
  readonly #uuidSince = new Map<string, number>();

  constructor(
    private readonly scenario: Scenario,
    private readonly world: SimWorld,
    private readonly checker: Checker,
    private readonly store: RecordingStore,
    private readonly utype: string,
    private readonly stats: SimStats,
  ) {}

  check(): void {
    if (this.scenario.priorities === undefined) return;
    for (const participant of this.checker.participants) {
      if (!participant.gone && !this.#uuidSince.has(participant.elector.uuid)) this.#uuidSince.set(participant.elector.uuid, this.world.now);
    }
    for (; this.#seen < this.store.writes.length; this.#seen += 1) {
      const write = this.store.writes[this.#seen]!;
      if (write.after.utype !== this.utype) continue;
      this.#judgeTakeover(write);
      this.#judgePreemption(write);
    }
  }

  #priorityOf(uuid: string): number | undefined {
    const slot = slotOf(uuid);
    return slot === undefined ? undefined : this.scenario.priorities?.[slot];
  }

  /** Whether the slot was cut off (partitioned) at any time in [from, to]. */
  #cutOff(slot: number, from: number, to: number): boolean {
    return (this.scenario.partitions ?? []).some((partition) => partition.who === slot && partition.at <= to && partition.at + partition.forMs >= from);
  }

  #judgeTakeover({ at, before, after }: StoreWrite): void {
    if (before === undefined || after.uuid === "" || after.uuid === before.uuid || after.epoch <= before.epoch) return;
    // A reserved role (a handover named the winner) goes to it whatever the priorities.
    if (before.uuid === "" && typeof before.handover?.to === "string") return;
    const mine = this.#priorityOf(after.uuid);
    if (mine === undefined) return;
    const { intervalMs, timeoutMs } = this.scenario.timing;
    const freeAt = freeSince(before, timeoutMs);
    this.stats.count("priorityTakeovers");
    const higher = this.checker.participants.find((candidate) => this.#stoodBy(candidate, at, before.uuid) && (this.#priorityOf(candidate.elector.uuid) ?? 0) > mine);
    if (higher === undefined) {
      this.stats.count("takeoversByTheHighest");
      return;
    }
    if (at < freeAt + intervalMs) {
      this.checker.fail(
        "highest-wins",
        `${after.uuid} (priority ${mine}) took the role ${Math.round(at - freeAt)} ms after it became free, though ${higher.name} (${higher.elector.uuid}, priority ${this.#priorityOf(higher.elector.uuid)}) stood by: a lower one may take it only from I after`,
      );
    }
  }

  /** A standby that stood by at `at`: running, not the old holder, up for T + 2·I, never cut off or paused meanwhile. */
  #stoodBy(candidate: Participant, at: number, oldHolder: string): boolean {
    const { intervalMs, timeoutMs } = this.scenario.timing;
    const slot = slotOf(candidate.elector.uuid);
    if (candidate.gone || slot === undefined || candidate.elector.uuid === oldHolder || candidate.elector.isPrimary() || candidate.process.pausedOnce) return false;
    if (candidate.startedAt > at - timeoutMs - 2 * intervalMs) return false;
    const since = this.#uuidSince.get(candidate.elector.uuid) ?? at;
    return since <= at - timeoutMs - 2 * intervalMs && !this.#cutOff(slot, at - 2 * timeoutMs, at);
  }

  #judgePreemption({ at, before, after }: StoreWrite): void {
    const handover = after.handover;
    if (handover?.reason !== "preempt" || typeof handover.to !== "string") return;
    if (before?.handover?.reason === "preempt" && before.handover.to === handover.to) return;
    this.stats.count("preemptions");
    // The hold-down on the elector's own clock, which may run fast by up to its rate error: the least real time it can be.
    const hold = (this.scenario.preemptAfterMs ?? 0) / Math.max(...this.scenario.rates);
    const to = handover.to;
    const since = this.#uuidSince.get(to);
    const slot = slotOf(to);
    if (since === undefined || at - since < hold || (slot !== undefined && this.#cutOff(slot, at - hold, at))) {
      this.checker.fail(
        "preempt-hold-down",
        `a preemption named ${to} at t=${Math.round(at)} ms, ${since === undefined ? "a uuid never seen in use" : `${Math.round(at - since)} ms after it was first in use`}${slot !== undefined && this.#cutOff(slot, at - hold, at) ? " and cut off meanwhile" : ""}: the hold-down is ${Math.round(hold)} ms of standing by (on the fastest clock)`,
      );
    }
    const participant = this.checker.participants.find((candidate) => candidate.elector.uuid === to || candidate.lastUuid === to);
    if (participant !== undefined && at - participant.startedAt < hold) {
      this.checker.fail("no-flapping", `a preemption named ${participant.name} (${to}), whose process came up only ${Math.round(at - participant.startedAt)} ms before: it left and came back within its hold-down of ${Math.round(hold)} ms`);
    }
  }
}

/** The slot a simulated uuid (`u<k>-e<slot>.<n>`) belongs to. */
function slotOf(uuid: string): number | undefined {
  const found = /-e(\d+)\.\d+$/.exec(uuid);
  return found === null ? undefined : Number(found[1]);
}
