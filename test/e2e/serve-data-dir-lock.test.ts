import { once } from "node:events";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runServiceToExit, startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * docs/protocol.md#the-stores-durability-assumption: two local services can never share one data directory. Two services on one
 * .ha-data would each keep their own copy of the leases and grant one role twice.
 */
describe("HA_DATA_DIR belongs to one running service", () => {
  let dataDir: string;
  const running: ServiceProcess[] = [];

  beforeEach(async () => {
    dataDir = await realpath(await mkdtemp(join(tmpdir(), "ha-lock-")));
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((service) => service.stop()));
    await rm(dataDir, { recursive: true, force: true });
  });

  // A long T: a lease granted here must still be live when a restart on a loaded machine reads it.
  const onDisk = (): Record<string, string> => ({ HA_IN_MEMORY: "false", HA_DATA_DIR: dataDir, HA_INTERVAL_MS: "1000", HA_TIMEOUT_MS: "120000" });

  it("refuses a second service on the same directory with exit code 2, naming the variable and the holder's pid; a clean stop frees it", async () => {
    const first = await startServiceProcess(onDisk());
    running.push(first);
    const granted = await fetch(`${first.url}/primary/scheduler`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uuid: "first-holder" }),
    });
    expect(granted.status).toBe(200);

    const second = await runServiceToExit(onDisk(), 20_000);
    expect(second.code, second.output).toBe(2);
    expect(second.output).toContain("HA_DATA_DIR");
    expect(second.output).toContain(dataDir);
    expect(second.output).toContain(`pid ${first.child.pid}`);
    expect(second.output).not.toMatch(/\n\s+at /); // a message, not a stack trace

    // The first service is untouched and still the only one answering for the directory.
    const seen = (await (await fetch(`${first.url}/primary/scheduler`)).json()) as { primary: { uuid: string } };
    expect(seen.primary.uuid).toBe("first-holder");

    expect(await first.stop()).toBe(0);
    const next = await startServiceProcess(onDisk());
    running.push(next);
    expect((await fetch(`${next.url}/health`)).status).toBe(200);
  });

  it("does not let the lock of a SIGKILLed service block the next start, which sees its data", async () => {
    const crashed = await startServiceProcess(onDisk());
    const granted = await fetch(`${crashed.url}/primary/scheduler`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uuid: "crashed-holder" }),
    });
    expect(granted.status).toBe(200);
    const exited = once(crashed.child, "exit");
    crashed.child.kill("SIGKILL");
    await exited;

    const next = await startServiceProcess(onDisk());
    running.push(next);
    const seen = (await (await fetch(`${next.url}/primary/scheduler`)).json()) as { primary: { uuid: string } };
    expect(seen.primary.uuid).toBe("crashed-holder");
  });

  it("takes no lock with HA_IN_MEMORY=true: nothing is kept in the directory", async () => {
    const inMemory = { HA_IN_MEMORY: "true", HA_DATA_DIR: dataDir };
    running.push(await startServiceProcess(inMemory));
    running.push(await startServiceProcess(inMemory));
    const answers = await Promise.all(running.map(async (service) => (await fetch(`${service.url}/health`)).status));
    expect(answers).toEqual([200, 200]);
  });
});
