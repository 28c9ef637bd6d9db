import { operatingAgeMs, serviceGaps } from "../../../../shared/members/member-age.js";
import { ageRulesOf } from "../../../../shared/members/membership-rules.js";
import type { MemberEventName } from "../../../../shared/sdk/membership/members-watcher.js";
import type { ReceivedList } from "./member-network.js";
import { membershipRules } from "./member-instance.js";
import type { MemberScenario, SlotKind } from "./member-scenario.js";
import type { MemberSimStats } from "./member-stats.js";
import type { RecordingMemberStore } from "./recording-member-store.js";

export type MemberInvariant = "kept-never-leaving" | "dead-detected" | "outage-no-failure" | "events-in-order" | "eventually-gone" | "service-error";

/** A run broke an invariant; the message says how to replay it. */
export class MemberSimViolation extends Error {
  override readonly name = "MemberSimViolation";

  constructor(
    readonly invariant: MemberInvariant,
    readonly scenario: MemberScenario,
    what: string,
  ) {
    super(`[${invariant}] ${what} (seed ${scenario.seed})\n${memberReplayHint(scenario)}`);
  }
}

export function memberReplayHint(scenario: MemberScenario): string {
  const env = [`HA_SIM_SEED=${scenario.seed}`, `HA_SIM_PROFILE=${scenario.profile}`, ...(scenario.plant === undefined ? [] : [`HA_SIM_PLANT=${scenario.plant}`])];
  return `replay: ${env.join(" ")} npx vitest run test/sdk/members-simulation.test.ts -t replay`;
}

/** One session of one member slot, as the world saw it. */
export interface SessionRecord {
  readonly session: string;
  readonly slot: number;
  readonly kind: SlotKind;
  joinedAt?: number;
  lostAt?: number;
  lostReason?: string;
  /** Its process was killed (no goodbye) while this was its session. */
  crashedAt?: number;
  stoppedAt?: number;
}

export interface WatcherRecord {
  readonly events: { readonly at: number; readonly event: MemberEventName; readonly member: string; readonly session: string }[];
  readonly lists: ReceivedList[];
}

const FOLLOWS: Readonly<Record<MemberEventName, readonly MemberEventName[]>> = {
  memberJoined: ["memberActive", "memberUnreachable", "memberLeaving", "memberRemoved"],
  memberActive: ["memberUnreachable", "memberLeaving", "memberRemoved"],
  memberUnreachable: ["memberActive", "memberLeaving", "memberRemoved"],
  memberLeaving: ["memberRemoved"],
  memberRemoved: [],
};

/**
 * The invariants of membership, judged from outside the system once a run is over, from
 * what the world recorded (sessions, watcher events and the listings behind them) and the
 * store's truth (the last heartbeat of each session that landed, the markers written):
 *
 * - kept-never-leaving: a session of a member that keeps heartbeating (never killed or
 *   stopped, pauses under T/2) is never reported leaving or removed, and the service never
 *   ends it (SessionHeld/SessionEnded after it joined). A session that gave itself up
 *   (lost: expired, its answers all lost for ttl) is judged until then.
 * - dead-detected: for a killed member's session, each watcher that knew it reports it
 *   unreachable (or later) on the first listing judged more than T after its last
 *   heartbeat landed, and leaving (or removed) on the first one judged more than ttl after:
 *   "within T (ttl) plus one poll". Judged only while the service operated: a listing whose
 *   ages skip a gap of the service's own (by design) is counted apart.
 * - outage-no-failure (service-outage profile): no watcher reports any failure, and no
 *   session is lost, although the functions were down for several T.
 * - events-in-order: per watcher and session, events follow the member state machine: joined
 *   first, removed at most once and last, nothing after leaving but removed.
 * - eventually-gone (after healing): every watcher reports each killed session it knew
 *   leaving or removed, and its last listing shows every kept member active.
 */
export class MemberChecker {
  readonly sessions = new Map<string, SessionRecord>();
  readonly watchers: WatcherRecord[] = [];
  readonly #ageRules;

  constructor(
    private readonly scenario: MemberScenario,
    private readonly store: RecordingMemberStore,
    private readonly stats: MemberSimStats,
  ) {
    this.#ageRules = ageRulesOf(membershipRules(scenario));
  }

  fail(invariant: MemberInvariant, what: string): never {
    throw new MemberSimViolation(invariant, this.scenario, what);
  }

  judge(): void {
    for (const [index, watcher] of this.watchers.entries()) this.#judgeOrder(index, watcher);
    if (this.scenario.profile === "service-outage") this.#judgeOutage();
    for (const record of this.sessions.values()) {
      if (record.kind === "steady") this.#judgeKept(record);
      if (record.crashedAt !== undefined) this.#judgeDetection(record);
    }
    this.#judgeEventually();
  }

