import type { MemberList, MembersTiming, MemberState, MemberView } from "../../contract/members.js";
import type { TimerHandle } from "../loop/elector-clock.js";
import { Evented } from "../loop/listeners.js";
import { LoopSetup, type LoopOptions } from "../loop/loop-setup.js";
import { MEMBERS_TRANSPORT, type MembersTransport } from "../transport/members-transport.js";
import { checkId, checkOptionalFunction, checkOptionsObject } from "../loop/option-checks.js";
import { planFrom } from "../transport/cadence.js";

/** One state change of one session, as a watcher saw it. `removed`: the sweeper deleted its row. */
export interface MemberEvent {
  /** The group. */
  readonly group: string;
  /** The member's stable name. */
  readonly member: string;
  /** The session whose state changed. */
  readonly session: string;
  /** Where that session can be reached, or null. */
  readonly address: string | null;
  /** Its new state, or `removed`. */
  readonly state: MemberState | "removed";
  /** ISO-8601 UTC: when this watcher saw it. */
  readonly at: string;
}

/** The events of a MembersWatcher: one per state of the member state machine (docs/membership.md#the-states), each with the MemberEvent. */
export interface MembersWatcherEvents {
  /** A new session's first heartbeat was accepted. */
  memberJoined: MemberEvent;
  /** A session has heartbeated twice or more, or heartbeats again after being unreachable. */
  memberActive: MemberEvent;
  /** A session's last heartbeat is older than T. */
  memberUnreachable: MemberEvent;
  /** A session said goodbye, or its last heartbeat is older than ttl; it never comes back. */
  memberLeaving: MemberEvent;
  /** The sweeper deleted a session's row, or a new session of the member replaced it. */
  memberRemoved: MemberEvent;
  /** Non-fatal: a failed poll. The watcher keeps polling. */
  error: Error;
}

/** The name of a member event: memberJoined, memberActive, memberUnreachable, memberLeaving or memberRemoved. */
export type MemberEventName = Exclude<keyof MembersWatcherEvents, "error">;

/** What a MembersWatcher takes: the group, and how it reaches the service (LoopOptions). */
export interface MembersWatcherOptions extends LoopOptions<MembersTransport> {
  /** The group (cluster) to watch. */
  readonly group: string;
  /** Uniform in [0, 1), for the poll jitter; defaults to Math.random. */
  readonly random?: () => number;
  /** Wall-clock ms for the events' `at`; defaults to Date.now. */
  readonly wallClock?: () => number;
}

/** Polls are I·(1 ± JITTER/2) apart, so that watchers started together do not poll together. */
const JITTER = 0.2;

/** What the watcher last told about a member: its session, and the state it reported with that session's heartbeat count then. */
interface Known {
  readonly session: string;
  readonly address: string | null;
  readonly state: MemberState;
  readonly heartbeats: number;
}

const EVENT_OF: Readonly<Record<MemberState, MemberEventName>> = {
  joining: "memberJoined",
  active: "memberActive",
  unreachable: "memberUnreachable",
  leaving: "memberLeaving",
};

/**
 * Watches one group (docs/membership.md): one list call per poll, about every I, and an event for
 * every state change of the member state machine (docs/membership.md#the-states): memberJoined, memberActive, memberUnreachable,
 * memberLeaving, memberRemoved.
 *
 * Guarantees:
 * - States are the service's, judged on its clock from ages that skip its own outages.
 *   The watcher never ages anything itself, so a pause of its own process (GC, SIGSTOP)
 *   produces no false `memberUnreachable`: its next poll shows what is true now.
 * - Per session, events follow the state machine: joined, then active; unreachable, and
 *   back to active only on a heartbeat (its count grew); leaving, final; removed, once. A failure the watcher polled past is still
 *   told: a session that went leaving by age without being seen unreachable gets
 *   memberUnreachable first; a session replaced by a new one gets its failure
 *   (unreachable, or leaving when it had said goodbye or gone leaving) and memberRemoved
 *   before the new session's memberJoined.
 * Not guaranteed: that every state is seen. A session can join and leave between polls.
 */
