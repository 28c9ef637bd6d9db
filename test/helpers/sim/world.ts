/**
 * Simulated real time and its event queue (a binary heap ordered by time, then by
 * insertion, so that equal times run in a fixed order and a run replays exactly).
 */
interface WorldEvent {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
  /** Bookkeeping that starts no promise and changes nothing the checker sees (a stall monitor's tick). */
  readonly quiet: boolean;
  /** True when, by the time it falls due, the event has nothing left to do (a timer cleared meanwhile): it is dropped unjudged. */
  readonly void: (() => boolean) | undefined;
}

export class SimWorld {
  now = 0;
  events = 0;
  #seq = 0;
  readonly #heap: WorldEvent[] = [];

  schedule(at: number, run: () => void, quiet = false, isVoid?: () => boolean): void {
    const heap = this.#heap;
    heap.push({ at: Math.max(at, this.now), seq: ++this.#seq, run, quiet, void: isVoid });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  /**
   * Runs events up to `until`. After each one, and every promise continuation it started,
   * `check` judges the world; whatever it throws ends the run.
   */
  async runUntil(until: number, check: () => void): Promise<void> {
    // What the caller started before this call (a stop(), a start()) runs its continuations
    // now, at the time it was started, not at the next event that happens to drain them.
    await drainMicrotasks();
    for (;;) {
      const next = this.#heap[0];
      if (next === undefined || next.at > until) break;
      this.#pop();
      this.now = next.at;
      // A cleared timer would run nothing: nothing changed for the checker to judge either.
      if (next.void?.() === true) continue;
      this.events += 1;
      next.run();
      if (next.quiet) continue;
      await drainMicrotasks();
      check();
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

function before(a: WorldEvent, b: WorldEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Lets every promise continuation started by an event run; no simulated time passes. */
function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
