import { ConfigError } from "../config/config-error.js";
import type { InvocationContext } from "./azure-functions.js";
import type { Runtime } from "./runtime.js";
import type { TimerOperation } from "./timer.js";

/** The part of @azure/functions' `app` that timer registration uses; tests pass a recorder. */
export interface TimerApp {
  timer(name: string, options: { schedule: string; runOnStartup?: boolean; handler: (timer: unknown, context: InvocationContext) => Promise<void> }): void;
}

/**
 * Registers each timer operation as an Azure Functions timer trigger on `schedule` (an
 * NCRONTAB expression, HA_SWEEP_SCHEDULE). The Functions host runs a timer trigger on one
 * instance at a time (a blob lease in the host storage); the handler is written to be safe
 * if two ever overlap anyway (every write is conditional). A failure is logged and thrown,
 * so the run shows as failed; the next run starts over. While a setting is bad (azure-app.ts)
 * each run does nothing.
 */
export function registerTimers(app: TimerApp, timers: readonly TimerOperation[], runtime: () => Promise<Runtime>, schedule: string): void {
  for (const timer of timers) {
    app.timer(timer.name, {
      schedule,
      handler: async (_timer, context) => {
        try {
          await timer.handler(await runtime(), context);
        } catch (error) {
          // A bad setting was logged once at start and is in every answer: not again every run.
          if (error instanceof ConfigError) return;
          context.error(`${timer.name}: ${error instanceof Error ? error.message : String(error)}`);
          throw error;
        }
      },
    });
  }
}
