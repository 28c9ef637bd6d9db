import type { InvocationContext } from "./azure-functions.js";
import type { Runtime } from "./runtime.js";

/**
 * A function that runs on a schedule rather than on a request (the sweeper), declared once
 * in functions/timers.ts: Azure registers it as a timer trigger, and the local host runs
 * the same handler on a timer of the same period.
 */
export interface TimerOperation {
  /** The function's name in Azure. */
  readonly name: string;
  readonly handler: (runtime: Runtime, context: InvocationContext) => Promise<void>;
}
