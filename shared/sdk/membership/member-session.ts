import { randomUUID } from "node:crypto";
import { MAX_BODY_BYTES } from "../../contract/input-rules.js";
import type { MemberAnswer, MemberHeartbeatBody, MemberHeartbeatResult, MembersTiming } from "../../contract/members.js";
import type { TimerHandle } from "../loop/elector-clock.js";
import { heartbeatBudgetMs, releaseBudgetMs } from "../loop/budgets.js";
import { Evented } from "../loop/listeners.js";
import { isServiceAnswer, isServiceDown } from "../transport/service-down.js";
import { LoopSetup, type LoopOptions } from "../loop/loop-setup.js";
import { MEMBERS_TRANSPORT, type MembersTransport } from "../transport/members-transport.js";
import { checkId, checkOptionalAddress, checkOptionalFunction, checkOptionsObject } from "../loop/option-checks.js";

/**
 * Why a session is over. `replaced`: another session of this member took the row (ours had
 * gone unreachable there), as the answer to one of our heartbeats says (never the
 * SessionHeld of a join that an accepted join overtook). `ended`: the service says ours
 * said goodbye, went leaving or was removed. `expired`: no heartbeat of ours was accepted
 * for ttl since it was sent, so the service must see it as leaving. Each time, the member
 * joins again with a new session.
 */
export type LostReason = "replaced" | "ended" | "expired";

/** The events of a MemberSession, with what each handler is given. */
export interface MemberSessionEvents {
  /** A session of this member is in the group: its first heartbeat was accepted. */
  joined: { readonly group: string; readonly member: string; readonly session: string; readonly address: string | null };
  /** That session is over (a restart is a new session): a new one joins at once. */
  lost: { readonly group: string; readonly member: string; readonly session: string; readonly reason: LostReason };
  /** Non-fatal: a failed call, a refused join (SessionHeld while the previous session is still active). */
  error: Error;
}

/** What a MemberSession takes: the group, the member's name, and how it reaches the service (LoopOptions). */
export interface MemberSessionOptions extends LoopOptions<MembersTransport> {
  /** The group (cluster) to be a member of. */
  readonly group: string;
  /** This participant's stable name in the group. */
  readonly member: string;
  /** Where it can be reached; every listing shows it. */
  readonly address?: string;
  /** A new session id; defaults to crypto.randomUUID. */
  readonly newSession?: () => string;
}

/**
 * `joining`: the session's first heartbeat is not accepted yet (the service may refuse it
 * with SessionHeld while the member's previous session is still alive). `joined`: accepted;
 * `acceptedSentAt` is when the last accepted heartbeat was sent, on the monotonic clock.
 */
type Role =
  | { readonly kind: "idle" }
  | { readonly kind: "joining"; readonly session: string }
  | { readonly kind: "joined"; readonly session: string; readonly token: string; readonly acceptedSentAt: number }
  | { readonly kind: "stopping" | "stopped"; readonly session: string };

/** Goodbyes that lose a race to our own heartbeat are sent again, at most this many times. */
const GOODBYE_ATTEMPTS = 3;

/**
 * One member's session in a group (docs/membership.md#the-sdk-and-the-cli): it heartbeats every I
 * (one store operation each, with the token of the last answer), joins again with a new
 * session whenever the service says the old one is over, and says goodbye on stop(), so
 * every watcher sees it `leaving` at once.
 *
 * Timing follows the elector's rules (docs/protocol.md#timing-rules): it measures from when it *sent* its last
 * accepted heartbeat on its own monotonic clock, never compares its clock with the
 * service's, and bounds each call by the time that heartbeat still has. The service sees
 * the session leaving once it is older than ttl; the session sees it from sentAt, which is
 * no later, so it never believes in a session the service has given up.
 */
export class MemberSession extends Evented<MemberSessionEvents> {
  /** The group it is a member of. */
  readonly group: string;
  /** The member's stable name in the group. */
  readonly member: string;
  /** Where it can be reached, as listings show it; undefined when not given. */
  readonly address: string | undefined;
  /** The transport, clock, first retry delay, abort signal and participant part, as every SDK loop has them. */
  readonly #setup: LoopSetup<MembersTransport>;
  readonly #newSession: () => string;

