import type { Checker, Participant } from "./checker.js";
import type { RecordingStore } from "./recording-store.js";
import type { Scenario } from "./scenario.js";
import type { SimStats } from "./stats.js";
import type { SimWorld } from "./world.js";

/** An outage for everyone, [from, to): the service, the store, or every instance restarting. */
interface Outage {
  readonly from: number;
  readonly to: number;
}

/** What the judge knows of one outage as the run goes on. */
interface Verdict {
  readonly outage: Outage;
  /** When the next outage begins: from then on, that outage's verdict judges. */
  readonly next: number;
  /** The one participant primary before its own deadline when the outage began, and its uuid then. */
  holder?: Participant;
  holderUuid?: string;
  /** Store writes looked at so far. */
  seen: number;
  /** Judged: nothing more to do for this outage. */
  done: boolean;
}

/** A store write that made another uuid the holder: a new term. */
interface TermChange {
  readonly at: number;
  readonly uuid: string;
  readonly epoch: number;
  /** The participant whose uuid it is ("e2.1"), from the uuid the simulation drew for it. */
  readonly who: string;
}

/**
 * The `sticky` invariant (docs/protocol.md#sticky-recovery), judged from outside after every
 * event: after an outage for everyone, no role moves unless its holder died.
 *
 * For each outage (ones less than T apart merged into one), the participant that was primary
 * when it began is its holder. The store says who holds the role: the first write after the
 * outage began that makes another uuid the holder must be one of the holder's own (it took
 * its role back under a new uuid), or there is none (its term went on, ridden through or
 * shorter than the outage); and when the holder's term ended, that write must come within
 * about I of the return (its first look after it, and three calls). Another participant may
 * take the role only when the holder died (crashed or stopped), then at most T after the
 * return (`movedBoundMs`); when the holder was cut off alone around the outage (a partition,
 * a pause); or when the winner could not know it had lost contact: it was paused through the
 * outage, or started while the service answered (docs/protocol.md#sticky-recovery says so).
 * Judged only in the `outage` profile, whose network loses nothing: elsewhere a lone lost
 * call could end a term for reasons of its own.
 */
export class StickyJudge {
  readonly #verdicts: Verdict[];
  /** The outages as the scenario lists them, before merging. */
  readonly #outages: readonly Outage[];

