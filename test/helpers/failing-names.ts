/**
 * Wraps a lease or member store so that every call about `name` (a utype or a group: the
 * call's first argument, or its `utype` or `group`) fails with `error`, and every other
 * call goes through: one role or one group of a request meets a failing store while the
 * others are served, as a participant heartbeat's per-part answers must show.
 */
export function failingFor<T extends object>(store: T, name: string, error: Error): T {
  const about = (arg: unknown): boolean =>
    arg === name || (typeof arg === "object" && arg !== null && ((arg as { utype?: unknown }).utype === name || (arg as { group?: unknown }).group === name));
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => (about(args[0]) ? Promise.reject(error) : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}
