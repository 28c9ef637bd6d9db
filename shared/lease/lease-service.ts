import type { HeartbeatBody, ReleaseQuery } from "../contract/heartbeat-body.js";
import type { LeaseView } from "../contract/lease-view.js";
import type { HeartbeatResult, ReleaseResult } from "../contract/outcomes.js";
import { debuglog } from "node:util";
import type { LeaseTiming } from "../contract/timing.js";
import { systemMonotonicClock, type Clock, type MonotonicClock } from "./clock.js";
import { decide, type LeaseAction } from "./decision.js";
import { isLive, type LeaseRecord, type LeaseState } from "./lease.js";
import type { LeaseStore, WriteOutcome } from "./lease-store.js";
import type { LeaseTokenSigner } from "./lease-token.js";
import { toLeaseView, type ViewedLease } from "./lease-view.js";
import { noLeaseMetrics, type HeartbeatOutcome, type LeaseMetrics } from "./lease-metrics.js";
import { RequestBudget, type RequestArrival } from "./request-budget.js";

/** A request as the service takes it: the PUT body or DELETE query, with its route's utype. */
type ForUtype<T> = T & { readonly utype: string };

export interface LeaseServiceDeps {
  readonly store: LeaseStore;
  /** ha_time: the wall clock the stored renewedAt values are compared with. */
  readonly clock: Clock;
  /** Measures request budgets; defaults to performance.now(). */
  readonly monotonic?: MonotonicClock;
  readonly timing: LeaseTiming;
  readonly tokens: LeaseTokenSigner;
  /** The time budget of all store calls made for one request, from its arrival. */
  readonly storeTimeoutMs: number;
  /** Where a renewal that leaves the fast path is logged; by default Node's debuglog (NODE_DEBUG=ha-module). */
  readonly debug?: (message: string) => void;
  /** Where each heartbeat's and release's outcome is counted; nothing by default. */
  readonly metrics?: LeaseMetrics;
}

const defaultDebug = debuglog("ha-module");

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
 * GetPrimary, UpdateHeartBeat and Release over one LeaseStore (SPEC §2). Each method makes
 * the fewest store calls the protocol allows: one read for GetPrimary, one conditional
 * merge for a renewal with a valid token, a read and a write otherwise. Every method takes
 * the request's arrival (monotonic ms); its store calls must fit in the budget from there.
 */
export class LeaseService {
  readonly #monotonic: MonotonicClock;
  readonly #debug: (message: string) => void;
  readonly #metrics: LeaseMetrics;

  constructor(private readonly deps: LeaseServiceDeps) {
    this.#monotonic = deps.monotonic ?? systemMonotonicClock;
    this.#debug = deps.debug ?? defaultDebug;
    this.#metrics = deps.metrics ?? noLeaseMetrics;
  }

  get timing(): LeaseTiming {
    return this.deps.timing;
  }

  get storeKind(): string {
    return this.deps.store.kind;
  }

