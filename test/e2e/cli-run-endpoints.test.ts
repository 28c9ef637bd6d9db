import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAzurite } from "../helpers/azurite.js";
import { startTestPostgres, urlWithPassword } from "../helpers/postgres.js";
import { CliProcess, isRunning, realDelay, runCli } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * Several `ha-module serve` instances on one store (one per head node, on-premises;
 * docs/deploy.md#several-instances-on-premises) and `ha-module run --endpoint a,b`: the
 * instance the runner talks to is killed, and later the other one, with the first back.
 * The role is kept through both: no demotion, the command keeps running, the epoch
 * unchanged. Both instances serve one store — an Azurite table, or a PostgreSQL schema — and
 * sign lease tokens with the secret kept in it (no HA_LEASE_SECRET: docs/configuration.md).
 */
const I = 250;
const T = 2500;
/** How long after a loss the role is watched: several leases' worth. */
const WATCH_MS = 3 * T;
const UTYPE = "e2e-endpoints";

/** The work: reports its epoch once, then runs until stopped. */
const WORKER = "console.error(`worker up epoch=${process.env.HA_EPOCH}`); process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 1000);";

/** A store both instances share: the settings that name it, and how to stop it. */
interface SharedStore {
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

const stores: Array<{ name: string; start: () => Promise<SharedStore> }> = [
  {
    name: "Azurite",
    start: async () => {
      const azurite = await startTestAzurite();
      return {
        env: { HA_TABLE_CONNECTION_STRING: azurite.connectionString, HA_TABLE_NAME: `endpoints${process.pid}`, HA_MEMBERS_TABLE_NAME: `endpointsmembers${process.pid}` },
        close: () => azurite.close(),
      };
    },
  },
  {
    name: "PostgreSQL",
    start: async () => {
      const postgres = await startTestPostgres();
      return { env: { HA_STORE: "postgres", HA_POSTGRES_URL: urlWithPassword(postgres), HA_POSTGRES_SCHEMA: `endpoints${process.pid}` }, close: () => postgres.close() };
    },
  },
];

describe.each(stores)("ha-module run against two endpoints on $name, one of which is killed", ({ start }) => {
  let store: SharedStore | undefined;
  const instances: ServiceProcess[] = [];
  const runners: CliProcess[] = [];
  let env: Record<string, string>;

  /** `ha-module serve` on the shared table, on `port` (0: a free one). */
  const serve = async (port = 0): Promise<ServiceProcess> => {
    const instance = await startServiceProcess({ ...env, PORT: String(port) });
    instances.push(instance);
    return instance;
  };

  beforeAll(async () => {
    store = await start();
    env = { ...store.env, HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) };
  });

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.kill()));
    await Promise.all(instances.map((instance) => instance.stop()));
    await store?.close();
  });

  it("keeps the role through the loss of either instance: 0 demotions, the command running, the epoch unchanged", async () => {
    const a = await serve();
    const b = await serve();
    const endpoints = `${a.url},${b.url}`;
    const runner = new CliProcess("run", ["run", UTYPE, "--endpoint", endpoints, "--check-port", "0", "--", process.execPath, "-e", WORKER]);
    runners.push(runner);
    await runner.waitForStderr(new RegExp(`authenticating to ${escape(a.url)}, ${escape(b.url)} as no credentials`));
    const started = await runner.waitFor((event) => event.event === "started");
    const epoch = started["epoch"] as number;
    const pid = started["pid"] as number;
    await runner.waitForStderr(new RegExp(`worker up epoch=${epoch}`));
    const checkUrl = (await runner.waitForStderr(/CheckPrimary on (\S+)/))[1]!;
    const holder = await primaryOf(b.url);
    expect(holder).toMatchObject({ epoch });

    /** Kills `lost` (SIGKILL: no goodbye), then watches the role for WATCH_MS. */
    const survives = async (lost: ServiceProcess, answering: ServiceProcess): Promise<void> => {
      const mark = runner.events.length;
      instances.splice(instances.indexOf(lost), 1);
      const gone = once(lost.child, "exit");
      lost.child.kill("SIGKILL");
      await gone;
      await realDelay(WATCH_MS);
      expect(runner.events.slice(mark).filter((event) => event.event !== "primaryChanged")).toEqual([]);
      expect(runner.child.exitCode).toBeNull();
      expect(isRunning(pid)).toBe(true);
      expect(await checkPrimary(checkUrl)).toEqual({ status: 200, body: { isPrimary: true, epoch } });
      // The service agrees: the same holder, the same epoch, renewed through the instance left.
      expect(await primaryOf(answering.url)).toMatchObject({ uuid: holder!.uuid, epoch });
    };

    // The runner talks to the first endpoint: it is killed.
    await survives(a, b);
    // A one-shot command fails over too: a killed instance first in the list, HA_ENDPOINT alike.
    const oneShot = await runCli(["primary", UTYPE, "--endpoint", endpoints]);
    expect(oneShot.code).toBe(0);
    expect(JSON.parse(oneShot.stdout)).toMatchObject({ primary: { uuid: holder!.uuid, epoch } });
    const fromEnvironment = await runCli(["primary", UTYPE], { HA_ENDPOINT: endpoints });
    expect(fromEnvironment.code).toBe(0);

    // The first comes back on its address; the runner now talks to the second: it is killed.
    const back = await serve(Number(new URL(a.url).port));
    expect(back.url).toBe(a.url);
    await survives(b, back);

    expect(runner.stderr.match(/worker up/g)).toHaveLength(1);
    runner.signal("SIGTERM");
    expect(await runner.exited).toEqual({ code: 0, signal: null });
    // Stopped through the instance left, with its token from the other: released, not revoked.
    expect(await primaryOf(back.url)).toBeNull();
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function primaryOf(endpoint: string): Promise<{ uuid: string; epoch: number } | null> {
  const response = await fetch(`${endpoint}/primary/${UTYPE}`, { signal: AbortSignal.timeout(10_000) });
  return ((await response.json()) as { primary: { uuid: string; epoch: number } | null }).primary;
}

async function checkPrimary(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: await response.json() };
}
