import type { ElectorClock, TimerHandle } from "../loop/elector-clock.js";

/**
 * What one attempt on one endpoint came to. `answer`: the service answered for every
 * instance alike (a 2xx, a 409, any 4xx): the call ends with it. `unavailable`: an answer
 * of this instance alone (a 5xx: its store connection, its admission gate, a platform page
 * for an instance going away): the next endpoint is asked, and the call ends with it only
 * if none answers. An attempt that rejects got no answer at all (a refused or reset
 * connection, a name that does not resolve): the next endpoint is asked.
 */
export type Attempted<T> = { readonly kind: "answer"; readonly value: T } | { readonly kind: "unavailable"; readonly value: T };

export interface EndpointFailure {
  readonly endpoint: string;
  readonly error: unknown;
}

export interface FailoverCall<T> {
  /**
   * What the call asks (one key per role heartbeat, read, member heartbeat or listing in
   * it). A call asking what an attempt still unanswered asks is a copy of it, e.g. a
   * renewal sent again when its budget passed: it starts at the endpoint after that one.
   */
  readonly keys: readonly string[];
  /** When the call's budget ends, on the clock. */
  readonly deadline: number;
  /**
   * Whether an endpoint that has not answered within its share of the budget (what is left
   * divided among it and the endpoints not yet tried) is joined by the next, the earlier
   * attempt still awaited: for calls whose caller does not retry on a cadence of its own.
   */
  readonly split: boolean;
  /** Aborts when the budget ends: every attempt is cut off, and the endpoint that had it is passed over next time. */
  readonly budget: AbortSignal;
  /** The caller's own signal: every attempt is cut off, and nothing is learned. */
  readonly caller?: AbortSignal | undefined;
  attempt(endpoint: string, signal: AbortSignal): Promise<Attempted<T>>;
}

export type FailoverResult<T> =
  /** An answer, or when none came, the last 5xx: `endpoint` gave it. */
  | { readonly kind: "answer"; readonly value: T; readonly endpoint: string }
  /** Every endpoint was tried and none answered at all. */
  | { readonly kind: "failed"; readonly failures: readonly EndpointFailure[] }
  /** The budget ended first: `waiting` had not answered; `failures` had failed before. */
  | { readonly kind: "timed-out"; readonly waiting: readonly string[]; readonly failures: readonly EndpointFailure[] }
  /** The caller's signal ended it. */
  | { readonly kind: "aborted" };

interface Unanswered {
  readonly index: number;
  readonly seq: number;
}

/**
 * Which endpoint each call of one client goes to (docs/sdk.md#several-endpoints), as
 * etcd's and ZooKeeper's clients spread over a list of servers:
 *
 * - A call goes first to the endpoint that answered last (the first listed until one has):
 *   one connection stays warm, and every call after a failover finds the instance that
 *   answers without trying the lost one again.
 * - It moves on to the next endpoint, within the same call and budget, when one gives no
 *   answer at all or a 5xx, each endpoint at most once: so the call fails, and counts as
 *   one failure for the caller's backoff, only when every endpoint failed. A 4xx never
 *   moves on: every instance would answer it alike.
 * - One that does not answer within the call's budget is passed over by the next call.
 *   A copy of a request still unanswered (see FailoverCall.keys) starts at the endpoint
 *   after the one that request waits on: the elector's hedged renewal sends its copy when
 *   the renewal budget passes, and so the copy reaches the next instance in time.
 * - With `split`, an endpoint silent for its share of the budget is joined by the next.
 *
 * One endpoint behaves exactly as before: every call goes to it, once.
 */
export class EndpointFailover {
  readonly endpoints: readonly string[];
  readonly #clock: ElectorClock;
  #current = 0;
  #seq = 0;
  /** The attempts unanswered now, per key they ask. */
  readonly #unanswered = new Map<string, Unanswered[]>();

  constructor(endpoints: readonly string[], clock: ElectorClock) {
    if (endpoints.length === 0) throw new TypeError("Expected at least one endpoint.");
    this.endpoints = [...endpoints];
    this.#clock = clock;
  }

