import { setTimeout as sleep } from "node:timers/promises";
import type { LeaseTransport } from "../sdk/index.js";
import type { LeaseTiming } from "../contract/timing.js";
import { isRefusal } from "../sdk/loop/poll-delays.js";

const RETRY_DELAY_MS = 1000;
/** After answers that retrying cannot fix (401, 404): 2 s, 4 s, … up to this, as the elector backs off up to T. */
const MAX_REFUSAL_DELAY_MS = 8000;
const CALL_TIMEOUT_MS = 5000;

/**
 * I and T, from one GetPrimary, before `run` competes: the grace must be checked against
 * them before the command can start. A service that does not answer yet is asked again
 * every second, as the elector itself would, while `onFailure` says to keep trying (after
 * a 401 or 404 less and less often, up to every 8 s); undefined when it says to stop, or
 * when `abortSignal` ends the wait first.
 */
export async function learnServiceTiming(
  transport: LeaseTransport,
  utype: string,
  abortSignal: AbortSignal,
  onFailure: (error: Error) => boolean,
): Promise<LeaseTiming | undefined> {
  let refusals = 0;
  while (!abortSignal.aborted) {
    try {
      const { intervalMs, timeoutMs } = await transport.getPrimary(utype, { abortSignal, timeoutInMs: CALL_TIMEOUT_MS });
      return { intervalMs, timeoutMs };
    } catch (error) {
      if (abortSignal.aborted) break;
      if (!onFailure(error instanceof Error ? error : new Error(String(error)))) break;
      refusals = isRefusal(error) ? refusals + 1 : 0;
    }
    const delayMs = refusals === 0 ? RETRY_DELAY_MS : Math.min(MAX_REFUSAL_DELAY_MS, RETRY_DELAY_MS * 2 ** refusals);
    await sleep(delayMs, undefined, { signal: abortSignal }).catch(() => undefined);
  }
  return undefined;
}
