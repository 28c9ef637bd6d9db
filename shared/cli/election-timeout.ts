import type { PrimaryView } from "../contract/lease-view.js";
import type { ElectorClock } from "../sdk/loop/elector-clock.js";

/** What it reads of the elector: its events, and which uuid is its own. */
export interface Candidate {
  readonly uuid: string;
  on(event: "elected", handler: () => unknown): unknown;
  on(event: "primaryChanged", handler: (payload: { readonly primary: PrimaryView | null }) => unknown): unknown;
  on(event: "error", handler: (error: Error) => unknown): unknown;
}

/** Why `elect` or `run` gives up before being elected. */
export type NotElected =
  | { readonly reason: "timed-out"; readonly afterMs: number }
  | { readonly reason: "held"; readonly primary: PrimaryView }
  | { readonly reason: "failed"; readonly error: Error };

/**
 * `--timeout` of `elect` and `run`: resolves with why the candidate gave up, or never when
 * it is elected first (after that the timeout no longer applies). Armed at once, so the
 * time counts from the start of the command, whatever it does before competing.
 *
 * - `timeoutMs > 0`: gives up once `timeoutMs` passes without an election. A primary held
 *   by someone else is waited for meanwhile: its lease may run out, or be released.
 * - `cancel` aborted: never resolves, and the timer no longer holds the process open.
 * - `timeoutMs == 0` is "try once": gives up at the first sign that this attempt lost: an
 *   answer that shows another live primary, or a failed call.
 */
export function untilGivenUp(candidate: Candidate, timeoutMs: number, clock: ElectorClock, cancel?: AbortSignal): Promise<NotElected> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: NotElected | undefined): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      if (outcome !== undefined) resolve(outcome);
    };
    const timer = timeoutMs > 0 ? clock.setTimeout(() => settle({ reason: "timed-out", afterMs: timeoutMs }), timeoutMs) : undefined;
    // The command ended first (a usage error found after the timer was armed): never gives up.
    cancel?.addEventListener("abort", () => settle(undefined), { once: true });
    candidate.on("elected", () => settle(undefined));
    if (timeoutMs > 0) return;
    candidate.on("primaryChanged", ({ primary }) => {
      if (primary !== null && primary.uuid !== candidate.uuid) settle({ reason: "held", primary });
    });
    candidate.on("error", (error) => settle({ reason: "failed", error }));
  });
}

/** One line for people: why the candidate gave up on `utype`. */
export function describeNotElected(utype: string, outcome: NotElected): string {
  switch (outcome.reason) {
    case "timed-out":
      return `not elected for ${utype} within ${outcome.afterMs} ms (--timeout); giving up.`;
    case "held": {
      const { uuid, address, epoch, expiresInMs } = outcome.primary;
      return `${utype} is held by ${uuid}${address === null ? "" : ` at ${address}`} (epoch ${epoch}, ${expiresInMs} ms left on its lease); --timeout 0 tries once: giving up.`;
    }
    case "failed":
      // The error itself was printed as it happened.
      return "the attempt failed; --timeout 0 tries once: giving up.";
  }
}
