import { debuglog } from "node:util";
import type { GroupList, LeaveQuery, MemberHeartbeatBody, MemberHeartbeatResult, MemberLeaveResult, MemberList, MembersTiming } from "../contract/members.js";
import { systemMonotonicClock, type Clock, type MonotonicClock } from "../service/clock.js";
import type { WriteOutcome } from "../service/store-call.js";
import { RequestBudget, type RequestArrival } from "../service/request-budget.js";
import type { AdmissionGate, AdmissionPriority } from "../service/admission.js";
import { serviceGaps, type AgeRules } from "./member-age.js";
import { decideMember, type MemberAction } from "./member-decision.js";
import { noMemberMetrics, type MemberMetrics } from "./member-metrics.js";
import type { MemberStore } from "./member-store.js";
import type { MemberTokenSigner } from "./member-token.js";
import { answerAbout, toGroupSummary, toMemberAnswer, toMemberView, type ViewedMember } from "./member-view.js";
import type { MemberRecord, MemberRow, ServiceGap } from "./member.js";
import { ageRulesOf, type MembershipRules } from "./membership-rules.js";

/** A request as the service takes it: the body or query, with its route's group and member. */
type ForMember<T> = T & { readonly group: string; readonly member: string };

export interface MemberServiceDeps {
  readonly store: MemberStore;
  /** ha_time: the wall clock stored times are compared with. */
  readonly clock: Clock;
  /** Measures request budgets; defaults to performance.now(). */
  readonly monotonic?: MonotonicClock;
  readonly rules: MembershipRules;
  readonly tokens: MemberTokenSigner;
  /** The time budget of all store calls made for one request, from its arrival. */
  readonly storeTimeoutMs: number;
  /** The lease service's gate (LeaseServiceDeps.admission): both share one bound on the store. */
  readonly admission?: AdmissionGate;
  /** Where a heartbeat that leaves the fast path is logged; by default NODE_DEBUG=ha-module. */
  readonly debug?: (message: string) => void;
  /** Where stored transitions (joined, rejoined, left) are counted; nothing by default. */
  readonly metrics?: MemberMetrics;
}

const defaultDebug = debuglog("ha-module");

/**
 * Membership's REST operations over one MemberStore (docs/membership.md), each with the fewest store
 * calls it allows: one conditional merge for a steady-state heartbeat with its token, one
 * partition query (the row and the group's sweep marker) and one write otherwise, one
 * partition query for a listing. Every method takes the request's arrival (monotonic ms);
 * its store calls must fit in the budget from there, as for leases.
 */
export class MemberService {
  readonly #monotonic: MonotonicClock;
  readonly #debug: (message: string) => void;
  readonly #ageRules: AgeRules;
  readonly #metrics: MemberMetrics;

  constructor(private readonly deps: MemberServiceDeps) {
    this.#monotonic = deps.monotonic ?? systemMonotonicClock;
    this.#debug = deps.debug ?? defaultDebug;
    this.#ageRules = ageRulesOf(deps.rules);
    this.#metrics = deps.metrics ?? noMemberMetrics;
  }

  get timing(): MembersTiming {
    const { intervalMs, timeoutMs, ttlMs } = this.deps.rules;
    return { intervalMs, timeoutMs, ttlMs };
  }

  /** A steady-state heartbeat (with its token) goes first under load, as a lease renewal does. */
  heartbeat(input: ForMember<MemberHeartbeatBody>, arrival?: RequestArrival): Promise<MemberHeartbeatResult> {
    return this.#admitted(input.token === undefined ? "other" : "holder", () => this.#heartbeat(input, arrival));
  }

  leave(input: ForMember<LeaveQuery>, arrival?: RequestArrival): Promise<MemberLeaveResult> {
    return this.#admitted("other", () => this.#leave(input, arrival));
  }

  list(group: string, arrival?: RequestArrival): Promise<MemberList> {
    return this.#admitted("other", () => this.#list(group, arrival));
  }

  listGroups(arrival?: RequestArrival): Promise<GroupList> {
    return this.#admitted("other", () => this.#listGroups(arrival));
  }

