import type { HeartbeatBody, ReleaseQuery } from "../contract/heartbeat-body.js";
import type { LeaseView, StandbyView } from "../contract/lease-view.js";
import type { HandoverResult, HeartbeatResult, ReleaseResult, WithdrawResult } from "../contract/outcomes.js";
import type { TermHistory } from "../contract/term-history.js";
import { debuglog } from "node:util";
import { handoverSeenWithinMs, type LeaseTiming } from "../contract/timing.js";
import { systemMonotonicClock, type Clock, type MonotonicClock } from "../service/clock.js";
import { decideHandover, decideHeartbeat, decidePreempt, decideRelease, decideWithdraw, rankingMatters, releaseEnd, type LeaseAction, type Ranking } from "./decision.js";
import { isLive, pendingHandover, priorityOf, withPriority, type LeaseRecord, type LeaseState } from "./lease.js";
import type { LeaseStore, StandbyRecord } from "./lease-store.js";
import type { WriteOutcome } from "../service/store-call.js";
import type { LeaseTokenSigner } from "./lease-token.js";
import { toLeaseView, type ViewedLease } from "./lease-view.js";
import { noLeaseMetrics, type HeartbeatOutcome, type LeaseMetrics } from "./lease-metrics.js";
import { RequestBudget, type RequestArrival } from "../service/request-budget.js";
import type { AdmissionGate, AdmissionPriority } from "../service/admission.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import { toTermHistory } from "./term-history.js";
import { endedTerm, type StoredTermEnd } from "./term-record.js";
import { missingEntryFence, roleCreated } from "./missing-entry.js";

/** A request as the service takes it: the PUT body or DELETE query, with its route's utype. */
type ForUtype<T> = T & { readonly utype: string };


/**
 * A release as the service answers it: the contract's outcomes, or `forbidden` when it
 * would revoke a live holder and the caller may not revoke (the handler answers 403;
 * the SDK never sees this outcome, only that 403).
 */
export type ServiceReleaseResult = ReleaseResult | { readonly outcome: "forbidden"; readonly view: LeaseView };

export interface LeaseServiceDeps {
  readonly store: LeaseStore;
  /** ha_time: the wall clock the stored renewedAt values are compared with. */
  readonly clock: Clock;
  /**
   * The clock that floors a new term's epoch (nextEpoch, docs/design/epochs.md): `clock` by
   * default, as it must be wherever epochs have to outlive a loss of the store's last writes.
   * Only tests of the stored counter alone give another (one that stays at 0).
   */
  readonly epochClock?: Clock;
  /** Measures request budgets; defaults to performance.now(). */
  readonly monotonic?: MonotonicClock;
  readonly timing: LeaseTiming;
  readonly tokens: LeaseTokenSigner;
  /** The time budget of all store calls made for one request, from its arrival. */
  readonly storeTimeoutMs: number;
  /**
   * Bounds the requests at the store at once and sheds the excess (OverloadedError); shared
   * with the membership service. None: every request goes straight to the store.
   */
  readonly admission?: AdmissionGate;
  /** Where a renewal that leaves the fast path is logged; by default Node's debuglog (NODE_DEBUG=ha-module). */
  readonly debug?: (message: string) => void;
  /** Where a fenced role and a standby row not written are reported; by default console.warn. */
  readonly warn?: (message: string) => void;
  /** Where each heartbeat's and release's outcome is counted; nothing by default. */
  readonly metrics?: LeaseMetrics;
}

const defaultDebug = debuglog("ha-module");

/**
 * How many times one request decides, when its writes keep losing races that settle
 * nothing for it: enough for a burst of concurrent writes, and bounded by the request's
 * store budget in any case.
 */
const MAX_DECISIONS = 4;

/**
 * The ETag a token carries when its renewal must not take the fast path: the renewal that
 * shows a pending handover. No store has an empty ETag, and the fast path checks for it
 * before writing, so the holder's every renewal during a handover is decided on the entry
 * (which refuses it once the handover is older than T).
 */
const NO_FAST_PATH = "";

/** What the GETs may add to a view (docs/api.md). */
export interface ViewOptions {
  /** Add `standbys`: one more read (the role's partition, or every standby for the list). */
  readonly standbys?: boolean;
  /** The list only: add roles that had a primary and have none now, with `vacantSince`. */
  readonly vacant?: boolean;
}

/** The standby `to` names: an exact uuid first, else the most recently seen one with that address (`standbys` oldest first). */
function standbyNamed(standbys: readonly StandbyView[], to: string): StandbyView | undefined {
  return standbys.find((standby) => standby.uuid === to) ?? standbys.filter((standby) => standby.address === to).at(-1);
}

