/**
 * A small typed event registry whose emit awaits what the handlers return. The elector
 * needs that for stop(): the user's `demoted` handlers finish their work before the lease
 * is released. A handler that throws or rejects is reported to `onHandlerError`, never to
 * the emitter.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- interfaces have no index signature
export class Listeners<Events extends Record<keyof Events, any>> {
  readonly #handlers = new Map<keyof Events, Set<(payload: never) => unknown>>();

  constructor(private readonly onHandlerError: (error: unknown, event: keyof Events) => void) {}

  on<E extends keyof Events>(event: E, handler: (payload: Events[E]) => unknown): void {
    let set = this.#handlers.get(event);
    if (set === undefined) {
      set = new Set();
      this.#handlers.set(event, set);
    }
    set.add(handler as (payload: never) => unknown);
  }

  off<E extends keyof Events>(event: E, handler: (payload: Events[E]) => unknown): void {
    this.#handlers.get(event)?.delete(handler as (payload: never) => unknown);
  }

  count(event: keyof Events): number {
    return this.#handlers.get(event)?.size ?? 0;
  }

  /** Calls every handler in order of registration; resolves when all have settled. */
  async emit<E extends keyof Events>(event: E, payload: Events[E]): Promise<void> {
    const pending: Promise<unknown>[] = [];
    for (const handler of [...(this.#handlers.get(event) ?? [])]) {
      try {
        const result = (handler as (payload: Events[E]) => unknown)(payload);
        if (result instanceof Promise) pending.push(result.catch((error: unknown) => this.onHandlerError(error, event)));
      } catch (error) {
        this.onHandlerError(error, event);
      }
    }
    await Promise.all(pending);
  }
}
