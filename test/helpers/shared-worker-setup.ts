import { afterAll } from "vitest";
import { processLoopLag } from "../../shared/service/loop-lag.js";
import { processLoopLoad } from "../../shared/service/loop-load.js";
import { processStallMonitor } from "../../shared/service/stall-monitor.js";

/**
 * Run after each file of the "shared" project (vitest.config.ts): createRuntime starts the
 * process's own monitors, and in a worker shared by many files they would run on into the
 * next file. There a CPU-bound test that held the event loop for seconds is a stall of this
 * process to the stall monitor, which then dates the next file's requests from before it:
 * every request of a handler test answered 503 (its store budget spent) on a busy CI
 * machine. Each file starts them afresh.
 */
afterAll(() => {
  processStallMonitor.stop();
  processLoopLag.stop();
  processLoopLoad.stop();
});