/** What #readEntry answers while another request may be creating the role's first entry. */
const CREATING = Symbol("creating");

/** The same term, as far as a decision goes: holder, epoch and revocation unchanged. */
function sameTerm(a: LeaseState, b: LeaseState): boolean {
  return a.uuid === b.uuid && a.epoch === b.epoch && a.revoked === b.revoked;
}

/**
 * A heartbeat's write that succeeded, as the metrics count it: a new term over an expired
 * holder is a takeover (a failover an operator watches); a new term on a role nobody
 * held (never written, released, or only retired uuids) is an acquisition.
 */
function acceptedAs(kind: "create" | "renew" | "take-over", entry: LeaseRecord | undefined): HeartbeatOutcome {
  if (kind === "renew") return "renewed";
  return kind === "take-over" && entry !== undefined && entry.uuid !== "" ? "taken-over" : "acquired";
}

/**
 * GetPrimary, UpdateHeartBeat and Release over one LeaseStore (docs/protocol.md#the-rule-server-side). Each method makes
 * the fewest store calls the protocol allows: one read for GetPrimary, one conditional
 * merge for a renewal with a valid token, a read and a write otherwise. Every method takes
 * the request's arrival (monotonic ms); its store calls must fit in the budget from there.
 */
export class LeaseService {
  readonly #monotonic: MonotonicClock;
  readonly #epochClock: Clock;
  readonly #debug: (message: string) => void;
  readonly #warn: (message: string) => void;
  readonly #metrics: LeaseMetrics;

  constructor(private readonly deps: LeaseServiceDeps) {
    this.#monotonic = deps.monotonic ?? systemMonotonicClock;
    this.#epochClock = deps.epochClock ?? deps.clock;
    this.#debug = deps.debug ?? defaultDebug;
    this.#warn = deps.warn ?? ((message) => console.warn(message));
    this.#metrics = deps.metrics ?? noLeaseMetrics;
  }

  get timing(): LeaseTiming {
    return this.deps.timing;
  }

  get storeKind(): string {
    return this.deps.store.kind;
  }

  getPrimary(utype: string, arrival?: RequestArrival, options: ViewOptions = {}): Promise<LeaseView> {
    return this.#admitted("other", () => this.#getPrimary(utype, arrival, options));
  }

  listPrimaries(arrival?: RequestArrival, options: ViewOptions = {}): Promise<LeaseView[]> {
    return this.#admitted("other", () => this.#listPrimaries(arrival, options));
  }

  /** An operator's planned handover (docs/protocol.md#planned-handover): `to` a standby's uuid or address, or any. */
  handover(utype: string, to: string | undefined, arrival?: RequestArrival): Promise<HandoverResult> {
    return this.#admitted("other", () => this.#handover(utype, to, arrival));
  }

  /**
   * A standby's clean stop (docs/protocol.md#standbys): its row is deleted, and a handover
   * that names it is dropped. Its uuid is not retired: it held nothing.
   */
  withdrawStandby(utype: string, uuid: string, arrival?: RequestArrival): Promise<WithdrawResult> {
    return this.#admitted("other", () => this.#withdrawStandby(utype, uuid, arrival));
  }

  health(arrival?: RequestArrival): Promise<void> {
    return this.#admitted("other", () => this.#health(arrival));
  }

  history(utype: string, limit: number, arrival?: RequestArrival): Promise<TermHistory> {
    return this.#admitted("other", () => this.#history(utype, limit, arrival));
  }

  /** A renewal with its token goes first under load: it is what keeps a primary primary. */
  heartbeat(input: ForUtype<HeartbeatBody>, arrival?: RequestArrival): Promise<HeartbeatResult> {
    return this.#admitted(input.lease === undefined ? "other" : "holder", () => this.#countedHeartbeat(input, arrival));
  }

  /**
   * A proven release (with the token) goes first too: it lets a standby take over at once.
   * `mayRevoke` false (a caller granted only to hold the role): a DELETE that would revoke a
   * live holder (no token, or one that does not prove the holder) writes nothing and is
   * answered `forbidden`.
   */
  release(input: ForUtype<ReleaseQuery>, arrival?: RequestArrival): Promise<ReleaseResult>;
  release(input: ForUtype<ReleaseQuery>, arrival: RequestArrival | undefined, mayRevoke: boolean): Promise<ServiceReleaseResult>;
  release(input: ForUtype<ReleaseQuery>, arrival?: RequestArrival, mayRevoke = true): Promise<ServiceReleaseResult> {
    return this.#admitted(input.lease === undefined ? "other" : "holder", () => this.#countedRelease(input, arrival, mayRevoke));
  }