  constructor(
    private readonly scenario: Scenario,
    private readonly world: SimWorld,
    private readonly checker: Checker,
    private readonly store: RecordingStore,
    private readonly utype: string,
    private readonly stats: SimStats,
    /** How long after the return a standby may take the role of a holder that died: T plus the usual slack. */
    private readonly movedBoundMs: number,
  ) {
    this.#outages = outagesOf(scenario);
    const outages = scenario.profile === "outage" ? merged(this.#outages, scenario.timing.timeoutMs) : [];
    this.#verdicts = outages.map((outage, index) => ({ outage, next: outages[index + 1]?.from ?? Number.POSITIVE_INFINITY, seen: 0, done: false }));
  }

  check(): void {
    for (const verdict of this.#verdicts) if (!verdict.done) this.#judge(verdict);
  }

  #judge(verdict: Verdict): void {
    const { outage } = verdict;
    const now = this.world.now;
    if (now < outage.from) return;
    if (verdict.holder === undefined) {
      const holders = this.checker.participants.filter((p) => !p.gone && p.elector.isPrimary() && p.elector.exclusiveTimeLeftMs() > 0);
      if (holders.length !== 1) {
        verdict.done = true;
        return;
      }
      verdict.holder = holders[0]!;
      verdict.holderUuid = holders[0]!.elector.uuid;
      verdict.seen = this.store.writes.length;
      this.stats.count("outagesWithAHolder");
    }
    const holder = verdict.holder;
    const change = this.#nextTermChange(verdict);
    if ((change?.at ?? now) >= verdict.next) {
      // Another outage began first: its own verdict judges what follows.
      verdict.done = true;
      return;
    }
    if (change !== undefined) {
      verdict.done = true;
      if (change.who === holder.name) {
        this.stats.count("rolesKeptThroughOutages");
        const back = this.#holderBackBy(outage, holder);
        if (change.at > back && this.#excuse(holder, undefined, outage, change.at) === undefined) {
          this.fail(outage, `${holder.name} took its role back only ${Math.round(change.at - outage.to)} ms after the return (by ${Math.round(back - outage.to)} ms expected: its first look and three calls)`);
        }
        return;
      }
      const excuse = this.#excuse(holder, change, outage);
      if (excuse === undefined) {
        this.fail(outage, `the role moved from ${holder.name} (${verdict.holderUuid}) to ${change.who} (${change.uuid}@${change.epoch}) at t=${Math.round(change.at)} ms, though ${holder.name} is alive and was never cut off alone`);
      }
      this.stats.count("rolesMovedFromADeadHolder");
      if (excuse === "died") {
        // At most T after the return, the holder's death, or the moment the winner could reach the service, whichever is last.
        const from = Math.max(outage.to, this.#diedAt(holder, change.at) ?? outage.to, this.#reachableFrom(change.who, outage, change.at));
        if (change.at > from + this.movedBoundMs) {
          this.fail(outage, `${holder.name} died, and ${change.who} took over ${Math.round(change.at - from)} ms after the return (or the death, or its own start), more than T plus the slack (${this.movedBoundMs} ms)`);
        }
      }
      return;
    }
    // No new term yet: fine while the holder still holds (its term went on, or it rides through).
    if (holder.elector.isPrimary() && !holder.gone) {
      if (now > outage.to + this.scenario.timing.timeoutMs) {
        verdict.done = true;
        this.stats.count("rolesKeptThroughOutages");
      }
      return;
    }
    if (now > this.#holderBackBy(outage, holder) && this.#excuse(holder, undefined, outage) === undefined) {
      verdict.done = true;
      this.fail(outage, `${holder.name} is alive and was never cut off alone, but has not taken its role back ${Math.round(now - outage.to)} ms after the return`);
    }
    if (now > outage.to + this.movedBoundMs + this.scenario.timing.timeoutMs) verdict.done = true;
  }

  /** The first write since the outage began that made another uuid this role's holder. */
  #nextTermChange(verdict: Verdict): TermChange | undefined {
    const writes = this.store.writes;
    for (; verdict.seen < writes.length; verdict.seen += 1) {
      const { at, before, after } = writes[verdict.seen]!;
      if (after.utype !== this.utype || after.uuid === "" || before?.uuid === after.uuid) continue;
      return { at, uuid: after.uuid, epoch: after.epoch, who: participantOf(after.uuid) };
    }
    return undefined;
  }

  /**
   * By when the holder must hold its role again: after the return, or after its term ended
   * if that came later (it looks at once then), or after a call of its own that the return
   * found awaiting an answer the outage swallowed had failed (its caller learns nothing of
   * the return before), its next look (1.2·I on a clock up to ρ slow), and three calls: the
   * look, the release of its old lease if that is still live, the acquire (each over the
   * network both ways, and one or two store calls). Infinite while such a call is unsettled.
   */
  #holderBackBy(outage: Outage, holder: Participant): number {
    const { intervalMs } = this.scenario.timing;
    const termEnded = this.checker.log.findLast((entry) => entry.kind === "demoted" && entry.who === holder.name)?.at ?? outage.to;
    const hung = holder.calls.filter((call) => call.sentAt < outage.to && (call.settledAt ?? Number.POSITIVE_INFINITY) > outage.to);
    const hungUntil = Math.max(outage.to, ...hung.map((call) => call.settledAt ?? Number.POSITIVE_INFINITY));
    // Past the safety phase the world is healed, with its own delays.
    const maxDelayMs = Math.max(this.scenario.network.maxDelayMs, HEALED_MAX_DELAY_MS);
    const storeLatencyMs = Math.max(this.scenario.store.maxLatencyMs, HEALED_STORE_LATENCY_MS);
    const callsMs = 6 * maxDelayMs + 10 * storeLatencyMs;
    // A participant of several parts wakes on its grid, up to I/4 after a look's planned time (transport/cadence.ts).
    const gridMs = !holder.name.startsWith("e") || (slotOf(holder.name) === 0 && this.scenario.seed % 4 === 0) ? intervalMs / 4 : 0;
    return Math.max(outage.to, termEnded, hungUntil) + (1.2 * intervalMs) / 0.98 + gridMs + callsMs + 10;
  }

