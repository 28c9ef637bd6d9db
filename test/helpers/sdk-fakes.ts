import { expect } from "vitest";
import type { ElectorClock, TimerHandle } from "../../shared/sdk/elector-clock.js";
import { HaRequestError } from "../../shared/sdk/ha-request-error.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, PrimaryView, ReleaseOptions, ReleaseResult } from "../../shared/sdk/index.js";

/** Lets every pending promise continuation run; not a sleep: no time passes on any clock. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A manual monotonic clock. Timers fire only inside advance(), in time order, with the
 * microtasks they start drained before the next one fires.
 */
export class FakeClock implements ElectorClock {
  #now = 1_000_000;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; seq: number; callback: () => void }>();

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, delayMs), seq: id, callback });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as number);
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const due = [...this.#timers.entries()]
        .filter(([, timer]) => timer.at <= target)
        .sort(([, a], [, b]) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      const [id, timer] = due;
      this.#timers.delete(id);
      this.#now = Math.max(this.#now, timer.at);
      timer.callback();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /**
   * A process pause (SIGSTOP, a long GC): time moves on and no timer fires. The overdue
   * timers fire at the next advance(), as they would when the process resumes.
   */
  pause(ms: number): void {
    this.#now += ms;
  }
}

export const I = 1000;
export const T = 5000;

export function primaryView(primary: Partial<PrimaryView> & { uuid: string }): PrimaryView {
  return { address: null, epoch: 1, renewedAt: new Date(0).toISOString(), expiresInMs: T, revoked: false, ...primary };
}

export function leaseView(utype: string, primary: PrimaryView | null, timing = { intervalMs: I, timeoutMs: T }): LeaseView {
  return { utype, primary, ...timing };
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
