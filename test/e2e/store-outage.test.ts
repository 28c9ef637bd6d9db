import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { startServe, startStoreProcess, type ServeProcess, type StoreProcess } from "../chaos/service-processes.js";
import type { EmbeddedPostgres } from "../../shared/host/embedded-postgres.js";
import { crashServer, signalServer, startTestPostgres, urlWithPassword } from "../helpers/postgres.js";
import { checkRecordedResponses, recordResponse } from "../helpers/openapi-responses.js";
import { RecordingTransport } from "../helpers/recording-transport.js";

/**
 * The store alone fails while `ha-module serve` stays up: Azurite runs as its own process
 * (the durable store of `npm start`, test/chaos/azurite-process.ts), or a PostgreSQL
 * server (HA_STORE=postgres, its server process and every backend as one process group),
 * and is frozen with SIGSTOP, then killed and started again on the same data and port. Two real electors hold
 * and watch one lease. For each outage: the service answers 503 StoreUnavailable within
 * its budget and never crashes or shows a stack trace; the holder stops being primary by
 * its deadline (sentAt + T − I); nobody is elected while the store is gone; the holder is
 * primary again within T + I of the store's return (sticky recovery); and epochs only grow.
 */
const I = 200;
const T = 2000;
const BUDGET = 500;
const UTYPE = "outage";
/**
 * Room for a loaded machine in the timing bounds (never in the safety checks): a CPU hog
 * on every core delays a process's timers and answers by a second or more.
 */
const SLACK = 3000;

interface Participant {
  readonly name: string;
  readonly elector: PrimaryElector;
  readonly transport: RecordingTransport;
}

interface Event {
  readonly who: string;
  readonly kind: "elected" | "demoted";
  readonly epoch: number;
  readonly uuid: string;
  readonly reason?: string;
  readonly at: number;
}

