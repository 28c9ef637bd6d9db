/** A worker that does its job only while it is the primary scheduler. Run several; one works. */
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { PrimaryElector } from "ha-module/sdk";

const elector = new PrimaryElector({ utype: "scheduler", endpoint: process.env["HA_ENDPOINT"] ?? "http://127.0.0.1:7071/api", address: hostname() });
let stopWork = new AbortController();
let work: Promise<void> = Promise.resolve();

elector.on("elected", ({ epoch }) => {
  stopWork = new AbortController();
  work = schedule(epoch, stopWork.signal);
});
// Returned promise: stop() waits for the work to end before it releases the lease.
elector.on("demoted", async () => {
  stopWork.abort();
  await work;
});
elector.on("error", (error) => console.warn(`ha: ${error.message}`));
process.once("SIGTERM", () => void elector.stop());
elector.start();

async function schedule(epoch: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted && elector.isPrimary()) {
    // Send `epoch` with every write; the store refuses epochs lower than the highest it saw.
    console.log(`scheduling as primary, epoch ${epoch}`);
    await sleep(1000, undefined, { signal }).catch(() => undefined);
  }
}