  /** The endpoint the next call goes to first (unless it is a copy). */
  get current(): string {
    return this.endpoints[this.#current]!;
  }

  call<T>(call: FailoverCall<T>): Promise<FailoverResult<T>> {
    const count = this.endpoints.length;
    const first = this.#firstFor(call.keys);
    const order = Array.from({ length: count }, (_, offset) => (first + offset) % count);
    return new Promise((resolve) => {
      let tried = 0;
      let done = false;
      let share: TimerHandle | undefined;
      let unavailable: { value: T; endpoint: string } | undefined;
      const failures: EndpointFailure[] = [];
      const pending = new Map<number, { readonly controller: AbortController; readonly release: () => void }>();

      const finish = (result: FailoverResult<T>): void => {
        if (done) return;
        done = true;
        if (share !== undefined) this.#clock.clearTimeout(share);
        call.budget.removeEventListener("abort", onBudget);
        call.caller?.removeEventListener("abort", onCaller);
        for (const { controller, release } of pending.values()) {
          release();
          controller.abort(new Error("The call ended: another endpoint answered, or its budget or its caller ended it."));
        }
        pending.clear();
        resolve(result);
      };
      const settledWithout = (): void => {
        if (tried < count) start();
        else if (pending.size === 0) finish(unavailable === undefined ? { kind: "failed", failures } : { kind: "answer", ...unavailable });
      };
      const start = (): void => {
        const index = order[tried]!;
        tried += 1;
        const endpoint = this.endpoints[index]!;
        const controller = new AbortController();
        const release = this.#register(call.keys, index);
        pending.set(index, { controller, release });
        if (call.split && tried < count) {
          // This endpoint and the ones not tried yet share what is left of the budget.
          if (share !== undefined) this.#clock.clearTimeout(share);
          share = this.#clock.setTimeout(() => {
            share = undefined;
            if (!done && tried < count) start();
          }, Math.max(0, call.deadline - this.#clock.now()) / (count - tried + 1));
        }
        let attempt: Promise<Attempted<T>>;
        try {
          attempt = call.attempt(endpoint, controller.signal);
        } catch (error) {
          attempt = Promise.reject(error);
        }
        attempt.then(
          (result) => {
            if (done || controller.signal.aborted) return;
            pending.delete(index);
            release();
            if (result.kind === "answer") {
              this.#current = index;
              finish({ kind: "answer", value: result.value, endpoint });
              return;
            }
            unavailable = { value: result.value, endpoint };
            this.#passOver(index);
            settledWithout();
          },
          (error: unknown) => {
            if (done || controller.signal.aborted) return;
            pending.delete(index);
            release();
            failures.push({ endpoint, error });
            this.#passOver(index);
            settledWithout();
          },
        );
      };
      const onBudget = (): void => {
        if (done) return;
        if (pending.has(this.#current)) this.#passOver(this.#current);
        const waiting = [...pending.keys()].map((index) => this.endpoints[index]!);
        finish(unavailable === undefined ? { kind: "timed-out", waiting, failures } : { kind: "answer", ...unavailable });
      };
      const onCaller = (): void => finish({ kind: "aborted" });

      if (call.caller?.aborted) return finish({ kind: "aborted" });
      if (call.budget.aborted) return finish({ kind: "timed-out", waiting: [], failures });
      call.budget.addEventListener("abort", onBudget, { once: true });
      call.caller?.addEventListener("abort", onCaller, { once: true });
      start();
    });
  }

  /** Where a call starts: after the endpoint the newest unanswered attempt of any of its keys waits on; else the current one. */
  #firstFor(keys: readonly string[]): number {
    let newest: Unanswered | undefined;
    for (const key of keys) {
      for (const attempt of this.#unanswered.get(key) ?? []) if (newest === undefined || attempt.seq > newest.seq) newest = attempt;
    }
    return newest === undefined ? this.#current : (newest.index + 1) % this.endpoints.length;
  }

  /** Records an attempt as unanswered under each key; the function returned forgets it (once). */
  #register(keys: readonly string[], index: number): () => void {
    const attempt: Unanswered = { index, seq: ++this.#seq };
    for (const key of keys) {
      const list = this.#unanswered.get(key);
      if (list === undefined) this.#unanswered.set(key, [attempt]);
      else list.push(attempt);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const key of keys) {
        const list = this.#unanswered.get(key);
        if (list === undefined) continue;
        const kept = list.filter((each) => each !== attempt);
        if (kept.length === 0) this.#unanswered.delete(key);
        else this.#unanswered.set(key, kept);
      }
    };
  }

  /** The endpoint failed a call: if the next call would have gone to it, it goes to the one after. */
  #passOver(index: number): void {
    if (this.#current === index) this.#current = (index + 1) % this.endpoints.length;
  }
}
