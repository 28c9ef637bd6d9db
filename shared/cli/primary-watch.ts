import type { LeaseView, PrimaryView } from "../contract/lease-view.js";
import type { ElectorClock, TimerHandle } from "../sdk/loop/elector-clock.js";
import type { CallOptions } from "../sdk/transport/lease-transport.js";

export interface PrimaryWatchOptions {
  readonly getPrimary: (utype: string, options: CallOptions) => Promise<LeaseView>;
  readonly utype: string;
  readonly clock: ElectorClock;
  /** One line per change of the role's primary (and the first observation). */
  readonly onChange: (view: LeaseView) => void;
  /** A failed poll: return true to keep watching, false to stop (a failure retrying cannot fix). */
  readonly onFailure: (error: Error) => boolean;
  /** Ends the watch. */
  readonly abortSignal: AbortSignal;
  /** The poll interval until the service has told us I. Default 1000 ms. */
  readonly retryDelayMs?: number;
}

/**
 * `ha-module primary <utype> --watch`: observes the role without competing. Polls
 * GetPrimary every I (as the service reports it), and also just after the live primary's
 * lease would expire, so that "no primary" is seen within a round trip of the expiry
 * rather than up to I later. Reports the first view and then every change of who holds
 * the role: another uuid, a new epoch, another address, a revoke, or no primary.
 * Resolves with "stopped" when aborted, "failed" when onFailure says to stop.
 */
export function watchPrimary(options: PrimaryWatchOptions): Promise<"stopped" | "failed"> {
  const { clock, abortSignal } = options;
  return new Promise((resolve) => {
    let timer: TimerHandle | undefined;
    let last: string | undefined;
    let intervalMs = options.retryDelayMs ?? 1000;
    const finish = (outcome: "stopped" | "failed"): void => {
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      resolve(outcome);
    };
    abortSignal.addEventListener("abort", () => finish("stopped"), { once: true });
    const poll = async (): Promise<void> => {
      timer = undefined;
      const sentAt = clock.now();
      let view: LeaseView;
      try {
        view = await options.getPrimary(options.utype, { abortSignal, timeoutInMs: Math.max(intervalMs, 1000) });
      } catch (error) {
        if (abortSignal.aborted) return;
        if (!options.onFailure(error instanceof Error ? error : new Error(String(error)))) return finish("failed");
        timer = clock.setTimeout(() => void poll(), Math.max(0, sentAt + intervalMs - clock.now()));
        return;
      }
      if (abortSignal.aborted) return;
      intervalMs = view.intervalMs;
      const key = identity(view);
      if (key !== last) {
        last = key;
        options.onChange(view);
      }
      // The answer left the service before it reached us, so the lease expires at or
      // before now + expiresInMs; the +1 is because it is live until it is older than T.
      const expiry = view.primary === null ? Number.POSITIVE_INFINITY : clock.now() + Math.max(0, view.primary.expiresInMs) + 1;
      const next = Math.min(sentAt + intervalMs, expiry);
      timer = clock.setTimeout(() => void poll(), Math.max(0, next - clock.now()));
    };
    if (!abortSignal.aborted) void poll();
    else finish("stopped");
  });
}

/** What a watcher cares about: who holds the role, at which epoch and address, revoked or not. */
function identity(view: LeaseView): string {
  const primary: PrimaryView | null = view.primary;
  return primary === null ? `none#${view.epoch}` : JSON.stringify([primary.uuid, primary.epoch, primary.address, primary.revoked]);
}
