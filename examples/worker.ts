/** A worker that does its job only while it is the primary scheduler. Run several; one works. */
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { PrimaryElector } from "ha-module/sdk";

const elector = new PrimaryElector({
  utype: "scheduler",
  // As the command line reads them: the service's base URL (ending in /api) and a function key.
  endpoint: process.env["HA_ENDPOINT"] ?? "http://127.0.0.1:7071/api",
  apiKey: process.env["HA_API_KEY"] || undefined,
  address: hostname(),
});
let work: Promise<void> = Promise.resolve();

// `signal` is aborted when this term ends (demotion, stop()), before `demoted` is emitted.
elector.on("elected", ({ epoch, signal }) => {
  console.log(`elected: primary for scheduler at epoch ${epoch}`);
  work = schedule(epoch, signal);
});
// Returned promise: stop() waits for the work to end before it releases the lease.
elector.on("demoted", ({ reason }) => {
  console.log(`demoted (${reason}): no longer primary`);
  return work;
});
elector.on("error", (error) => console.warn(`ha: ${error.message}`));
// Ctrl-C as well as a supervisor's SIGTERM: step down and release, so a standby takes over
// within about I instead of waiting for the lease to expire.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void elector.stop());
elector.start();

async function schedule(epoch: number, signal: AbortSignal): Promise<void> {
  // isPrimary() as well: after a process pause it is false before any timer has run.
  while (!signal.aborted && elector.isPrimary()) {
    // Send `epoch` with every write to the systems you write to; they refuse an epoch lower
    // than the highest they accepted (ha-module's own store only hands epochs out).
    console.log(`scheduling as primary, epoch ${epoch}`);
    await sleep(1000, undefined, { signal }).catch(() => undefined);
  }
}
