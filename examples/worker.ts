/** A worker that does its job only while it is the primary scheduler. Run several; one works. */
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { PrimaryElector } from "ha-module/sdk";

const elector = new PrimaryElector({ utype: "scheduler", endpoint: process.env["HA_ENDPOINT"] ?? "http://127.0.0.1:7071/api", address: hostname() });
let work: Promise<void> = Promise.resolve();

// `signal` is aborted when this term ends (demotion, stop()), before `demoted` is emitted.
elector.on("elected", ({ epoch, signal }) => {
  work = schedule(epoch, signal);
});
// Returned promise: stop() waits for the work to end before it releases the lease.
elector.on("demoted", () => work);
elector.on("error", (error) => console.warn(`ha: ${error.message}`));
process.once("SIGTERM", () => void elector.stop());
elector.start();

async function schedule(epoch: number, signal: AbortSignal): Promise<void> {
  // isPrimary() as well: after a process pause it is false before any timer has run.
  while (!signal.aborted && elector.isPrimary()) {
    // Send `epoch` with every write; the store refuses epochs lower than the highest it saw.
    console.log(`scheduling as primary, epoch ${epoch}`);
    await sleep(1000, undefined, { signal }).catch(() => undefined);
  }
}
