import { setTimeout as sleep } from "node:timers/promises";
import type { LeaseTransport } from "../sdk/index.js";
import type { LeaseTiming } from "../contract/timing.js";

const RETRY_DELAY_MS = 1000;
const CALL_TIMEOUT_MS = 5000;

/**
 * I and T, from one GetPrimary, before `run` competes: the grace must be checked against
 * them before the command can start. A service that does not answer yet is asked again
 * every second, as the elector itself would, while `onFailure` says to keep trying;
 * undefined when it says to stop, or when `abortSignal` ends the wait first.
 */
export async function learnServiceTiming(
  transport: LeaseTransport,
  utype: string,
  abortSignal: AbortSignal,
  onFailure: (error: Error) => boolean,
): Promise<LeaseTiming | undefined> {
  while (!abortSignal.aborted) {
    try {
      const { intervalMs, timeoutMs } = await transport.getPrimary(utype, { abortSignal, timeoutInMs: CALL_TIMEOUT_MS });
      return { intervalMs, timeoutMs };
    } catch (error) {
      if (abortSignal.aborted) break;
      if (!onFailure(error instanceof Error ? error : new Error(String(error)))) break;
    }
    await sleep(RETRY_DELAY_MS, undefined, { signal: abortSignal }).catch(() => undefined);
  }
  return undefined;
}
