import { randomUUID } from "node:crypto";
import { InvocationContext } from "../http/azure-functions.js";
import type { Runtime } from "../http/runtime.js";
import type { TimerOperation } from "../http/timer.js";
import { systemMonotonicClock, type MonotonicTimers } from "../service/clock.js";
import type { HostLog } from "./serve-request.js";

export interface LocalTimersOptions {
  readonly timers: readonly TimerOperation[];
  readonly runtime: () => Promise<Runtime>;
  /** The timers' period (HA_SWEEP_SCHEDULE's, as Azure would fire them). */
  readonly periodMs: number;
  readonly log: HostLog;
  /** Monotonic time and timers; tests inject a fake one. */
  readonly clock?: MonotonicTimers;
}

export interface LocalTimers {
  /** Stops the timers and waits for a run in progress. */
  close(): Promise<void>;
}

/**
 * What the Functions host does for timer triggers, for the local host: each timer's
 * handler runs every period, first at once (a restarted service records its own downtime
 * as a gap right away). Runs of one timer never overlap (a run still going when the next
 * falls due makes that one skip, as the Functions host's singleton lock would), and a
 * failed run is logged; the next one starts over.
 */
export function startLocalTimers(options: LocalTimersOptions): LocalTimers {
  const clock = options.clock ?? systemMonotonicClock;
  let stopped = false;
  const running = new Set<Promise<void>>();
  const handles = new Map<TimerOperation, unknown>();

  for (const timer of options.timers) {
    let busy = false;
    const fire = (): void => {
      if (stopped) return;
      handles.set(timer, clock.setTimeout(fire, options.periodMs));
      if (busy) return;
      busy = true;
      const run = runOnce(timer, options).finally(() => {
        busy = false;
        running.delete(run);
      });
      running.add(run);
    };
    fire();
  }

  return {
    close: async () => {
      stopped = true;
      for (const handle of handles.values()) clock.clearTimeout(handle);
      await Promise.all([...running]);
    },
  };
}

async function runOnce(timer: TimerOperation, options: LocalTimersOptions): Promise<void> {
  const context = new InvocationContext({
    functionName: timer.name,
    invocationId: randomUUID(),
    logHandler: (level, ...args) => {
      if (level === "warning") options.log("warn", args.map(String).join(" "));
      if (level === "error" || level === "critical") options.log("error", args.map(String).join(" "));
    },
  });
  try {
    await timer.handler(await options.runtime(), context);
  } catch (error) {
    options.log("warn", `${timer.name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