  /** When the holder died (crashed or stopped), if it did by `until`. */
  #diedAt(holder: Participant, until: number): number | undefined {
    return this.checker.log.find((entry) => entry.kind === "uuid-ended" && entry.who === holder.name && entry.how !== "new incarnation" && entry.at <= until)?.at;
  }

  /** When the participant `who` could reach the service again: its start, and the end of its own partitions and pauses. */
  #reachableFrom(who: string, outage: Outage, until: number): number {
    const slot = slotOf(who);
    const started = this.checker.participants.find((p) => p.name === who)?.startedAt ?? outage.from;
    const cutOffUntil = [...(this.scenario.partitions ?? []), ...this.scenario.pauses]
      .filter((fault) => fault.who === slot && fault.at <= until && fault.at + fault.forMs >= outage.from)
      .map((fault) => Math.min(fault.at + fault.forMs, this.scenario.safetyPhaseMs));
    return Math.max(started, ...cutOffUntil);
  }

  /**
   * Why the role may have gone to `winner` (undefined: nobody yet) rather than back to the
   * holder: `died`, `cut-off` (the holder partitioned or paused around the outage), or
   * `unaware` (the winner could not know it lost contact). Undefined: no excuse.
   */
  #excuse(holder: Participant, winner: { readonly who: string; readonly at: number } | undefined, outage: Outage, at?: number): "died" | "cut-off" | "unaware" | undefined {
    const until = winner?.at ?? at ?? this.world.now;
    if (this.#diedAt(holder, until) !== undefined) return "died";
    const from = outage.from - this.scenario.timing.timeoutMs;
    const slot = slotOf(holder.name);
    const cutOff = [...(this.scenario.partitions ?? []), ...this.scenario.pauses].some((fault) => fault.who === slot && fault.at <= until && fault.at + fault.forMs >= from);
    if (cutOff) return "cut-off";
    if (winner === undefined) return undefined;
    const winnerSlot = slotOf(winner.who);
    const winnerPaused = this.scenario.pauses.some((pause) => pause.who === winnerSlot && pause.at <= until && pause.at + pause.forMs >= outage.from);
    // Started while the service answered (after the return, or between two outages merged
    // into one; or just before the return, its first call arriving after it, no call of it
    // ever failing): it never lost contact, so nothing told it to hold back.
    const participant = this.checker.participants.find((p) => p.name === winner.who);
    const started = participant?.startedAt;
    const startedAnswered =
      started !== undefined &&
      started >= outage.from &&
      (!this.#outages.some((o) => o.from <= started && started < o.to) || participant!.elector.stats().failures === 0);
    if (winnerPaused || startedAnswered) return "unaware";
    return undefined;
  }

  fail(outage: Outage, what: string): void {
    this.checker.fail("sticky", `after the outage for everyone at t=${Math.round(outage.from)}–${Math.round(outage.to)} ms: ${what}`);
  }
}

/** simulate.ts's healed world: each network leg up to 10 ms, each store leg up to 5 ms. */
const HEALED_MAX_DELAY_MS = 10;
const HEALED_STORE_LATENCY_MS = 5;

/** "e2.1" → 2, "c0.3" → 0. */
function slotOf(name: string): number {
  return Number(/^[a-z](\d+)\./.exec(name)?.[1] ?? Number.NaN);
}

/** The participant a uuid of the simulation belongs to: "u12-e2.1" → "e2.1" (elector-slots.ts draws them so). */
function participantOf(uuid: string): string {
  return uuid.slice(uuid.indexOf("-") + 1);
}

/** The scenario's outages for everyone, in order; each ends when the safety phase does at the latest (every fault heals then). */
function outagesOf(scenario: Scenario): Outage[] {
  const until = (to: number): number => Math.min(to, scenario.safetyPhaseMs);
  return [
    ...(scenario.serviceOutages ?? []).map((o) => ({ from: o.at, to: until(o.at + o.forMs) })),
    ...scenario.outages.map((o) => ({ from: o.at, to: until(o.at + o.forMs) })),
    ...(scenario.restarts ?? []).map((r) => ({ from: r.at, to: until(r.at + r.downForMs) })),
  ]
    .filter((outage) => outage.from < scenario.safetyPhaseMs)
    .sort((a, b) => a.from - b.from);
}

/** Outages less than T apart merged into one: the holder's recovery from one is judged with the next. */
function merged(outages: readonly Outage[], timeoutMs: number): Outage[] {
  const result: Outage[] = [];
  for (const outage of outages) {
    const last = result.at(-1);
    if (last !== undefined && outage.from <= last.to + timeoutMs) result[result.length - 1] = { from: last.from, to: Math.max(last.to, outage.to) };
    else result.push(outage);
  }
  return result;
}