  #role: Role = { kind: "idle" };
  #timing: MembersTiming | undefined;
  #timer: TimerHandle | undefined;
  /** Heartbeats on their way: the cadence of I never waits for an answer. */
  readonly #inflight = new Map<AbortController, Promise<void>>();
  /** Joins on their way: one may have created a row nobody knows of yet. */
  #joinsInFlight = 0;
  /** The last answer showed another address than ours: the next heartbeat sends it. */
  #addressMismatch = false;
  /**
   * Time since the last accepted heartbeat during which the service itself said it was
   * down: the service does not count it in ages (its own gap), so neither does the session.
   */
  #excusedMs = 0;
  /** The calls answer "the service is down" since `from` (sent), last at `to` (answered). */
  #down: { from: number; to: number } | undefined;
  #stopped: Promise<void> | undefined;

  constructor(options: MemberSessionOptions) {
    super();
    checkOptionsObject("the MemberSession options", options, '{ group: "cluster", member: "node-1", endpoint: "http://127.0.0.1:7071/api" }');
    this.group = checkId("group", options.group);
    this.member = checkId("member", options.member);
    this.address = checkOptionalAddress("address", options.address);
    this.#setup = new LoopSetup(options, MEMBERS_TRANSPORT);
    this.#newSession = checkOptionalFunction("newSession", options.newSession) ?? randomUUID;
  }


  /** The current session id (a new one after every loss), or undefined before start(). */
  get session(): string | undefined {
    return this.#role.kind === "idle" ? undefined : this.#role.session;
  }

  /** I, T and ttl as the service last reported them. */
  get timing(): MembersTiming | undefined {
    return this.#timing;
  }

  /** True while a session is in the group: accepted, and its last accepted heartbeat is younger than ttl. */
  isJoined(): boolean {
    const role = this.#role;
    return role.kind === "joined" && this.#timing !== undefined && this.#setup.clock.now() < role.acceptedSentAt + this.#timing.ttlMs;
  }