  #admitted<T>(priority: AdmissionPriority, work: () => Promise<T>): Promise<T> {
    return this.deps.admission === undefined ? work() : this.deps.admission.run(priority, work);
  }

  async #getPrimary(utype: string, arrival: RequestArrival | undefined, options: ViewOptions): Promise<LeaseView> {
    const budget = this.#budget(arrival);
    if (options.standbys !== true) return this.#view(utype, await this.deps.store.read(utype, budget.forStoreCall("read")));
    const [entry, standbys] = await Promise.all([
      this.deps.store.read(utype, budget.forStoreCall("read")),
      this.deps.store.readStandbys(utype, budget.forStoreCall("read")),
    ]);
    const haTime = this.deps.clock.now();
    return { ...this.#view(utype, entry, haTime), standbys: this.#freshStandbys(standbys, entry, haTime) };
  }

  async #listPrimaries(arrival: RequestArrival | undefined, options: ViewOptions): Promise<LeaseView[]> {
    const budget = this.#budget(arrival);
    const [entries, standbys] = await Promise.all([
      this.deps.store.list(budget.forStoreCall("read")),
      options.standbys === true ? this.deps.store.listStandbys(budget.forStoreCall("read")) : undefined,
    ]);
    const haTime = this.deps.clock.now();
    const { timeoutMs } = this.deps.timing;
    const views: LeaseView[] = [];
    for (const entry of entries) {
      const view = toLeaseView(entry.utype, entry, haTime, this.deps.timing);
      let shown: LeaseView;
      if (view.primary !== null) shown = view;
      // Vacant: it had a holder (epoch ≥ 1) and has none now: since its release, or its expiry.
      else if (options.vacant === true && entry.epoch >= 1) shown = { ...view, vacantSince: new Date(entry.uuid === "" ? entry.renewedAt : entry.renewedAt + timeoutMs).toISOString() };
      else continue;
      if (standbys !== undefined) {
        shown = { ...shown, standbys: this.#freshStandbys(standbys.filter((standby) => standby.utype === entry.utype), entry, haTime) };
      }
      views.push(shown);
    }
    return views.sort((a, b) => (a.utype < b.utype ? -1 : a.utype > b.utype ? 1 : 0));
  }

  /**
   * The standbys seen within T (or `withinMs`), oldest announcement first, leaving out the holder and the
   * uuids whose term ended: a standby's row goes from view when it becomes holder or is
   * retired (DELETE ?uuid=) without a write on those paths. A read never writes: stale rows
   * are only left out here, and deleted by the sweeper (StandbySweeper).
   */
  #freshStandbys(rows: readonly StandbyRecord[], entry: LeaseState | undefined, haTime: number, withinMs = this.deps.timing.timeoutMs): StandbyView[] {
    return rows
      .filter((row) => haTime - row.seenAt <= withinMs && row.uuid !== entry?.uuid && !(entry?.endedUuids.includes(row.uuid) ?? false))
      .sort((a, b) => a.seenAt - b.seenAt)
      .map((row) => withPriority({ uuid: row.uuid, address: row.address, seenAt: new Date(row.seenAt).toISOString() }, row.priority));
  }

  /**
   * A handover request: the entry and, when `to` names someone, the role's standbys (two
   * reads side by side); `to` resolved to the uuid of a standby seen within
   * handoverSeenWithinMs (an exact uuid first, else the most recently seen standby with that
   * address), or refused naming when the one it names was last seen; then one conditional
   * write, decided again (at most MAX_DECISIONS times) when it loses a race.
   */
  async #handover(utype: string, to: string | undefined, arrival: RequestArrival | undefined): Promise<HandoverResult> {
    const budget = this.#budget(arrival);
    const [read, rows] = await Promise.all([
      this.deps.store.read(utype, budget.forStoreCall("read")),
      to === undefined ? [] : this.deps.store.readStandbys(utype, budget.forStoreCall("read")),
    ]);
    let entry = read;
    for (let decisions = 1; ; decisions += 1) {
      const haTime = this.deps.clock.now();
      let toUuid: string | null = null;
      const standbys = this.#freshStandbys(rows, entry, haTime, handoverSeenWithinMs(this.deps.timing));
      if (to !== undefined) {
        const named = standbyNamed(standbys, to);
        // A holder to hand over, but nobody by that name seen lately: the operator must see
        // who stands by, and when the one named was last seen (if its row is still there).
        if (named === undefined && entry !== undefined && !entry.revoked && isLive(entry, haTime, this.deps.timing.timeoutMs)) {
          const lastSeen = standbyNamed(this.#freshStandbys(rows, entry, haTime, Number.POSITIVE_INFINITY), to);
          return { outcome: "no-such-standby", view: this.#view(utype, entry, haTime), standbys, ...(lastSeen === undefined ? {} : { lastSeen }) };
        }
        toUuid = named?.uuid ?? null;
      }
      const action = decideHandover(entry, toUuid, haTime, this.deps.timing.timeoutMs);
      switch (action.kind) {
        case "none":
          return { outcome: "requested", view: this.#view(utype, entry, haTime) };
        case "refuse-handover":
          return action.reason === "no-primary"
            ? { outcome: "no-primary", view: this.#view(utype, entry, haTime) }
            : { outcome: "no-such-standby", view: this.#view(utype, entry, haTime), standbys };
        case "request-handover": {
          if (entry === undefined) throw new Error("decideHandover() asked to store a handover on no entry");
          const outcome = await this.#write(action, entry, budget);
          if (outcome.ok) return { outcome: "requested", view: this.#view(utype, action.next, haTime) };
          entry = await this.deps.store.read(utype, budget.forStoreCall("read"));
          if (decisions < MAX_DECISIONS) continue;
          return { outcome: "conflict", view: this.#view(utype, entry) };
        }
      }
    }
  }

  /**
   * A withdrawal: the entry read and the row deleted side by side (the delete is
   * unconditional: only its own uuid writes that row); then, only when a handover names the
   * uuid, one conditional write dropping it, decided again when it loses a race.
   */
  async #withdrawStandby(utype: string, uuid: string, arrival: RequestArrival | undefined): Promise<WithdrawResult> {
    const budget = this.#budget(arrival);
    let [entry] = await Promise.all([this.deps.store.read(utype, budget.forStoreCall("read")), this.deps.store.deleteStandby(utype, uuid, budget.forStoreCall("write"))]);
    for (let decisions = 1; ; decisions += 1) {
      const haTime = this.deps.clock.now();
      const action = decideWithdraw(entry, uuid);
      if (action.kind === "none" || entry === undefined) return { outcome: "withdrawn", view: this.#view(utype, entry, haTime) };
      const outcome = await this.#write(action, entry, budget);
      if (outcome.ok) return { outcome: "withdrawn", view: this.#view(utype, action.next, haTime) };
      entry = await this.deps.store.read(utype, budget.forStoreCall("read"));
      if (decisions >= MAX_DECISIONS) return { outcome: "conflict", view: this.#view(utype, entry) };
    }
  }

  /**
   * The role's last terms, newest first (see toTermHistory): the entry and the ring, two
   * reads side by side. Not a hot path: nothing here is ever written.
   */
  async #history(utype: string, limit: number, arrival?: RequestArrival): Promise<TermHistory> {
    const budget = this.#budget(arrival);
    const [entry, rows] = await Promise.all([
      this.deps.store.read(utype, budget.forStoreCall("read")),
      this.deps.store.readTerms(utype, budget.forStoreCall("read")),
    ]);
    return toTermHistory(utype, entry, rows, this.deps.clock.now(), this.deps.timing, limit);
  }

  async #health(arrival?: RequestArrival): Promise<void> {
    await this.deps.store.ping(this.#budget(arrival).forStoreCall("read"));
  }

  /** UpdateHeartBeat; its outcome is counted once, after the answer is known (never a store call). */
  async #countedHeartbeat(input: ForUtype<HeartbeatBody>, arrival?: RequestArrival): Promise<HeartbeatResult> {
    let counted: HeartbeatOutcome = "unavailable";
    try {
      const [result, outcome] = await this.#heartbeat(input, arrival);
      counted = outcome;
      return result;
    } finally {
      this.#metrics.heartbeat(counted);
    }
  }

  async #heartbeat(input: ForUtype<HeartbeatBody>, arrival: RequestArrival | undefined): Promise<[HeartbeatResult, HeartbeatOutcome]> {
    const budget = this.#budget(arrival);
    // The latest moment this request can have arrived, on ha_time: see #afterLostRace.
    const arrivedHaTime = this.deps.clock.now();
    const fast = await this.#renewWithToken(input, budget);
    if (fast !== undefined) return [fast, "renewed"];

    // 1. read the entry; 2. decide on ha_time taken after the read; 3. one conditional write.
    const read = await this.#readEntry(input.utype, budget, false);
    // Another request is creating the role's first entry: this one waits its turn.
    if (read === CREATING) return [{ outcome: "conflict", view: this.#view(input.utype, undefined) }, "conflict"];
    let entry = read;
    // The role's standby rows, read at most once per request: only for a takeover within I
    // of the role becoming free (rule 7 of decideHeartbeat), or a preemption re-pointed.
    let standbys: readonly StandbyRecord[] | undefined;
    const readStandbys = async (): Promise<readonly StandbyRecord[]> => (standbys ??= await this.deps.store.readStandbys(input.utype, budget.forStoreCall("read")));
    // The term the caller's token vouches for (a second verify: the signer remembers the
    // token it issued last, so this is a lookup): a term the entry cannot have handed out
    // was erased by a loss of the store's last writes, and its holder is told so.
    const tokenEpoch = input.lease === undefined ? undefined : this.deps.tokens.verify(input.lease, input)?.epoch;
    for (let decisions = 1; ; decisions += 1) {
      let haTime = this.deps.clock.now();
      const request = { utype: input.utype, uuid: input.uuid, address: input.address, priority: input.priority, tokenEpoch };
      let action = decideHeartbeat(entry, request, haTime, this.deps.timing.timeoutMs, this.#epochClock.now());
      if (action.kind === "take-over" && input.announce !== true && rankingMatters(entry, input, haTime, this.deps.timing)) {
        const ranking: Ranking = { standbys: await readStandbys(), intervalMs: this.deps.timing.intervalMs };
        haTime = this.deps.clock.now();
        action = decideHeartbeat(entry, request, haTime, this.deps.timing.timeoutMs, this.#epochClock.now(), ranking);
      }
      switch (action.kind) {
        case "reject":
          if (action.reason !== "held" && action.reason !== "outranked") return [{ outcome: "revoked", view: this.#view(input.utype, entry, haTime) }, "revoked"];
          if (input.announce === true) {
            await this.#announce(input, haTime, budget);
            if (entry !== undefined) {
              const written = await this.#rankOrPreempt(input, entry, haTime, budget, readStandbys);
              if (written !== undefined) return [{ outcome: "held", view: this.#view(input.utype, written, haTime) }, "rejected"];
            }
          }
          return [{ outcome: "held", view: this.#view(input.utype, entry, haTime) }, "rejected"];
        case "create":
        case "renew":
        case "take-over": {
          // An announcement never starts a term: a copy delivered late could otherwise land
          // after its sender was told "held" and start a term nobody knows of. Nothing is written.
          if (input.announce === true && action.kind !== "renew") return [{ outcome: "conflict", view: this.#view(input.utype, entry, haTime) }, "conflict"];
          // A takeover ends the previous holder's term (a released entry's term ended already).
          const endedBy = action.kind === "take-over" && entry !== undefined && entry.uuid !== "" ? (entry.revoked ? "revoked" : "taken-over") : undefined;
          const outcome =
            entry === undefined
              ? await this.#createFirst(action.next, input.uuid, haTime, budget)
              : await this.#write(action, entry, budget, endedBy === undefined ? undefined : { endedBy, haTime });
          if (!outcome.ok) {
            const winner = await this.deps.store.read(input.utype, budget.forStoreCall("read"));
            const after = this.#afterLostRace(input, action.next.epoch, arrivedHaTime, winner);
            // Accepted after a lost race means the caller's own echo won: its term goes on.
            if (after !== undefined) return [after, after.outcome === "accepted" ? "renewed" : "revoked"];
            // The winning write left the term as it was (a retire, an echo of an older
            // renewal): nobody else changed what this request was decided on, so decide again.
            if (decisions < MAX_DECISIONS && entry !== undefined && winner !== undefined && sameTerm(entry, winner)) {
              entry = winner;
              continue;
            }
            return [{ outcome: "conflict", view: this.#view(input.utype, winner) }, "conflict"];
          }
          return [this.#accepted(action.next, outcome.etag, haTime), acceptedAs(action.kind, entry)];
        }
      }
    }
  }

  /** Release (DELETE); its outcome is counted once, after the answer is known. */
  async #countedRelease(input: ForUtype<ReleaseQuery>, arrival: RequestArrival | undefined, mayRevoke: boolean): Promise<ServiceReleaseResult> {
    let result: ServiceReleaseResult | undefined;
    try {
      result = await this.#release(input, arrival, mayRevoke);
      return result;
    } finally {
      this.#metrics.release(result?.outcome ?? "unavailable");
    }
  }

  /**
   * A release or revoke decides on the entry it read; when its write loses the race (an
   * acquire of the same uuid landed meanwhile, a retire, a renewal), it reads the entry
   * again and decides again, at most MAX_DECISIONS times: answering Conflict would leave
   * the caller not knowing whether a lease it wanted gone is still there.
   */
  async #release(input: ForUtype<ReleaseQuery>, arrival: RequestArrival | undefined, mayRevoke: boolean): Promise<ServiceReleaseResult> {
    const budget = this.#budget(arrival);
    const { utype, uuid } = input;
    const claims = input.lease === undefined ? undefined : this.deps.tokens.verify(input.lease, { utype, uuid });
    let entry = await this.#readEntry(utype, budget, true);
    for (let decisions = 1; ; decisions += 1) {
      const haTime = this.deps.clock.now();
      const action = decideRelease(entry, { utype, uuid, provenEpoch: claims?.epoch }, haTime, this.deps.timing.timeoutMs);
      switch (action.kind) {
        case "none":
          return this.#released(utype, uuid, entry, haTime);
        case "revoke":
        case "release":
        case "retire": {
          if (action.kind === "revoke" && !mayRevoke) return { outcome: "forbidden", view: this.#view(utype, entry, haTime) };
          const outcome =
            entry === undefined
              ? await this.#createFirst(action.next, uuid, haTime, budget)
              : await this.#write(action, entry, budget, action.kind === "release" ? { endedBy: releaseEnd(entry, claims?.epoch, haTime, this.deps.timing.timeoutMs), haTime } : undefined);
          if (!outcome.ok) {
            entry = await this.#readEntry(utype, budget, true);
            if (decisions < MAX_DECISIONS) continue;
            return { outcome: "conflict", view: this.#view(utype, entry) };
          }
          return this.#released(utype, uuid, action.next, haTime);
        }
      }
    }
  }

  /** A release's answer, from the entry as it stands after it. */
  #released(utype: string, uuid: string, after: LeaseState | undefined, haTime: number): ReleaseResult {
    const view = this.#view(utype, after, haTime);
    if (after !== undefined && isLive(after, haTime, this.deps.timing.timeoutMs)) {
      if (after.uuid !== uuid) return { outcome: "held", view };
      if (after.revoked) return { outcome: "revoked", view };
    }
    return { outcome: "released", view };
  }

  /**
   * The role's entry, for the slow path. A missing entry of a role with a term history was
   * deleted behind the service: a fence is written in its place (missingEntryFence), and
   * decided on like any entry. Undefined only for a role never held (no history either).
   * Creates are rare, so the extra read of the history costs nothing on the hot path.
   */
  async #readEntry(utype: string, budget: RequestBudget, fenceWhileCreating: true): Promise<LeaseRecord | undefined>;
  async #readEntry(utype: string, budget: RequestBudget, fenceWhileCreating: false): Promise<LeaseRecord | undefined | typeof CREATING>;
  async #readEntry(utype: string, budget: RequestBudget, fenceWhileCreating: boolean): Promise<LeaseRecord | undefined | typeof CREATING> {
    const entry = await this.deps.store.read(utype, budget.forStoreCall("read"));
    if (entry !== undefined) return entry;
    const terms = await this.deps.store.readTerms(utype, budget.forStoreCall("read"));
    if (terms.length === 0) return undefined;
    const haTime = this.deps.clock.now();
    // Only a mark of the role's creation written by an earlier version, younger than a
    // request's budget: those versions wrote the mark before the entry, so its creator's
    // entry may still be on its way (a request is never written after its budget). A
    // heartbeat then creates nothing and is answered Conflict (it asks again at its next
    // poll); a DELETE fences the role, since that creator may be the uuid it must stop. A
    // mark this version wrote came with its entry: without the entry, the entry was deleted.
    const creating =
      terms.every((term) => term.epoch === 0) && terms.some((mark) => mark.transactional !== true && haTime - mark.startedAt <= this.deps.storeTimeoutMs);
    if (creating && !fenceWhileCreating) return CREATING;
    const fence = missingEntryFence(utype, terms, haTime, this.#epochClock.now());
    // The fence's term is recorded with it, in the same transaction, as it will end (revoked,
    // never renewed, so it ends T from now): the history then knows its epoch while it
    // stands, and a deletion of the fence or of the term after it still finds an epoch
    // floor at or above theirs.
    const { timeoutMs } = this.deps.timing;
    const term = endedTerm(fence, "revoked", fence.renewedAt + timeoutMs, timeoutMs);
    const created = await this.deps.store.create(fence, budget.forStoreCall("write"), { term });
    if (created.ok) {
      const why = creating
        ? "a DELETE found its first entry still being created (the creator may be the uuid it stops)"
        : "its entry was missing although its history records terms: it was deleted behind the service";
      this.#warn(
        `The role ${utype} is fenced: ${why}. ` +
          `Nobody may take the role before ${new Date(fence.renewedAt + timeoutMs).toISOString()} (T from now), and the next term's epoch is ${fence.epoch + 1}.`,
      );
      return { ...fence, etag: created.etag };
    }
    const winner = await this.deps.store.read(utype, budget.forStoreCall("read"));
    if (winner === undefined) throw new StoreUnavailableError(`The lease entry of ${utype} was deleted again while the service wrote its fence; try again.`);
    return winner;
  }

  /**
   * The fast path: one conditional merge, no read. A successful If-Match proves the entry
   * is unchanged since the token was issued, so its uuid, epoch and address still hold,
   * and it is neither revoked nor ended (either would have changed the ETag). Undefined
   * means "take the slow path": no usable token, or the entry moved on.
   */
  async #renewWithToken(input: ForUtype<HeartbeatBody>, budget: RequestBudget): Promise<HeartbeatResult | undefined> {
    if (input.lease === undefined) return undefined;
    const claims = this.deps.tokens.verify(input.lease, input);
    if (claims === undefined) {
      this.#debug(`${input.utype}: the lease token of ${input.uuid} did not verify (another secret, or not this caller's): slow path.`);
      return undefined;
    }
    if (claims.etag === NO_FAST_PATH) return undefined;
    // A priority other than the stored one is written by the slow path (a renewal's replace).
    if ((claims.priority ?? 0) !== priorityOf(input)) return undefined;
    const options = budget.forStoreCall("write");
    const haTime = this.deps.clock.now();
    // An omitted address is not written, so the stored one (the token's) stays.
    const renewal = input.address === undefined ? { renewedAt: haTime } : { renewedAt: haTime, address: input.address };
    const outcome = await this.deps.store.renew(input.utype, renewal, claims.etag, options);
    if (!outcome.ok) {
      this.#debug(`${input.utype}: the fast-path renewal of ${input.uuid} found the entry ${outcome.reason}: slow path.`);
      return undefined;
    }
    const address = input.address === undefined ? claims.address : input.address;
    return this.#accepted(withPriority({ utype: input.utype, uuid: input.uuid, address, epoch: claims.epoch, renewedAt: haTime, revoked: false }, claims.priority), outcome.etag, haTime);
  }

  /**
   * A lost write is never retried blindly. But a heartbeat that lost only to another
   * heartbeat of the same uuid (a retry, a duplicate, a late delivery) is answered as
   * accepted with the winner's state: PUT is idempotent, and a holder must not be demoted
   * by its own echo.
   *
   * Only when that is safe for the caller: it will measure its deadline from its own
   * sentAt, which is sound only if the stored renewedAt is not earlier than the moment this
   * request arrived. `arrivedHaTime` was taken when the service got the request, which is
   * after it arrived, so the check errs on the strict side. Undefined: the race settled
   * nothing for this caller (the caller decides again, or gets 409 Conflict).
   */
  #afterLostRace(input: ForUtype<HeartbeatBody>, epoch: number, arrivedHaTime: number, winner: LeaseRecord | undefined): HeartbeatResult | undefined {
    const haTime = this.deps.clock.now();
    if (winner !== undefined && winner.uuid === input.uuid) {
      if (winner.revoked) return { outcome: "revoked", view: this.#view(input.utype, winner, haTime) };
      if (winner.epoch === epoch && winner.renewedAt >= arrivedHaTime && isLive(winner, haTime, this.deps.timing.timeoutMs)) {
        return this.#accepted(winner, winner.etag, haTime);
      }
    }
    if (winner?.endedUuids.includes(input.uuid)) return { outcome: "revoked", view: this.#view(input.utype, winner, haTime) };
    return undefined;
  }

  /**
   * A role's first entry, created by `creator`'s request, with the mark of the role's
   * creation in its history (see roleCreated) in the same transaction, so that a later
   * deletion of the entry is known for one: both or neither. So no request ever finds the
   * mark without the entry unless the entry was deleted (a release racing the creation
   * finds either nothing or the entry), and an entry is never created without its mark.
   * The mark is inserted, not upserted: a role created meanwhile by another request has
   * one, so this create, decided on a read that found no history, fails as a lost race
   * even if that request's entry was deleted since, and never starts epoch 1 again.
   * Checks the budget right before the write, as #write does.
   */
  #createFirst(next: LeaseState, creator: string, haTime: number, budget: RequestBudget): Promise<WriteOutcome> {
    return this.deps.store.create(next, budget.forStoreCall("write"), { creationMark: roleCreated(next.utype, creator, haTime) });
  }

  /**
   * Records a refused caller as a standby: an unconditional upsert of its own row, beside
   * the entry and never contending with it. Best effort: the refusal is the answer, so a
   * failure is only reported (the next announcement, T/2 later, writes it again).
   */
  async #announce(input: ForUtype<HeartbeatBody>, haTime: number, budget: RequestBudget): Promise<void> {
    const standby: StandbyRecord = withPriority({ utype: input.utype, uuid: input.uuid, address: input.address ?? null, seenAt: haTime }, input.priority);
    await this.#bestEffort(`record ${input.uuid} as a standby of ${input.utype}`, () => this.deps.store.upsertStandby(standby, budget.forStoreCall("write")));
  }

  /**
   * What a refused announcement may write on the entry (docs/protocol.md#priorities-and-preemption),
   * in one conditional write, only when there is something to write:
   * - the `ranked` mark, the first time a candidate of the role states a priority other than 0
   *   (from then on takeovers within I of the role becoming free rank the candidates);
   * - with `preempt`, when the caller outranks the live holder (decidePreempt), a handover to
   *   it (reason `preempt`), as an operator's request would be; the holder hands over at its
   *   next renewal.
   * Best effort, as the announcement is: the refusal is the answer, and a write that loses its
   * race or fails is left to the caller's next announcement (T/2 later). The entry as written,
   * or undefined when nothing was.
   */
  async #rankOrPreempt(
    input: ForUtype<HeartbeatBody>,
    entry: LeaseRecord,
    haTime: number,
    budget: RequestBudget,
    readStandbys: () => Promise<readonly StandbyRecord[]>,
  ): Promise<LeaseState | undefined> {
    const { timeoutMs } = this.deps.timing;
    const mark = entry.ranked !== true && priorityOf(input) !== 0;
    if (!mark && input.preempt !== true) return undefined;
    try {
      let preempted = false;
      let next: LeaseState = entry;
      if (input.preempt === true) {
        const pending = pendingHandover(entry, haTime, timeoutMs);
        let pendingToPriority: number | undefined;
        if (pending?.reason === "preempt" && pending.to !== null && pending.to !== input.uuid && priorityOf(input) > priorityOf(entry)) {
          const row = (await readStandbys()).find((standby) => standby.uuid === pending.to && haTime - standby.seenAt <= timeoutMs);
          pendingToPriority = row === undefined ? undefined : priorityOf(row);
        }
        const action = decidePreempt(entry, { uuid: input.uuid, priority: input.priority }, haTime, timeoutMs, pendingToPriority);
        if (action.kind === "request-handover") {
          next = action.next;
          preempted = true;
        }
      }
      if (mark) next = { ...next, ranked: true };
      if (next === entry) return undefined;
      const outcome = await this.deps.store.replace(next, entry.etag, budget.forStoreCall("write"));
      if (!outcome.ok) return undefined;
      if (preempted) this.#metrics.preemption?.(input.utype);
      return next;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      this.#warn(`Could not record the priority of ${input.uuid} on ${input.utype}: ${error.message}`);
      return undefined;
    }
  }

  async #bestEffort(what: string, call: () => Promise<void>): Promise<void> {
    try {
      await call();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      this.#warn(`Could not ${what}: ${error.message}`);
    }
  }

  /**
   * Checks the budget right before the write: a request past it is never written. A write
   * that ends the term `entry` held (`ends`: a takeover, a release, at `haTime`) records that term in
   * the role's history in the same transaction as the entry: both or neither, so the
   * history has no gap, and a failure is the request's 503 with nothing written.
   */
  #write(
    action: Extract<LeaseAction, { next: LeaseState }>,
    entry: LeaseRecord,
    budget: RequestBudget,
    ends?: { readonly endedBy: StoredTermEnd; readonly haTime: number },
  ): Promise<WriteOutcome> {
    const options = budget.forStoreCall("write");
    if (ends === undefined) return this.deps.store.replace(action.next, entry.etag, options);
    const term = endedTerm(entry, ends.endedBy, ends.haTime, this.deps.timing.timeoutMs);
    return this.deps.store.replace(action.next, entry.etag, options, { endedTerm: term });
  }

  #accepted(state: ViewedLease & { utype: string }, etag: string, haTime: number): HeartbeatResult {
    // While a handover is pending every renewal is decided on the entry (see NO_FAST_PATH).
    const fastPathEtag = pendingHandover(state, haTime, this.deps.timing.timeoutMs) === undefined ? etag : NO_FAST_PATH;
    const lease = this.deps.tokens.issue(withPriority({ utype: state.utype, uuid: state.uuid, epoch: state.epoch, etag: fastPathEtag, address: state.address }, state.priority));
    return { outcome: "accepted", view: this.#view(state.utype, state, haTime), lease };
  }

  #view(utype: string, entry: ViewedLease | undefined, haTime = this.deps.clock.now()): LeaseView {
    return toLeaseView(utype, entry, haTime, this.deps.timing);
  }

  #budget(arrival: RequestArrival | undefined): RequestBudget {
    return new RequestBudget(this.#monotonic, arrival?.arrivedAt ?? this.#monotonic.now(), this.deps.storeTimeoutMs);
  }
}
