import type { Clock } from "../clock.js";
import type { LeaseTiming } from "../config/server-config.js";
import type { LeaseStore, StoreCallOptions, WriteOutcome } from "../store/lease-store.js";
import { decide, type LeaseAction } from "./decision.js";
import type { LeaseRecord, LeaseState } from "./lease.js";
import type { LeaseTokenSigner } from "./lease-token.js";
import { toLeaseView, type LeaseView } from "./lease-view.js";

export interface HeartbeatInput {
  readonly utype: string;
  readonly uuid: string;
  readonly address: string | null;
  /** The token from the caller's last accepted heartbeat, if any. */
  readonly lease: string | undefined;
}

/**
 * `accepted`: the caller holds the lease. `held`: another live holder has it.
 * `conflict`: the caller's write lost a race with another write; nothing was retried.
 */
export type HeartbeatResult =
  | { readonly outcome: "accepted"; readonly view: LeaseView; readonly lease: string }
  | { readonly outcome: "held" | "conflict"; readonly view: LeaseView };

export type ReleaseResult = {
  readonly outcome: "released" | "held" | "conflict";
  readonly view: LeaseView;
};

export interface LeaseServiceDeps {
  readonly store: LeaseStore;
  readonly clock: Clock;
  readonly timing: LeaseTiming;
  readonly tokens: LeaseTokenSigner;
  /** The time budget of all store calls made for one request. */
  readonly storeTimeoutMs: number;
}

/**
 * GetPrimary, UpdateHeartBeat and Release over one LeaseStore (SPEC §2). Each method makes
 * the fewest store calls the protocol allows: one read for GetPrimary, one conditional
 * merge for a renewal with a valid token, a read and a write otherwise.
 */
export class LeaseService {
  constructor(private readonly deps: LeaseServiceDeps) {}

  get timing(): LeaseTiming {
    return this.deps.timing;
  }

  get storeKind(): string {
    return this.deps.store.kind;
  }

  async getPrimary(utype: string): Promise<LeaseView> {
    const entry = await this.deps.store.read(utype, this.#budget());
    return this.#view(utype, entry);
  }

  async listPrimaries(): Promise<LeaseView[]> {
    const entries = await this.deps.store.list(this.#budget());
    const haTime = this.deps.clock.now();
    return entries
      .map((entry) => toLeaseView(entry.utype, entry, haTime, this.deps.timing))
      .filter((view) => view.primary !== null)
      .sort((a, b) => (a.utype < b.utype ? -1 : a.utype > b.utype ? 1 : 0));
  }

  async health(): Promise<void> {
    await this.deps.store.ping(this.#budget());
  }

  async heartbeat(input: HeartbeatInput): Promise<HeartbeatResult> {
    const options = this.#budget();
    const fast = await this.#renewWithToken(input, options);
    if (fast !== undefined) return fast;

    // 1. read the entry; 2. decide on ha_time taken after the read; 3. one conditional write.
    const entry = await this.deps.store.read(input.utype, options);
    const haTime = this.deps.clock.now();
    const action = decide(entry, { op: "heartbeat", ...input }, haTime, this.deps.timing.timeoutMs);
    if (action.kind === "reject") return { outcome: "held", view: this.#view(input.utype, entry, haTime) };
    if (action.kind === "none" || action.kind === "release") {
      throw new Error(`decide() answered ${action.kind} to a heartbeat`);
    }
    const outcome = await this.#write(action, entry, options);
    if (!outcome.ok) return { outcome: "conflict", view: await this.#viewAfterLostRace(input.utype, options) };
    return this.#accepted(action.next, outcome.etag, haTime);
  }

  async release(utype: string, uuid: string): Promise<ReleaseResult> {
    const options = this.#budget();
    const entry = await this.deps.store.read(utype, options);
    const haTime = this.deps.clock.now();
    const action = decide(entry, { op: "release", utype, uuid }, haTime, this.deps.timing.timeoutMs);
    switch (action.kind) {
      case "reject":
        return { outcome: "held", view: this.#view(utype, entry, haTime) };
      case "none":
        return { outcome: "released", view: this.#view(utype, undefined, haTime) };
      case "release": {
        const outcome = await this.#write(action, entry, options);
        if (!outcome.ok) return { outcome: "conflict", view: await this.#viewAfterLostRace(utype, options) };
        return { outcome: "released", view: this.#view(utype, action.next, haTime) };
      }
      default:
        throw new Error(`decide() answered ${action.kind} to a release`);
    }
  }

  /**
   * The fast path: one conditional merge, no read. A successful If-Match proves the entry
   * is unchanged since the token was issued, so its uuid and epoch still hold. Undefined
   * means "take the slow path": no usable token, or the entry moved on.
   */
  async #renewWithToken(
    input: HeartbeatInput,
    options: StoreCallOptions,
  ): Promise<HeartbeatResult | undefined> {
    if (input.lease === undefined) return undefined;
    const claims = this.deps.tokens.verify(input.lease, input);
    if (claims === undefined) return undefined;
    const haTime = this.deps.clock.now();
    const outcome = await this.deps.store.renew(
      input.utype,
      { renewedAt: haTime, address: input.address },
      claims.etag,
      options,
    );
    if (!outcome.ok) return undefined;
    const { utype, uuid, address } = input;
    const renewed = { utype, uuid, address, epoch: claims.epoch, renewedAt: haTime };
    return this.#accepted(renewed, outcome.etag, haTime);
  }

  #write(action: LeaseAction & { next: LeaseState }, entry: LeaseRecord | undefined, options: StoreCallOptions): Promise<WriteOutcome> {
    if (action.kind === "create" || entry === undefined) return this.deps.store.create(action.next, options);
    return this.deps.store.replace(action.next, entry.etag, options);
  }

  #accepted(state: LeaseState, etag: string, haTime: number): HeartbeatResult {
    const lease = this.deps.tokens.issue({ utype: state.utype, uuid: state.uuid, epoch: state.epoch, etag });
    return { outcome: "accepted", view: this.#view(state.utype, state, haTime), lease };
  }

  /** After a lost race, show the winner: one more read, never a retried write. */
  async #viewAfterLostRace(utype: string, options: StoreCallOptions): Promise<LeaseView> {
    return this.#view(utype, await this.deps.store.read(utype, options));
  }

  #view(utype: string, entry: LeaseState | undefined, haTime = this.deps.clock.now()): LeaseView {
    return toLeaseView(utype, entry, haTime, this.deps.timing);
  }

  #budget(): StoreCallOptions {
    return { abortSignal: AbortSignal.timeout(Math.round(this.deps.storeTimeoutMs)) };
  }
}
