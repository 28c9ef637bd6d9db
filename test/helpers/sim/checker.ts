import type { LeaseRecord } from "../../../shared/lease/lease.js";
import type { DemotionReason, PrimaryElector } from "../../../shared/sdk/election/primary-elector.js";
import type { SimProcess } from "./process.js";
import type { AppliedWrite } from "./fenced-resource.js";
import type { RenewalAnswer, SimCall } from "./network.js";
import type { RecordingStore, StoreWrite } from "./recording-store.js";
import type { RenewalLog } from "./renewal-log.js";
import { DEFAULT_INVARIANTS, type Invariant, type Scenario } from "./scenario.js";
import type { SimStats } from "./stats.js";
import type { SimWorld } from "./world.js";

/** One elector the world started, with the process it runs in. */
export interface Participant {
  /** "e<slot>.<n>": the n-th elector started in that slot. */
  readonly name: string;
  readonly elector: PrimaryElector;
  readonly process: SimProcess;
  /** The uuid the world last saw it use. */
  lastUuid: string;
  /** Stopped or crashed: its uuid's life ended then. */
  gone: boolean;
  /** When the world started it (simulated time). */
  readonly startedAt: number;
  /** The calls of its transport (shared with the other roles of its participant). */
  readonly calls: readonly SimCall[];
}

/** What the handlers and the world record; the checker alone judges it. */
export type SimLogEntry =
  | { readonly kind: "elected"; readonly at: number; readonly who: string; readonly uuid: string; readonly epoch: number }
  | { readonly kind: "demoted"; readonly at: number; readonly who: string; readonly uuid: string; readonly epoch: number; readonly reason: DemotionReason }
  | { readonly kind: "riding-through"; readonly at: number; readonly who: string; readonly uuid: string; readonly epoch: number }
  | { readonly kind: "uuid-ended"; readonly at: number; readonly who: string; readonly uuid: string; readonly how: "new incarnation" | "stopped" | "crashed" };

export type ViolationKind = Invariant | "service-error";

/** A run broke an invariant. The message says how to replay it exactly. */
export class SimViolation extends Error {
  override readonly name = "SimViolation";

  constructor(
    readonly invariant: ViolationKind,
    readonly at: number,
    readonly scenario: Scenario,
    what: string,
    context: string,
  ) {
    super(`[${invariant}] ${what} (t=${Math.round(at)} ms, seed ${scenario.seed})\n${replayHint(scenario)}\n${context}`);
  }
}

/** The command that replays a scenario drawn from its seed, and the scenario itself. */
export function replayHint(scenario: Scenario): string {
  const env = [
    `HA_SIM_SEED=${scenario.seed}`,
    `HA_SIM_PROFILE=${scenario.profile}`,
    ...(scenario.plant === undefined ? [] : [`HA_SIM_PLANT=${scenario.plant}`]),
    ...(scenario.invariants === undefined ? [] : [`HA_SIM_INVARIANTS=${scenario.invariants.join(",")}`]),
  ];
  return `replay: ${env.join(" ")} npx vitest run test/sdk/elector-simulation.test.ts -t replay\nscenario (simulate() replays it): ${JSON.stringify(scenario)}`;
}

/**
 * The invariants, judged from outside the system after every simulated event: handlers
 * only record into the log, and the checker reads the log, every elector's isPrimary(),
 * and the store's real contents. Whatever it finds is thrown out of the world's loop, so
 * nothing in the system under test can swallow it.
 *
 * - epochs-increase: every election has a higher epoch than every election before it.
 * - one-primary: at no instant do two electors report isPrimary(). A crashed or paused
 *   elector counts as long as its clock says its lease lasts: stricter, never looser. With
 *   ride-through (scenario.rideThroughMs) the promise is the weaker one of
 *   docs/protocol.md#ride-through: at most one of them is before its own deadline
 *   (exclusiveTimeLeftMs() > 0); the others ride through, judged by ride-through.
 * - ride-through: an elector riding through (primary past its deadline) has had no answer
 *   to its renewals since the ride began that refused it: the first one ends the ride.
 * - store-agrees: an elector that reports isPrimary() before its deadline is the store's
 *   holder, at its epoch (or held the term of an entry deleted behind the service:
 *   one-primary still judges it).
 * - fenced-writes: the fenced resource the primaries write to (scenario.fencedWrites) never
 *   applies a write of a lower epoch after one of a higher epoch.
 * - no-phantom: a lease nobody stands behind is never written. No write makes a uuid the
 *   holder (create, renew, take over) once that uuid's term ended in the store (taken
 *   over, released, retired) and no running elector uses it, nor later than
 *   `phantomWindowMs` after its elector left it behind (demotion, stop, crash): the
 *   longest a request sent before then can still be on its way and be written. And no
 *   write renews a revoked lease: its holder's heartbeats must be refused.
 * - ended-stays-ended (docs/protocol.md#the-rule-server-side to the letter): a uuid whose term ended in the store never
 *   holds it again, whoever uses it.
 * - liveness (simulate.ts): once faults heal, one primary within a bound, and it stays.
 * - renewal-copies (docs/protocol.md#timing-rules): a primary whose lease runs out had sent
 *   its renewal at least four times since its last accepted heartbeat (after I, then F, 2F
 *   and 4F later), as a lone elector does, whichever participant it is part of. Judged
 *   where that is the promise: its process was never paused and every answer it got came
 *   back within a fifth of the floor F = (T − 2I)/8 (less the batch's gather window), none
 *   failed, so its budget is the floor (the loss profile; the other profiles' networks are
 *   slower than that).
 */