  #admitted<T>(priority: AdmissionPriority, work: () => Promise<T>): Promise<T> {
    return this.deps.admission === undefined ? work() : this.deps.admission.run(priority, work);
  }

  async #heartbeat(input: ForMember<MemberHeartbeatBody>, arrival?: RequestArrival): Promise<MemberHeartbeatResult> {
    const budget = this.#budget(arrival);
    // The latest moment this request can have arrived, on ha_time: see #afterLostRace.
    const arrivedHaTime = this.deps.clock.now();
    const fast = await this.#renewWithToken(input, budget);
    if (fast !== undefined) return fast;

    // 1. read the row and the marker (one query); 2. decide on ha_time taken after it; 3. one conditional write.
    const { row, marker } = await this.deps.store.read(input.group, input.member, budget.forStoreCall("read"));
    const haTime = this.deps.clock.now();
    const request = { op: "heartbeat", group: input.group, member: input.member, session: input.session, address: input.address } as const;
    const action = decideMember(row, marker, request, haTime, this.#ageRules);
    switch (action.kind) {
      case "reject":
        return { outcome: action.reason, answer: answerAbout(input.group, row, marker, haTime, this.#ageRules, this.timing) };
      case "create":
      case "renew":
      case "replace": {
        const outcome = await this.#write(action, row, budget);
        if (!outcome.ok) return this.#afterLostRace(input, arrivedHaTime, budget);
        if (action.kind !== "renew") this.#metrics.transition(action.kind === "create" ? "joined" : "rejoined");
        return this.#accepted(action.next, outcome.etag, haTime, serviceGaps(marker, haTime, this.#ageRules));
      }
      default:
        throw new Error(`decideMember() answered ${action.kind} to a heartbeat`);
    }
  }

  /** Goodbye: the caller's session turns leaving at once; the sweeper removes it after the retention. */
  async #leave(input: ForMember<LeaveQuery>, arrival?: RequestArrival): Promise<MemberLeaveResult> {
    const budget = this.#budget(arrival);
    const { row, marker } = await this.deps.store.read(input.group, input.member, budget.forStoreCall("read"));
    const haTime = this.deps.clock.now();
    const action = decideMember(row, marker, { op: "leave", group: input.group, member: input.member, session: input.session }, haTime, this.#ageRules);
    switch (action.kind) {
      case "none":
        return { outcome: "left", answer: answerAbout(input.group, row, marker, haTime, this.#ageRules, this.timing) };
      case "reject":
        return { outcome: "held", answer: answerAbout(input.group, row, marker, haTime, this.#ageRules, this.timing) };
      case "leave": {
        const outcome = await this.#write(action, row, budget);
        if (!outcome.ok) {
          const now = await this.deps.store.read(input.group, input.member, budget.forStoreCall("read"));
          return { outcome: "conflict", answer: answerAbout(input.group, now.row, now.marker, this.deps.clock.now(), this.#ageRules, this.timing) };
        }
        this.#metrics.transition("left");
        return { outcome: "left", answer: answerAbout(input.group, action.next, marker, haTime, this.#ageRules, this.timing) };
      }
      default:
        throw new Error(`decideMember() answered ${action.kind} to a goodbye`);
    }
  }

  /**
   * The group's members: one partition query that returns every row and the group's
   * marker, all judged at one ha_time taken after the whole query (every page) was read,
   * so a listing never mixes two moments or two markers.
   */
  async #list(group: string, arrival?: RequestArrival): Promise<MemberList> {
    const readFrom = this.deps.clock.now();
    const snapshot = await this.deps.store.listGroup(group, this.#budget(arrival).forStoreCall("read"));
    const haTime = this.deps.clock.now();
    const gaps = serviceGaps(snapshot.marker, haTime, this.#ageRules, readFrom);
    const members = [...snapshot.rows]
      .sort((a, b) => compare(a.member, b.member))
      .map((row) => toMemberView(row, haTime, gaps, this.#ageRules));
    return { group, members, ...this.timing };
  }

  /** Every group with members, counted by state (a cross-partition read: the dashboard's, not a hot path). */
  async #listGroups(arrival?: RequestArrival): Promise<GroupList> {
    const readFrom = this.deps.clock.now();
    const snapshots = await this.deps.store.listAll(this.#budget(arrival).forStoreCall("read"));
    const haTime = this.deps.clock.now();
    const groups = snapshots
      .filter((snapshot) => snapshot.rows.length > 0)
      .sort((a, b) => compare(a.group, b.group))
      .map((snapshot) => toGroupSummary(snapshot, haTime, this.#ageRules, readFrom));
    return { groups };
  }

  /**
   * The fast path: one conditional merge, no read. A successful If-Match proves the row is
   * unchanged since the token was issued: same session, no goodbye, not replaced, and the
   * heartbeat count the token names. Only a recent token is used (renewed within T on the
   * issuing host's clock): an older row may be leaving by age, which only the slow path,
   * with the group's marker, can judge. Undefined means "take the slow path".
   */
  async #renewWithToken(input: ForMember<MemberHeartbeatBody>, budget: RequestBudget): Promise<MemberHeartbeatResult | undefined> {
    if (input.token === undefined) return undefined;
    const claims = this.deps.tokens.verify(input.token, input);
    if (claims === undefined) {
      this.#debug(`${input.group}/${input.member}: the token of session ${input.session} did not verify (another secret, or not this caller's): slow path.`);
      return undefined;
    }
    const haTime = this.deps.clock.now();
    if (haTime - claims.renewedAt > this.deps.rules.timeoutMs) {
      this.#debug(`${input.group}/${input.member}: the token of session ${input.session} is older than T: slow path.`);
      return undefined;
    }
    const options = budget.forStoreCall("write");
    const heartbeats = claims.heartbeats + 1;
    const renewal = input.address === undefined ? { renewedAt: haTime, heartbeats } : { renewedAt: haTime, heartbeats, address: input.address };
    const outcome = await this.deps.store.renew(input.group, input.member, renewal, claims.etag, options);
    if (!outcome.ok) {
      this.#debug(`${input.group}/${input.member}: the fast-path heartbeat of session ${input.session} found the row ${outcome.reason}: slow path.`);
      return undefined;
    }
    const address = input.address === undefined ? claims.address : input.address;
    const row = { group: input.group, member: input.member, session: input.session, address, joinedAt: claims.joinedAt, renewedAt: haTime, heartbeats, leftAt: null, previous: claims.previous };
    return this.#accepted(row, outcome.etag, haTime, []);
  }

  /**
   * A lost write is never retried. A heartbeat that lost only to another heartbeat of the
   * same session (a retry, a duplicate) is answered as accepted with the winner's state,
   * as for leases, and only when that is safe for the caller: the winner was written no
   * earlier than this request arrived, so a deadline the caller measures from its own
   * sentAt cannot outlive the row's. Otherwise 409: SessionEnded when the session's end
   * won the race, Conflict when anything else did.
   */
  async #afterLostRace(input: ForMember<MemberHeartbeatBody>, arrivedHaTime: number, budget: RequestBudget): Promise<MemberHeartbeatResult> {
    const { row, marker } = await this.deps.store.read(input.group, input.member, budget.forStoreCall("read"));
    const haTime = this.deps.clock.now();
    const answer = answerAbout(input.group, row, marker, haTime, this.#ageRules, this.timing);
    const decided = decideMember(row, marker, { op: "heartbeat", group: input.group, member: input.member, session: input.session, address: undefined }, haTime, this.#ageRules);
    if (decided.kind === "reject" && decided.reason === "ended") return { outcome: "ended", answer };
    if (row !== undefined && row.session === input.session && decided.kind === "renew" && row.renewedAt >= arrivedHaTime) {
      return this.#accepted(row, row.etag, haTime, serviceGaps(marker, haTime, this.#ageRules));
    }
    return { outcome: "conflict", answer };
  }

  /** Checks the budget right before the write: a request past it is never written. */
  #write(action: Extract<MemberAction, { next: MemberRow }>, row: MemberRecord | undefined, budget: RequestBudget): Promise<WriteOutcome> {
    const options = budget.forStoreCall("write");
    if (row === undefined) return this.deps.store.create(action.next, options);
    return this.deps.store.replace(action.next, row.etag, options);
  }

  #accepted(row: ViewedMember & { group: string }, etag: string, haTime: number, gaps: readonly ServiceGap[]): MemberHeartbeatResult {
    const token = this.deps.tokens.issue({
      group: row.group,
      member: row.member,
      session: row.session,
      heartbeats: row.heartbeats,
      joinedAt: row.joinedAt,
      renewedAt: row.renewedAt,
      address: row.address,
      previous: row.previous,
      etag,
    });
    return { outcome: "accepted", answer: toMemberAnswer(row.group, toMemberView(row, haTime, gaps, this.#ageRules), this.timing), token };
  }

  #budget(arrival: RequestArrival | undefined): RequestBudget {
    return new RequestBudget(this.#monotonic, arrival?.arrivedAt ?? this.#monotonic.now(), this.deps.storeTimeoutMs);
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
