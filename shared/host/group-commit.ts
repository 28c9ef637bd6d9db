interface Waiters {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(reason: unknown): void;
}

/**
 * Runs `save` on behalf of many writers, never two saves at once, so that a burst of
 * writes costs about two saves instead of one each.
 *
 * Guarantee: `flush()` resolves only after a save that *started after flush() was
 * called* has succeeded. A writer calls it once its change is in memory, so the save it
 * waits for read that change. A save already running when flush() is called does not
 * count: it may have read the state before the change. Every flush called while a save
 * runs shares the one next save, which starts the moment the running one ends. A failed
 * save rejects exactly the flushes that waited for it; the next flush starts a new save
 * (which writes the whole state, so a later success makes up for the failure).
 */
export class GroupCommit {
  readonly #save: () => Promise<void>;
  #running = false;
  #next: Waiters | undefined;

  constructor(save: () => Promise<void>) {
    this.#save = save;
  }

  flush(): Promise<void> {
    if (!this.#running) return this.#start();
    this.#next ??= waiters();
    return this.#next.promise;
  }

  #start(): Promise<void> {
    this.#running = true;
    const saved = Promise.resolve().then(() => this.#save());
    const finished = (): void => {
      // Hand over in the same callback, so no flush can slip in and start a second save.
      const next = this.#next;
      this.#next = undefined;
      this.#running = false;
      if (next !== undefined) this.#start().then(next.resolve, next.reject);
    };
    saved.then(finished, finished);
    return saved;
  }
}

function waiters(): Waiters {
  let resolve!: () => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<void>((resolvePromise, rejectPromise) => {
    resolve = resolvePromise;
    reject = rejectPromise;
  });
  return { promise, resolve, reject };
}