  async getPrimary(utype: string, arrival?: RequestArrival): Promise<LeaseView> {
    const entry = await this.deps.store.read(utype, this.#budget(arrival).forStoreCall("read"));
    return this.#view(utype, entry);
  }

  async listPrimaries(arrival?: RequestArrival): Promise<LeaseView[]> {
    const entries = await this.deps.store.list(this.#budget(arrival).forStoreCall("read"));
    const haTime = this.deps.clock.now();
    return entries
      .map((entry) => toLeaseView(entry.utype, entry, haTime, this.deps.timing))
      .filter((view) => view.primary !== null)
      .sort((a, b) => (a.utype < b.utype ? -1 : a.utype > b.utype ? 1 : 0));
  }

  async health(arrival?: RequestArrival): Promise<void> {
    await this.deps.store.ping(this.#budget(arrival).forStoreCall("read"));
  }

  /** UpdateHeartBeat; its outcome is counted once, after the answer is known (never a store call). */
  async heartbeat(input: ForUtype<HeartbeatBody>, arrival?: RequestArrival): Promise<HeartbeatResult> {
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
    const entry = await this.deps.store.read(input.utype, budget.forStoreCall("read"));
    const haTime = this.deps.clock.now();
    const action = decide(entry, { op: "heartbeat", utype: input.utype, uuid: input.uuid, address: input.address }, haTime, this.deps.timing.timeoutMs);
    switch (action.kind) {
      case "reject":
        return action.reason === "held"
          ? [{ outcome: "held", view: this.#view(input.utype, entry, haTime) }, "rejected"]
          : [{ outcome: "revoked", view: this.#view(input.utype, entry, haTime) }, "revoked"];
      case "create":
      case "renew":
      case "take-over": {
        const outcome = await this.#write(action, entry, budget);
        if (!outcome.ok) {
          // Accepted after a lost race means the caller's own echo won: its term goes on.
          const after = await this.#afterLostRace(input, action.next.epoch, arrivedHaTime, budget);
          return [after, after.outcome === "accepted" ? "renewed" : after.outcome === "held" ? "rejected" : after.outcome];
        }
        return [this.#accepted(action.next, outcome.etag, haTime), acceptedAs(action.kind, entry)];
      }
      default:
        throw new Error(`decide() answered ${action.kind} to a heartbeat`);
    }
  }

  /** Release (DELETE); its outcome is counted once, after the answer is known. */
  async release(input: ForUtype<ReleaseQuery>, arrival?: RequestArrival): Promise<ReleaseResult> {
    let result: ReleaseResult | undefined;
    try {
      result = await this.#release(input, arrival);
      return result;
    } finally {
      this.#metrics.release(result?.outcome ?? "unavailable");
    }
  }

  async #release(input: ForUtype<ReleaseQuery>, arrival: RequestArrival | undefined): Promise<ReleaseResult> {
    const budget = this.#budget(arrival);
    const { utype, uuid } = input;
    const claims = input.lease === undefined ? undefined : this.deps.tokens.verify(input.lease, { utype, uuid });
    const entry = await this.deps.store.read(utype, budget.forStoreCall("read"));
    const haTime = this.deps.clock.now();
    const action = decide(entry, { op: "release", utype, uuid, provenEpoch: claims?.epoch }, haTime, this.deps.timing.timeoutMs);
    let after: LeaseState | undefined = entry;
    switch (action.kind) {
      case "none":
        break;
      case "release":
      case "revoke":
      case "retire": {
        const outcome = await this.#write(action, entry, budget);
        if (!outcome.ok) {
          return { outcome: "conflict", view: this.#view(utype, await this.deps.store.read(utype, budget.forStoreCall("read"))) };
        }
        after = action.next;
        break;
      }
      default:
        throw new Error(`decide() answered ${action.kind} to a release`);
    }
    const view = this.#view(utype, after, haTime);
    if (after !== undefined && isLive(after, haTime, this.deps.timing.timeoutMs)) {
      if (after.uuid !== uuid) return { outcome: "held", view };
      if (after.revoked) return { outcome: "revoked", view };
    }
    return { outcome: "released", view };
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
    return this.#accepted({ utype: input.utype, uuid: input.uuid, address, epoch: claims.epoch, renewedAt: haTime, revoked: false }, outcome.etag, haTime);
  }

  /**
   * A lost write is never retried. But a heartbeat that lost only to another heartbeat of
   * the same uuid (a retry, a duplicate, a late delivery) is answered as accepted with the
   * winner's state: PUT is idempotent, and a holder must not be demoted by its own echo.
   *
   * Only when that is safe for the caller: it will measure its deadline from its own
   * sentAt, which is sound only if the stored renewedAt is not earlier than the moment this
   * request arrived. `arrivedHaTime` was taken when the service got the request, which is
   * after it arrived, so the check errs on the strict side. Otherwise: 409 Conflict.
   */
  async #afterLostRace(input: ForUtype<HeartbeatBody>, epoch: number, arrivedHaTime: number, budget: RequestBudget): Promise<HeartbeatResult> {
    const winner = await this.deps.store.read(input.utype, budget.forStoreCall("read"));
    const haTime = this.deps.clock.now();
    if (winner !== undefined && winner.uuid === input.uuid) {
      if (winner.revoked) return { outcome: "revoked", view: this.#view(input.utype, winner, haTime) };
      if (winner.epoch === epoch && winner.renewedAt >= arrivedHaTime && isLive(winner, haTime, this.deps.timing.timeoutMs)) {
        return this.#accepted(winner, winner.etag, haTime);
      }
    }
    if (winner?.endedUuids.includes(input.uuid)) return { outcome: "revoked", view: this.#view(input.utype, winner, haTime) };
    return { outcome: "conflict", view: this.#view(input.utype, winner, haTime) };
  }

  /** Checks the budget right before the write: a request past it is never written. */
  #write(action: Extract<LeaseAction, { next: LeaseState }>, entry: LeaseRecord | undefined, budget: RequestBudget): Promise<WriteOutcome> {
    const options = budget.forStoreCall("write");
    if (entry === undefined) return this.deps.store.create(action.next, options);
    return this.deps.store.replace(action.next, entry.etag, options);
  }

  #accepted(state: ViewedLease & { utype: string }, etag: string, haTime: number): HeartbeatResult {
    const lease = this.deps.tokens.issue({ utype: state.utype, uuid: state.uuid, epoch: state.epoch, etag, address: state.address });
    return { outcome: "accepted", view: this.#view(state.utype, state, haTime), lease };
  }

  #view(utype: string, entry: ViewedLease | undefined, haTime = this.deps.clock.now()): LeaseView {
    return toLeaseView(utype, entry, haTime, this.deps.timing);
  }

  #budget(arrival: RequestArrival | undefined): RequestBudget {
    return new RequestBudget(this.#monotonic, arrival?.arrivedAt ?? this.#monotonic.now(), this.deps.storeTimeoutMs);
  }
}
