import type { CallOptions } from "../transport/lease-transport.js";

/**
 * One call of the elector, with a budget (whole milliseconds, at least 1, as
 * AbortSignal.timeout needs) and cut off when `signal` aborts. Resolves to the answer, or
 * to undefined: after a failure, which `onFailure` hears, or after the cut-off, which is no
 * failure (the elector itself moved on).
 */
export async function callWithin<T>(
  budgetMs: number,
  signal: AbortSignal,
  send: (options: Required<CallOptions>) => Promise<T>,
  onFailure: (error: unknown) => void,
): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  // A controller of its own, so that a transport that never removes its listeners cannot pile them onto `signal`.
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    return await send({ timeoutInMs: Math.max(1, Math.ceil(budgetMs)), abortSignal: controller.signal });
  } catch (error) {
    if (!controller.signal.aborted) onFailure(error);
    return undefined;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