/** A store run beside `serve` that a test can freeze, thaw, kill and start again on its data and port. */
interface OutageStore {
  /** What `serve` needs to use it (HA_… settings). */
  readonly env: Record<string, string>;
  freeze(): void;
  thaw(): void;
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

type OnCrash = (what: string) => void;

/** Azurite as its own process, as test/chaos runs it. */
async function azuriteStore(dir: string, onCrash: OnCrash): Promise<OutageStore> {
  const start = (port: number): Promise<StoreProcess> =>
    startStoreProcess(join(dir, "azurite"), port, join(dir, "azurite.out"), (child, exit) => onCrash(`${child.name}: ${JSON.stringify(exit)}`));
  let store = await start(0);
  return {
    env: { HA_TABLE_CONNECTION_STRING: store.connectionString },
    freeze: () => store.process.signal("SIGSTOP"),
    thaw: () => store.process.signal("SIGCONT"),
    kill: async () => {
      store.process.expectExit();
      store.process.signal("SIGKILL");
      await store.process.exited;
    },
    restart: async () => {
      store = await start(store.port);
    },
    stop: async () => {
      store.process.expectExit();
      store.process.signal("SIGCONT");
      store.process.signal("SIGTERM");
      await store.process.exited;
    },
  };
}

/** A durable PostgreSQL (fsync on): its keeper, postmaster and every backend frozen or killed together. */
async function postgresStore(dir: string): Promise<OutageStore> {
  chmodSync(dir, 0o755); // under root the server runs as nobody, who must enter it
  const start = (port?: number): Promise<EmbeddedPostgres> => startTestPostgres({ dataDir: join(dir, "pg"), durable: true, ...(port === undefined ? {} : { port }) });
  let server = await start();
  return {
    env: { HA_STORE: "postgres", HA_POSTGRES_URL: urlWithPassword(server) },
    freeze: () => void signalServer(server, "SIGSTOP"),
    thaw: () => void signalServer(server, "SIGCONT"),
    kill: () => crashServer(server),
    restart: async () => {
      server = await start(server.port);
    },
    stop: async () => {
      signalServer(server, "SIGCONT");
      await server.close();
    },
  };
}

describeStoreOutage("Azurite", azuriteStore);
describeStoreOutage("PostgreSQL", postgresStore);

function describeStoreOutage(name: string, startStore: (dir: string, onCrash: OnCrash) => Promise<OutageStore>): void {
  describe(`the store (${name}) frozen or killed under a running ha-module serve`, () => {
    let dir: string;
    let store: OutageStore;
    let serve: ServeProcess;
    const crashes: string[] = [];
    const participants: Participant[] = [];
    const events: Event[] = [];

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "ha-store-outage-"));
      store = await startStore(dir, (crash) => crashes.push(crash));
      serve = await startServe({
        port: 0,
        dataDir: join(dir, "serve"),
        intervalMs: I,
        timeoutMs: T,
        outFile: join(dir, "serve.out"),
        env: { ...store.env, HA_STORE_TIMEOUT_MS: String(BUDGET) },
        onUnexpectedExit: (child, exit) => crashes.push(`${child.name}: ${JSON.stringify(exit)}`),
      });
      for (const name of ["a", "b"]) {
        const transport = new RecordingTransport(new HaClient({ endpoint: serve.url }));
        const elector = new PrimaryElector({ utype: UTYPE, transport, address: name });
        elector.on("elected", ({ uuid, epoch }) => void events.push({ who: name, kind: "elected", uuid, epoch, at: performance.now() }));
        elector.on("demoted", ({ uuid, epoch, reason }) => void events.push({ who: name, kind: "demoted", uuid, epoch, reason, at: performance.now() }));
        elector.on("error", () => undefined); // 503s and refused connections are expected here
        elector.start();
        participants.push({ name, elector, transport });
      }
    });

    afterAll(async () => {
      await Promise.all(participants.map((p) => p.elector.stop()));
      serve?.process.expectExit();
      serve?.process.signal("SIGTERM");
      await serve?.process.exited;
      await store?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const call = async (method: string, path: string, body?: object): Promise<{ status: number; body: unknown; ms: number }> => {
      const started = performance.now();
      const response = await fetch(`${serve.url}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await response.text();
      const parsed = JSON.parse(text) as unknown;
      recordResponse({ origin: new URL(serve.url).origin, method, path: `${new URL(serve.url).pathname}${path}`, status: response.status, contentType: response.headers.get("content-type"), body: parsed });
      return { status: response.status, body: parsed, ms: performance.now() - started };
    };

    /**
     * One outage: `begin` takes the store away, `end` brings it back; returns the measured
     * figures. `steadyMs`: how long the holder must have been primary first.
     */
    async function outage(steadyMs: number, begin: () => Promise<void>, end: () => Promise<void>): Promise<Record<string, number>> {
      const holder = await waitFor(() => participants.find((p) => p.elector.isPrimary()), 20_000);
      await sleep(steadyMs);
      expect(holder.elector.isPrimary()).toBe(true);
      const term = events.filter((e) => e.who === holder.name && e.kind === "elected").pop()!;
      const mark = events.length;
      // When the holder last reported itself primary, sampled every 5 ms.
      let lastPrimaryAt = performance.now();
      const sampler = setInterval(() => {
        if (holder.elector.isPrimary()) lastPrimaryAt = performance.now();
      }, 5);

      const from = performance.now();
      await begin();
      const probes = await Promise.all([call("GET", `/primary/${UTYPE}`), call("PUT", `/primary/${UTYPE}`, { uuid: "probe" }), call("GET", "/health")]);
      for (const probe of probes) {
        expect(probe.status).toBe(503);
        expect(probe.body).toMatchObject({ error: { code: "StoreUnavailable", message: expect.stringMatching(/^The lease store is (unavailable; retry shortly|unreachable)\.$/) } });
        expect(probe.ms).toBeLessThan(BUDGET + SLACK);
      }

      const demotion = await waitFor(() => events.slice(mark).find((e) => e.who === holder.name && e.kind === "demoted"), 2 * T + SLACK);
      clearInterval(sampler);
      const deadline = holder.transport.lastAcceptedSentAt(term.uuid, demotion.at)! + T - I;
      expect(demotion.reason).toBe("lease-expired");
      expect(lastPrimaryAt).toBeLessThanOrEqual(deadline);
      expect(demotion.at - deadline).toBeLessThan(SLACK);

      await sleep(Math.max(0, from + T + 500 - performance.now()));
      expect(events.slice(mark).filter((e) => e.kind === "elected")).toEqual([]);
      await end();
      const back = performance.now();
      const next = await waitFor(() => events.slice(mark).find((e) => e.kind === "elected"), 10_000);
      expect(next.at - back).toBeLessThan(T + I + SLACK);
      expect(next.epoch).toBeGreaterThan(term.epoch);
      // The outage was everyone's: the holder takes its role back (docs/protocol.md#sticky-recovery).
      expect(next.who).toBe(holder.name);
      return {
        answer503Ms: Math.round(Math.max(...probes.map((p) => p.ms))),
        stepDownAfterDeadlineMs: Math.round(demotion.at - deadline),
        lastPrimaryBeforeDeadlineMs: Math.round(deadline - lastPrimaryAt),
        primaryBackMs: Math.round(next.at - back),
      };
    }

    it("frozen (SIGSTOP) past T: 503 within the budget, the holder steps down by its deadline and is primary again within T + I of SIGCONT", async () => {
      const figures = await outage(
        3 * I,
        async () => store.freeze(),
        async () => store.thaw(),
      );
      console.log(`${name} frozen: ${JSON.stringify(figures)} (I=${I}, T=${T}, HA_STORE_TIMEOUT_MS=${BUDGET})`);
    });

    it("killed (SIGKILL) and started again on the same data and port: the same, and no epoch is lost", async () => {
      // Killed right after the term change that ended the freeze: a store that lost its last
      // answered writes (Azurite as shipped saves every 5 s) would hand the next primary an
      // epoch that is not higher.
      const figures = await outage(
        0,
        async () => store.kill(),
        async () => store.restart(),
      );
      console.log(`${name} killed: ${JSON.stringify(figures)} (I=${I}, T=${T}, HA_STORE_TIMEOUT_MS=${BUDGET})`);
    });

    it("every answer during the outages (the 503s included) is what the OpenAPI document says", async () => {
      const { checked, problems } = await checkRecordedResponses(serve.url);
      expect(problems).toEqual([]);
      expect(checked).toBe(6);
    });

    it("through both outages: epochs only grew, the service never crashed and never printed a stack trace", () => {
      const terms = events.filter((e) => e.kind === "elected").sort((x, y) => x.at - y.at);
      expect(terms.length).toBeGreaterThanOrEqual(3);
      terms.slice(1).forEach((term, index) => expect(term.epoch).toBeGreaterThan(terms[index]!.epoch));
      expect(crashes).toEqual([]);
      expect(serve.process.running()).toBe(true);
      expect(readFileSync(join(dir, "serve.out"), "utf8")).not.toMatch(/^\s+at /m);
    });
  });
}

async function waitFor<T>(find: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(10);
  }
}