export class MembersWatcher extends Evented<MembersWatcherEvents> {
  /** The group it watches. */
  readonly group: string;
  /** The transport, clock, first retry delay, abort signal and participant part, as every SDK loop has them. */
  readonly #setup: LoopSetup<MembersTransport>;
  readonly #random: () => number;
  readonly #wallClock: () => number;
  readonly #known = new Map<string, Known>();
  #members: readonly MemberView[] = [];
  #timing: MembersTiming | undefined;
  #lifecycle: "idle" | "running" | "stopped" = "idle";
  #timer: TimerHandle | undefined;
  #inflight: AbortController | undefined;
  #poll: Promise<void> | undefined;
  /** When the next poll was planned, before the participant's grid moved it (see #nextDelay). */
  #plannedAt: number | undefined;

  constructor(options: MembersWatcherOptions) {
    super();
    checkOptionsObject("the MembersWatcher options", options, '{ group: "cluster", endpoint: "http://127.0.0.1:7071/api" }');
    this.group = checkId("group", options.group);
    this.#setup = new LoopSetup(options, MEMBERS_TRANSPORT);
    this.#random = checkOptionalFunction("random", options.random) ?? Math.random;
    this.#wallClock = checkOptionalFunction("wallClock", options.wallClock) ?? Date.now;
  }


  /** The members of the last successful poll, as the service judged them. */
  members(): readonly MemberView[] {
    return this.#members;
  }

  /** The group's I, T and ttl as the service last reported them, or undefined before its first answer. */
  get timing(): MembersTiming | undefined {
    return this.#timing;
  }

