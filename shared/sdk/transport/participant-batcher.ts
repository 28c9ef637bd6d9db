import type { HeartbeatBody } from "../../contract/heartbeat-body.js";
import type { LeaseView } from "../../contract/lease-view.js";
import type { MemberHeartbeatBody, MemberHeartbeatResult, MemberList } from "../../contract/members.js";
import type { HeartbeatResult } from "../../contract/outcomes.js";
import type { GroupAnswer, ParticipantHeartbeatBody, ParticipantResults, PartResult } from "../../contract/participant.js";
import { callName } from "./call-names.js";
import { CorruptedMessageError } from "./corrupted-message-error.js";
import type { ElectorClock, TimerHandle } from "../loop/elector-clock.js";
import { HaRequestError } from "./ha-request-error.js";
import type { CallOptions, LeaseTransport } from "./lease-transport.js";
import type { MembersTransport } from "./members-transport.js";
import { align, earlyWakeMs } from "./cadence.js";
import { isParticipantTransport, type ParticipantTransport } from "./participant-transport.js";

/**
 * Where a transport may carry its own batcher: a ParticipantBatcher, or `null` for one that
 * must never batch. A participant transport without it gets one batcher per object.
 */
export const PARTICIPANT_BATCHER: unique symbol = Symbol.for("ha-module.participantBatcher");

/**
 * The longest a queued call waits for the calls of the parts due with it (or of parts whose
 * wake times are not known yet) before the batch leaves without them: enough for timers due
 * at one grid point to fire on a busy event loop, small against any renewal budget.
 */
export const GATHER_WINDOW_MS = 20;
/** Timers are whole milliseconds: a part due within this of now is due now. */
const WAKE_SLACK_MS = 1;
/** The service's limits (docs/api.md#participant-heartbeat): parts per list, and in all. */
export const MAX_PARTS_PER_LIST = 16;
export const MAX_PARTS = 32;

type Kind = keyof ParticipantResults;
const KINDS: readonly Kind[] = ["roles", "reads", "members", "groups"];

/** The transport the parts share: participant heartbeats, and the single calls a batch of one goes through. */
type SharedTransport = ParticipantTransport & Partial<LeaseTransport> & Partial<MembersTransport>;

interface CallSpec<T> {
  readonly kind: Kind;
  /** What may appear once in a batch: a utype (roles and reads), a group and member, a group. */
  readonly key: string;
  /** The call's name, as its errors begin. */
  readonly what: string;
  /** The part as the request carries it. */
  readonly entry: object;
  /** The call through its own route: for a batch of one, and with one part registered. */
  readonly single: (options?: CallOptions) => Promise<T>;
  /** The part's typed result as the caller gets it. */
  readonly accept: (value: unknown) => T;
}

interface Queued extends CallSpec<unknown> {
  readonly part: ParticipantPart;
  /** When the call's own budget ends, on its part's clock. */
  readonly expiresAt: number | undefined;
  readonly abortSignal: AbortSignal | undefined;
  readonly settled: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Told once the call settled, whatever settled it. */
  onSettled: (() => void) | undefined;
}

const batchers = new WeakMap<object, ParticipantBatcher>();

/** The batcher of `transport`: its own (PARTICIPANT_BATCHER), or one per participant transport; undefined when it cannot batch. */
export function batcherOf(transport: unknown): ParticipantBatcher | undefined {
  if (!isParticipantTransport(transport)) return undefined;
  const own = (transport as { [PARTICIPANT_BATCHER]?: ParticipantBatcher | null })[PARTICIPANT_BATCHER];
  if (own !== undefined) return own ?? undefined;
  let batcher = batchers.get(transport);
  if (batcher === undefined) {
    batcher = new ParticipantBatcher(transport);
    batchers.set(transport, batcher);
  }
  return batcher;
}

/**
 * One participant's calls as one request per I (docs/sdk.md#one-request-per-participant).
 * Every PrimaryElector, MemberSession and MembersWatcher on one transport is a part of it:
 * each joins on start() and leaves on stop(). With one part (or none) every call goes
 * through its own route exactly as without a batcher. With more, heartbeats, GetPrimary
 * polls, member heartbeats and listings are queued, and the queue leaves as one
 * participant heartbeat once every part has a call in it, or GATHER_WINDOW_MS after the
 * first; a batch of one call still goes through its own route. Each call keeps its own
 * budget and abort signal; a batch that fails as a whole fails each of its calls, named.
 * Releases and goodbyes never wait here.
 */
