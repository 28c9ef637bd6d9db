import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedPostgres } from "../../shared/host/embedded-postgres.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import { call, errorCodeOf, primaryOf } from "../helpers/e2e-http.js";
import { crashServer, startTestPostgres, urlWithPassword } from "../helpers/postgres.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * Several real `ha-module serve` over one real PostgreSQL behave as one service: each
 * participant talks to another instance, and they agree on one primary; a token one
 * instance issued is taken by another. Then PostgreSQL is killed (SIGKILL of the server
 * and its backends, a crash) under load and started again on its data and port: every
 * instance answers 503 StoreUnavailable while it is down, nothing any instance answered is
 * lost, and the role stays with its holder, under its epoch.
 */
const I = 500;
/** Long enough that a crash recovery on a busy 2-core machine ends before the holder's deadline (sentAt + T − I). */
const T = 10_000;
const BUDGET = 500;
const ROLE = "pg-role";
const INSTANCES = 3;

interface Event {
  readonly who: string;
  readonly kind: "elected" | "demoted";
  readonly epoch: number;
  readonly at: number;
}

describe("several ha-module serve over one PostgreSQL", () => {
  let dir: string;
  let postgres: EmbeddedPostgres;
  const instances: ServiceProcess[] = [];
  const electors: Array<{ name: string; elector: PrimaryElector }> = [];
  const events: Event[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ha-pg-instances-"));
    chmodSync(dir, 0o755); // under root the server runs as nobody, who must enter it
    // Durable (fsync on): the crash below must lose nothing that was answered.
    postgres = await startTestPostgres({ dataDir: join(dir, "pg"), durable: true });
    const env = {
      HA_STORE: "postgres",
      HA_POSTGRES_URL: urlWithPassword(postgres),
      HA_POSTGRES_SCHEMA: `instances${process.pid}`,
      HA_INTERVAL_MS: String(I),
      HA_TIMEOUT_MS: String(T),
      HA_STORE_TIMEOUT_MS: String(BUDGET),
      HA_LEASE_SECRET: "",
    };
    // One at a time: the first creates the tables, the others find them.
    for (let n = 0; n < INSTANCES; n += 1) instances.push(await startServiceProcess(env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(electors.map(({ elector }) => elector.stop()));
    await Promise.all(instances.map((instance) => instance.stop()));
    await postgres?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("agree on one primary, each participant on another instance, and take each other's tokens", { timeout: 60_000 }, async () => {
    instances.forEach((instance, n) => {
      const name = `p${n}`;
      const elector = new PrimaryElector({ utype: ROLE, transport: new HaClient({ endpoint: instance.url }), address: name });
      elector.on("elected", ({ epoch }) => void events.push({ who: name, kind: "elected", epoch, at: performance.now() }));
      elector.on("demoted", ({ epoch }) => void events.push({ who: name, kind: "demoted", epoch, at: performance.now() }));
      elector.on("error", () => undefined); // 503s while PostgreSQL is down are expected below
      elector.start();
      electors.push({ name, elector });
    });
    const holder = await waitFor(() => electors.find(({ elector }) => elector.isPrimary()), 30_000);
    await sleep(3 * I);
    expect(electors.filter(({ elector }) => elector.isPrimary()).map(({ name }) => name)).toEqual([holder.name]);
    const views = await Promise.all(instances.map((instance) => call(instance.url, "GET", `/primary/${ROLE}`)));
    for (const view of views) expect(primaryOf(view)).toMatchObject({ address: holder.name, epoch: views[0]!.body["epoch"] });

    // A token issued by the first instance, released through the last: a release, not a revoke.
    const acquired = await call(instances[0]!.url, "PUT", "/primary/pg-token", { uuid: "token-holder" });
    expect(acquired.status).toBe(200);
    const released = await call(instances[INSTANCES - 1]!.url, "DELETE", `/primary/pg-token?uuid=token-holder&lease=${encodeURIComponent(acquired.body["lease"] as string)}`);
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    expect(primaryOf(released)).toBeNull();
  });

  it("PostgreSQL killed and restarted under load: 503 StoreUnavailable while it is down, nothing answered lost, no role moved", { timeout: 120_000 }, async () => {
    const holder = electors.find(({ elector }) => elector.isPrimary())!;
    const term = events.filter((event) => event.who === holder.name && event.kind === "elected").pop()!;
    const mark = events.length;

    // Load: acquisitions of fresh roles through every instance, each answered one remembered.
    const answered = new Map<string, number>();
    let loading = true;
    let sent = 0;
    const load = (async () => {
      while (loading) {
        const batch = Array.from({ length: 6 }, () => {
          sent += 1;
          const utype = `load-${sent}`;
          const instance = instances[sent % INSTANCES]!;
          return call(instance.url, "PUT", `/primary/${utype}`, { uuid: `u${sent}` }).then(
            (reply) => {
              if (reply.status === 200) answered.set(utype, reply.body["epoch"] as number);
            },
            () => undefined,
          );
        });
        await Promise.all(batch);
      }
    })();
    await sleep(1000);
    const answeredBeforeCrash = answered.size;
    expect(answeredBeforeCrash).toBeGreaterThan(0);

    // The crash: the server and every backend at once.
    await crashServer(postgres);
    const probes = await Promise.all(instances.map((instance) => call(instance.url, "GET", `/primary/${ROLE}`)));
    for (const probe of probes) {
      expect(probe.status).toBe(503);
      expect(errorCodeOf(probe)).toBe("StoreUnavailable");
    }
    await sleep(1000);
    postgres = await startTestPostgres({ dataDir: join(dir, "pg"), durable: true, port: postgres.port });
    await sleep(4 * I);
    loading = false;
    await load;

    // Every answered acquisition is there, under the epoch it was answered with.
    const lost: string[] = [];
    for (const [utype, epoch] of answered) {
      // A read may still meet a pooled connection the crash broke: that is a 503 the caller
      // asks again after (as any client does), not a lost write, which reads 200 with another epoch.
      let view = await call(instances[0]!.url, "GET", `/primary/${utype}`);
      for (let retry = 0; view.status === 503 && retry < 20; retry += 1) {
        await sleep(I);
        view = await call(instances[0]!.url, "GET", `/primary/${utype}`);
      }
      if (view.status !== 200 || view.body["epoch"] !== epoch) lost.push(`${utype}: ${view.status} ${JSON.stringify(view.body)}`);
    }
    expect(lost).toEqual([]);
    expect(answered.size).toBeGreaterThan(answeredBeforeCrash);

    // The role did not move: its holder never stepped down, nobody else was elected, and the epoch is the same.
    expect(events.slice(mark)).toEqual([]);
    expect(holder.elector.isPrimary()).toBe(true);
    const after = await call(instances[1]!.url, "GET", `/primary/${ROLE}`);
    expect(primaryOf(after)).toMatchObject({ address: holder.name, epoch: term.epoch });
    for (const instance of instances) expect(instance.output()).not.toMatch(/^\s+at /m);
  });
});

async function waitFor<T>(find: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(20);
  }
}