  /** Polls until stop(). Call once. */
  start(): this {
    if (this.#lifecycle !== "idle") throw new Error("This MembersWatcher was already started; create a new one to watch again.");
    if (this.#setup.abortSignal?.aborted) {
      this.#lifecycle = "stopped";
      return this;
    }
    this.#lifecycle = "running";
    this.#setup.abortSignal?.addEventListener("abort", () => void this.stop(), { once: true });
    this.#setup.join();
    this.#schedule(0);
    return this;
  }

  /** Stops polling: aborts a poll on its way and resolves once it has ended. The watcher cannot be started again. */
  async stop(): Promise<void> {
    this.#lifecycle = "stopped";
    this.#setup.leave();
    if (this.#timer !== undefined) this.#setup.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#inflight?.abort(new Error("The watcher is stopping."));
    await this.#poll;
  }

  #schedule(delayMs: number): void {
    this.#timer = this.#setup.clock.setTimeout(() => {
      this.#timer = undefined;
      if (this.#lifecycle !== "running") return;
      const sentAt = this.#setup.clock.now();
      this.#poll = this.#pollOnce().finally(() => {
        this.#poll = undefined;
        if (this.#lifecycle === "running") this.#schedule(this.#nextDelay(sentAt));
      });
    }, delayMs);
  }

  /**
   * About I after the answer, jittered. On the participant's grid when it has other parts (a
   * poll may wait up to I/4 for it), planned from this poll's plan (planFrom): I plus the
   * round trip apart on average, as alone.
   */
  #nextDelay(sentAt: number): number {
    const intervalMs = this.#timing?.intervalMs ?? this.#setup.retryDelayMs;
    const delayMs = intervalMs * (1 - JITTER / 2 + JITTER * this.#random());
    if (this.#setup.part === undefined) return delayMs;
    const now = this.#setup.clock.now();
    this.#plannedAt = planFrom(this.#plannedAt, sentAt, intervalMs) + (now - sentAt) + delayMs;
    return this.#setup.part.align(this.#plannedAt, this.#timing?.intervalMs, true) - now;
  }

  async #pollOnce(): Promise<void> {
    const controller = new AbortController();
    this.#inflight = controller;
    let list: MemberList;
    try {
      // Polls never overlap (the next is scheduled once this one ends), so a slow answer is
      // waited for up to T, past which what it says is stale. Cut at I, a watcher on a busy
      // machine or a slow network never saw an answer at all.
      list = await (this.#setup.part ?? this.#setup.transport).listMembers(this.group, { timeoutInMs: Math.ceil(this.#timing?.timeoutMs ?? this.#setup.retryDelayMs), abortSignal: controller.signal });
    } catch (error) {
      if (!controller.signal.aborted) this.#report(error);
      return;
    } finally {
      if (this.#inflight === controller) this.#inflight = undefined;
    }
    if (this.#lifecycle !== "running") return;
    this.#timing = { intervalMs: list.intervalMs, timeoutMs: list.timeoutMs, ttlMs: list.ttlMs };
    this.#members = list.members;
    this.#observe(list.members);
  }

  /** Compares one listing with what was known, and tells every change in order. */
  #observe(members: readonly MemberView[]): void {
    const at = new Date(this.#wallClock()).toISOString();
    const emit = (event: MemberEventName, member: string, known: Pick<Known, "session" | "address">, state: MemberState | "removed"): void => {
      void this.listeners.emit(event, { group: this.group, member, session: known.session, address: known.address, state, at });
    };
    const listed = new Set<string>();
    for (const view of members) {
      listed.add(view.member);
      let known = this.#known.get(view.member);
      if (known !== undefined && known.session !== view.session) {
        // The old session was replaced: tell its failure before the new session joins.
        const endedAs = view.previous?.session === known.session ? view.previous.state : "unreachable";
        if (known.state === "joining" || known.state === "active") emit("memberUnreachable", view.member, known, "unreachable");
        if (endedAs === "leaving" && known.state !== "leaving") emit("memberLeaving", view.member, known, "leaving");
        emit("memberRemoved", view.member, known, "removed");
        known = undefined;
      }
      if (known === undefined) {
        emit("memberJoined", view.member, view, view.state);
        if (view.state !== "joining") this.#transition("joining", view, emit);
        this.#known.set(view.member, { session: view.session, address: view.address, state: view.state, heartbeats: view.heartbeats });
      } else if (this.#moves(known, view)) {
        this.#transition(known.state, view, emit);
        this.#known.set(view.member, { session: view.session, address: view.address, state: view.state, heartbeats: view.heartbeats });
      } else {
        this.#known.set(view.member, { ...known, address: view.address });
      }
    }
    for (const [member, known] of [...this.#known]) {
      if (listed.has(member)) continue;
      emit("memberRemoved", member, known, "removed");
      this.#known.delete(member);
    }
  }

  /**
   * Whether the view is a step of the member state machine from what was told. The service's ages
   * can step back when it notices its own gap (docs/membership.md), so a listing may show a
   * failed session younger than the one before: such a step back is no state change. Only a
   * heartbeat brings a session back from unreachable (its count grew), and nothing but
   * removal follows leaving.
   */
  #moves(known: Known, view: MemberView): boolean {
    if (view.state === known.state) return false;
    if (known.state === "leaving") return false;
    if (known.state === "unreachable" && (view.state === "active" || view.state === "joining")) return view.heartbeats > known.heartbeats;
    return true;
  }

  /**
   * From `before` to the view's state. Leaving by age (no goodbye) from joining or active
   * passes through unreachable, as the member state machine does, even if no poll saw it there.
   */
  #transition(before: MemberState, view: MemberView, emit: (event: MemberEventName, member: string, known: Pick<Known, "session" | "address">, state: MemberState) => void): void {
    const known = { session: view.session, address: view.address };
    if (view.state === "joining") return; // a session never goes back to joining
    if (view.state === "leaving" && view.leftAt === null && (before === "joining" || before === "active")) emit("memberUnreachable", view.member, known, "unreachable");
    emit(EVENT_OF[view.state], view.member, known, view.state);
  }

  #report(error: unknown): void {
    this.listeners.report(error);
  }
}