  #judgeOrder(index: number, watcher: WatcherRecord): void {
    const last = new Map<string, MemberEventName>();
    for (const { at, event, session } of watcher.events) {
      const before = last.get(session);
      const allowed = before === undefined ? event === "memberJoined" : FOLLOWS[before].includes(event);
      if (!allowed) this.fail("events-in-order", `watcher ${index} told ${event} for session ${session} after ${before ?? "nothing"} (t=${at})`);
      last.set(session, event);
    }
  }

  #judgeKept(record: SessionRecord): void {
    if (record.lostReason !== undefined && record.lostReason !== "expired") {
      this.fail("kept-never-leaving", `the service ended session ${record.session} of kept member m${record.slot} (lost: ${record.lostReason}, t=${record.lostAt})`);
    }
    const until = record.lostAt ?? Infinity;
    for (const [index, watcher] of this.watchers.entries()) {
      const told = watcher.events.find((event) => event.session === record.session && event.at < until && (event.event === "memberLeaving" || event.event === "memberRemoved"));
      if (told !== undefined) this.fail("kept-never-leaving", `watcher ${index} told ${told.event} for session ${record.session} of kept member m${record.slot} at t=${told.at}`);
      for (const { list, deliveredAt } of watcher.lists) {
        if (deliveredAt >= until) break;
        const view = list.members.find((member) => member.session === record.session);
        if (view?.state === "leaving") this.fail("kept-never-leaving", `a listing (t=${deliveredAt}) showed session ${record.session} of kept member m${record.slot} leaving (ageMs ${view.ageMs})`);
      }
    }
  }

  #judgeDetection(record: SessionRecord): void {
    const write = this.store.lastWrite.get(record.session);
    if (write === undefined) return;
    const { timeoutMs, ttlMs } = this.scenario.timing;
    for (const [index, watcher] of this.watchers.entries()) {
      for (const [threshold, events, what] of [
        [timeoutMs, ["memberUnreachable", "memberLeaving", "memberRemoved"], "unreachable within T"],
        [ttlMs, ["memberLeaving", "memberRemoved"], "leaving within ttl"],
      ] as const) {
        const knewAt = watcher.lists.find((received) => received.list.members.some((member) => member.session === record.session))?.deliveredAt;
        if (knewAt === undefined) continue;
        const due = watcher.lists.find((received) => received.deliveredAt >= write.at && received.deliveredAt >= knewAt && received.judgedHaTime - write.renewedAt > threshold);
        if (due === undefined) continue;
        const rawAge = due.judgedHaTime - write.renewedAt;
        // The gaps the service had to skip, judged as the contract says from what its query read.
        if (operatingAgeMs(write.renewedAt, due.judgedHaTime, serviceGaps(due.marker, due.judgedHaTime, this.#ageRules, due.readFromHaTime)) !== rawAge) {
          this.stats.count("detectionsAfterServiceGap");
          continue;
        }
        this.stats.count("detectionsJudged");
        const told = watcher.events.some((event) => event.session === record.session && event.at <= due.deliveredAt && (events as readonly string[]).includes(event.event));
        if (!told) {
          this.fail(
            "dead-detected",
            `watcher ${index} did not report killed session ${record.session} of m${record.slot} ${what} plus one poll: its last heartbeat landed at t=${write.at}, the listing judged ${rawAge} ms later (delivered t=${due.deliveredAt}) showed ${JSON.stringify(due.list.members.find((member) => member.session === record.session) ?? "nothing")}`,
          );
        }
      }
    }
  }

  #judgeOutage(): void {
    for (const [index, watcher] of this.watchers.entries()) {
      const failure = watcher.events.find((event) => event.event !== "memberJoined" && event.event !== "memberActive");
      if (failure !== undefined) this.fail("outage-no-failure", `watcher ${index} told ${failure.event} for ${failure.member} (${failure.session}) at t=${failure.at} although only the service was down`);
    }
    const lost = [...this.sessions.values()].find((record) => record.lostAt !== undefined);
    if (lost !== undefined) this.fail("outage-no-failure", `session ${lost.session} of m${lost.slot} was lost (${lost.lostReason}) at t=${lost.lostAt} although only the service was down`);
  }

  #judgeEventually(): void {
    for (const [index, watcher] of this.watchers.entries()) {
      for (const record of this.sessions.values()) {
        if (record.crashedAt === undefined || this.store.lastWrite.get(record.session) === undefined) continue;
        if (!watcher.lists.some((received) => received.list.members.some((member) => member.session === record.session))) continue;
        if (!watcher.events.some((event) => event.session === record.session && (event.event === "memberLeaving" || event.event === "memberRemoved"))) {
          this.fail("eventually-gone", `after every fault healed, watcher ${index} never reported killed session ${record.session} of m${record.slot} leaving or removed`);
        }
      }
      const last = watcher.lists.at(-1);
      for (const record of this.sessions.values()) {
        if (record.kind !== "steady" || record.lostAt !== undefined || record.joinedAt === undefined) continue;
        const view = last?.list.members.find((member) => member.session === record.session);
        if (view?.state !== "active") this.fail("eventually-gone", `after every fault healed, watcher ${index}'s last listing shows kept member m${record.slot}'s session ${record.session} as ${view?.state ?? "absent"}`);
      }
    }
  }
}
