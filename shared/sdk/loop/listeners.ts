/**
 * A small typed event registry whose emit awaits what the handlers return. The elector
 * needs that for stop(): the user's `demoted` handlers finish their work before the lease
 * is released.
 *
 * A handler that throws or rejects never disturbs the emitter or the other handlers. It
 * is passed to `onHandlerError`, which answers whether anyone heard it (the elector feeds
 * it to its `error` listeners). If nobody did, it is rethrown asynchronously, as Node's
 * EventEmitter lets such an error escape: it reaches process 'uncaughtException' (which,
 * unhandled, ends the process) and is never silently dropped, so a bug in a handler, or
 * an assertion a test put in one, cannot vanish.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- interfaces have no index signature
export class Listeners<Events extends Record<keyof Events, any>> {
  readonly #handlers = new Map<keyof Events, Set<(payload: never) => unknown>>();

  constructor(private readonly onHandlerError: (error: unknown, event: keyof Events) => boolean) {}

  /** Adds `handler` for `event`. */
  on<E extends keyof Events>(event: E, handler: (payload: Events[E]) => unknown): void {
    let set = this.#handlers.get(event);
    if (set === undefined) {
      set = new Set();
      this.#handlers.set(event, set);
    }
    set.add(handler as (payload: never) => unknown);
  }

  /** Removes `handler` for `event`. */
  off<E extends keyof Events>(event: E, handler: (payload: Events[E]) => unknown): void {
    this.#handlers.get(event)?.delete(handler as (payload: never) => unknown);
  }

  /** How many handlers `event` has. */
  count(event: keyof Events): number {
    return this.#handlers.get(event)?.size ?? 0;
  }

  /** Calls every handler in order of registration; resolves when all have settled. */
  async emit<E extends keyof Events>(event: E, payload: Events[E]): Promise<void> {
    const pending: Promise<unknown>[] = [];
    for (const handler of [...(this.#handlers.get(event) ?? [])]) {
      try {
        const result = (handler as (payload: Events[E]) => unknown)(payload);
        if (result instanceof Promise) pending.push(result.catch((error: unknown) => this.#handlerFailed(error, event)));
      } catch (error) {
        this.#handlerFailed(error, event);
      }
    }
    await Promise.all(pending);
  }

  #handlerFailed(error: unknown, event: keyof Events): void {
    let heard = false;
    try {
      heard = this.onHandlerError(error, event);
    } catch (reportError) {
      rethrowLater(reportError);
    }
    if (!heard) rethrowLater(error);
  }
}

/** Out of every promise chain: the emitter's loop goes on, the error reaches 'uncaughtException'. */
function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

/**
 * The registry of an SDK object that has an `error` event (the elector, the member session,
 * the members watcher): a handler that throws is reported through `error`; with no `error`
 * listener, or when an `error` handler itself throws (feeding it back would loop), it is
 * rethrown asynchronously, as Node's EventEmitter would: never dropped.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- interfaces have no index signature
export class ReportingListeners<Events extends Record<keyof Events, any> & { error: Error }> extends Listeners<Events> {
  constructor() {
    super((error, event) => {
      if (event === "error" || this.count("error") === 0) return false;
      void this.emit("error", asError(error) as Events["error"]);
      return true;
    });
  }

  /** Tells the `error` listeners, if there are any (a failed call is no crash: nobody listening is fine). */
  report(error: unknown): void {
    if (this.count("error") > 0) void this.emit("error", asError(error) as Events["error"]);
  }
}

/**
 * The base of every SDK object with events (PrimaryElector, MemberSession, MembersWatcher):
 * chainable on() and off(), and the one registry its events go through (`listeners`: a
 * throwing handler is reported through `error`, never dropped).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- interfaces have no index signature
export abstract class Evented<Events extends Record<keyof Events, any> & { error: Error }> {
  /** The registry on() and off() write and the object emits through. */
  protected readonly listeners = new ReportingListeners<Events>();

  /** Adds `handler` for `event`; returns this object, for chaining. */
  on<E extends keyof Events>(event: E, handler: (payload: Events[E]) => unknown): this {
    this.listeners.on(event, handler);
    return this;
  }

  /** Removes `handler` for `event`; returns this object. */
  off<E extends keyof Events>(event: E, handler: (payload: Events[E]) => unknown): this {
    this.listeners.off(event, handler);
    return this;
  }
}

/** Anything thrown, as an Error. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