export class ParticipantBatcher {
  readonly #transport: SharedTransport;
  readonly #parts = new Set<ParticipantPart>();
  #pending: Queued[] = [];
  #gather: { readonly clock: ElectorClock; readonly handle: TimerHandle } | undefined;
  /** The participant's grid: anchor + k·I (see align). */
  #anchor: number | undefined;

  constructor(transport: SharedTransport) {
    this.#transport = transport;
  }

  get transport(): SharedTransport {
    return this.#transport;
  }

  /** How many parts are registered. */
  get parts(): number {
    return this.#parts.size;
  }

  /** A new part, registered at once: its calls batch with the others' from now on. */
  join(clock: ElectorClock): ParticipantPart {
    const part = new ParticipantPart(this, clock);
    this.#parts.add(part);
    return part;
  }

  /** @internal ParticipantPart.leave(). The others need not wait for it any more. */
  leave(part: ParticipantPart): void {
    if (!this.#parts.delete(part)) return;
    if (this.#parts.size === 0) this.#anchor = undefined;
    if (this.#pending.length > 0 && this.#ready()) this.#flush();
  }

  /**
   * Whether the parts batch: from two parts up to as many as one request carries in a list
   * (MAX_PARTS_PER_LIST). A process with more (hundreds of roles on one HaClient) is not
   * batched: on one grid, their store operations would all start in the same instant every
   * I, a burst the service and the store absorb worse than the same calls spread over the
   * interval (at 400 roles × 2 on one client each, leases were lost near capacity). Give
   * such a process one HaClient per group of roles to batch them.
   */
  #batching(): boolean {
    return this.#parts.size > 1 && this.#parts.size <= MAX_PARTS_PER_LIST;
  }

  /** @internal ParticipantPart.align(). */
  alignFor(at: number, now: number, intervalMs: number | undefined, mayDelay: boolean, mayAdvance = false): number {
    if (!this.#batching() || intervalMs === undefined) return at;
    this.#anchor ??= at;
    return align({ at, now, anchor: this.#anchor, intervalMs, mayDelay, mayAdvance });
  }

  /** @internal A part's call: through its own route with at most one part, else queued. */
  enqueue<T>(part: ParticipantPart, spec: CallSpec<T>, options: CallOptions = {}): Promise<T> {
    if (!this.#batching() || !this.#parts.has(part)) return spec.single(options);
    return new Promise<T>((resolve, reject) => {
      const { abortSignal, timeoutInMs } = options;
      if (abortSignal?.aborted) return reject(abortSignal.reason);
      let timer: TimerHandle | undefined;
      let settled = false;
      const finish = (action: () => void): void => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) part.clock.clearTimeout(timer);
        abortSignal?.removeEventListener("abort", onAbort);
        action();
        call.onSettled?.();
      };
      const onAbort = (): void => finish(() => reject(abortSignal!.reason));
      const call: Queued = {
        ...spec,
        part,
        expiresAt: timeoutInMs === undefined ? undefined : part.clock.now() + timeoutInMs,
        abortSignal,
        get settled() {
          return settled;
        },
        resolve: (value) => finish(() => resolve(value as T)),
        reject: (error) => finish(() => reject(error)),
        onSettled: undefined,
      };
      abortSignal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutInMs !== undefined) {
        timer = part.clock.setTimeout(() => call.reject(new HaRequestError(`${spec.what}: no answer within ${Math.ceil(timeoutInMs)} ms.`, "Timeout", undefined)), timeoutInMs);
      }
      this.#add(call);
    });
  }

  #add(call: Queued): void {
    call.part.called();
    if (this.#full(call)) this.#flush();
    this.#pending.push(call);
    if (this.#ready()) {
      this.#flush();
      return;
    }
    if (this.#gather === undefined) {
      const clock = call.part.clock;
      this.#gather = { clock, handle: clock.setTimeout(() => this.#flush(), GATHER_WINDOW_MS) };
    }
  }

  /** The queue cannot take `call`: its key is in it already, or a limit is reached. */
  #full(call: Queued): boolean {
    const live = this.#pending.filter((queued) => !queued.settled);
    return live.length >= MAX_PARTS || live.some((queued) => queued.key === call.key) || live.filter((queued) => queued.kind === call.kind).length >= MAX_PARTS_PER_LIST;
  }

  /**
   * No part is still to come: every registered part has a call queued, or is known to wake
   * later (its aligned wake time is ahead). A part due now whose call has not come yet (its
   * timer fired a little later on a busy event loop), or one whose wake time is not known,
   * is waited for, at most GATHER_WINDOW_MS.
   */
  #ready(): boolean {
    for (const part of this.#parts) {
      if (this.#pending.some((queued) => queued.part === part && !queued.settled)) continue;
      if (!part.wakesLater()) return false;
    }
    return true;
  }

  #flush(): void {
    if (this.#gather !== undefined) this.#gather.clock.clearTimeout(this.#gather.handle);
    this.#gather = undefined;
    const calls = this.#pending.filter((queued) => !queued.settled);
    this.#pending = [];
    if (calls.length === 0) return;
    if (calls.length === 1) this.#sendAlone(calls[0]!);
    else this.#sendBatch(calls);
  }

  /** A batch of one: through its own route, with what is left of its budget. */
  #sendAlone(call: Queued): void {
    const left = leftMs(call);
    call
      .single({ ...(left === undefined ? {} : { timeoutInMs: left }), ...(call.abortSignal === undefined ? {} : { abortSignal: call.abortSignal }) })
      .then((value) => call.resolve(value), (error: unknown) => call.reject(error));
  }

  #sendBatch(calls: readonly Queued[]): void {
    const byKind = Object.fromEntries(KINDS.map((kind) => [kind, calls.filter((call) => call.kind === kind)])) as Record<Kind, Queued[]>;
    const body: ParticipantHeartbeatBody = Object.fromEntries(KINDS.filter((kind) => byKind[kind].length > 0).map((kind) => [kind, byKind[kind].map((call) => call.entry)]));
    // The request ends once every call in it has settled (on its own budget or signal); it
    // may take as long as the longest budget in it.
    const controller = new AbortController();
    for (const call of calls) call.onSettled = () => calls.every((each) => each.settled) && controller.abort(new Error("Every call of this participant heartbeat has settled."));
    const budgets = calls.map(leftMs);
    const timeoutInMs = budgets.includes(undefined) ? undefined : Math.max(...(budgets as number[]));
    this.#transport.participantHeartbeat(body, { abortSignal: controller.signal, ...(timeoutInMs === undefined ? {} : { timeoutInMs }) }).then(
      (results) => {
        for (const kind of KINDS) byKind[kind].forEach((call, index) => settle(call, (results[kind] as readonly PartResult<unknown>[] | undefined)?.[index]));
      },
      (error: unknown) => {
        for (const call of calls) call.reject(forPart(error, call.what));
      },
    );
  }
}