  /** Joins the group with a new session and heartbeats until stop(). Call once. */
  start(): this {
    if (this.#role.kind !== "idle") throw new Error("This MemberSession was already started; create a new one to join again.");
    if (this.#setup.abortSignal?.aborted) {
      this.#role = { kind: "stopped", session: this.#nextSession() };
      this.#stopped = Promise.resolve();
      return this;
    }
    this.#role = { kind: "joining", session: this.#nextSession() };
    this.#setup.abortSignal?.addEventListener("abort", () => void this.stop(), { once: true });
    this.#setup.join();
    this.#schedule(0);
    return this;
  }

  /** Stops heartbeating and says goodbye: watchers see the session `leaving` at once. */
  stop(): Promise<void> {
    if (this.#stopped !== undefined) return this.#stopped;
    this.#setup.leave();
    this.#stopped = this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<void> {
    const role = this.#role;
    if (role.kind === "idle" || role.kind === "stopped") {
      this.#role = { kind: "stopped", session: role.kind === "idle" ? this.#nextSession() : role.session };
      return;
    }
    const mayBeIn = role.kind === "joined" || this.#joinsInFlight > 0;
    this.#role = { kind: "stopping", session: role.session };
    if (this.#timer !== undefined) this.#setup.clock.clearTimeout(this.#timer);
    for (const controller of this.#inflight.keys()) controller.abort(new Error("The member session is stopping."));
    await Promise.all(this.#inflight.values());
    if (mayBeIn) await this.#goodbye(role.session);
    this.#role = { kind: "stopped", session: role.session };
  }

  async #goodbye(session: string): Promise<void> {
    for (let attempt = 1; attempt <= GOODBYE_ATTEMPTS; attempt += 1) {
      try {
        const left = await this.#setup.transport.leaveGroup(this.group, this.member, session, { timeoutInMs: this.#goodbyeBudget() });
        if (left.outcome !== "conflict") return;
      } catch (error) {
        this.#report(error);
        return;
      }
    }
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined) this.#setup.clock.clearTimeout(this.#timer);
    // On the participant's grid when it has other parts: never later than due, but for a timer that fired early (cadence.ts).
    const now = this.#setup.clock.now();
    const waitMs = this.#setup.part === undefined ? Math.max(0, delayMs) : this.#setup.part.align(now + Math.max(0, delayMs), this.#timing?.intervalMs, false) - now;
    this.#timer = this.#setup.clock.setTimeout(() => this.#tick(), waitMs);
  }

  /**
   * One heartbeat: join, or renew with the token. The next one is due I later whatever
   * becomes of this one: a lost request costs one interval, not its whole timeout, so a
   * member needs only one of the T/I heartbeats of each T to get through.
   */
  #tick(): void {
    this.#timer = undefined;
    this.#expireIfDue();
    const role = this.#role;
    if (role.kind !== "joining" && role.kind !== "joined") return;
    const sentAt = this.#setup.clock.now();
    this.#schedule(this.#timing?.intervalMs ?? this.#setup.retryDelayMs);
    const body = this.#body(role);
    const budget = role.kind === "joined" ? Math.min(this.#heartbeatBudget(), this.#expiresAt(role) - sentAt) : this.#heartbeatBudget();
    const joining = role.kind === "joining";
    if (joining) this.#joinsInFlight += 1;
    const controller = new AbortController();
    const call = this.#call(controller, budget, (options) => (this.#setup.part ?? this.#setup.transport).memberHeartbeat(this.group, this.member, body, options))
      .then((outcome) => this.#settle(role.session, sentAt, joining, outcome))
      .catch((error: unknown) => this.#report(error))
      .finally(() => {
        if (joining) this.#joinsInFlight -= 1;
        this.#inflight.delete(controller);
      });
    this.#inflight.set(controller, call);
  }

  /**
   * What a heartbeat's answer means, if its session is still the current one. `join`: the
   * request was sent while the session was joining (no token yet).
   */
  #settle(session: string, sentAt: number, join: boolean, outcome: { value: MemberHeartbeatResult } | { error: unknown }): void {
    const role = this.#role;
    if ((role.kind !== "joining" && role.kind !== "joined") || role.session !== session) return;
    this.#noteServiceDown(outcome, sentAt);
    if (!("value" in outcome)) return;
    const result = outcome.value;
    this.#timing = { intervalMs: result.answer.intervalMs, timeoutMs: result.answer.timeoutMs, ttlMs: result.answer.ttlMs };
    switch (result.outcome) {
      case "accepted":
        this.#accepted(role, result.token, result.answer, sentAt);
        return;
      case "held":
        // A join refused after another join of the same session was accepted: answers
        // overtake each other, and this one was decided before our row existed. Once the
        // session had a row, another session can only take it by replacing it, and then
        // the service answers SessionEnded (our session is in the row's ended sessions),
        // never SessionHeld: this refusal is stale, not a replacement.
        if (role.kind === "joined" && join) return;
        if (role.kind === "joined") {
          this.#lose("replaced");
          this.#schedule(0);
        } else {
          this.#report(new Error(`${this.group}/${this.member}: 409 SessionHeld: the member's previous session is still ${result.answer.member?.state ?? "in the group"}; session ${role.session} is accepted once that one is unreachable (after T without a heartbeat). Trying again every I.`));
        }
        return;
      case "ended":
        if (role.kind === "joined") {
          this.#lose(endedReason(result.answer, role.session));
        } else {
          this.#report(new Error(`${this.group}/${this.member}: 409 SessionEnded for the new session ${role.session}: trying again with another one.`));
          this.#role = { kind: "joining", session: this.#nextSession() };
        }
        this.#schedule(0);
        return;
      case "conflict":
        this.#schedule(0);
        return;
    }
  }

  #body(role: Extract<Role, { kind: "joining" | "joined" }>): MemberHeartbeatBody {
    const address = this.address ?? null;
    if (role.kind === "joining") return this.address === undefined ? { session: role.session } : { session: role.session, address };
    if (!this.#addressMismatch) return { session: role.session, token: role.token };
    // A body over the limit would be refused: then the address goes without the token (the slow path).
    const both = { session: role.session, address, token: role.token };
    return Buffer.byteLength(JSON.stringify(both)) <= MAX_BODY_BYTES ? both : { session: role.session, address };
  }

  #accepted(role: Extract<Role, { kind: "joining" | "joined" }>, token: string, answer: MemberAnswer, sentAt: number): void {
    // An answer overtaken by a later accepted one (heartbeats overlap) teaches nothing new.
    if (role.kind === "joined" && sentAt < role.acceptedSentAt) return;
    this.#addressMismatch = answer.member?.address !== (this.address ?? null);
    this.#excusedMs = 0;
    this.#down = undefined;
    this.#role = { kind: "joined", session: role.session, token, acceptedSentAt: sentAt };
    if (role.kind === "joining") {
      void this.listeners.emit("joined", { group: this.group, member: this.member, session: role.session, address: answer.member?.address ?? null });
    }
  }

  /** The session's own view: no heartbeat accepted for ttl of the service's operating time since it was sent. */
  #expireIfDue(): void {
    const role = this.#role;
    if (role.kind !== "joined") return;
    if (this.#setup.clock.now() >= this.#expiresAt(role)) this.#lose("expired");
  }

  /**
   * sentAt + ttl of the last accepted heartbeat, plus the time the service itself said it
   * was down (a 503, or a refused connection: nothing listens), which the service's ages
   * skip too; while it keeps saying so, never. Timeouts and unreachable networks are not
   * excused: they may be this member's own partition, during which the service counts.
   */
  #expiresAt(role: Extract<Role, { kind: "joined" }>): number {
    if (this.#timing === undefined) return Infinity;
    const downMs = this.#down === undefined ? 0 : this.#down.to - this.#down.from;
    return role.acceptedSentAt + this.#timing.ttlMs + this.#excusedMs + downMs;
  }

  /**
   * A "down" answer opens (or stretches) the window the service said it was down; only an
   * answer that is not "down" closes it. A call lost on the way (a timeout) neither
   * stretches nor closes it: a lossy network during an outage must not cut the outage
   * into pieces whose seams count toward expiry (the service records one gap), while the
   * time since the last "down" answer still counts, so a member cut off after the service
   * came back expires as it would have.
   */
  #noteServiceDown(outcome: { value: unknown } | { error: unknown }, sentAt: number): void {
    if ("error" in outcome && isServiceDown(outcome.error)) {
      const answeredAt = this.#setup.clock.now();
      this.#down = this.#down === undefined ? { from: sentAt, to: answeredAt } : { from: Math.min(this.#down.from, sentAt), to: Math.max(this.#down.to, answeredAt) };
      return;
    }
    if ("error" in outcome && !isServiceAnswer(outcome.error)) return;
    if (this.#down !== undefined) this.#excusedMs += this.#down.to - this.#down.from;
    this.#down = undefined;
  }

  #lose(reason: LostReason): void {
    const role = this.#role;
    if (role.kind !== "joined") return;
    this.#role = { kind: "joining", session: this.#nextSession() };
    this.#addressMismatch = false;
    this.#excusedMs = 0;
    this.#down = undefined;
    void this.listeners.emit("lost", { group: this.group, member: this.member, session: role.session, reason });
  }

  #nextSession(): string {
    return checkId("newSession()", this.#newSession());
  }

  /** One call with a budget; a failure is reported and returned. */
  async #call<T>(controller: AbortController, budgetMs: number, send: (options: { timeoutInMs: number; abortSignal: AbortSignal }) => Promise<T>): Promise<{ value: T } | { error: unknown }> {
    try {
      return { value: await send({ timeoutInMs: Math.max(1, Math.ceil(budgetMs)), abortSignal: controller.signal }) };
    } catch (error) {
      if (!controller.signal.aborted) this.#report(error);
      return { error };
    }
  }

  /** As the elector's heartbeat (budgets.ts). */
  #heartbeatBudget(): number {
    return heartbeatBudgetMs(this.#timing, this.#setup.retryDelayMs);
  }

  /** As the elector's release (budgets.ts). */
  #goodbyeBudget(): number {
    return releaseBudgetMs(this.#timing, this.#setup.retryDelayMs);
  }

  #report(error: unknown): void {
    this.listeners.report(error);
  }
}

/** Replaced when the row now names another session; ended when it still names ours, or is gone. */
function endedReason(answer: MemberAnswer, session: string): LostReason {
  return answer.member !== null && answer.member.session !== session ? "replaced" : "ended";
}

