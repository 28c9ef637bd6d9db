/**
 * A deterministic simulation of electors sharing one lease service (TigerBeetle VOPR
 * style): simulated time, a simulated network with delays and losses, process pauses, and
 * one seeded PRNG per run. The real LeaseService runs over a MemoryLeaseStore with the
 * simulated clock as ha_time; the real PrimaryElector runs on a simulated monotonic clock.
 */
import { LeaseService } from "../../shared/lease/lease-service.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import type { ElectorClock, TimerHandle } from "../../shared/sdk/elector-clock.js";
import { HaRequestError } from "../../shared/sdk/ha-request-error.js";
import type {
  CallOptions,
  HeartbeatRequest,
  HeartbeatResult,
  LeaseTransport,
  LeaseView,
  ReleaseOptions,
  ReleaseResult,
} from "../../shared/sdk/lease-transport.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";

/** mulberry32: small, fast, and good enough to drive a simulation from one 32-bit seed. */
export class Prng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}

interface SimEvent {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
  cancelled: boolean;
}

/** Simulated real time and its event queue (a binary heap ordered by time, then insertion). */
export class SimWorld {
  now = 0;
  #seq = 0;
  readonly #heap: SimEvent[] = [];

  schedule(at: number, run: () => void): SimEvent {
    const event: SimEvent = { at: Math.max(at, this.now), seq: ++this.#seq, run, cancelled: false };
    const heap = this.#heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
    return event;
  }

  /** Runs events up to `until`; after each one (and the microtasks it started), `check`. */
  async runUntil(until: number, check: () => Promise<void>): Promise<void> {
    for (;;) {
      const next = this.#heap[0];
      if (next === undefined || next.at > until) break;
      this.#pop();
      if (next.cancelled) continue;
      this.now = next.at;
      next.run();
      await drainMicrotasks();
      await check();
    }
    this.now = until;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) break;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Lets every promise continuation started by an event run; no time passes. */
function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * One participant's process: its own monotonic clock (offset and rate error) and timers.
 * While paused nothing inside it runs; its due timers and arrived answers wait, in order,
 * and run the moment it resumes, as after SIGSTOP/SIGCONT.
 */
export class SimProcess implements ElectorClock {
  #paused = false;
  readonly #waiting: Array<() => void> = [];

  constructor(
    private readonly world: SimWorld,
    /** Local clock = offset + rate × simulated time. */
    readonly rate: number,
    readonly offset: number,
  ) {}

  now(): number {
    return this.offset + this.rate * this.world.now;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timer = { cancelled: false };
    this.world.schedule(this.world.now + Math.max(0, delayMs) / this.rate, () =>
      this.post(() => {
        if (!timer.cancelled) callback();
      }),
    );
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    (handle as { cancelled: boolean }).cancelled = true;
  }

  /** Runs `run` inside this process now, or the moment it resumes. */
  post(run: () => void): void {
    if (this.#paused) {
      this.#waiting.push(run);
    } else {
      run();
    }
  }

  get paused(): boolean {
    return this.#paused;
  }

  pause(): void {
    this.#paused = true;
  }

  /** What waited runs in order, each as its own event, so promises settle in between. */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    for (const run of this.#waiting.splice(0)) this.world.schedule(this.world.now, run);
  }
}

export interface NetworkFaults {
  /** Probability that a request, or its answer, is lost (the caller sees a timeout). */
  lossRate: number;
  /** Each direction takes 0..maxDelayMs. */
  maxDelayMs: number;
  /** Probability that the service answers 503 instead of doing the call. */
  unavailableRate: number;
}

/** The shared lease service with the simulated clock as ha_time. */
export function createSimService(world: SimWorld, timing: { intervalMs: number; timeoutMs: number }): { service: LeaseService; store: MemoryLeaseStore } {
  const store = new MemoryLeaseStore();
  const service = new LeaseService({
    store,
    clock: { now: () => world.now },
    timing,
    tokens: new LeaseTokenSigner("simulation-secret-simulation-secret"),
    storeTimeoutMs: 60_000,
  });
  return { service, store };
}

/**
 * One process's link to the service. A request travels for a random delay, the service
 * handles it at that simulated instant, and the answer travels back; either leg may be
 * lost. Timeouts run on the process's own timers, so a paused process times out late.
 */
export class SimTransport implements LeaseTransport {
  constructor(
    private readonly world: SimWorld,
    private readonly process: SimProcess,
    private readonly service: LeaseService,
    private readonly faults: () => NetworkFaults,
    private readonly rng: Prng,
  ) {}

  getPrimary(utype: string, options?: CallOptions): Promise<LeaseView> {
    return this.#send(() => this.service.getPrimary(utype), options);
  }

  heartbeat(utype: string, request: HeartbeatRequest, options?: CallOptions): Promise<HeartbeatResult> {
    return this.#send(
      () => this.service.heartbeat({ utype, uuid: request.uuid, address: request.address, lease: request.lease }),
      options,
    );
  }

  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult> {
    return this.#send(() => this.service.release({ utype, uuid, lease: options?.lease }), options);
  }

  #send<T>(handle: () => Promise<T>, options: CallOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      let timer: TimerHandle | undefined;
      const finish = (settle: () => void): void => {
        if (done) return;
        done = true;
        if (timer !== undefined) this.process.clearTimeout(timer);
        options.abortSignal?.removeEventListener("abort", onAbort);
        settle();
      };
      const onAbort = (): void => finish(() => reject(options.abortSignal!.reason));
      options.abortSignal?.addEventListener("abort", onAbort, { once: true });
      if (options.timeoutInMs !== undefined) {
        timer = this.process.setTimeout(
          () => finish(() => reject(new HaRequestError(`no answer within ${options.timeoutInMs} ms`, "Timeout", undefined))),
          options.timeoutInMs,
        );
      }
      const faults = this.faults();
      if (this.rng.chance(faults.lossRate)) return;
      const unavailable = this.rng.chance(faults.unavailableRate);
      const answerLost = this.rng.chance(faults.lossRate);
      const there = this.rng.int(0, faults.maxDelayMs);
      const back = this.rng.int(0, faults.maxDelayMs);
      this.world.schedule(this.world.now + there, () => {
        const handled: Promise<T> = unavailable
          ? Promise.reject(new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503))
          : handle();
        handled.then(
          (value) => this.#answer(answerLost, back, () => finish(() => resolve(value))),
          (error: unknown) => this.#answer(answerLost, back, () => finish(() => reject(error))),
        );
      });
    });
  }

  #answer(lost: boolean, delay: number, deliver: () => void): void {
    if (lost) return;
    this.world.schedule(this.world.now + delay, () => this.process.post(deliver));
  }
}