/** What is left of a call's budget, in whole milliseconds (at least 1); undefined when it has none. */
function leftMs(call: Queued): number | undefined {
  return call.expiresAt === undefined ? undefined : Math.max(1, Math.ceil(call.expiresAt - call.part.clock.now()));
}

function settle(call: Queued, result: PartResult<unknown> | undefined): void {
  if (result === undefined) return call.reject(new CorruptedMessageError(`${call.what}: corrupted message (the participant heartbeat's answer lacks this part).`, 200));
  if (!result.ok) return call.reject(result.error);
  try {
    call.resolve(call.accept(result.value));
  } catch (error) {
    call.reject(error);
  }
}

/**
 * A failure of the whole batch as a failure of one of its calls: the same class and fields
 * (a Timeout stays a Timeout, a 401 an UnauthorizedError, a 503's Retry-After is kept), its
 * message led by the call's own name.
 */
export function forPart(error: unknown, what: string): unknown {
  if (!(error instanceof Error)) return error;
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
  for (const key of Reflect.ownKeys(error)) {
    // The stack is formatted only when read (it is costly): the copy reads the original's then.
    if (key === "stack") Object.defineProperty(copy, key, { get: () => error.stack, configurable: true, enumerable: false });
    else Object.defineProperty(copy, key, Object.getOwnPropertyDescriptor(error, key)!);
  }
  Object.defineProperty(copy, "message", { value: `${what}: ${error.message}`, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(copy, "cause", { value: error, writable: true, configurable: true, enumerable: false });
  return copy;
}

/**
 * One part of a participant: a PrimaryElector, a MemberSession or a MembersWatcher. It makes
 * its calls here instead of on the transport, and passes its wake times through align().
 */
export class ParticipantPart {
  readonly #batcher: ParticipantBatcher;
  readonly clock: ElectorClock;
  /** When this part said it would wake next (align()); +∞ once that call came; undefined before it ever aligned. */
  #wake: number | undefined;
  /** How early its timer may fire and still be the wake it announced (earlyWakeMs of the last I it aligned with). */
  #slackMs = WAKE_SLACK_MS;
  /** The last listing of each group with its cursor ("" for none), for `since` and `unchanged`. */
  readonly #listings = new Map<string, { readonly list: MemberList; readonly cursor: string }>();

  constructor(batcher: ParticipantBatcher, clock: ElectorClock) {
    this.#batcher = batcher;
    this.clock = clock;
  }

  /** Leaves the participant: from now on its calls go through their own routes. */
  leave(): void {
    this.#batcher.leave(this);
  }

  /**
   * When to wake instead of `at` (cadence.ts): on the participant's grid, when it has other
   * parts and I is known. `mayDelay`: a poll, which may wake up to I/4 later than planned;
   * `mayAdvance`: a renewal after an accepted one, which may go now when its grid point has just passed.
   */
  align(at: number, intervalMs: number | undefined, mayDelay: boolean, mayAdvance = false): number {
    const wake = this.#batcher.alignFor(at, this.clock.now(), intervalMs, mayDelay, mayAdvance);
    this.#wake = wake;
    this.#slackMs = intervalMs === undefined ? WAKE_SLACK_MS : Math.max(WAKE_SLACK_MS, earlyWakeMs(intervalMs));
    return wake;
  }

  /** @internal A call of this part was queued: if it is the one its last aligned wake time announced, that time is spent. */
  called(): void {
    if (this.#wake !== undefined && this.#wake <= this.clock.now() + this.#slackMs) this.#wake = Number.POSITIVE_INFINITY;
  }

  /**
   * @internal Whether this part is known to wake after now, so a batch leaving now need not
   * wait for it. A part due within its slack is due now: another part's timer may have fired
   * that early for the same grid point.
   */
  wakesLater(): boolean {
    return this.#wake !== undefined && this.#wake > this.clock.now() + this.#slackMs;
  }

  heartbeat(utype: string, body: HeartbeatBody, options?: CallOptions): Promise<HeartbeatResult> {
    return this.#batcher.enqueue(
      this,
      { kind: "roles", key: `utype ${utype}`, what: callName.heartbeat(utype), entry: { utype, ...body }, single: (o) => this.#lease().heartbeat(utype, body, o), accept: (value) => value as HeartbeatResult },
      options,
    );
  }

  getPrimary(utype: string, options?: CallOptions): Promise<LeaseView> {
    return this.#batcher.enqueue(
      this,
      { kind: "reads", key: `utype ${utype}`, what: callName.getPrimary(utype), entry: { utype }, single: (o) => this.#lease().getPrimary(utype, o), accept: (value) => value as LeaseView },
      options,
    );
  }

  memberHeartbeat(group: string, member: string, body: MemberHeartbeatBody, options?: CallOptions): Promise<MemberHeartbeatResult> {
    return this.#batcher.enqueue(
      this,
      {
        kind: "members",
        key: `member ${group}/${member}`,
        what: callName.memberHeartbeat(group, member),
        entry: { group, member, ...body },
        single: (o) => this.#members().memberHeartbeat(group, member, body, o),
        accept: (value) => value as MemberHeartbeatResult,
      },
      options,
    );
  }

  /** A listing; batched, it sends the cursor of the last one, and `unchanged` gives that one back. */
  listMembers(group: string, options?: CallOptions): Promise<MemberList> {
    const since = this.#listings.get(group)?.cursor;
    return this.#batcher.enqueue(
      this,
      {
        kind: "groups",
        key: `group ${group}`,
        what: callName.listMembers(group),
        entry: { group, ...(since === undefined || since === "" ? {} : { since }) },
        single: async (o) => {
          const list = await this.#members().listMembers(group, o);
          this.#listings.delete(group);
          return list;
        },
        accept: (value) => this.#listed(group, value as GroupAnswer),
      },
      options,
    );
  }

  #listed(group: string, answer: GroupAnswer): MemberList {
    if ("unchanged" in answer) {
      const last = this.#listings.get(group);
      if (last === undefined || last.cursor !== answer.cursor) {
        throw new CorruptedMessageError(`${callName.listMembers(group)}: corrupted message (unchanged since a cursor this participant does not hold).`, 200);
      }
      return { ...last.list, intervalMs: answer.intervalMs, timeoutMs: answer.timeoutMs, ttlMs: answer.ttlMs };
    }
    const { cursor, ...list } = answer;
    this.#listings.set(group, { list, cursor });
    return list;
  }

  #lease(): LeaseTransport {
    const transport = this.#batcher.transport;
    if (typeof transport.heartbeat !== "function" || typeof transport.getPrimary !== "function") throw new TypeError("The participant's transport has no lease calls.");
    return transport as LeaseTransport;
  }

  #members(): MembersTransport {
    const transport = this.#batcher.transport;
    if (typeof transport.memberHeartbeat !== "function" || typeof transport.listMembers !== "function") throw new TypeError("The participant's transport has no membership calls.");
    return transport as MembersTransport;
  }
}
