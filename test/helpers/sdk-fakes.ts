import { expect } from "vitest";
import type { TimerHandle } from "../../shared/sdk/loop/elector-clock.js";
import type { FakeClock } from "./fake-clock.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, PrimaryView, ReleaseOptions, ReleaseResult } from "../../shared/sdk/index.js";

export const I = 1000;
export const T = 5000;

export function primaryView(primary: Partial<PrimaryView> & { uuid: string }): PrimaryView {
  return { address: null, epoch: 1, renewedAt: new Date(0).toISOString(), expiresInMs: T, revoked: false, ...primary };
}

/** `epoch` defaults to the primary's, or 0 (a role that never had a holder). */
export function leaseView(utype: string, primary: PrimaryView | null, timing = { intervalMs: I, timeoutMs: T }, epoch = primary?.epoch ?? 0): LeaseView {
  return { utype, primary, epoch, ...timing, handover: null };
}

type Method = "getPrimary" | "heartbeat" | "release";

export interface PendingCall {
  readonly method: Method;
  readonly utype: string;
  readonly request: HeartbeatBody | undefined;
  readonly uuid: string | undefined;
  /** ReleaseOptions for a release (with its `lease`), CallOptions otherwise. */
  readonly options: ReleaseOptions;
  /** The fake clock's time when the call was made. */
  readonly sentAt: number;
  respond(value: LeaseView | HeartbeatResult | ReleaseResult): void;
  fail(error: Error): void;
  readonly settled: boolean;
}

/**
 * A transport whose every call waits for the test to answer it, and which fails the test
 * on any call the test did not take (so the number of calls is pinned). Timeouts run on
 * the fake clock; aborts reject with the signal's reason.
 */
export class ScriptedTransport implements LeaseTransport {
  readonly #queue: PendingCall[] = [];
  readonly all: PendingCall[] = [];

  constructor(private readonly clock: FakeClock) {}

  getPrimary(utype: string, options: CallOptions = {}): Promise<LeaseView> {
    return this.#enqueue("getPrimary", utype, undefined, undefined, options) as Promise<LeaseView>;
  }

  heartbeat(utype: string, request: HeartbeatBody, options: CallOptions = {}): Promise<HeartbeatResult> {
    return this.#enqueue("heartbeat", utype, request, undefined, options) as Promise<HeartbeatResult>;
  }

  release(utype: string, uuid: string, options: ReleaseOptions = {}): Promise<ReleaseResult> {
    return this.#enqueue("release", utype, undefined, uuid, options) as Promise<ReleaseResult>;
  }

  /** The oldest call not yet taken; fails when it is not of `method`. */
  take(method: Method, utype?: string): PendingCall {
    const call = this.#queue.shift();
    expect(call, `expected a ${method} call, but none was made`).toBeDefined();
    expect(call!.method, `expected ${method}, got ${call!.method}`).toBe(method);
    if (utype !== undefined) expect(call!.utype).toBe(utype);
    return call!;
  }

  /**
   * Takes the copies of a renewal that the elector sent again and then cut off (its
   * renewal budget passed without an answer, docs/protocol.md#timing-rules), so that the
   * next take() sees what came after them. Returns how many there were; fails if a call
   * of another method, or one still open, came first.
   */
  takeCutOffCopies(): number {
    let taken = 0;
    while (this.#queue[0]?.method === "heartbeat" && this.#queue[0].settled) {
      this.#queue.shift();
      taken += 1;
    }
    return taken;
  }

  /** Fails when a call was made that the test has not taken. */
  expectIdle(): void {
    expect(this.#queue.map((call) => `${call.method}(${call.utype})`)).toEqual([]);
  }

  #enqueue(method: Method, utype: string, request: HeartbeatBody | undefined, uuid: string | undefined, options: ReleaseOptions): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer: TimerHandle | undefined;
      const finish = (action: () => void): void => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) this.clock.clearTimeout(timer);
        options.abortSignal?.removeEventListener("abort", onAbort);
        action();
      };
      const onAbort = (): void => finish(() => reject(options.abortSignal!.reason));
      if (options.timeoutInMs !== undefined) {
        timer = this.clock.setTimeout(
          () => finish(() => reject(new HaRequestError(`${method}: no answer within ${options.timeoutInMs} ms`, "Timeout", undefined))),
          options.timeoutInMs,
        );
      }
      options.abortSignal?.addEventListener("abort", onAbort, { once: true });
      const call: PendingCall = {
        method,
        utype,
        request,
        uuid,
        options,
        sentAt: this.clock.now(),
        respond: (value) => finish(() => resolve(value)),
        fail: (error) => finish(() => reject(error)),
        get settled() {
          return settled;
        },
      };
      this.#queue.push(call);
      this.all.push(call);
    });
  }
}