export class Checker {
  readonly log: SimLogEntry[] = [];
  readonly participants: Participant[] = [];
  readonly #enabled: ReadonlySet<ViolationKind>;
  #logSeen = 0;
  #writesSeen = 0;
  #lastElectedEpoch = 0;
  readonly #endedAtElector = new Map<string, number>();
  /** The uuids whose term ended in the store, with when: a rollback forgets the endings after its copy. */
  readonly #endedInStore = new Map<string, number>();
  #rollbacksSeen = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly world: SimWorld,
    private readonly store: RecordingStore,
    private readonly utype: string,
    readonly phantomWindowMs: number,
    readonly stats: SimStats,
    private readonly renewals: RenewalLog,
    /** The answers to renewals as they reached each elector (network.ts). */
    private readonly renewalAnswers: readonly RenewalAnswer[] = [],
    /** The writes the fenced resource applied, when this role's primaries write one. */
    private readonly fencedWrites: readonly AppliedWrite[] = [],
  ) {
    this.#enabled = new Set<ViolationKind>([...(scenario.invariants ?? DEFAULT_INVARIANTS), "service-error"]);
  }

  #fencedSeen = 0;
  #highestFenced: AppliedWrite | undefined;

  /** Registers an elector; its handlers record events and nothing else. */
  watch(participant: Participant): void {
    this.participants.push(participant);
    const { elector, name } = participant;
    elector.on("elected", ({ uuid, epoch }) => void this.log.push({ kind: "elected", at: this.world.now, who: name, uuid, epoch }));
    elector.on("demoted", ({ uuid, epoch, reason }) => void this.log.push({ kind: "demoted", at: this.world.now, who: name, uuid, epoch, reason }));
    elector.on("ridingThrough", ({ uuid, epoch }) => void this.log.push({ kind: "riding-through", at: this.world.now, who: name, uuid, epoch }));
  }

  /** The world stopped or killed it: its current uuid's life ends now. */
  retire(participant: Participant, how: "stopped" | "crashed"): void {
    this.#observeUuid(participant);
    participant.gone = true;
    this.log.push({ kind: "uuid-ended", at: this.world.now, who: participant.name, uuid: participant.lastUuid, how });
  }

  /** Judges everything that happened since the last call. Throws SimViolation. */
  check(): void {
    for (const participant of this.participants) if (!participant.gone) this.#observeUuid(participant);
    for (; this.#logSeen < this.log.length; this.#logSeen += 1) this.#judgeLogEntry(this.log[this.#logSeen]!);
    // The store holds every role's entry; each checker judges its own role's writes.
    for (; this.#writesSeen < this.store.writes.length; this.#writesSeen += 1) {
      this.#forgetRolledBack(this.#writesSeen);
      const write = this.store.writes[this.#writesSeen]!;
      if (write.after.utype === this.utype) this.#judgeWrite(write);
    }
    this.#forgetRolledBack(this.store.writes.length);
    for (; this.#fencedSeen < this.fencedWrites.length; this.#fencedSeen += 1) this.#judgeFencedWrite(this.fencedWrites[this.#fencedSeen]!);
    // The holder of a term a rollback erased believes on until an answer refuses it (at most
    // its next renewal): judged here, then left out of one-primary and store-agrees, as the
    // documented cost of a store that forgets (docs/design/epochs.md). The fenced resource
    // and epochs-increase judge what that overlap may do.
    const erased = this.primaries().filter((participant) => this.#erased(participant));
    for (const holder of erased) this.#judgeErased(holder);
    const believers = this.primaries().filter((participant) => !erased.includes(participant));
    // With ride-through, those past their deadline may believe beside one that is not (docs/protocol.md#ride-through).
    const primaries = (this.scenario.rideThroughMs ?? 0) > 0 ? believers.filter((p) => p.elector.exclusiveTimeLeftMs() > 0) : believers;
    if (primaries.length > 1) {
      this.fail("one-primary", `electors ${primaries.map((p) => p.name).join(" and ")} all report isPrimary()${primaries === believers ? "" : ", each before its own deadline"}`);
    }
    for (const rider of believers.filter((p) => !primaries.includes(p))) this.#judgeRide(rider);
    for (const participant of primaries) {
      const entry = this.store.current(this.utype);
      const { uuid, epoch } = participant.elector;
      // A holder whose entry was deleted behind the service believes on until its deadline
      // (its next renewal is refused): one-primary judges that, not this.
      const deleted = this.store.deletedTerms.some((term) => term.uuid === uuid && term.epoch === epoch);
      if (!deleted && (entry?.uuid !== uuid || entry.epoch !== epoch)) {
        this.fail("store-agrees", `${participant.name} reports isPrimary() as ${uuid}@${epoch}, but the store holds ${show(entry)}`);
      }
    }
  }

  /** The participant believes in a term that a rollback erased from the store. */
  #erased(participant: Participant): boolean {
    const { uuid, epoch } = participant.elector;
    return this.store.erasedTerms.some((term) => term.utype === this.utype && term.uuid === uuid && term.epoch === epoch);
  }

  /** An erased term's holder must stop at the first answer to a renewal after the store's return: a refusal. */
  #judgeErased(holder: Participant): void {
    const { uuid, epoch } = holder.elector;
    const erasedAt = this.store.erasedTerms.find((term) => term.utype === this.utype && term.uuid === uuid && term.epoch === epoch)!.at;
    const refusal = this.renewalAnswers.find((answer) => answer.process === holder.process && answer.utype === this.utype && answer.uuid === uuid && answer.refusal && answer.at >= erasedAt);
    if (refusal !== undefined) {
      this.fail("one-primary", `${holder.name} (${uuid}@${epoch}, a term the store's rollback at t=${Math.round(erasedAt)} ms erased) still reports isPrimary() ${Math.round(this.world.now - refusal.at)} ms after a renewal was refused`);
    }
  }

  /** The rollbacks that came before write `index`: the terms that ended after their copies ended nowhere now. */
  #forgetRolledBack(index: number): void {
    for (; this.#rollbacksSeen < this.store.rollbacks.length && this.store.rollbacks[this.#rollbacksSeen]!.afterWrites <= index; this.#rollbacksSeen += 1) {
      const { to } = this.store.rollbacks[this.#rollbacksSeen]!;
      for (const [uuid, at] of this.#endedInStore) if (at > to) this.#endedInStore.delete(uuid);
    }
  }

  primaries(): Participant[] {
    return this.participants.filter((participant) => participant.elector.isPrimary());
  }

  /** A rider (primary past its deadline) must not have been refused since its ride began. */
  #judgeRide(rider: Participant): void {
    const { uuid, epoch } = rider.elector;
    const ride = this.log.findLast((entry) => entry.kind === "riding-through" && entry.who === rider.name && entry.uuid === uuid && entry.epoch === epoch);
    if (ride === undefined) return;
    const refusal = this.renewalAnswers.find((answer) => answer.process === rider.process && answer.utype === this.utype && answer.uuid === uuid && answer.refusal && answer.at >= ride.at);
    if (refusal !== undefined) {
      this.fail("ride-through", `${rider.name} (${uuid}@${epoch}) still rides through ${Math.round(this.world.now - refusal.at)} ms after a renewal was refused: the first answer ends a ride-through`);
    }
  }

  /** The fenced resource applied `write`: never a lower epoch after a higher one. */
  #judgeFencedWrite(write: AppliedWrite): void {
    this.stats.count("fencedWritesApplied");
    const highest = this.#highestFenced;
    if (highest !== undefined && write.epoch < highest.epoch) {
      this.fail(
        "fenced-writes",
        `the fenced resource applied ${write.who}'s write of epoch ${write.epoch} after ${highest.who}'s of epoch ${highest.epoch} (at t=${Math.round(highest.at)} ms)`,
      );
    }
    if (highest === undefined || write.epoch >= highest.epoch) this.#highestFenced = write;
  }

  fail(invariant: ViolationKind, what: string): void {
    if (!this.#enabled.has(invariant)) return;
    throw new SimViolation(invariant, this.world.now, this.scenario, what, this.#context());
  }

  /** A running elector's current uuid: someone stands behind a lease it holds. */
  #inUse(uuid: string): boolean {
    return this.participants.some((participant) => !participant.gone && participant.elector.uuid === uuid);
  }

  #observeUuid(participant: Participant): void {
    const uuid = participant.elector.uuid;
    if (uuid === participant.lastUuid) return;
    this.log.push({ kind: "uuid-ended", at: this.world.now, who: participant.name, uuid: participant.lastUuid, how: "new incarnation" });
    participant.lastUuid = uuid;
  }

  #judgeLogEntry(entry: SimLogEntry): void {
    switch (entry.kind) {
      case "elected":
        this.stats.count("elections");
        if (entry.epoch <= this.#lastElectedEpoch) {
          this.fail("epochs-increase", `${entry.who} was elected with epoch ${entry.epoch} after an election with epoch ${this.#lastElectedEpoch}`);
        }
        this.#lastElectedEpoch = Math.max(this.#lastElectedEpoch, entry.epoch);
        break;
      case "demoted":
        this.stats.count("demotions");
        if (entry.reason === "lease-expired") this.#judgeExpiry(entry);
        break;
      case "riding-through":
        this.stats.count("ridesThrough");
        break;
      case "uuid-ended":
        if (!this.#endedAtElector.has(entry.uuid)) this.#endedAtElector.set(entry.uuid, entry.at);
        break;
    }
  }

  /** renewal-copies: a lease that ran out while its elector ran and its service answered fast had four tries. */
  #judgeExpiry(entry: SimLogEntry & { kind: "demoted" }): void {
    const participant = this.participants.find((candidate) => candidate.name === entry.who);
    if (participant === undefined || participant.process.pausedOnce || !this.renewals.steady(participant.process)) return;
    this.stats.count("expiriesJudged");
    const copies = this.renewals.copiesSinceAccepted(entry.uuid);
    if (copies < 4) {
      this.fail(
        "renewal-copies",
        `${entry.who} lost its lease (${entry.uuid}@${entry.epoch}) after ${copies} tries of its renewal; with every answer within ${Math.round(this.renewals.fastMs)} ms a lone elector makes four (I, then F, 2F and 4F later) before its deadline`,
      );
    }
  }

  #judgeWrite(write: StoreWrite): void {
    const { before, after } = write;
    this.stats.count("storeWrites");
    const holder = after.uuid;
    const makesHolder =
      holder !== "" &&
      (before === undefined || before.uuid !== holder || before.renewedAt !== after.renewedAt || before.epoch !== after.epoch);
    if (makesHolder) {
      if (before !== undefined && before.uuid !== holder) this.stats.count("takeovers");
      if (this.#endedInStore.has(holder)) {
        const what = `a ${write.method} made ${holder}@${after.epoch} the holder after that uuid's term had ended in the store`;
        if (!this.#inUse(holder)) this.fail("no-phantom", `${what}, and no running elector uses it`);
        this.fail("ended-stays-ended", what);
        // Judged only when ended-stays-ended is left out (HA_SIM_INVARIANTS): a second term
        // with an elector behind it is then judged like any other term, and ends again
        // when it is taken over or released.
        this.stats.count("endedUuidsRestarted");
        this.#endedInStore.delete(holder);
      }
      const endedAt = this.#endedAtElector.get(holder);
      if (endedAt !== undefined && write.at - endedAt > this.phantomWindowMs) {
        this.fail(
          "no-phantom",
          `a ${write.method} made ${holder}@${after.epoch} the holder ${Math.round(write.at - endedAt)} ms after its elector left that uuid (a request can be on its way for at most ${this.phantomWindowMs} ms)`,
        );
      }
    }
    if (before?.revoked === true && after.revoked && before.uuid === after.uuid && before.renewedAt !== after.renewedAt) {
      this.fail("no-phantom", `a ${write.method} renewed ${after.uuid}@${after.epoch}, whose lease was revoked: its holder must be refused`);
    }
    if (before !== undefined && before.uuid !== "" && before.uuid !== after.uuid && !this.#endedInStore.has(before.uuid)) this.#endedInStore.set(before.uuid, write.at);
    for (const uuid of after.endedUuids) if (!this.#endedInStore.has(uuid)) this.#endedInStore.set(uuid, write.at);
  }

  #context(): string {
    const electors = this.participants.map((participant) => {
      const { elector, process } = participant;
      const state = participant.gone ? (process.killed ? "crashed" : "stopped") : process.paused ? "paused" : "running";
      return `  ${participant.name} ${state} uuid=${elector.uuid} isPrimary=${elector.isPrimary()} epoch=${elector.epoch ?? "-"} leaseTimeLeft=${Math.round(elector.leaseTimeLeftMs())}ms`;
    });
    const recent = this.log.slice(-8).map((entry) => `  ${JSON.stringify(entry)}`);
    const writes = this.store.writes.filter((write) => write.after.utype === this.utype).slice(-4).map((write) => `  t=${write.at} ${write.method} ${show(write.before)} → ${show(write.after)}`);
    return ["electors:", ...electors, "last events:", ...recent, "last store writes:", ...writes].join("\n");
  }
}

function show(entry: LeaseRecord | undefined): string {
  if (entry === undefined) return "no entry";
  const holder = entry.uuid === "" ? "(released)" : entry.uuid;
  return `${holder}@${entry.epoch} renewedAt=${entry.renewedAt}${entry.revoked ? " revoked" : ""}`;
}
